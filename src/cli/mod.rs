//! Command-line definitions, the load generators' in `load`. These files
//! import nothing from the project but `units` (the value parsers) and
//! `config::Tab` (the tab table): build.rs includes those with #[path] to
//! render man/netlens.1. The conversions into the core's option structs
//! are in commands::options.

mod load;

use crate::config::{ALL, Tab};
use crate::units::{
    parse_dns_timeout, parse_duration, parse_interval, parse_probe_rate, parse_probe_timeout,
    parse_size, parse_speed,
};
use clap::{Args, Parser, Subcommand, ValueEnum};
pub use load::{HttpArgs, LoadArgs, LoadKind, PktgenArgs, ProbeArgs, ServeArgs, TcpArgs, UdpArgs};
use std::time::Duration;

/// htop-style monitor of the Linux network stack: interfaces, sockets, TCP,
/// conntrack, DNS, flows and load, on one screen.
#[derive(Debug, Parser)]
#[command(name = "netlens", version, long_about = None)]
#[command(after_help = "Run without a subcommand to open the live view. \
    For scripts and `watch`, use `netlens snapshot` (add --json for JSON Lines).")]
pub struct Cli {
    #[command(flatten)]
    pub collect: CollectArgs,

    #[command(flatten)]
    pub capture: CaptureArgs,

    #[command(flatten)]
    pub dns: DnsArgs,

    #[command(flatten)]
    pub names: NamesArgs,

    /// Tab to open first (default: the config's `tab`, else interfaces)
    #[arg(long, value_enum)]
    pub tab: Option<Tab>,

    /// Only the tab's essentials, no header or footer: for small tmux panes
    /// (automatic below 60 columns or 12 rows)
    #[arg(long)]
    pub compact: bool,

    /// Do not use colour (the NO_COLOR environment variable does the same)
    #[arg(long)]
    pub no_color: bool,

    /// Take the mouse: click tabs and rows (or `mouse = true` in the config;
    /// off by default so tmux and the terminal keep their own mouse)
    #[arg(long, conflicts_with = "no_mouse")]
    pub mouse: bool,

    /// Do not take the mouse, even when the config says `mouse = true`
    #[arg(long)]
    pub no_mouse: bool,

    /// Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml
    /// (~/.config/netlens/config.toml); flags override it
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// Print a commented default config file and exit
    #[arg(long)]
    pub print_config: bool,

    /// Record the session to FILE while watching (R starts and stops it too)
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub hook: HookArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options that choose what is collected and how often; shared by the live
/// view and `snapshot`.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)
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

    /// Watch every network namespace at once (live, snapshot, record,
    /// export): each namespace's sockets, interfaces and counters, labelled
    /// with its `ip netns` name, a process in it and its container
    #[arg(long, global = true, conflicts_with_all = ["netns", "pid"])]
    pub all_netns: bool,

    /// Do not load the eBPF programs (drop reasons, per-flow counts, socket
    /// owners, short connections' owners); each part falls back to /proc or
    /// the packet capture, or is left out, and says so
    #[arg(long, global = true)]
    pub no_bpf: bool,
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

/// DNS probes (opt-in: without --dns-probe netlens sends no query).
#[derive(Debug, Clone, Default, Args)]
pub struct DnsArgs {
    /// Probe a name on every DNS server once per interval (repeatable):
    /// NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)
    #[arg(long = "dns-probe", value_name = "PROBE")]
    pub dns_probe: Vec<String>,

    /// A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the
    /// nameservers of /etc/resolv.conf. The first also gets --resolve's (N's)
    /// PTR queries
    #[arg(long = "dns-server", value_name = "ADDR[:PORT]")]
    pub dns_server: Vec<String>,

    /// How long a query may go unanswered before it counts as a timeout,
    /// for probes and for queries seen on the wire; default: the `options
    /// timeout` of /etc/resolv.conf, else 5s (at most 60s)
    #[arg(long = "dns-timeout", value_parser = parse_dns_timeout, value_name = "D")]
    pub dns_timeout: Option<Duration>,
}

/// Names for addresses (opt-in: without --resolve or N no PTR query is sent).
#[derive(Debug, Clone, Default, Args)]
pub struct NamesArgs {
    /// Show reverse DNS names for addresses (PTR queries to the first
    /// --dns-server, else the first nameserver of /etc/resolv.conf; at most
    /// 20 a second, 2s timeout, cached) and service names for ports (from
    /// /etc/services); N toggles it in the live view. snapshot adds a
    /// names map (JSON) or section (text)
    #[arg(long)]
    pub resolve: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print samples for scripts: a sar-like table, or JSON Lines with --json
    Snapshot(SnapshotArgs),
    /// Print a pcap/pcapng file as tcpdump -n lines, or its flow table
    Read(ReadArgs),
    /// Generate load (iperf3, wrk, hping3 and pktgen style) to watch in the other tabs
    Load(LoadArgs),
    /// Record samples to a file without a screen, e.g. during an incident
    Record(RecordArgs),
    /// Replay a recording in the live view's UI, or print it (--json, --info)
    Replay(ReplayArgs),
    /// Capture packets headless: tcpdump -n lines, or a pcap file with -w
    Capture(CaptureCmdArgs),
    /// Serve the latest sample as OpenMetrics (Prometheus) on GET /metrics
    Export(ExportArgs),
    /// Print each TCP connection as it ends, as bcc's tcplife does
    Conns(ConnsArgs),
    /// Open a tmux troubleshooting layout: interfaces, TCP, flows and DNS panes
    Tmux(TmuxArgs),
    /// Print the counter catalogue's entry for a kernel counter or drop reason
    Explain(ExplainArgs),
    /// Trace the path to HOST[:PORT] hop by hop (TCP SYN, UDP or ICMP probes
    /// with a rising TTL, as traceroute --tcp and mtr): loss and RTT per hop
    Trace(TraceArgs),
    /// Trace one flow's packets through the nftables rules, as `nft monitor
    /// trace`: each rule, return and policy they met, with its verdict
    Nftrace(NftraceArgs),
    /// Print the man page (roff) to stdout
    Man,
    /// Print shell completions to stdout
    Completions {
        /// Shell to generate completions for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `netlens trace`: needs CAP_NET_RAW (raw sockets). Probes from the
/// namespace of --netns/--pid; one round (one probe per TTL) per --interval
/// at most.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// An IPv4 address, or a name (then resolved once through the system
    /// resolver), with an optional :PORT (default 80 for TCP, 33434 for UDP)
    #[arg(value_name = "HOST[:PORT]")]
    pub destination: String,

    /// Send UDP datagrams (the destination answers port unreachable)
    #[arg(long, conflicts_with = "icmp")]
    pub udp: bool,

    /// Send ICMP echo requests (the destination answers echo reply)
    #[arg(long)]
    pub icmp: bool,

    /// Destination port (TCP, UDP), as traceroute -p; overrides HOST:PORT's
    #[arg(short = 'p', long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Highest TTL probed
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub max_ttl: u8,

    /// Rounds to send, one probe per TTL each (default 10, or until
    /// --duration when that is given)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub count: Option<u32>,

    /// Stop sending after this long, e.g. 30s
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,

    /// Probes per second, at most (1000 at most)
    #[arg(long, default_value = "20", value_parser = parse_probe_rate)]
    pub rate: f64,

    /// A probe unanswered for this long counts as lost
    #[arg(long, default_value = "1s", value_parser = parse_probe_timeout, value_name = "D")]
    pub timeout: Duration,

    /// Print one JSON object: the hops, their figures and the findings
    #[arg(long)]
    pub json: bool,

    /// Name the hops by reverse DNS (PTR queries to the first nameserver of
    /// /etc/resolv.conf, as the live view's --resolve/N), asynchronously,
    /// waiting at most 2s at the end; without it no name is looked up
    #[arg(long)]
    pub resolve: bool,
}

/// `netlens nftrace`: needs CAP_NET_ADMIN. Adds a table of its own,
/// `inet netlens_trace_PID`, that sets nftrace on the flow's packets in both
/// directions (before every other chain), and removes it when it stops.
/// nf_tables only: rules of the legacy iptables are not traced.
#[derive(Debug, Args)]
pub struct NftraceArgs {
    /// tcp, udp, sctp, icmp, icmpv6, or an IP protocol number
    #[arg(value_name = "PROTO")]
    pub proto: String,

    /// One end: ADDR or ADDR:PORT ([ADDR]:PORT for IPv6); no port (or 0)
    /// is any port, 0.0.0.0 (or ::) any address
    #[arg(value_name = "A")]
    pub a: String,

    /// The other end, as A
    #[arg(value_name = "B")]
    pub b: String,

    /// Stop after this long, e.g. 30s (default: until Ctrl-C)
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,

    /// Stop after this many packets were traced
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,

    /// Print one JSON object per event, one per line
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConnsArgs {
    /// Print one JSON object per connection, one per line
    #[arg(long)]
    pub json: bool,

    /// Only the connections that failed: refused, syn-timeout,
    /// unreachable, reset, timeout
    #[arg(long)]
    pub failed: bool,

    /// Stop after this long (default: until SIGINT or SIGTERM)
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A counter (TcpExt.ListenOverflows, ListenOverflows, rx_missed_errors)
    /// or a drop reason (SOCKET_RCVBUFF); case does not matter
    #[arg(value_name = "NAME")]
    pub name: String,
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

    /// Print only the sockets, processes and flows EXPR keeps, in the tabs'
    /// filter language (FILTERS), e.g. 'port:443 state:estab'; --filter is
    /// the capture's pcap-filter
    #[arg(long = "where", value_name = "EXPR")]
    pub where_expr: Option<String>,

    /// Also record the samples (the baseline too) to FILE
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub capture: CaptureArgs,

    #[command(flatten)]
    pub dns: DnsArgs,

    #[command(flatten)]
    pub names: NamesArgs,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The recording to create (never overwritten; created with mode 0600)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        required_unless_present = "ring",
        conflicts_with = "ring"
    )]
    pub output: Option<std::path::PathBuf>,

    /// Stop after this long (default: until SIGINT or SIGTERM; at most 365 days)
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,

    #[command(flatten)]
    pub dns: DnsArgs,

    #[command(flatten)]
    pub capture: CaptureArgs,

    #[command(flatten)]
    pub hook: HookArgs,

    #[command(flatten)]
    pub flight: FlightArgs,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recording (from `netlens record`, --record or R in the live
    /// view), or an incident bundle's directory (its recording.nlrec)
    #[arg(value_name = "FILE|BUNDLE")]
    pub file: std::path::PathBuf,

    /// Playback speed, 0.25 to 4096 (times real time; above about 64 the samples a frame has no time for are skipped)
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

    /// Follow a recording still being written, as `tail -f`: the view
    /// plays from its end and shows each sample as it is appended (with
    /// --json, prints it), until the recorder closes the file or Ctrl-C
    #[arg(long, conflicts_with = "info")]
    pub follow: bool,
}

#[derive(Debug, Args)]
pub struct CaptureCmdArgs {
    /// Interface to capture on (default: any, every interface)
    #[arg(short = 'i', long = "iface", value_name = "IF")]
    pub iface: Option<String>,

    /// Only packets matching this pcap-filter expression, e.g. "tcp port 80"
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,

    /// Write packets to this file instead of printing lines: FILE.pcapng
    /// names each packet's interface, namespace, process and container;
    /// any other name is a classic pcap, as tcpdump -w writes
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<std::path::PathBuf>,

    /// Stop after this many matching packets
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,

    /// Stop after this long, e.g. 10s, 2m (at most 365 days)
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,

    /// Keep whole packets (up to 64 KiB) instead of the first 384 bytes
    #[arg(long)]
    pub payload: bool,
}

#[derive(Debug, Args)]
pub struct TmuxArgs {
    /// Name of the tmux session to create (inside tmux: of the new window)
    #[arg(long, value_name = "NAME", default_value = "netlens")]
    pub session: String,

    /// Create the session without attaching to it
    #[arg(long)]
    pub detached: bool,

    /// Capture on this interface only, in the Flows pane
    #[arg(long, value_name = "IF")]
    pub iface: Option<String>,

    /// The tmux server's socket name, as tmux -L takes it (default: tmux's)
    #[arg(long, value_name = "NAME")]
    pub tmux_socket: Option<String>,

    /// For the DNS pane (also taken before `tmux`).
    #[command(flatten)]
    pub dns: DnsArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Address and port to serve /metrics on (port 0 picks a free port)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9464")]
    pub listen: std::net::SocketAddr,

    #[command(flatten)]
    pub dns: DnsArgs,

    #[command(flatten)]
    pub hook: HookArgs,

    /// Also serve per-process TCP/UDP byte and retransmit counters (labels
    /// pid, command, cgroup, container: one series per process holding a socket)
    #[arg(long)]
    pub per_process: bool,

    /// Also capture packets (384 bytes each, every interface): servers'
    /// response times (netlens_server_response_seconds) and the findings
    /// that need packets, for the capture's CPU
    #[arg(long)]
    pub capture: bool,

    #[command(flatten)]
    pub flight: FlightArgs,
}

/// The flight recorder, for `record` and `export` (see FLIGHT RECORDER in
/// the man page).
#[derive(Debug, Clone, Args)]
pub struct FlightArgs {
    /// Keep a rolling recording of the last D in --ring-dir, dropping whole
    /// segments (a minute each, shorter for a ring under 3m) from the old end
    #[arg(long, value_parser = parse_duration, value_name = "D", requires = "ring_dir")]
    pub ring: Option<Duration>,

    /// The ring's directory (created mode 0700; never a symbolic link)
    #[arg(long, value_name = "DIR", requires = "ring")]
    pub ring_dir: Option<std::path::PathBuf>,

    /// Bound the ring's files to SIZE on disk (e.g. 200M, 1G): older
    /// segments are dropped sooner when over it
    #[arg(long, value_parser = parse_size, value_name = "SIZE", default_value = "256M",
          requires = "ring")]
    pub max_size: u64,

    /// Write an incident bundle when a finding of this level (warn, crit)
    /// or id starts, comma-separated, e.g. crit,udp-drops
    #[arg(long, value_name = "warn|crit|ID,...", requires = "ring")]
    pub freeze_on: Option<String>,

    /// How much after the finding's start a bundle holds
    #[arg(long, value_parser = parse_duration, value_name = "D", default_value = "1m",
          requires = "freeze_on")]
    pub freeze_after: Duration,

    /// Where bundles go (default: the ring's directory)
    #[arg(long, value_name = "DIR", requires = "freeze_on")]
    pub bundle_dir: Option<std::path::PathBuf>,

    /// At most N bundles in any hour; the ones over it are named on stderr
    /// and not written
    #[arg(long, value_name = "N", default_value_t = 6,
          value_parser = clap::value_parser!(u32).range(1..=3600), requires = "freeze_on")]
    pub max_bundles_per_hour: u32,
}

/// `--on-finding`: for the live view, `record` and `export`.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// Run CMD (with /bin/sh -c) when a finding starts and when it clears,
    /// the finding as JSON on its stdin (see ON-FINDING in the man page)
    #[arg(long, value_name = "CMD")]
    pub on_finding: Option<String>,

    /// Kill an --on-finding command (its process group) still running
    /// after D
    #[arg(long, value_parser = parse_duration, value_name = "D", default_value = "10s",
          requires = "on_finding")]
    pub on_finding_timeout: Duration,
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
    Sockets,
    Tcp,
    Dns,
    Drops,
    Processes,
}

/// `--tab` takes the names of the tab table, `config::TABS`.
impl ValueEnum for Tab {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}
