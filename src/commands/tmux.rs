//! `netlens tmux`: a troubleshooting layout of four compact netlens panes
//! (interfaces, TCP, flows, DNS) in a new tmux session, or in a new window
//! when already inside tmux. The Flows pane captures every packet; the DNS
//! pane only DNS (`udp port 53`, for the queries seen on the wire) and is the
//! one that gets the --dns-* options; the others run with --no-capture.

use crate::cli::{Cli, TmuxArgs};
use crate::config::Tab;
use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::process::Command;

/// What a pane captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneCapture {
    Off,
    /// Every packet (with the user's --iface and --filter).
    Everything,
    /// DNS only: what the DNS tab's passive monitor reads.
    Dns,
}

/// The DNS pane's capture filter: the passive monitor reads DNS over UDP
/// port 53 and nothing else.
pub const DNS_FILTER: &str = "udp port 53";

/// The panes, in layout order: the tab each shows and what it captures.
pub const PANES: [(Tab, PaneCapture); 4] = [
    (Tab::Interfaces, PaneCapture::Off),
    (Tab::Tcp, PaneCapture::Off),
    (Tab::Flows, PaneCapture::Everything),
    (Tab::Dns, PaneCapture::Dns),
];

/// The command line of one pane: this same netlens binary, compact, on
/// `tab`, with the options the user gave to `netlens tmux`.
pub fn pane_command(
    exe: &OsString,
    cli: &Cli,
    args: &TmuxArgs,
    tab: Tab,
    capture: PaneCapture,
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![exe.clone(), "--compact".into(), "--tab".into()];
    argv.push(tab.name().into());
    argv.push("--interval".into());
    argv.push(format!("{}ms", cli.collect.interval.as_millis()).into());
    if let Some(netns) = watched_netns(cli) {
        argv.push("--netns".into());
        argv.push(netns.into());
    }
    if let Some(pid) = cli.collect.pid {
        argv.push("--pid".into());
        argv.push(pid.to_string().into());
    }
    if cli.collect.all_netns {
        argv.push("--all-netns".into());
    }
    if let Some(config) = &cli.config {
        argv.push("--config".into());
        // The panes start in tmux's directory, not ours.
        let absolute = std::path::absolute(config).unwrap_or_else(|_| config.clone());
        argv.push(absolute.into_os_string());
    }
    if cli.no_color {
        argv.push("--no-color".into());
    }
    if cli.mouse {
        argv.push("--mouse".into());
    }
    let iface = args.iface.as_ref().or(cli.capture.iface.as_ref());
    let filter = match capture {
        _ if cli.capture.no_capture => None,
        PaneCapture::Off => None,
        PaneCapture::Everything => Some(cli.capture.filter.as_deref()),
        PaneCapture::Dns => Some(Some(DNS_FILTER)),
    };
    match filter {
        None => argv.push("--no-capture".into()),
        Some(filter) => {
            if let Some(iface) = iface {
                argv.push("--iface".into());
                argv.push(iface.into());
            }
            if let Some(filter) = filter {
                argv.push("--filter".into());
                argv.push(filter.into());
            }
        }
    }
    if tab == Tab::Dns {
        // Only this pane probes: the others would send the same queries.
        let both = [&cli.dns, &args.dns];
        for probe in both.iter().flat_map(|dns| &dns.dns_probe) {
            argv.extend(["--dns-probe".into(), probe.into()]);
        }
        for server in both.iter().flat_map(|dns| &dns.dns_server) {
            argv.extend(["--dns-server".into(), server.into()]);
        }
        if let Some(timeout) = args.dns.dns_timeout.or(cli.dns.dns_timeout) {
            argv.push("--dns-timeout".into());
            argv.push(format!("{}ms", timeout.as_millis()).into());
        }
    }
    argv
}

/// The `--netns` each pane gets: the one given, else (no --pid, no
/// --all-netns) the namespace `netlens tmux` runs in when it is not the
/// initial one. The panes are started by the tmux server, which may run in
/// another namespace: without it, `ip netns exec NS netlens tmux` would
/// watch the server's.
fn watched_netns(cli: &Cli) -> Option<String> {
    if cli.collect.netns.is_some() || cli.collect.pid.is_some() || cli.collect.all_netns {
        return cli.collect.netns.clone();
    }
    crate::collect::netns::own_reference()
}

/// With the panes watching this process's /proc/PID/ns/net (a namespace
/// with no name), waits until each pane's netlens has entered it before
/// this process, and that path, go; at most `PANES_ENTER`.
fn wait_for_panes(cli: &Cli, args: &TmuxArgs, window: &str) -> Result<()> {
    let path = format!("/proc/{}/ns/net", std::process::id());
    if watched_netns(cli).as_ref() != Some(&path) {
        return Ok(());
    }
    let inode = crate::collect::netns::link_inode(std::path::Path::new(&path));
    let started = std::time::Instant::now();
    while started.elapsed() < PANES_ENTER {
        let pids = tmux(
            args,
            &os(&["list-panes", "-t", window, "-F", "#{pane_pid}"]),
        )?;
        if pids.lines().all(|pid| has_thread_in(pid, inode)) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    bail!(
        "the panes did not enter this network namespace within {PANES_ENTER:?}; name it \
         (ip netns attach NAME {}) and run netlens tmux --netns NAME",
        std::process::id()
    )
}

/// How long `netlens tmux` waits for its panes to enter its namespace.
const PANES_ENTER: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether a thread of process `pid` (a pane's netlens: its sampler
/// thread) is in the namespace of `inode`.
fn has_thread_in(pid: &str, inode: Option<u64>) -> bool {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    tasks
        .into_iter()
        .flatten()
        .flatten()
        .any(|task| crate::collect::netns::link_inode(&task.path().join("ns/net")) == inode)
}

/// `tmux [-L SOCKET] ARGS...`, its stdout on success, and tmux's own words
/// on failure.
fn tmux(args: &TmuxArgs, tmux_args: &[OsString]) -> Result<String> {
    let mut command = Command::new("tmux");
    if let Some(socket) = &args.tmux_socket {
        command.arg("-L").arg(socket);
    }
    let output = command.args(tmux_args).output().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!(
                "tmux is not installed (apt install tmux); `netlens tmux` needs it to build its layout"
            )
        } else {
            anyhow::anyhow!("cannot run tmux: {error}")
        }
    })?;
    if !output.status.success() {
        let words = String::from_utf8_lossy(&output.stderr);
        let verb = tmux_args
            .first()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        bail!("tmux {verb} failed: {}", words.trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn os(items: &[&str]) -> Vec<OsString> {
    items.iter().map(OsString::from).collect()
}

pub fn run(cli: &Cli, args: &TmuxArgs) -> Result<()> {
    if args.session.is_empty() || args.session.contains([':', '.']) {
        bail!(
            "--session '{}': a tmux session name must be non-empty, without ':' or '.'",
            args.session
        );
    }
    let exe: OsString = std::env::current_exe()
        .context("cannot find the netlens binary to run in the panes")?
        .into();
    // Inside tmux (and talking to that same server): a new window there.
    let inside =
        std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()) && args.tmux_socket.is_none();
    let commands: Vec<Vec<OsString>> = PANES
        .iter()
        .map(|(tab, capture)| pane_command(&exe, cli, args, *tab, *capture))
        .collect();
    let mut create = if inside {
        os(&[
            "new-window",
            "-P",
            "-F",
            "#{window_id}",
            "-n",
            &args.session,
        ])
    } else {
        os(&[
            "new-session",
            "-P",
            "-F",
            "#{window_id}",
            "-s",
            &args.session,
            "-n",
            "netlens",
        ])
    };
    if args.detached || !inside {
        // A session is always created detached and attached below, so that
        // the other panes exist before the user sees it.
        create.push("-d".into());
    }
    create.extend(commands[0].iter().cloned());
    let window = tmux(args, &create)?;
    for command in &commands[1..] {
        let mut split = os(&["split-window", "-t", &window]);
        split.extend(command.iter().cloned());
        tmux(args, &split)?;
        // Re-tile after each split so the next one has room.
        tmux(args, &os(&["select-layout", "-t", &window, "tiled"]))?;
    }
    tmux(args, &os(&["select-pane", "-t", &format!("{window}.0")]))?;
    wait_for_panes(cli, args, &window)?;
    if inside || args.detached {
        if args.detached {
            super::stdout::print(format!(
                "netlens tmux: created {} (attach with: tmux{} attach -t {})\n",
                if inside { "window" } else { "session" },
                args.tmux_socket
                    .as_ref()
                    .map(|s| format!(" -L {s}"))
                    .unwrap_or_default(),
                args.session
            ))?;
        }
        return Ok(());
    }
    let mut attach = Command::new("tmux");
    if let Some(socket) = &args.tmux_socket {
        attach.arg("-L").arg(socket);
    }
    let status = attach
        .args(["attach-session", "-t", &args.session])
        .status()
        .context("cannot run tmux attach-session")?;
    if !status.success() {
        bail!("tmux attach-session -t {} failed ({status})", args.session);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;
    use clap::Parser;

    /// Every pane watches what `netlens tmux` was asked to watch.
    #[test]
    fn panes_inherit_the_namespace_choice() {
        for (given, wanted) in [
            (&["--all-netns"][..], &["--all-netns"][..]),
            (&["--netns", "web"], &["--netns", "web"]),
            (&[], &[]),
        ] {
            let argv = ["netlens"].iter().chain(given).chain(&["tmux"]);
            let cli = Cli::parse_from(argv);
            let Some(Command::Tmux(args)) = &cli.command else {
                panic!("not tmux: {:?}", cli.command);
            };
            for (tab, capture) in PANES {
                let argv = pane_command(&"netlens".into(), &cli, args, tab, capture);
                let text: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into()).collect();
                let has = |flag: &str| text.iter().any(|a| a == flag);
                assert_eq!(
                    has("--all-netns"),
                    wanted.contains(&"--all-netns"),
                    "{text:?}"
                );
                assert_eq!(has("--netns"), wanted.contains(&"--netns"), "{text:?}");
            }
        }
    }
}
