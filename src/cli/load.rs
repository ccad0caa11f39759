//! `netlens load`: the load generators' arguments (iperf3, wrk, hping3
//! and pktgen style).

use crate::units::{parse_duration, parse_duration_or_zero, parse_rate, parse_request_rate};
use clap::{Args, Subcommand};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(subcommand)]
    pub kind: LoadKind,
}

#[derive(Debug, Subcommand)]
pub enum LoadKind {
    /// Serve the tcp, udp and http tests, like `iperf3 -s` (TCP and UDP on one port)
    Serve(ServeArgs),
    /// TCP throughput like iperf3: per-interval reports, sender/receiver summary
    Tcp(TcpArgs),
    /// UDP with sendmmsg at a given rate: sent/received pps, loss and jitter
    Udp(UdpArgs),
    /// Keep-alive HTTP/1.1 like wrk: requests/s, latency percentiles, errors
    Http(HttpArgs),
    /// Drive the kernel's pktgen through /proc/net/pktgen
    Pktgen(PktgenArgs),
    /// TCP connect latency like `hping3 -S -c N -p PORT`: min/avg/max and loss
    Probe(ProbeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Port for TCP (load streams and HTTP) and UDP
    #[arg(long, short = 'p', default_value_t = 5201)]
    pub port: u16,
    /// Address to listen on
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: String,
    /// Delay every HTTP response by this long (to test latency reporting)
    #[arg(long, value_parser = parse_duration_or_zero, default_value = "0s")]
    pub delay: Duration,
    /// HTTP response body size in bytes
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(0..=16_777_216))]
    pub body: u32,
    /// Exit after this long (default: run until interrupted)
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// One JSON object per finished test, one per line
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TcpArgs {
    /// Server to send to: a `netlens load serve` or an `iperf3 -s` (told apart at the start)
    #[arg(long, value_name = "HOST:PORT")]
    pub to: String,
    /// How long to run (at most 1h)
    #[arg(short = 't', long = "time", value_parser = parse_duration, default_value = "10s")]
    pub time: Duration,
    /// Parallel streams
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub parallel: u32,
    /// Target bitrate in bits/s (k, M, G suffixes, 1000-based; 0: unlimited)
    #[arg(short = 'b', long, value_parser = parse_rate, default_value = "0")]
    pub bitrate: u64,
    /// The server sends and netlens receives
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Per-interval lines, then a summary object, as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UdpArgs {
    /// Server to send to (a `netlens load serve` reports what it received)
    #[arg(long, value_name = "HOST:PORT")]
    pub to: String,
    /// How long to run (at most 1h)
    #[arg(short = 't', long = "time", value_parser = parse_duration, default_value = "10s")]
    pub time: Duration,
    /// Target bitrate in bits/s (k, M, G suffixes, 1000-based; 0: unlimited)
    #[arg(short = 'b', long, value_parser = parse_rate, default_value = "1M")]
    pub bitrate: u64,
    /// UDP payload size in bytes
    #[arg(long, default_value_t = 1400, value_parser = clap::value_parser!(u32).range(32..=65_000))]
    pub size: u32,
    /// Per-interval lines, then a summary object, as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HttpArgs {
    /// URL to request: http://HOST[:PORT]/PATH (redirects are not followed)
    pub url: String,
    /// Connections kept open
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub connections: u32,
    /// How long to run (at most 1h)
    #[arg(short = 't', long = "time", value_parser = parse_duration, default_value = "10s")]
    pub time: Duration,
    /// Threads sharing the connections
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub threads: u32,
    /// A response slower than this counts as a timeout error
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    pub timeout: Duration,
    /// Total requests per second (0: as fast as the server answers)
    #[arg(short = 'R', long, value_parser = parse_request_rate, default_value = "0")]
    pub rate: f64,
    /// Per-interval lines, then a summary object, as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PktgenArgs {
    /// Interface to send from
    #[arg(long, value_name = "IF")]
    pub dev: String,
    /// Destination IP address
    #[arg(long, value_name = "IP")]
    pub dst: String,
    /// Destination MAC address
    #[arg(long, value_name = "MAC")]
    pub dst_mac: String,
    /// Packets per device (each thread has one)
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub count: u64,
    /// Packet size in bytes
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(42..=9000))]
    pub size: u32,
    /// Delay between packets in nanoseconds
    #[arg(long, default_value_t = 0)]
    pub delay: u64,
    /// Kernel threads (kpktgend_N), one device each
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub threads: u32,
    /// Send each allocated packet this many more times
    #[arg(long, default_value_t = 0)]
    pub clone_skb: u32,
    /// Stop after this long even if the count is not reached
    #[arg(short = 't', long = "time", value_parser = parse_duration, default_value = "60s")]
    pub time: Duration,
    /// Where pktgen's files are (for tests)
    #[arg(long, hide = true, default_value = "/proc/net/pktgen")]
    pub proc_root: std::path::PathBuf,
    /// The summary as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Where to connect
    #[arg(value_name = "HOST:PORT")]
    pub to: String,
    /// Number of probes
    #[arg(short = 'c', long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub count: u32,
    /// Time between probes
    #[arg(short = 'i', long = "every", value_parser = parse_duration, default_value = "1s")]
    pub every: Duration,
    /// A connect slower than this counts as lost
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub timeout: Duration,
    /// One JSON object per probe, then a summary object
    #[arg(long)]
    pub json: bool,
}
