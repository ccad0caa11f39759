//! The `firewall` section of `snapshot --json` (with the drops): the
//! watched namespace's rules that can drop, with their counters and drops
//! per second, and the candidates for the NETFILTER_DROP drops no counted
//! rule explains (the man page's SNAPSHOT OUTPUT lists the keys).

use crate::findings::drops::firewall_attribution;
use crate::model::Sample;
use crate::model::firewall::{Backend, Rule, Verdict};
use serde::Serialize;

#[derive(Serialize)]
pub struct FirewallJson<'a> {
    unavailable: Option<&'a str>,
    /// Rules in the ruleset, dropping or not.
    total_rules: u64,
    /// Dropping rules past the bound, not listed.
    left_out: u64,
    /// Every dropping rule and policy, in ruleset order.
    dropping: Vec<RuleJson<'a>>,
    /// Those without a counter that may be behind the unexplained drops.
    candidates: Vec<RuleJson<'a>>,
    /// NETFILTER_DROP drops per second that no counted rule explains.
    unexplained_per_s: f64,
}

#[derive(Serialize)]
struct RuleJson<'a> {
    backend: Backend,
    family: &'a str,
    table: &'a str,
    chain: &'a str,
    handle: Option<u64>,
    position: u32,
    policy: bool,
    text: &'a str,
    verdict: &'a Verdict,
    packets: Option<u64>,
    bytes: Option<u64>,
    /// Drops per second over the interval; null without a counter or an
    /// earlier read.
    per_s: Option<f64>,
}

/// None when the sample holds no read of the rules.
pub fn json<'a>(previous: &Sample, current: &'a Sample) -> Option<FirewallJson<'a>> {
    let firewall = current.firewall.as_ref()?;
    let attribution = firewall_attribution(Some(previous), current);
    let rate = |rule: &Rule| {
        let attribution = attribution.as_ref()?;
        rule.counter?;
        Some(
            attribution
                .counted
                .iter()
                .find(|r| std::ptr::eq(r.rule, rule))
                .map_or(0.0, |r| r.per_s),
        )
    };
    let row = |rule: &'a Rule| RuleJson {
        backend: rule.backend,
        family: &rule.family,
        table: &rule.table,
        chain: &rule.chain,
        handle: rule.handle,
        position: rule.position,
        policy: rule.policy,
        text: &rule.text,
        verdict: &rule.verdict,
        packets: rule.counter.map(|c| c.packets),
        bytes: rule.counter.map(|c| c.bytes),
        per_s: rate(rule),
    };
    Some(FirewallJson {
        unavailable: firewall.unavailable.as_deref(),
        total_rules: firewall.total_rules,
        left_out: firewall.left_out,
        dropping: firewall.rules.iter().map(row).collect(),
        candidates: attribution
            .as_ref()
            .map(|a| a.candidates.iter().map(|r| row(r)).collect())
            .unwrap_or_default(),
        unexplained_per_s: attribution.as_ref().map_or(0.0, |a| a.unexplained_per_s),
    })
}
