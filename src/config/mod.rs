//! The config file: `$XDG_CONFIG_HOME/netlens/config.toml` (or `--config
//! FILE`). Every key is optional; an unknown key or a bad value is a one-line
//! error naming the file and line. Command-line flags override it
//! (`cli::apply` merges it into the parsed command line).

use crate::findings::Thresholds;
use anyhow::{Result, anyhow};
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod columns;
pub mod save;
mod tab;

pub use save::{interval_text, threshold_text};
pub use tab::{ALL, TABS, Tab, TabInfo};

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    #[serde(deserialize_with = "tab")]
    pub tab: Option<Tab>,
    #[serde(deserialize_with = "interval")]
    pub interval: Option<Duration>,
    pub theme: ThemeName,
    pub mouse: bool,
    pub compact: bool,
    /// How many closed connections the Sockets tab's Closed view keeps.
    pub closed_rows: ClosedRows,
    pub columns: Columns,
    pub thresholds: Thresholds,
    pub dns: Dns,
}

/// `closed_rows`: 1 to 100,000 (each row is a few hundred bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClosedRows(pub usize);

impl Default for ClosedRows {
    fn default() -> Self {
        Self(crate::model::closed::DEFAULT_VIEW_ROWS)
    }
}

impl<'de> Deserialize<'de> for ClosedRows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rows = usize::deserialize(d)?;
        if (1..=100_000).contains(&rows) {
            Ok(Self(rows))
        } else {
            Err(D::Error::custom(format!(
                "closed_rows {rows} is out of range (1 to 100000)"
            )))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeName {
    #[default]
    Color,
    Mono,
}

/// Columns per tab, by header title (canonical spelling); empty: every
/// column that fits.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Columns {
    #[serde(deserialize_with = "interfaces_columns")]
    pub interfaces: Vec<String>,
    #[serde(deserialize_with = "sockets_columns")]
    pub sockets: Vec<String>,
    #[serde(deserialize_with = "conntrack_columns")]
    pub conntrack: Vec<String>,
    #[serde(deserialize_with = "flows_columns")]
    pub flows: Vec<String>,
}

impl Columns {
    /// Whether `title` is shown in a tab whose configured list is `list`.
    pub fn shows(list: &[String], title: &str) -> bool {
        list.is_empty() || list.iter().any(|t| t == title)
    }
}

/// The DNS prober's names and servers, added to --dns-probe/--dns-server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dns {
    #[serde(deserialize_with = "probe_names")]
    pub probes: Vec<String>,
    #[serde(deserialize_with = "servers")]
    pub servers: Vec<String>,
}

fn tab<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Tab>, D::Error> {
    let text = String::deserialize(d)?;
    Tab::from_name(&text).map(Some).ok_or_else(|| {
        let names: Vec<&str> = Tab::names().collect();
        D::Error::custom(format!(
            "unknown tab '{text}' (one of {})",
            names.join(", ")
        ))
    })
}

fn interval<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    crate::units::parse_interval(&text)
        .map(Some)
        .map_err(D::Error::custom)
}

/// A list of column titles, each one of `known` (case-insensitive).
fn titles<'de, D: Deserializer<'de>>(
    d: D,
    tab: &str,
    known: &[&'static str],
) -> Result<Vec<String>, D::Error> {
    let wanted = Vec::<String>::deserialize(d)?;
    wanted
        .iter()
        .map(|title| {
            known
                .iter()
                .find(|k| k.eq_ignore_ascii_case(title.trim()))
                .map(|k| k.to_string())
                .ok_or_else(|| {
                    D::Error::custom(format!(
                        "unknown {tab} column '{title}' (one of {})",
                        known.join(", ")
                    ))
                })
        })
        .collect()
}

fn interfaces_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    titles(d, "interfaces", &column_titles(Tab::Interfaces))
}

fn sockets_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    titles(d, "sockets", &column_titles(Tab::Sockets))
}

fn conntrack_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    titles(d, "conntrack", &column_titles(Tab::Conntrack))
}

fn flows_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    titles(d, "flows", &column_titles(Tab::Flows))
}

/// The column titles a tab has (none for tabs without a column table).
pub fn column_titles(tab: Tab) -> Vec<&'static str> {
    columns::titles(tab).to_vec()
}

fn probe_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    for name in &names {
        crate::dns::parse_probe(name).map_err(D::Error::custom)?;
    }
    Ok(names)
}

fn servers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let servers = Vec::<String>::deserialize(d)?;
    for server in &servers {
        crate::dns::parse_server(server).map_err(D::Error::custom)?;
    }
    Ok(servers)
}

/// The default config path: $XDG_CONFIG_HOME/netlens/config.toml, or
/// ~/.config/netlens/config.toml.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("netlens").join("config.toml"))
}

/// The config: from `explicit` (which must exist), else from the default
/// path if a file is there, else the defaults.
pub fn load(explicit: Option<&Path>) -> Result<Config> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => match default_path() {
            Some(path) if path.exists() => path,
            _ => return Ok(Config::default()),
        },
    };
    let text =
        read_text(&path).map_err(|e| anyhow!("cannot read config {}: {e}", path.display()))?;
    parse(&text).map_err(|error| anyhow!("{}:{error}", path.display()))
}

/// The largest config file netlens reads.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of a config file: a regular file (a symlink to one is fine) of
/// at most [`MAX_CONFIG_BYTES`]. O_NONBLOCK keeps a FIFO from blocking the
/// open; /dev/zero and the like are refused before a byte is read.
/// `/dev/null` is the usual way to say "no config" and reads as empty.
fn read_text(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, Read};
    use std::os::unix::fs::OpenOptionsExt;
    if path == Path::new("/dev/null") {
        return Ok(String::new());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::other("larger than the limit of 1 MiB"));
    }
    String::from_utf8(bytes).map_err(|_| Error::other("not UTF-8 text"))
}

/// Parses config text; an error reads "LINE: message".
pub fn parse(text: &str) -> Result<Config, String> {
    let config: Config = toml::from_str(text).map_err(|error| {
        let line = error.span().map_or(1, |span| line_of(text, span.start));
        format!("{line}: {}", error.message().trim())
    })?;
    if let Err((key, message)) = config.thresholds.check() {
        return Err(format!("{}: {message}", key_line(text, key)));
    }
    Ok(config)
}

/// The 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line where `key` is set (checks that need two keys run after parsing,
/// when toml's spans are gone); 1 when it is not found.
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |index| index + 1)
}

/// A commented config with every setting at its default; it parses back to
/// `Config::default()`.
pub fn commented_default() -> String {
    save::render(&Config {
        tab: Some(Tab::Interfaces),
        interval: Some(Duration::from_secs(1)),
        ..Config::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commented_default_parses_to_the_defaults() {
        let parsed = parse(&commented_default()).unwrap();
        let defaults = Config {
            tab: Some(Tab::Interfaces),
            interval: Some(Duration::from_secs(1)),
            ..Config::default()
        };
        assert_eq!(parsed, defaults);
    }

    #[test]
    fn errors_name_the_line() {
        let error = parse("tab = \"tcp\"\n\nbogus = 1\n").unwrap_err();
        assert!(error.starts_with("3: "), "{error}");
        assert!(error.contains("bogus"), "{error}");
        let error = parse("[thresholds]\nretrans_warn_percent = \"x\"\n").unwrap_err();
        assert!(error.starts_with("2: "), "{error}");
        let error =
            parse("[thresholds]\nretrans_warn_percent = 20.0\nretrans_crit_percent = 5.0\n")
                .unwrap_err();
        assert!(
            error.starts_with("2: retrans_warn_percent (20) is above"),
            "{error}"
        );
        let error = parse("interval = \"10ms\"\n").unwrap_err();
        assert!(
            error.starts_with("1: ") && error.contains("100ms"),
            "{error}"
        );
        let error = parse("\n[columns]\nsockets = [\"Local\", \"nope\"]\n").unwrap_err();
        assert!(
            error.starts_with("3: ") && error.contains("unknown sockets column 'nope'"),
            "{error}"
        );
        let error = parse("[dns]\nservers = [\"not an ip\"]\n").unwrap_err();
        assert!(error.starts_with("2: "), "{error}");
        let error = parse("tab = \"nope\"\n").unwrap_err();
        assert!(error.contains("unknown tab 'nope'"), "{error}");
    }

    #[test]
    fn settings_parse() {
        let config = parse(
            "tab = \"TCP\"\ninterval = \"500ms\"\ntheme = \"mono\"\nmouse = true\n\
             [columns]\ninterfaces = [\"iface\", \"rxkB/s\"]\n\
             [thresholds]\nsyn_flood_syn_recv = 10\n\
             [dns]\nprobes = [\"example.test\"]\nservers = [\"198.18.0.53:5353\"]\n",
        )
        .unwrap();
        assert_eq!(config.tab, Some(Tab::Tcp));
        assert_eq!(config.interval, Some(Duration::from_millis(500)));
        assert_eq!(config.theme, ThemeName::Mono);
        assert!(config.mouse);
        assert_eq!(config.columns.interfaces, ["IFACE", "rxkB/s"]);
        assert_eq!(config.thresholds.syn_flood_syn_recv, 10);
        assert_eq!(config.thresholds.retrans_warn_percent, 2.0);
        assert_eq!(config.dns.servers, ["198.18.0.53:5353"]);
    }
}
