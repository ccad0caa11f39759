//! What a sample carries about DNS: the resolver configuration and the
//! queries (probed or seen on the wire) with what became of them. The
//! prober, the passive matcher and the monitor that fill it are in `dns`
//! and `packet`.

use serde::{Deserialize, Serialize};

/// What became of one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Ok,
    Timeout,
    Nxdomain,
    Servfail,
    Refused,
    /// Any other failure: another rcode, a bad reply, no route.
    Error,
    /// ICMP port unreachable: nothing listens on the server's port.
    Unreachable,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Timeout => "timeout",
            Outcome::Nxdomain => "nxdomain",
            Outcome::Servfail => "servfail",
            Outcome::Refused => "refused",
            Outcome::Error => "error",
            Outcome::Unreachable => "port unreachable",
        }
    }

    /// From a response code (RFC 1035 numbering).
    pub fn from_rcode(rcode: u16) -> Self {
        match rcode {
            0 => Outcome::Ok,
            2 => Outcome::Servfail,
            3 => Outcome::Nxdomain,
            5 => Outcome::Refused,
            _ => Outcome::Error,
        }
    }
}

/// One query and what became of it, from a probe or seen on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DnsResult {
    /// Wall-clock time the query was sent (seen), Unix seconds.
    pub t: f64,
    /// "ip:port" of the server asked.
    pub server: String,
    /// The question's name, without the trailing dot.
    pub name: String,
    /// "A", "AAAA", "PTR", ...
    pub qtype: String,
    /// Query to response; None when there was no response.
    pub latency_ms: Option<f64>,
    pub outcome: Outcome,
    /// The answer records' data, at most `MAX_ANSWERS`.
    #[serde(default)]
    pub answers: Vec<String>,
}

/// Answers kept per result (enough to read, bounded for recordings).
pub const MAX_ANSWERS: usize = 4;

/// Everything DNS a sample carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DnsSample {
    /// The system's resolver configuration as read at start.
    pub config: ResolverConfig,
    /// The probe targets ("ip:port"), and the probes ("A example.com").
    pub servers: Vec<String>,
    pub probe_specs: Vec<String>,
    /// Probe results completed during this sample's interval.
    pub probes: Vec<DnsResult>,
    /// Queries seen on the wire and settled (answered or timed out) during
    /// this sample's interval.
    pub passive: Vec<DnsResult>,
    /// Passive results not carried: over the per-sample bound, or queries
    /// whose answer the capture may have dropped (not timeouts).
    #[serde(default)]
    pub passive_dropped: u64,
    /// Whether passive matching runs (capture is on), or why not.
    pub passive_on: bool,
    pub passive_error: Option<String>,
    /// Seconds after which a query without an answer is a timeout.
    pub timeout_s: f64,
    /// The results of the last `recent_s` seconds (this interval's too),
    /// which the findings use so they do not flicker. Derived, so neither
    /// recorded nor in the JSON: a replay's findings use the interval's.
    #[serde(skip)]
    pub recent: Vec<DnsResult>,
    #[serde(skip)]
    pub recent_s: f64,
}

/// glibc's defaults (resolv.conf(5)).
pub const DEFAULT_TIMEOUT_S: u32 = 5;
pub const DEFAULT_ATTEMPTS: u32 = 2;
pub const DEFAULT_NDOTS: u32 = 1;
/// glibc uses at most three nameservers.
pub const MAXNS: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolverConfig {
    /// Nameserver addresses in order (all listed; glibc uses the first 3).
    pub nameservers: Vec<String>,
    /// Search domains (the last `search` or `domain` line wins, as in glibc).
    pub search: Vec<String>,
    pub timeout_s: u32,
    pub attempts: u32,
    pub rotate: bool,
    pub ndots: u32,
    /// Host entries (address + name lines) in /etc/hosts; None if unreadable.
    pub hosts_entries: Option<usize>,
    /// The `hosts:` line of nsswitch.conf (the sources), None if absent.
    pub nsswitch_hosts: Option<String>,
    /// Why a file could not be read, if one could not.
    pub error: Option<String>,
}

impl Default for ResolverConfig {
    fn default() -> Self {
        Self {
            nameservers: Vec::new(),
            search: Vec::new(),
            timeout_s: DEFAULT_TIMEOUT_S,
            attempts: DEFAULT_ATTEMPTS,
            rotate: false,
            ndots: DEFAULT_NDOTS,
            hosts_entries: None,
            nsswitch_hosts: None,
            error: None,
        }
    }
}
