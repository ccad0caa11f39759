//! The firewall's rules that can drop a packet, with their counters: what
//! `collect::firewall` reads from nf_tables (netlink) and the legacy
//! iptables tables (getsockopt) of the watched namespace. Joined with the
//! NETFILTER_DROP drops, they name the rule behind a drop.

use serde::{Deserialize, Serialize};

/// Which kernel interface a rule was read from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// nf_tables: `nft`, and `iptables` of the nf_tables backend.
    #[default]
    Nftables,
    /// The legacy x_tables (`iptables-legacy`, `ip6tables-legacy`).
    IptablesLegacy,
}

impl Backend {
    /// What the command that lists these rules is called.
    pub fn tool(self) -> &'static str {
        match self {
            Backend::Nftables => "nft",
            Backend::IptablesLegacy => "iptables-legacy",
        }
    }
}

/// What a rule does to a packet it matches, as far as drops go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Accept,
    /// `drop`, `-j DROP`.
    Drop,
    /// `reject`, `-j REJECT`: answers, then drops (NETFILTER_DROP too).
    Reject,
    /// `jump CHAIN`, `-j CHAIN`.
    Jump(String),
    /// `goto CHAIN`, `-g CHAIN`.
    Goto(String),
    Return,
    /// Anything else: `queue`, a NAT or mark target, a rule with no verdict
    /// (a counter or log only), which goes on to the next rule.
    Other,
}

impl Verdict {
    /// Whether a packet this rule matches is dropped here.
    pub fn drops(&self) -> bool {
        matches!(self, Verdict::Drop | Verdict::Reject)
    }
}

/// Packets and bytes a rule (or a chain's policy) counted since it was
/// made or its counters were last zeroed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Counter {
    pub packets: u64,
    pub bytes: u64,
}

/// One rule, or a base chain's policy (then `policy` is true and `text`
/// reads "policy drop" for nf_tables, ":INPUT DROP" for iptables).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Rule {
    pub backend: Backend,
    /// "ip", "ip6", "inet", "arp", "bridge", "netdev".
    pub family: String,
    pub table: String,
    pub chain: String,
    /// nf_tables' rule handle (`nft -a`); None for iptables and policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
    /// 1-based position in its chain; 0 for a policy.
    pub position: u32,
    /// The rule as `nft list ruleset` (without counter values) or
    /// `iptables-save` prints it; control characters escaped.
    pub text: String,
    pub verdict: Verdict,
    /// None for an nf_tables rule without a `counter` statement, and a
    /// base chain created without counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<Counter>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub policy: bool,
}

/// What identifies a rule across reads: everything but its counter and
/// verdict. Two identical iptables rules in one chain differ by position.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RuleId<'a> {
    backend: Backend,
    family: &'a str,
    table: &'a str,
    chain: &'a str,
    handle: Option<u64>,
    position: u32,
    text: &'a str,
    policy: bool,
}

impl<'a> RuleId<'a> {
    fn of(rule: &'a Rule) -> Self {
        RuleId {
            backend: rule.backend,
            family: &rule.family,
            table: &rule.table,
            chain: &rule.chain,
            handle: rule.handle,
            position: rule.position,
            text: &rule.text,
            policy: rule.policy,
        }
    }
}

impl Rule {
    /// "ip filter INPUT" (nf_tables) or "filter INPUT" (iptables).
    pub fn place(&self) -> String {
        match self.backend {
            Backend::Nftables => format!("{} {} {}", self.family, self.table, self.chain),
            Backend::IptablesLegacy if self.family == "ip6" => {
                format!("ip6tables {} {}", self.table, self.chain)
            }
            Backend::IptablesLegacy => format!("{} {}", self.table, self.chain),
        }
    }
}

/// The rules of the watched namespace that can drop: those whose verdict
/// drops, and base chains whose policy does. Rules that accept or jump are
/// not kept (they cannot be behind a NETFILTER_DROP).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FirewallSample {
    /// Why the rules were not read ("needs CAP_NET_ADMIN (run as root)",
    /// ...); None when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Every dropping rule, in ruleset order; at most `MAX_RULES`.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Rules of the ruleset in all, dropping or not.
    #[serde(default)]
    pub total_rules: u64,
    /// Dropping rules left out past `MAX_RULES`.
    #[serde(default)]
    pub left_out: u64,
    /// CLOCK_BOOTTIME seconds of the read: rates are taken between two
    /// reads, which a late read (or one skipped) puts apart by more than
    /// the samples.
    #[serde(default)]
    pub read_mono: f64,
}

impl FirewallSample {
    /// The sample of `rules` (the whole ruleset, read at `read_mono`): its
    /// dropping rules and policies, at most `MAX_RULES`.
    pub fn of(rules: Vec<Rule>, read_mono: f64) -> Self {
        let total_rules = rules.iter().filter(|r| !r.policy).count() as u64;
        let mut dropping: Vec<Rule> = rules.into_iter().filter(|r| r.verdict.drops()).collect();
        let left_out = dropping.len().saturating_sub(MAX_RULES) as u64;
        dropping.truncate(MAX_RULES);
        FirewallSample {
            unavailable: None,
            rules: dropping,
            total_rules,
            left_out,
            read_mono,
        }
    }
}

/// Dropping rules kept per sample: a ruleset is bounded by what a process
/// in the namespace (perhaps a container's root) wrote.
pub const MAX_RULES: usize = 5_000;
/// A rule's text is cut here (with "…"): a set of ten thousand addresses
/// inline would fill the screen and the recording.
pub const MAX_TEXT: usize = 400;

/// Cuts `text` to `MAX_TEXT` characters.
pub fn bounded_text(text: String) -> String {
    if text.chars().count() <= MAX_TEXT {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_TEXT - 1).collect();
    cut.push('…');
    cut
}

/// A counted dropping rule's drops per second over an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleRate<'a> {
    pub rule: &'a Rule,
    pub per_s: f64,
}

/// Which rules dropped in an interval, joined with the NETFILTER_DROP
/// drops the kernel counted in the same namespace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attribution<'a> {
    /// Rules whose counter grew, busiest first.
    pub counted: Vec<RuleRate<'a>>,
    /// Dropping rules (and policies) without a counter, in ruleset order:
    /// named when the counted rules leave drops unexplained.
    pub candidates: Vec<&'a Rule>,
    /// NETFILTER_DROP drops per second the counted rules do not explain
    /// (0 when they explain them all, or the drops are not counted).
    pub unexplained_per_s: f64,
}

/// Unexplained drops below this share of the NETFILTER_DROP rate are the
/// difference in timing between the drop count and the rules' read, not a
/// rule: both count the same packets, read some milliseconds apart.
pub const UNEXPLAINED_SHARE: f64 = 0.1;
/// And below this rate (per second) too: one packet more or less in a
/// second.
pub const UNEXPLAINED_MIN_PER_S: f64 = 1.0;

/// The rules of `current` that dropped since `previous` (two reads of the
/// same namespace), and the candidates for the rest of `netfilter_per_s`
/// (None when drop reasons are not counted: no candidate is named then).
pub fn attribute<'a>(
    previous: &FirewallSample,
    current: &'a FirewallSample,
    netfilter_per_s: Option<f64>,
) -> Attribution<'a> {
    let seconds = current.read_mono - previous.read_mono;
    if seconds <= 0.0 || current.unavailable.is_some() || previous.unavailable.is_some() {
        return Attribution::default();
    }
    // By identity, once: thousands of rules against thousands.
    let before: std::collections::HashMap<RuleId, u64> = previous
        .rules
        .iter()
        .filter_map(|r| Some((RuleId::of(r), r.counter?.packets)))
        .collect();
    let mut counted: Vec<RuleRate> = current
        .rules
        .iter()
        .filter_map(|rule| {
            let now = rule.counter?.packets;
            let before = *before.get(&RuleId::of(rule))?;
            let grown = now.checked_sub(before).filter(|&g| g > 0)?;
            Some(RuleRate {
                rule,
                per_s: grown as f64 / seconds,
            })
        })
        .collect();
    counted.sort_by(|a, b| b.per_s.total_cmp(&a.per_s));
    let explained: f64 = counted.iter().map(|r| r.per_s).sum();
    let unexplained_per_s = netfilter_per_s.map_or(0.0, |all| {
        let rest = all - explained;
        if rest > UNEXPLAINED_MIN_PER_S && rest > all * UNEXPLAINED_SHARE {
            rest
        } else {
            0.0
        }
    });
    let candidates = if unexplained_per_s > 0.0 {
        current
            .rules
            .iter()
            .filter(|r| r.counter.is_none())
            .collect()
    } else {
        Vec::new()
    };
    Attribution {
        counted,
        candidates,
        unexplained_per_s,
    }
}

/// The command that removes `rule`, as the fix of a drop it should not make.
pub fn delete_command(rule: &Rule) -> String {
    match (rule.backend, rule.policy, rule.handle) {
        (Backend::Nftables, false, Some(handle)) => format!(
            "nft delete rule {} {} {} handle {handle}",
            rule.family, rule.table, rule.chain
        ),
        (Backend::Nftables, true, _) => format!(
            "nft 'chain {} {} {} {{ policy accept; }}'",
            rule.family, rule.table, rule.chain
        ),
        (Backend::IptablesLegacy, true, _) => format!(
            "{} -t {} -P {} ACCEPT",
            legacy_command(rule),
            rule.table,
            rule.chain
        ),
        _ => format!(
            "{} -t {} -D {} {}",
            legacy_command(rule),
            rule.table,
            rule.chain,
            rule.position
        ),
    }
}

fn legacy_command(rule: &Rule) -> &'static str {
    if rule.family == "ip6" {
        "ip6tables-legacy"
    } else {
        "iptables-legacy"
    }
}

/// How a dropping rule without a counter is made to count: the nft
/// command that replaces it with the same rule and a `counter` before its
/// verdict.
pub fn counter_advice(rule: &Rule) -> String {
    if rule.policy {
        return format!(
            "chain {} {} {} has no counters: `nft add rule {} {} {} counter` at its end counts what its policy drops",
            rule.family, rule.table, rule.chain, rule.family, rule.table, rule.chain
        );
    }
    let verdict = match rule.verdict {
        Verdict::Reject => "reject",
        _ => "drop",
    };
    let words: Vec<&str> = rule.text.split(' ').collect();
    let text = match words.iter().rposition(|w| *w == verdict) {
        Some(at) => {
            let mut counted = words[..at].to_vec();
            counted.push("counter");
            counted.extend_from_slice(&words[at..]);
            counted.join(" ")
        }
        None => format!("{} counter", rule.text),
    };
    format!(
        "nft replace rule {} {} {} handle {} {text}",
        rule.family,
        rule.table,
        rule.chain,
        rule.handle.unwrap_or(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(chain: &str, handle: u64, text: &str, counter: Option<u64>) -> Rule {
        Rule {
            backend: Backend::Nftables,
            family: "inet".into(),
            table: "filter".into(),
            chain: chain.into(),
            handle: Some(handle),
            position: handle as u32,
            text: text.into(),
            verdict: Verdict::Drop,
            counter: counter.map(|packets| Counter {
                packets,
                bytes: packets * 60,
            }),
            policy: false,
        }
    }

    fn read(rules: Vec<Rule>, mono: f64) -> FirewallSample {
        FirewallSample::of(rules, mono)
    }

    #[test]
    fn the_rules_whose_counter_grew_are_named_busiest_first() {
        let before = read(
            vec![
                rule("input", 4, "tcp dport 80 counter drop", Some(100)),
                rule("input", 5, "tcp dport 81 counter drop", Some(7)),
                rule("input", 6, "tcp dport 82 counter drop", Some(0)),
            ],
            10.0,
        );
        let after = read(
            vec![
                rule("input", 4, "tcp dport 80 counter drop", Some(300)),
                rule("input", 5, "tcp dport 81 counter drop", Some(1007)),
                rule("input", 6, "tcp dport 82 counter drop", Some(0)),
            ],
            12.0,
        );
        let found = attribute(&before, &after, Some(600.0));
        let named: Vec<(u64, f64)> = found
            .counted
            .iter()
            .map(|r| (r.rule.handle.unwrap(), r.per_s))
            .collect();
        assert_eq!(named, vec![(5, 500.0), (4, 100.0)]);
        assert_eq!(found.unexplained_per_s, 0.0);
        assert!(found.candidates.is_empty());
    }

    #[test]
    fn unexplained_drops_name_the_rules_without_counter() {
        let rules = |n| {
            vec![
                rule("input", 4, "tcp dport 80 counter drop", Some(n)),
                rule("input", 5, "tcp dport 81 drop", None),
            ]
        };
        let (before, after) = (read(rules(0), 1.0), read(rules(50), 2.0));
        // The counted rule explains 50 of 250 per second.
        let found = attribute(&before, &after, Some(250.0));
        assert_eq!(found.unexplained_per_s, 200.0);
        assert_eq!(found.candidates.len(), 1);
        assert_eq!(found.candidates[0].handle, Some(5));
        // Timing noise (a packet or a few percent) names none.
        for netfilter in [50.9, 54.0] {
            assert!(
                attribute(&before, &after, Some(netfilter))
                    .candidates
                    .is_empty()
            );
        }
        // Without drop reasons, no candidate is guessed.
        assert!(attribute(&before, &after, None).candidates.is_empty());
    }

    #[test]
    fn a_reset_counter_or_a_new_rule_is_no_rate() {
        let before = read(
            vec![rule("input", 4, "tcp dport 80 counter drop", Some(90))],
            1.0,
        );
        let after = read(
            vec![
                rule("input", 4, "tcp dport 80 counter drop", Some(10)),
                rule("input", 7, "udp dport 53 counter drop", Some(10)),
            ],
            2.0,
        );
        assert!(attribute(&before, &after, Some(0.0)).counted.is_empty());
    }

    #[test]
    fn only_dropping_rules_are_kept_and_bounded() {
        let mut rules: Vec<Rule> = (0..MAX_RULES as u64 + 3)
            .map(|h| rule("input", h, "drop", Some(0)))
            .collect();
        let mut accept = rule("input", 1, "accept", Some(0));
        accept.verdict = Verdict::Accept;
        rules.push(accept);
        let sample = read(rules, 1.0);
        assert_eq!(sample.rules.len(), MAX_RULES);
        assert_eq!(sample.left_out, 3);
        assert_eq!(sample.total_rules, MAX_RULES as u64 + 4);
        assert!(sample.rules.iter().all(|r| r.verdict.drops()));
    }

    #[test]
    fn the_fixes_are_commands_for_the_rule() {
        let r = rule("input", 5, "tcp dport 81 drop comment \"x\"", None);
        assert_eq!(
            counter_advice(&r),
            "nft replace rule inet filter input handle 5 tcp dport 81 counter drop comment \"x\""
        );
        assert_eq!(
            delete_command(&r),
            "nft delete rule inet filter input handle 5"
        );
        let legacy = Rule {
            backend: Backend::IptablesLegacy,
            family: "ip".into(),
            handle: None,
            position: 3,
            ..r
        };
        assert_eq!(
            delete_command(&legacy),
            "iptables-legacy -t filter -D input 3"
        );
    }
}
