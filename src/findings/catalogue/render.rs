//! The catalogue as text: `netlens explain`, the man page section and the
//! docs/catalogue.md blocks.

use super::conns::{CONNS, Conn, conn};
use super::{
    Entry, Level, NOT_FAILURES, REASONS, Reason, entries, is_not_failure, reason, related_counters,
};
use std::collections::BTreeMap;
use std::fmt::Write;

/// When an entry raises a finding, in words: "warn above 5/s",
/// "info: shown, raises nothing", "reported by listen-overflow".
fn raises(entry: &Entry) -> String {
    match (entry.covered_by, entry.level) {
        (Some(finding), _) => format!("reported by the {finding} finding"),
        (None, Level::Info) => "info: normal life, raises nothing".to_string(),
        (None, level) => format!(
            "{} (finding {}) above {}/s",
            level.label(),
            entry.finding,
            entry.per_s
        ),
    }
}

fn reasons(entry: &Entry) -> String {
    if entry.reasons.is_empty() {
        "none".to_string()
    } else {
        entry.reasons.join(", ")
    }
}

/// One entry as `netlens explain` prints it, with its reasons' meanings.
pub fn entry_text(entry: &Entry) -> String {
    let mut out = format!(
        "{}  ({})\n  meaning:  {}\n  fix:      {}\n  reasons:  {}\n",
        entry.id,
        entry.source.label(),
        entry.meaning,
        entry.fix,
        reasons(entry),
    );
    for name in entry.reasons {
        if let Some(r) = reason(name) {
            let _ = writeln!(out, "            {name}: {}", r.meaning);
        }
    }
    let _ = writeln!(out, "  finding:  {}", raises(entry));
    out
}

/// When a reason raises a finding, in words.
pub fn reason_raises(r: &Reason) -> String {
    match (r.covered_by, r.level) {
        (Some(finding), _) => format!("reported by the {finding} finding"),
        (None, Level::Info) => "info: normal life, raises nothing".to_string(),
        (None, level) => format!(
            "{} (finding {}) above {}/s",
            level.label(),
            r.finding,
            r.per_s
        ),
    }
}

/// A drop reason as `netlens explain` prints it, with the counters that
/// count the same packets.
pub fn reason_text(r: &Reason) -> String {
    let mut out = format!(
        "{}  (drop reason SKB_DROP_REASON_{})\n  meaning:  {}\n  fix:      {}\n  finding:  {}\n",
        r.name,
        r.name,
        r.meaning,
        r.fix,
        reason_raises(r)
    );
    let counting: Vec<&Entry> = related_counters(r.name).collect();
    if counting.is_empty() {
        out.push_str("  counters: none in the catalogue counts these drops\n");
    } else {
        out.push_str("  counters:\n");
        for entry in counting {
            let _ = writeln!(out, "    {:<28} {}", entry.id, entry.meaning);
        }
    }
    out
}

/// A name folded for matching: lower case, without SKB_DROP_REASON_.
fn fold(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    lower
        .strip_prefix("skb_drop_reason_")
        .unwrap_or(&lower)
        .to_string()
}

/// `netlens explain NAME`: the catalogue's entries for a counter
/// (case-insensitive, with or without its group: "noports" gives every
/// NoPorts) or for a drop reason. `kernel` holds the counters the running
/// kernel has, by "Group.Name", so that one the catalogue lacks is still
/// named. Err: the one-line error, with the closest names.
pub fn explain(name: &str, kernel: &BTreeMap<String, u64>) -> Result<String, String> {
    let wanted = fold(name);
    if wanted.is_empty() {
        return Err("explain: give a counter or drop reason, e.g. TcpExt.ListenOverflows".into());
    }
    let matches = |id: &str| {
        let id = id.to_ascii_lowercase();
        id == wanted || id.split_once('.').is_some_and(|(_, n)| n == wanted)
    };
    let found: Vec<&Entry> = entries().filter(|e| matches(e.id)).collect();
    if !found.is_empty() {
        return Ok(found
            .iter()
            .map(|e| entry_text(e))
            .collect::<Vec<_>>()
            .join("\n"));
    }
    if let Some(r) = reason(&wanted) {
        return Ok(reason_text(r));
    }
    if let Some(c) = conn(&wanted) {
        return Ok(conn_text(c));
    }
    let not_failure = NOT_FAILURES
        .iter()
        .map(|n| n.trim_end_matches('*'))
        .chain(kernel.keys().map(String::as_str))
        .find(|id| matches(id) && (is_not_failure(id) || NOT_FAILURES.contains(id)));
    if let Some(id) = not_failure {
        return Ok(format!(
            "{id}: counts volume or state, not trouble (not a failure counter)\n"
        ));
    }
    if let Some((id, value)) = kernel.iter().find(|(id, _)| matches(id)) {
        return Ok(format!(
            "{id}: not in the catalogue (a counter of this kernel, now {value})\n"
        ));
    }
    Err(format!(
        "explain: no counter or drop reason named {:?}; closest: {}",
        name.trim(),
        closest(&wanted, kernel).join(", ")
    ))
}

/// When a connection entry raises its finding, in words.
fn conn_raises(c: &Conn) -> String {
    format!(
        "{} (finding {}) at {}{}",
        c.level.label(),
        c.finding,
        c.threshold,
        c.unit
    )
}

/// A connection catalogue entry as `netlens explain` prints it.
pub fn conn_text(c: &Conn) -> String {
    format!(
        "{}  (tcp_info: {})\n  meaning:  {}\n  fix:      {}\n  finding:  {}\n",
        c.finding,
        c.fields,
        c.meaning,
        c.fix,
        conn_raises(c)
    )
}

/// The man page's CONNECTION CATALOGUE section.
pub fn conns_man_section() -> String {
    let mut out = String::from(
        ".SH CONNECTION CATALOGUE\n\
         What the kernel's own accounting of each TCP connection (tcp_info, as \\fBss \\-ti\\fR \
         prints it) says about why it is slow. Each sample's counters are compared with the \
         sample before, so a finding is about the interval. Connections are judged in groups: \
         a process and the /24 (IPv6: /64) it sends to, in one namespace, never one finding \
         per socket; a group counts once its connections had data in flight for a fifth of \
         the interval. \\fBnetlens explain\\fR \\fINAME\\fR prints one entry.\n",
    );
    for c in CONNS {
        let _ = writeln!(
            out,
            ".TP\n\\fB{}\\fR (tcp_info: {}; {})\n{} Fix: {}.",
            roff(c.finding),
            roff(c.fields),
            roff(&conn_raises(c)),
            roff(&capital(c.meaning.trim_end_matches('.'))),
            roff(c.fix)
        );
    }
    out
}

/// docs/catalogue.md's connection catalogue block.
pub fn conns_readme_block() -> String {
    let mut out = String::from(
        "Generated from src/findings/catalogue/conns.rs; `netlens explain NAME` prints one.\n\n\
         | Finding | tcp_info | Raises | Meaning | Fix |\n|---|---|---|---|---|\n",
    );
    for c in CONNS {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            c.finding,
            cell(c.fields),
            cell(&conn_raises(c)),
            cell(c.meaning),
            cell(c.fix)
        );
    }
    out
}

/// The three known names nearest to `wanted` by edit distance.
fn closest(wanted: &str, kernel: &BTreeMap<String, u64>) -> Vec<String> {
    let mut names: Vec<&str> = entries().map(|e| e.id).collect();
    names.extend(REASONS.iter().map(|r| r.name));
    names.extend(CONNS.iter().map(|c| c.finding));
    names.extend(kernel.keys().map(String::as_str));
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|n| {
            let lower = n.to_ascii_lowercase();
            let short = lower.split_once('.').map_or(lower.as_str(), |(_, s)| s);
            (distance(wanted, &lower).min(distance(wanted, short)), n)
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Levenshtein distance, on bytes (names are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

fn roff(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}

/// The man page's COUNTER CATALOGUE section.
pub fn man_section() -> String {
    let mut out = String::from(
        ".SH COUNTER CATALOGUE\n\
         Every kernel counter that means trouble, from /proc/net/snmp, /proc/net/netstat, \
         /proc/net/snmp6, each interface's stats64, its root qdisc and conntrack's statistics. \
         Each entry: what it means, the kernel drop reasons (SKB_DROP_REASON_*) counting the \
         same packets, the fix to try, and when it raises a finding: a counter rising faster \
         than its threshold raises \\fBcounter:\\fIGroup.Name\\fR (see FINDINGS), unless a \
         finding written for it reports it already; info entries are normal life and raise \
         nothing. \\fBnetlens explain\\fR \\fINAME\\fR prints one entry. A counter the kernel \
         has that is not listed here is shown by its name with \"not in the catalogue\".\n",
    );
    for entry in entries() {
        let _ = writeln!(
            out,
            ".TP\n\\fB{}\\fR ({}; {}; reasons: {})\n{} Fix: {}.",
            roff(entry.id),
            roff(entry.source.label()),
            roff(&raises(entry)),
            roff(&reasons(entry)),
            roff(&capital(entry.meaning)),
            roff(entry.fix)
        );
    }
    let _ = writeln!(
        out,
        ".PP\nNot failures (volume and state): {}.",
        roff(&NOT_FAILURES.join(", "))
    );
    out
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// docs/catalogue.md's catalogue block (between its markers, checked by
/// tests/docs/catalogue.rs): a table of every entry.
pub fn readme_block() -> String {
    let count = entries().count();
    let raising = entries().filter(|e| e.raises()).count();
    let mut out = format!(
        "{count} entries ({raising} raise a `counter:<Id>` finding of their own; the others are \
         info or reported by a finding written for them). Generated from \
         src/findings/catalogue/; `netlens explain NAME` prints one.\n\n\
         <details><summary>The catalogue</summary>\n\n\
         | Counter | Raises | Drop reasons | Meaning | Fix |\n|---|---|---|---|---|\n"
    );
    for entry in entries() {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            entry.id,
            cell(&raises(entry)),
            cell(&reasons(entry)),
            cell(entry.meaning),
            cell(entry.fix)
        );
    }
    out.push_str("\n</details>\n");
    out
}

/// The man page's DROP REASONS section.
pub fn reasons_man_section() -> String {
    let mut out = String::from(
        ".SH DROP REASONS\n\
         Every reason the kernel gives for dropping a packet (the \\fBskb:kfree_skb\\fR \
         tracepoint's SKB_DROP_REASON_*, as counted for the Drops tab): what it means, the \
         fix to try, when it raises \\fBdrop:\\fIREASON\\fR (see FINDINGS), and the counters of \
         the COUNTER CATALOGUE that count the same packets. Info reasons are normal life: \
         shown, raising nothing. A reason this table lacks (a newer kernel) is shown by its \
         name with \"not in the catalogue\" and raises a warn finding above ",
    );
    let _ = writeln!(
        out,
        "{}/s. \\fBnetlens explain\\fR \\fIREASON\\fR prints one.",
        super::UNKNOWN_PER_S
    );
    for r in REASONS {
        let counters: Vec<&str> = related_counters(r.name).map(|e| e.id).collect();
        let counters = if counters.is_empty() {
            "none".to_string()
        } else {
            counters.join(", ")
        };
        let _ = writeln!(
            out,
            ".TP\n\\fB{}\\fR ({}; counters: {})\n{} Fix: {}.",
            roff(r.name),
            roff(&reason_raises(r)),
            roff(&counters),
            roff(&capital(r.meaning)),
            roff(r.fix)
        );
    }
    out
}

/// docs/catalogue.md's drop reasons block (between its markers).
pub fn reasons_readme_block() -> String {
    let count = REASONS.len();
    let raising = REASONS.iter().filter(|r| r.raises()).count();
    let mut out = format!(
        "{count} drop reasons ({raising} raise a `drop:<REASON>` finding of their own; the \
         others are info or reported by a finding written for them). Generated from \
         src/findings/catalogue/reasons.rs; `netlens explain REASON` prints one.\n\n\
         <details><summary>The drop reasons</summary>\n\n\
         | Reason | Raises | Counters | Meaning | Fix |\n|---|---|---|---|---|\n"
    );
    for r in REASONS {
        let counters: Vec<&str> = related_counters(r.name).map(|e| e.id).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            r.name,
            cell(&reason_raises(r)),
            if counters.is_empty() {
                "none".to_string()
            } else {
                counters.join(", ")
            },
            cell(r.meaning),
            cell(r.fix)
        );
    }
    out.push_str("\n</details>\n");
    out
}
