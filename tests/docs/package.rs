//! What the Debian package installs (debian/build-deb.sh builds it from
//! the binary with dpkg-deb; .ci/run installs it with dpkg and runs
//! `systemd-analyze verify` on the unit): the files and fields it holds,
//! the shell completions it ships are the ones the binary prints, and the
//! unit's capabilities are enough for a non-root user to see what root
//! sees, each of them needed.

use crate::common;

use common::NETLENS;
use serde_json::Value;
use std::net::TcpListener;
use std::process::Command;

const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/debian/netlens-export.service");

/// Compares `path` with `generated`; with NETLENS_UPDATE_README=1 rewrites it.
fn fresh(path: &str, generated: &[u8]) {
    if std::env::var_os("NETLENS_UPDATE_README").is_some() {
        std::fs::write(path, generated).expect("write generated file");
        return;
    }
    let on_disk = std::fs::read(path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{path} is stale: regenerate with NETLENS_UPDATE_README=1 cargo test --profile fast-build --test suite docs::package"
    );
}

/// debian/build-deb.sh packages the binary the tests run: every file the
/// package promises, with its mode, and control fields dpkg accepts.
#[test]
fn the_package_holds_the_binary_page_completions_unit_and_assets() {
    if common::need(&["dpkg-deb", "objdump"]) {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/debian/build-deb.sh");
    let out = Command::new(script).arg(NETLENS).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "build-deb.sh failed: {stderr}");
    let deb = String::from_utf8(out.stdout).unwrap();
    let deb = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), deb.trim());
    let dpkg_deb = |args: &[&str]| {
        let out = Command::new("dpkg-deb")
            .args(args)
            .arg(&deb)
            .output()
            .unwrap();
        assert!(out.status.success(), "dpkg-deb {args:?} {deb}");
        String::from_utf8(out.stdout).unwrap()
    };
    let listing = dpkg_deb(&["--contents"]);
    let files = [
        ("-rwxr-xr-x", "./usr/bin/netlens"),
        ("-rw-r--r--", "./usr/share/man/man1/netlens.1.gz"),
        (
            "-rw-r--r--",
            "./usr/share/bash-completion/completions/netlens",
        ),
        ("-rw-r--r--", "./usr/share/zsh/vendor-completions/_netlens"),
        (
            "-rw-r--r--",
            "./usr/share/fish/vendor_completions.d/netlens.fish",
        ),
        ("-rwxr-xr-x", "./usr/share/netlens/on-finding-webhook.sh"),
        ("-rw-r--r--", "./usr/share/netlens/netlens-alerts.yml"),
        ("-rw-r--r--", "./usr/share/netlens/prometheus.yml"),
        ("-rw-r--r--", "./usr/share/netlens/grafana-netlens.json"),
        (
            "-rw-r--r--",
            "./usr/lib/systemd/system/netlens-export.service",
        ),
        ("-rw-r--r--", "./usr/share/doc/netlens/README.md"),
        ("-rw-r--r--", "./usr/share/doc/netlens/copyright"),
        ("-rw-r--r--", "./usr/share/doc/netlens/docs/service.md"),
    ];
    for (mode, path) in files {
        let line = listing.lines().find(|l| l.ends_with(&format!(" {path}")));
        let line = line.unwrap_or_else(|| panic!("{path} not in the package:\n{listing}"));
        assert!(line.starts_with(mode), "{line}: want mode {mode}");
        assert!(line.contains(" root/root "), "{line}: want root's");
    }
    let control = dpkg_deb(&["--field"]);
    let field = |name: &str| {
        let prefix = format!("{name}: ");
        let line = control.lines().find_map(|l| l.strip_prefix(&prefix));
        line.unwrap_or_else(|| panic!("no {name} in {control}"))
            .to_string()
    };
    assert_eq!(field("Package"), "netlens");
    assert_eq!(field("Version"), env!("CARGO_PKG_VERSION"));
    let depends = field("Depends");
    assert!(depends.starts_with("libc6 (>= 2."), "{depends}");
    // The maintainer scripts: the netlens user, systemd's reload.
    let info = dpkg_deb(&["--info"]);
    for script in ["postinst", "postrm"] {
        assert!(
            info.lines()
                .any(|l| l.contains(" bytes,") && l.contains(script)),
            "no {script}: {info}"
        );
    }
    let _ = std::fs::remove_file(&deb);
}

#[test]
fn shipped_completions_are_what_the_binary_prints() {
    for (shell, file) in [
        ("bash", "netlens.bash"),
        ("zsh", "_netlens"),
        ("fish", "netlens.fish"),
    ] {
        let out = Command::new(NETLENS)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        let path = format!("{}/assets/completions/{file}", env!("CARGO_MANIFEST_DIR"));
        fresh(&path, &out.stdout);
    }
}

/// The unit's AmbientCapabilities, as setpriv spells them (+net_admin,...).
fn unit_capabilities() -> Vec<String> {
    let unit = std::fs::read_to_string(UNIT).unwrap();
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("AmbientCapabilities="))
        .expect("AmbientCapabilities in the unit");
    let bounding = unit
        .lines()
        .find_map(|l| l.strip_prefix("CapabilityBoundingSet="))
        .expect("CapabilityBoundingSet in the unit");
    assert_eq!(line, bounding, "the bounding set is the ambient set");
    line.split_whitespace()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect()
}

/// `snapshot --json` as user nobody holding `caps` (ambient, as systemd
/// gives them), or as root when `caps` is None.
fn snapshot_as(caps: Option<&[String]>) -> Value {
    let args = [
        "snapshot",
        "--json",
        "--section",
        "sockets,drops",
        "--no-capture",
    ];
    let out = match caps {
        None => Command::new(NETLENS).args(args).output().unwrap(),
        Some(caps) => {
            let caps = caps.join(",");
            Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(format!("--inh-caps={caps}"))
                .arg(format!("--ambient-caps={caps}"))
                .arg(NETLENS)
                .args(args)
                .output()
                .expect("setpriv (util-linux)")
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::parse_lines(&out.stdout).pop().expect("one sample")
}

/// The pid netlens names as the owner of the listener on `port`, if any.
fn owner_of(sample: &Value, port: u16) -> Option<u64> {
    let local = format!("127.0.0.1:{port}");
    let socket = sample["sockets"]
        .as_array()?
        .iter()
        .find(|s| s["state"] == "LISTEN" && s["local"] == local.as_str())?;
    socket["pid"].as_u64()
}

#[test]
fn the_units_capabilities_see_what_root_sees() {
    if crate::common::need_root(&["ip", "setpriv"]) {
        return;
    }
    let caps = unit_capabilities();
    assert!(!caps.is_empty());
    // A socket held by root (this test): nobody can see its owner only with
    // CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let me = u64::from(std::process::id());

    let root = snapshot_as(None);
    let capable = snapshot_as(Some(&caps));
    assert_eq!(owner_of(&root, port), Some(me), "root: {root}");
    assert_eq!(owner_of(&capable, port), Some(me), "with the unit's caps");
    assert_eq!(
        capable["drops"]["available"], root["drops"]["available"],
        "drop reasons: root {} vs the unit's caps {}",
        root["drops"], capable["drops"]
    );

    // Owners come from /proc (CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH) or
    // from the eBPF task_file iterator (CAP_BPF and CAP_PERFMON): without
    // the BPF ones, each /proc one is needed.
    let without_bpf: Vec<String> = caps
        .iter()
        .filter(|c| *c != "+bpf" && *c != "+perfmon")
        .cloned()
        .collect();
    assert_eq!(
        owner_of(&snapshot_as(Some(&without_bpf)), port),
        Some(me),
        "/proc alone finds the owner"
    );
    for needed in ["+sys_ptrace", "+dac_read_search"] {
        let fewer: Vec<String> = without_bpf
            .iter()
            .filter(|c| *c != needed)
            .cloned()
            .collect();
        let without = snapshot_as(Some(&fewer));
        assert_eq!(owner_of(&without, port), None, "without {needed} nor BPF");
    }
    // And the BPF ones, where root can load the program at all: then they
    // find owners without the /proc ones.
    if root["drops"]["available"] == true {
        let without = snapshot_as(Some(&without_bpf));
        assert_eq!(without["drops"]["available"], false, "without CAP_BPF");
        let no_proc: Vec<String> = caps
            .iter()
            .filter(|c| *c != "+sys_ptrace" && *c != "+dac_read_search")
            .cloned()
            .collect();
        assert_eq!(
            owner_of(&snapshot_as(Some(&no_proc)), port),
            Some(me),
            "the iterator finds the owner with CAP_BPF alone"
        );
    }
    drop(listener);
}

/// The unit's ExecStart arguments after $NETLENS_EXPORT_ARGS, with its
/// state directory (/var/lib/netlens) moved to `state`.
fn unit_export_args(state: &std::path::Path) -> Vec<String> {
    let unit = std::fs::read_to_string(UNIT).unwrap();
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart in the unit");
    let args = line
        .split_once("$NETLENS_EXPORT_ARGS")
        .expect("ExecStart takes $NETLENS_EXPORT_ARGS")
        .1;
    args.split_whitespace()
        .map(|a| a.replace("/var/lib/netlens", &state.display().to_string()))
        .collect()
}

/// The flight recorder the unit arms runs as an unprivileged user with the
/// unit's capabilities in a 0700 state directory it owns, as systemd's
/// StateDirectory= makes it: the exporter serves and the ring fills.
#[test]
fn the_units_flight_recorder_runs_with_its_capabilities() {
    if crate::common::need_root(&["ip", "setpriv"]) {
        return;
    }
    use std::os::unix::fs::{PermissionsExt, chown};
    let state = std::env::temp_dir().join(format!("netlens-unit-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    chown(&state, Some(65534), Some(65534)).unwrap();
    let args = unit_export_args(&state);
    assert!(args.iter().any(|a| a == "--ring"), "{args:?}");
    let caps = unit_capabilities().join(",");
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(format!("--inh-caps={caps}"))
        .arg(format!("--ambient-caps={caps}"))
        .arg(NETLENS)
        .args(["export", "--listen", "127.0.0.1:0", "--interval", "200ms"])
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux)");
    let mut guard = common::ChildGuard(child);
    let ring = state.join("ring");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let ring_files = || {
        std::fs::read_dir(&ring)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "nlrec"))
                    .count()
            })
            .unwrap_or(0)
    };
    while ring_files() == 0 && std::time::Instant::now() < deadline {
        if let Ok(Some(status)) = guard.0.try_wait() {
            let mut stderr = String::new();
            use std::io::Read;
            let _ = guard.0.stderr.take().unwrap().read_to_string(&mut stderr);
            panic!("netlens export exited ({status}) with the unit's arguments: {stderr}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(ring_files() > 0, "no ring file in {}", ring.display());
    let mode = std::fs::metadata(&ring).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the ring directory is private");
    drop(guard);
    let _ = std::fs::remove_dir_all(&state);
}
