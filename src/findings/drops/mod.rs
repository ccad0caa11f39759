//! Findings from the kernel's drop reasons: a reason whose drops in the
//! watched namespace exceed its catalogue threshold raises `drop:<REASON>`
//! ("drop:NETFILTER_DROP") with the reason's words, the rate, where
//! (namespace, location, interface or socket and its process) and the fix.
//! Info reasons and those a hand-written finding reports raise nothing; a
//! reason the catalogue lacks raises `drop:unknown` at a default threshold.
//! The Drops tab shows the same per-site rates (`site_rates`).

use super::catalogue::{self, Level, Reason};
use super::{Evidence, Finding, Hold, process_of};
use crate::model::Sample;
use crate::model::drops::{DropRow, DropSocket, DropsSample, owning_socket, row_rate};
use crate::model::firewall::{Attribution, attribute, counter_advice, delete_command};
use crate::model::rates::interval;
use crate::model::socket_table::SocketTable;

/// The finding id of a reason the catalogue does not know (a newer kernel):
/// the reason's name is in the summary and the evidence row.
pub const DROP_UNKNOWN: &str = "drop:unknown";

/// One drop site's rate over the interval.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteRate<'a> {
    pub row: &'a DropRow,
    /// Drops per second; None when the count went down (a reload).
    pub per_s: Option<f64>,
}

/// The drops of the current sample, when reasons are counted.
pub fn counted(current: &Sample) -> Option<&DropsSample> {
    current.drops.as_ref().filter(|d| d.unavailable.is_none())
}

/// Whether a row belongs to the watched namespace (every row when the
/// watched namespace's inode is unknown).
pub fn in_watched(drops: &DropsSample, row: &DropRow) -> bool {
    drops.netns_inode == 0 || row.netns_inode == drops.netns_inode
}

/// Every row of `current` with its rate since `previous` (of the same
/// namespace), busiest first; rates are None without a previous sample
/// that counted (`row_rate`).
pub fn site_rates<'a>(previous: Option<&Sample>, current: &'a Sample) -> Vec<SiteRate<'a>> {
    let Some(drops) = counted(current) else {
        return Vec::new();
    };
    let previous = previous.filter(|p| p.netns == current.netns);
    let before = previous.and_then(|p| p.drops.as_ref());
    let seconds = previous.map_or(0.0, |p| interval(p, current));
    let mut out: Vec<SiteRate> = drops
        .rows
        .iter()
        .map(|row| SiteRate {
            row,
            per_s: row_rate(before, row, seconds),
        })
        .collect();
    out.sort_by(|a, b| {
        b.per_s
            .unwrap_or(-1.0)
            .total_cmp(&a.per_s.unwrap_or(-1.0))
            .then(b.row.packets.cmp(&a.row.packets))
    });
    out
}

pub use crate::model::drops::NETFILTER_DROP;

/// The firewall rules behind the watched namespace's NETFILTER_DROP drops
/// between two samples that both read the rules; None otherwise.
pub fn firewall_attribution<'a>(
    previous: Option<&Sample>,
    current: &'a Sample,
) -> Option<Attribution<'a>> {
    let now = current.firewall.as_ref()?;
    let previous = previous.filter(|p| p.netns == current.netns)?;
    let before = previous.firewall.as_ref()?;
    // The rules are the watched namespace's own: only its drops count,
    // not those of the namespaces the initial one's view also shows.
    let netfilter = counted(current)
        .filter(|_| counted(previous).is_some())
        .map(|drops| {
            site_rates(Some(previous), current)
                .iter()
                .filter(|s| s.row.reason == NETFILTER_DROP)
                .filter(|s| drops.netns_inode == 0 || s.row.netns_inode == drops.netns_inode)
                .filter_map(|s| s.per_s)
                .sum()
        });
    Some(attribute(before, now, netfilter))
}

/// "udp:5353 PID 812 (avahi-daemon)", or "udp:5353" when no socket matches.
pub fn socket_label(sockets: &SocketTable, socket: &DropSocket) -> String {
    let proto_port = format!("{}:{}", socket.proto, socket.port);
    match owning_socket(sockets, socket) {
        Some(s) if !s.users.is_empty() => format!("{proto_port} {}", process_of(&s)),
        _ => proto_port,
    }
}

/// The `drop:` findings of `current`.
pub fn evaluate(previous: Option<&Sample>, current: &Sample) -> Vec<Finding> {
    let Some(drops) = counted(current) else {
        return Vec::new();
    };
    if previous.is_none_or(|p| p.netns != current.netns || counted(p).is_none()) {
        return Vec::new();
    }
    // Per reason: the summed rate and the busiest site.
    let mut by_reason: Vec<(&str, f64, &SiteRate)> = Vec::new();
    let sites = site_rates(previous, current);
    for site in sites.iter().filter(|s| in_watched(drops, s.row)) {
        let rate = site.per_s.unwrap_or(0.0);
        match by_reason.iter_mut().find(|(r, ..)| *r == site.row.reason) {
            Some((_, sum, busiest)) => {
                *sum += rate;
                if rate > busiest.per_s.unwrap_or(0.0) {
                    *busiest = site;
                }
            }
            None => by_reason.push((&site.row.reason, rate, site)),
        }
    }
    by_reason
        .into_iter()
        .filter_map(|(name, rate, busiest)| {
            let known = catalogue::reason(name);
            let (level, per_s) = match known {
                Some(r) if !r.raises() => return None,
                Some(r) => (r.level, r.per_s),
                None => (Level::Warn, catalogue::UNKNOWN_PER_S),
            };
            (rate > per_s && rate > 0.0).then(|| {
                let mut found = finding(known, name, level, rate, busiest.row, current);
                if name == NETFILTER_DROP
                    && let Some(rules) = firewall_attribution(previous, current)
                {
                    name_the_rule(&mut found, &rules);
                }
                found
            })
        })
        .collect()
}

fn finding(
    known: Option<&'static Reason>,
    name: &str,
    level: Level,
    rate: f64,
    site: &DropRow,
    current: &Sample,
) -> Finding {
    let mut place = format!("netns {} at {}", netns_label(site, current), site.location);
    if let Some(iface) = &site.interface {
        place.push_str(&format!(" on {iface}"));
    }
    if let Some(socket) = &site.socket {
        place.push_str(&format!(", {}", socket_label(&current.sockets, socket)));
    }
    if let Some(to) = &site.destination {
        place.push_str(&format!(", to {to}"));
        if let Some(from) = &site.translated_from {
            place.push_str(&format!(" (translated from {from})"));
        }
    }
    let (id, meaning, fix) = match known {
        Some(r) => (r.finding, r.meaning, r.fix.to_string()),
        None => (
            DROP_UNKNOWN,
            "not in the catalogue",
            format!(
                "a drop reason of a newer kernel: see SKB_DROP_REASON_{name} in its include/net/dropreason-core.h"
            ),
        ),
    };
    let iface = site.interface.as_deref().unwrap_or("IF");
    Finding {
        hold: Hold::default(),
        id,
        severity: level.into(),
        summary: format!("{name} {rate:.1}/s in {place}: {meaning}"),
        hint: {
            let fix = fix.replace(" IF", &format!(" {iface}"));
            // The settings netlens reads are the watched namespace's.
            let here = site.netns.is_empty() || site.netns == current.netns;
            if here {
                crate::findings::settings::with_values(&fix, current)
            } else {
                fix
            }
        },
        evidence: Evidence {
            netns: None,
            tab: "drops",
            row: name.to_string(),
        },
    }
}

/// A NETFILTER_DROP finding names the rule that dropped the most, and its
/// fix; without a counting rule, the candidates without a counter.
fn name_the_rule(found: &mut Finding, rules: &Attribution) {
    if let Some(top) = rules.counted.first() {
        let rule = top.rule;
        found.summary.push_str(&format!(
            "; the rule `{}` in {} drops {:.1}/s",
            rule.text,
            rule.place(),
            top.per_s
        ));
        if rules.counted.len() > 1 {
            found
                .summary
                .push_str(&format!(" ({} more rules drop)", rules.counted.len() - 1));
        }
        found.hint = format!(
            "if {} should not drop these packets, remove it: {}",
            if rule.policy {
                "that policy"
            } else {
                "that rule"
            },
            delete_command(rule)
        );
    } else if let Some(first) = rules.candidates.first() {
        found.summary.push_str(&format!(
            "; no rule with a counter dropped them: {} candidate{} without one, first `{}` in {}",
            rules.candidates.len(),
            if rules.candidates.len() == 1 { "" } else { "s" },
            first.text,
            first.place()
        ));
        found.hint = format!(
            "to see which rule drops, count it: {}",
            counter_advice(first)
        );
    }
}

/// The namespace as findings name it: the row's label, else the sample's.
fn netns_label<'a>(site: &'a DropRow, current: &'a Sample) -> &'a str {
    if !site.netns.is_empty() {
        &site.netns
    } else if current.netns.is_empty() {
        "host"
    } else {
        &current.netns
    }
}

/// Whether the drop reasons count in `current` but have no rate yet: their
/// program attached since `previous` (a live view loads it after its
/// first sample). The counters a reason would name wait one sample.
pub fn warming_up(previous: Option<&Sample>, current: &Sample) -> bool {
    counted(current).is_some() && previous.is_some_and(|p| counted(p).is_none())
}

/// The reasons of `findings` raised here: a `counter:` finding whose entry
/// lists one of them is not raised beside it (the reason is the more
/// specific claim); while the reasons are `warming_up`, no counter that
/// lists a reason is.
pub fn suppresses(drop_findings: &[Finding], counter_id: &str, warming_up: bool) -> bool {
    let Some(entry) = catalogue::entries().find(|e| e.finding == counter_id) else {
        return false;
    };
    if warming_up && !entry.reasons.is_empty() {
        return true;
    }
    drop_findings.iter().any(|f| {
        f.id.strip_prefix("drop:")
            .is_some_and(|reason| entry.reasons.contains(&reason))
    })
}

#[cfg(test)]
mod tests;
