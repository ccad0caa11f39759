//! The man page: rendered by build.rs from src/cli/, the keymap, the
//! threshold table (src/findings/thresholds/table.rs) and the sections
//! below, and committed as man/netlens.1 (a test keeps it fresh).

/// The rendered page.
pub const MAN_PAGE: &str = include_str!(concat!(env!("OUT_DIR"), "/netlens.1"));

/// The hand-written sections (build.rs includes the same file).
pub mod connlog;
pub mod netns;
pub mod sections;

/// docs/findings.md's table, from the same names table the man page's
/// FINDINGS renders (tests/docs/readme.rs keeps the page's copy fresh).
pub fn findings_table() -> String {
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = String::from("| id | what it means | evidence | fix |\n|---|---|---|---|\n");
    for entry in crate::findings::names::NAMES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            entry.id,
            cell(entry.means),
            cell(entry.evidence),
            cell(entry.fix)
        ));
    }
    out
}

/// The page against the code it describes: these read the whole page, so
/// they live here at the top rather than beside the code.
#[cfg(test)]
mod tests {
    use crate::findings::Thresholds;

    /// The man page's table (also --print-config's) names every field of
    /// Thresholds with its default, and nothing else.
    #[test]
    fn threshold_table_matches_the_struct() {
        let table = crate::findings::thresholds::THRESHOLDS;
        let text: String = table
            .iter()
            .map(|(key, default, _)| format!("{key} = {default}\n"))
            .collect();
        let parsed: Thresholds = toml::from_str(&text).unwrap();
        assert_eq!(parsed, Thresholds::DEFAULT);
        let fields = serde_json::to_value(Thresholds::DEFAULT).unwrap();
        let fields = fields.as_object().unwrap();
        assert_eq!(fields.len(), table.len());
        for (key, _, _) in table {
            assert!(fields.contains_key(*key), "{key}");
            assert!(
                crate::manual::MAN_PAGE.contains(&format!("\\fB{key}\\fR")),
                "man page lacks {key}"
            );
        }
    }

    /// FINDINGS states the default thresholds in words; this keeps the prose
    /// in step with `Thresholds::DEFAULT` (CONFIGURATION's table has its own
    /// test above).
    #[test]
    fn man_page_states_the_default_thresholds() {
        let page = crate::manual::MAN_PAGE;
        let d = Thresholds::DEFAULT;
        for needle in [
            format!("{} or more sockets in SYN_RECV", d.syn_flood_syn_recv),
            format!("growing by {:.0}/s", d.syn_flood_rise_per_s),
            format!("{:.0} syncookies/s", d.syn_flood_cookies_per_s),
            format!("{:.0} pkt/s", d.small_packet_pps),
            format!("averaging {:.0} bytes", d.small_packet_bytes),
            format!("for {} samples", d.stuck_queue_samples),
            format!(
                "reached {:.0}% (warn) or {:.0}% (crit)",
                d.retrans_warn_percent, d.retrans_crit_percent
            ),
            format!("at least {:.0} segments/s", d.retrans_min_out_segs_per_s),
            format!(
                "{} or more of one process on one port warn, {} or more are crit, and {} or more",
                d.close_wait_warn_sockets, d.close_wait_crit_sockets, d.close_wait_growing_sockets
            ),
            format!(
                "reached {:.0}% (warn) or {:.0}% (crit)",
                d.port_exhaustion_warn_percent, d.port_exhaustion_crit_percent
            ),
            format!(
                "{} or more (warn) or {} or more (crit) sockets in SYN_SENT",
                d.connect_timeout_warn_sockets, d.connect_timeout_crit_sockets
            ),
            format!(
                "(default {:.0}: any drop; crit from {:.0}/s)",
                d.udp_drops_per_s, d.udp_drops_crit_per_s
            ),
            format!(
                "refused at {:.0}/s or more (crit from {:.0}/s)",
                d.connect_refused_warn_per_s, d.connect_refused_crit_per_s
            ),
            format!(
                "reached {:.0}% of net.ipv4.tcp_max_orphans",
                d.tcp_orphans_warn_percent
            ),
        ] {
            assert!(page.contains(&needle), "man page lacks {needle:?}");
        }
    }
}
