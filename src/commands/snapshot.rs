//! `netlens snapshot`: samples for scripts, as a table or JSON Lines.

use crate::cli::{CollectArgs, Section, SnapshotArgs};
use crate::findings::Thresholds;
use crate::model::filter::Expr;
use crate::report::{Sections, SnapshotOptions};
use crate::session::{Session, SessionOptions, Sink};
use anyhow::{Result, anyhow};

pub fn run(collect: &CollectArgs, args: &SnapshotArgs, limits: &Thresholds) -> Result<()> {
    // Bad input fails before any sampling starts.
    let filter = match &args.where_expr {
        Some(text) => where_expr(text)?,
        None => Expr::default(),
    };
    // Before the recording exists: a signal then closes it whole.
    let mut stop = crate::session::stop::Stop::new()?;
    // As the live view: capture where permitted, unless --no-capture.
    let mut session = Session::start(&SessionOptions {
        // Rates need two samples: the first is the baseline.
        first_is_baseline: true,
        // The drops name the rules behind NETFILTER_DROP: read them from
        // the baseline on, so the first shown sample has their rates.
        firewall_rules: args.section.is_empty() || args.section.contains(&Section::Drops),
        owners: names_processes(collect, args),
        ..super::session_options(collect, Some(&args.capture), &args.dns)
    })?;
    let mut recorder = match &args.record {
        Some(path) => {
            let mut recorder = crate::record::Recorder::create_output(
                path,
                &crate::record::meta(session.label(), collect.interval),
                session.capture(),
            )?;
            recorder.thresholds = *limits;
            Some(recorder)
        }
        None => None,
    };
    let options = SnapshotOptions {
        json: args.json,
        count: args.count,
        sections: sections(&args.section),
        filter,
    };
    let names = if args.names.resolve {
        let server =
            crate::dns::reverse::server(&args.dns.dns_server).map_err(anyhow::Error::msg)?;
        let options = crate::dns::reverse::Options::new(server);
        Some(crate::dns::reverse::ReverseNames::start(options)?)
    } else {
        None
    };
    let sink = recorder.as_mut().map(|r| r as &mut dyn Sink);
    let result = crate::report::snapshot(
        &mut session,
        &options,
        (sink, names.as_ref()),
        limits,
        &mut stop,
    );
    drop(session);
    if let Some(recorder) = recorder {
        recorder.finish()?;
    }
    result
}

/// Whether what the snapshot prints or records can name a process: the
/// sockets, processes, flows, drops, conntrack and findings sections, the
/// namespaces of `--all-netns` (their findings) and a recording all can;
/// interfaces, tcp and dns do not, and need no owner scan.
fn names_processes(collect: &CollectArgs, args: &SnapshotArgs) -> bool {
    const WITHOUT_OWNERS: [Section; 3] = [Section::Interfaces, Section::Tcp, Section::Dns];
    args.section.is_empty()
        || collect.all_netns
        || args.record.is_some()
        || !args.section.iter().all(|s| WITHOUT_OWNERS.contains(s))
}

/// `--where EXPR`: its error is one line, then the expression with a
/// caret under the bad character.
fn where_expr(text: &str) -> Result<Expr> {
    Expr::parse(text).map_err(|e| anyhow!("--where: {e}\n{}", e.caret(text, 2)))
}

/// The sections `--section` names; none named: all of them.
fn sections(list: &[Section]) -> Sections {
    if list.is_empty() {
        return Sections::ALL;
    }
    Sections {
        interfaces: list.contains(&Section::Interfaces),
        conntrack: list.contains(&Section::Conntrack),
        conntrack_entries: list.contains(&Section::Conntrack),
        findings: list.contains(&Section::Findings),
        sockets: list.contains(&Section::Sockets),
        tcp: list.contains(&Section::Tcp),
        flows: list.contains(&Section::Flows),
        dns: list.contains(&Section::Dns),
        drops: list.contains(&Section::Drops),
        processes: list.contains(&Section::Processes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn snapshot(args: &[&str]) -> (CollectArgs, SnapshotArgs) {
        let cli = crate::cli::Cli::try_parse_from(["netlens"].iter().chain(args)).unwrap();
        match cli.command {
            Some(crate::cli::Command::Snapshot(snapshot)) => (cli.collect, snapshot),
            other => panic!("{other:?}"),
        }
    }

    /// Only interfaces, tcp and dns name no process: a snapshot of them
    /// alone scans no owner; anything else, every section, a recording or
    /// the namespaces of --all-netns does.
    #[test]
    fn owners_are_looked_up_when_something_printed_names_a_process() {
        let cases: [(&[&str], bool); 9] = [
            (&["snapshot"], true),
            (&["snapshot", "--section", "interfaces"], false),
            (&["snapshot", "--section", "interfaces,tcp,dns"], false),
            (&["snapshot", "--section", "tcp", "--json"], false),
            (&["snapshot", "--section", "tcp,sockets"], true),
            (&["snapshot", "--section", "drops"], true),
            (&["snapshot", "--section", "findings"], true),
            (&["--all-netns", "snapshot", "--section", "tcp"], true),
            (
                &["snapshot", "--section", "tcp", "--record", "/nonexistent/f"],
                true,
            ),
        ];
        for (args, owners) in cases {
            let (collect, snapshot) = snapshot(args);
            assert_eq!(names_processes(&collect, &snapshot), owners, "{args:?}");
        }
    }
}
