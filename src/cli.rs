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

    #[command(flatten)]
    pub capture: CaptureArgs,

    /// Tab to open first
    #[arg(long, value_enum, default_value_t = TabName::Interfaces)]
    pub tab: TabName,

    /// Do not use colour (the NO_COLOR environment variable does the same)
    #[arg(long)]
    pub no_color: bool,

    /// Do not capture the mouse (keeps the terminal's own text selection)
    #[arg(long)]
    pub no_mouse: bool,

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

/// Packet capture for the Flows tab and the `flows` of a snapshot.
#[derive(Debug, Clone, Default, Args)]
pub struct CaptureArgs {
    /// Capture on this interface only (default: any, every interface)
    #[arg(long, value_name = "IF")]
    pub iface: Option<String>,

    /// Capture only packets matching this pcap-filter expression,
    /// e.g. "tcp port 443 and not host 198.18.0.1"
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,

    /// Do not capture packets (no Flows data, no flow findings)
    #[arg(long)]
    pub no_capture: bool,

    /// Keep whole packets (up to 64 KiB) instead of the first 384 bytes
    #[arg(long)]
    pub payload: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print samples for scripts: a sar-like table, or JSON Lines with --json
    Snapshot(SnapshotArgs),
    /// Print a pcap/pcapng file as tcpdump -n lines, or its flow table
    Read(ReadArgs),
    /// Capture packets headless: tcpdump -n lines, or a pcap file with -w
    Capture(CaptureCmdArgs),
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

    #[command(flatten)]
    pub capture: CaptureArgs,
}

#[derive(Debug, Args)]
pub struct CaptureCmdArgs {
    /// Interface to capture on (default: any, every interface)
    #[arg(short = 'i', long = "iface", value_name = "IF")]
    pub iface: Option<String>,

    /// Only packets matching this pcap-filter expression, e.g. "tcp port 80"
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,

    /// Write packets to this pcap file instead of printing lines
    #[arg(short = 'w', long = "write", value_name = "FILE.pcap")]
    pub write: Option<std::path::PathBuf>,

    /// Stop after this many matching packets
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,

    /// Stop after this long, e.g. 10s, 2m
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,

    /// Keep whole packets (up to 64 KiB) instead of the first 384 bytes
    #[arg(long)]
    pub payload: bool,
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
    Flows,
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
