//! The firewall's rules and counters in the watched namespace: nf_tables
//! over netlink (`nftables`), the legacy iptables tables through their
//! getsockopt interface (`iptables`), and nftrace of one flow on request
//! (`trace`). Both reads need CAP_NET_ADMIN; neither loads a module.

pub mod iptables;
pub mod nftables;
pub mod session;
pub mod trace;

use super::ctnetlink::Ctnetlink;
use crate::model::firewall::FirewallSample;
use std::io;

/// Reads the watched namespace's rules; made on the thread (or a child of
/// the thread) that entered it.
pub struct FirewallCollector {
    netlink: io::Result<Ctnetlink>,
}

impl Default for FirewallCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl FirewallCollector {
    pub fn new() -> Self {
        Self {
            netlink: Ctnetlink::new(),
        }
    }

    /// Every rule of both backends: the sample keeps those that drop. A
    /// backend the kernel lacks adds nothing; when neither could be read,
    /// the sample says why.
    pub fn collect(&mut self) -> FirewallSample {
        let read_mono = super::boottime_seconds();
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        let nft = match &mut self.netlink {
            Ok(netlink) => nftables::read(netlink),
            Err(error) => Err(io::Error::new(error.kind(), error.to_string())),
        };
        for (backend, read) in [("nf_tables", nft), ("iptables-legacy", iptables::read())] {
            match read {
                Ok(read) => rules.extend(read),
                Err(error) if absent(&error) => {}
                Err(error) => errors.push(reason(backend, &error)),
            }
        }
        let mut sample = FirewallSample::of(rules, read_mono);
        if errors.len() == 2 || (!errors.is_empty() && sample.total_rules == 0) {
            sample.unavailable = Some(errors.join("; "));
        }
        sample
    }
}

/// The kernel has no such backend (not built, module not loaded).
fn absent(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EPROTONOSUPPORT | libc::EAFNOSUPPORT | libc::ENOENT | libc::EOPNOTSUPP)
    )
}

fn reason(backend: &str, error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => {
            format!("reading the {backend} rules needs CAP_NET_ADMIN (run as root)")
        }
        _ => format!("reading the {backend} rules failed: {error}"),
    }
}

/// The rules' texts by (family, table, chain, handle), to name the rules a
/// trace met: read from nf_tables again when a handle is not known (a rule
/// added since), at most once a second.
pub struct RuleTexts {
    netlink: Option<Ctnetlink>,
    texts: std::collections::HashMap<(String, String, String, u64), String>,
    read_at: Option<std::time::Instant>,
}

impl RuleTexts {
    /// Opens its socket in the calling thread's namespace.
    pub fn new() -> Self {
        Self {
            netlink: Ctnetlink::new().ok(),
            texts: Default::default(),
            read_at: None,
        }
    }

    /// The text of the rule an event names, as `nft list ruleset` prints
    /// it; None for a policy or return, or a rule no longer there.
    pub fn text(&mut self, event: &trace::TraceEvent) -> Option<&str> {
        let handle = event.handle?;
        let key = (
            event.family.clone(),
            event.table.clone(),
            event.chain.clone(),
            handle,
        );
        let stale = self
            .read_at
            .is_none_or(|at| at.elapsed() >= std::time::Duration::from_secs(1));
        if !self.texts.contains_key(&key) && stale {
            self.read_at = Some(std::time::Instant::now());
            if let Some(rules) = self.netlink.as_mut().and_then(|n| nftables::read(n).ok()) {
                self.texts = rules
                    .into_iter()
                    .filter_map(|r| Some(((r.family, r.table, r.chain, r.handle?), r.text)))
                    .collect();
            }
        }
        self.texts.get(&key).map(String::as_str)
    }
}

impl Default for RuleTexts {
    fn default() -> Self {
        Self::new()
    }
}

/// One event as `nft monitor trace` prints it: "trace id 7a3f0c01 inet
/// filter input rule tcp dport 22 accept (verdict accept)"; `rule` is the
/// rule's text when known. A packet's headers come on a line of their own
/// before its first event in a base chain.
pub fn trace_lines(event: &trace::TraceEvent, rule: Option<&str>) -> Vec<String> {
    let head = format!(
        "trace id {:08x} {} {} {}",
        event.id, event.family, event.table, event.chain
    );
    let mut lines = Vec::new();
    if let Some(packet) = &event.packet {
        let mut line = format!("{head} packet: {packet}");
        for (name, iface) in [("iif", &event.iif), ("oif", &event.oif)] {
            if let Some(iface) = iface {
                line.push_str(&format!(" {name} \"{iface}\""));
            }
        }
        if let Some(hook) = &event.hook {
            line.push_str(&format!(" hook {hook}"));
        }
        lines.push(line);
    }
    let verdict = event.verdict.as_deref().unwrap_or("continue");
    lines.push(match event.kind.as_str() {
        "rule" => match (rule, event.handle) {
            (Some(text), _) => format!("{head} rule {text} (verdict {verdict})"),
            (None, Some(handle)) => format!("{head} rule handle {handle} (verdict {verdict})"),
            (None, None) => format!("{head} rule (verdict {verdict})"),
        },
        "policy" => format!("{head} policy {verdict}"),
        kind => format!("{head} {kind} {verdict}"),
    });
    lines
}
