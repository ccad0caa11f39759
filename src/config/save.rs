//! Writing the config file (the setup screen's `w`): every setting, with
//! the same comments as `--print-config`, written safely as root.
//!
//! The text is checked first: it must load back, with the config loader,
//! to exactly the settings saved. Then a new file (safe_file::create_private:
//! O_CREAT|O_EXCL|O_NOFOLLOW, 0600, a random name) is written in the same
//! directory, fsynced, and renamed over the config: a reader sees the old
//! file or the new one, never half of one. A config path that is a symbolic
//! link is refused rather than followed or replaced (the link may point into
//! a dotfiles repository, or somewhere an attacker chose).

use super::{Config, Tab, ThemeName, column_titles};
use crate::findings::Thresholds;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::time::Duration;

/// A threshold's value as the config file writes it ("80.0", "3").
pub fn threshold_text(thresholds: &Thresholds, key: &str) -> String {
    toml::Table::try_from(thresholds)
        .ok()
        .and_then(|table| table.get(key).map(|v| v.to_string()))
        .unwrap_or_default()
}

/// "500ms", "1s", "2m": as --interval and the config take it.
pub fn interval_text(interval: Duration) -> String {
    let ms = interval.as_millis();
    if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The config file for `config`, commented as --print-config's.
pub fn render(config: &Config) -> String {
    let mut out = String::from(
        "# netlens configuration. Save as ~/.config/netlens/config.toml\n\
         # ($XDG_CONFIG_HOME/netlens/config.toml) or pass --config FILE.\n\
         # Every key is optional; command-line flags override these.\n\n\
         # Tab to open first: interfaces, sockets, tcp, conntrack, dns, flows, load\n",
    );
    match config.tab {
        Some(tab) => out.push_str(&format!("tab = {}\n", quoted(tab.name()))),
        None => out.push_str("# tab = \"interfaces\"\n"),
    }
    out.push_str("# Sampling interval (100ms to 1h): 500ms, 1s, 2m\n");
    match config.interval {
        Some(interval) => out.push_str(&format!(
            "interval = {}\n",
            quoted(&interval_text(interval))
        )),
        None => out.push_str("# interval = \"1s\"\n"),
    }
    let theme = match config.theme {
        ThemeName::Color => "color",
        ThemeName::Mono => "mono",
    };
    out.push_str(&format!(
        "# \"color\", or \"mono\" for no colour (as --no-color and NO_COLOR)\n\
         theme = \"{theme}\"\n\
         # Take the mouse (click tabs and rows); off keeps tmux's own mouse\n\
         mouse = {}\n\
         # Always the compact layout (automatic below 60 columns or 12 rows)\n\
         compact = {}\n\
         # Closed connections the Sockets tab's Closed view (c) keeps, 1-100000\n\
         closed_rows = {}\n\n\
         [columns]\n\
         # Columns per tab by header title; [] shows every column that fits.\n",
        config.mouse, config.compact, config.closed_rows.0
    ));
    for (key, tab, list) in [
        ("interfaces", Tab::Interfaces, &config.columns.interfaces),
        ("sockets", Tab::Sockets, &config.columns.sockets),
        ("conntrack", Tab::Conntrack, &config.columns.conntrack),
        ("flows", Tab::Flows, &config.columns.flows),
    ] {
        out.push_str(&format!(
            "# {key}: {}\n{key} = {}\n",
            column_titles(tab).join(", "),
            array(list)
        ));
    }
    out.push_str("\n[thresholds]\n# When each finding fires (man netlens: FINDINGS).\n");
    for (key, _, meaning) in crate::findings::thresholds::THRESHOLDS {
        let value = threshold_text(&config.thresholds, key);
        out.push_str(&format!("# {meaning}\n{key} = {value}\n"));
    }
    out.push_str(&format!(
        "\n[dns]\n\
         # Names the DNS prober resolves (added to --dns-probe)\n\
         probes = {}\n\
         # Servers it asks, ADDR or ADDR:PORT (added to --dns-server)\n\
         servers = {}\n",
        array(&config.dns.probes),
        array(&config.dns.servers)
    ));
    out
}

/// A TOML string, escaped.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A TOML array of strings on one line.
fn array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| quoted(item)).collect();
    format!("[{}]", items.join(", "))
}

/// Writes `config` to `path` (see the module doc); the error is one line.
pub fn save(path: &Path, config: &Config) -> Result<(), String> {
    let text = render(config);
    match super::parse(&text) {
        Ok(back) if back == *config => {}
        Ok(_) => return Err("not saved: the file would not load back as shown".into()),
        Err(error) => return Err(format!("not saved: the file would not load: {error}")),
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(format!(
                "not saved: {} is a symbolic link (netlens never writes through one; \
                 use --config with the file it points to)",
                path.display()
            ));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(format!(
                "not saved: {} is not a regular file",
                path.display()
            ));
        }
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(format!("not saved: {}: {error}", path.display())),
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("not saved: cannot create {}: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.toml".into());
    let temp = dir.join(format!(
        ".{name}.{:016x}.tmp",
        crate::safe_file::random_u64()
    ));
    let mut file = crate::safe_file::PartialFile::create_private(&temp)?;
    file.file()
        .write_all(text.as_bytes())
        .and_then(|()| file.file().sync_all())
        .map_err(|e| format!("not saved: cannot write {}: {e}", temp.display()))?;
    drop(file.keep());
    if let Err(error) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(format!(
            "not saved: cannot rename over {}: {error}",
            path.display()
        ));
    }
    // The rename itself is durable once the directory is synced.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("netlens-save-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn saved_settings_load_back_and_replace_the_file() {
        let dir = temp_dir("replace");
        let path = dir.join("config.toml");
        std::fs::write(&path, "theme = \"mono\"\n").unwrap();
        let mut config = Config {
            interval: Some(Duration::from_millis(500)),
            ..Config::default()
        };
        config.columns.sockets = vec!["Peer".into(), "Local".into()];
        config.thresholds.retrans_warn_percent = 1.5;
        config.dns.probes = vec!["example.test".into()];
        save(&path, &config).unwrap();
        let back = super::super::load(Some(&path)).unwrap();
        assert_eq!(back, config);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlinked_config_is_refused_and_its_target_untouched() {
        let dir = temp_dir("symlink");
        let target = dir.join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.join("config.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = save(&link, &Config::default()).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
