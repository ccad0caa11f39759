//! Command-line definitions. This file imports nothing from the project:
//! build.rs includes it with #[path] to render man/netlens.1.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;

/// htop-style monitor of the Linux network stack: interfaces, sockets, TCP,
/// conntrack, DNS, flows and load, on one screen.
#[derive(Debug, Parser)]
#[command(name = "netlens", version, about, long_about = None)]
#[command(after_help = "Run without a subcommand to open the live view. \
    For scripts and `watch`, use `netlens snapshot` (add --json for JSON Lines).")]
pub struct Cli {
    #[command(flatten)]
    pub collect: CollectArgs,

    /// Tab to open first
    #[arg(long, value_enum, default_value_t = TabName::Interfaces)]
    pub tab: TabName,

    /// Do not use colour (the NO_COLOR environment variable does the same)
    #[arg(long)]
    pub no_color: bool,

    /// Do not capture the mouse (keeps the terminal's own text selection)
    #[arg(long)]
    pub no_mouse: bool,

    /// Record the session to FILE while watching (R starts and stops it too)
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options that choose what is collected and how often; shared by the live
/// view and `snapshot`.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Sampling interval, e.g. 1s, 500ms, 2m
    #[arg(long, global = true, value_parser = parse_interval, default_value = "1s")]
    pub interval: Duration,

    /// Watch another network namespace: a name from `ip netns` or a path such
    /// as /proc/PID/ns/net
    #[arg(long, global = true, value_name = "NAME|PATH", conflicts_with = "pid")]
    pub netns: Option<String>,

    /// Watch the network namespace of a process, e.g. a container's:
    /// --pid $(docker inspect -f '{{.State.Pid}}' NAME)
    #[arg(long, global = true, value_name = "PID")]
    pub pid: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print samples for scripts: a sar-like table, or JSON Lines with --json
    Snapshot(SnapshotArgs),
    /// Print a pcap/pcapng file as tcpdump -n lines, or its flow table
    Read(ReadArgs),
    /// Record samples to a file without a screen, e.g. during an incident
    Record(RecordArgs),
    /// Replay a recording in the live view's UI, or print it (--json, --info)
    Replay(ReplayArgs),
    /// Print the man page (roff) to stdout
    Man,
    /// Print shell completions to stdout
    Completions {
        /// Shell to generate completions for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Print one JSON object per sample, one per line
    #[arg(long)]
    pub json: bool,

    /// Number of samples to print; each covers one interval
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,

    /// Sections to include, comma separated (default: all)
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub section: Vec<Section>,

    /// Also record the samples (the baseline too) to FILE
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The recording to create (never overwritten; created with mode 0600)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: std::path::PathBuf,

    /// Stop after this long (default: until SIGINT or SIGTERM)
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recording (from `netlens record`, --record or R in the live view)
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Playback speed, 0.25 to 64 (times real time)
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed, value_name = "X")]
    pub speed: f64,

    /// Start at this time: HH:MM[:SS] (clock time), or an offset from the
    /// start such as 90s or 5m
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,

    /// Print the samples as JSON Lines, with the schema of `snapshot --json`
    #[arg(long, conflicts_with = "info")]
    pub json: bool,

    /// Print the duration, sample count, sizes and streams of the file
    #[arg(long)]
    pub info: bool,
}

/// A replay speed within 0.25x-64x.
pub fn parse_speed(text: &str) -> Result<f64, String> {
    let speed: f64 = text
        .trim_end_matches('x')
        .parse()
        .map_err(|_| format!("'{text}' is not a speed (try 0.5, 2 or 16)"))?;
    if !(0.25..=64.0).contains(&speed) {
        return Err(format!("'{text}' is outside 0.25 to 64"));
    }
    Ok(speed)
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The capture file (pcap or pcapng)
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Only packets matching this pcap-filter expression, e.g. "tcp port 80"
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,

    /// Stop after this many matching packets
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,

    /// Print the flow table instead of packet lines
    #[arg(long)]
    pub flows: bool,

    /// With --flows: one JSON object per flow, one per line
    #[arg(long, requires = "flows")]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Section {
    Interfaces,
    Conntrack,
    Findings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TabName {
    Interfaces,
    Sockets,
    Tcp,
    Conntrack,
    Dns,
    Flows,
    Load,
}

/// A sampling interval: a duration of at least 100 ms, so a typo cannot turn
/// the sampler into a busy loop.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration(text)?;
    if interval < Duration::from_millis(100) {
        return Err(format!(
            "'{text}' is too short: the interval must be at least 100ms"
        ));
    }
    Ok(interval)
}

/// Parses "1s", "500ms", "2m", "1h" or a bare number of seconds ("0.5").
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (try 1s, 500ms, 2m)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{text}' (use ms, s, m or h)"
            ));
        }
    };
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("'{text}' must be greater than zero"));
    }
    Ok(Duration::from_secs_f64(seconds))
}
