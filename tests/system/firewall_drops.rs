//! Which firewall rule dropped it: a namespace this test creates holds a
//! ruleset of several rules, one of which drops a share of one port's
//! datagrams (198.18.0.0/15 on the namespace's loopback, bounded). netlens,
//! watching that namespace, must name that rule as `nft list ruleset` or
//! `iptables-save` prints it, with its rate agreeing with the rule's own
//! counter and with the NETFILTER_DROP drops the kernel reported, and name
//! no other rule: in `snapshot --json`'s firewall section and findings, in
//! a recording's `replay --json`, and in the live Drops tab in tmux. A
//! dropping rule without a counter is named as a candidate, with the
//! command that makes it count. Three backends: nft, iptables-legacy and
//! iptables of the nf_tables backend.

use crate::common::bpf_support::snapshot_attached;
use crate::common::{self, ChildGuard, NETLENS, Netns};
use serde_json::Value;

const ADDR: &str = "198.18.78.1";
/// A quarter of this port's datagrams are dropped by the rule under test.
const DROPPED_PORT: u16 = 7100;
/// A counting drop rule nothing is sent to: never named.
const IDLE_PORT: u16 = 7101;
/// Dropped by a rule without a counter (the candidate test).
const UNCOUNTED_PORT: u16 = 7102;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Backend {
    Nft,
    Legacy,
    IptablesNft,
}

/// The namespace, its loopback addressed, the ruleset loaded.
fn namespace(tag: &str, backend: Backend) -> Netns {
    let ns = Netns::new(tag);
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", &format!("{ADDR}/24"), "dev", "lo"]);
    match backend {
        Backend::Nft => {
            let ruleset = format!(
                "table inet fw {{\n\
                 \x20 chain input {{\n\
                 \x20   type filter hook input priority 0; policy accept;\n\
                 \x20   udp dport {IDLE_PORT} counter drop\n\
                 \x20   udp dport {DROPPED_PORT} numgen random mod 4 0 counter drop\n\
                 \x20   udp dport {DROPPED_PORT} counter accept\n\
                 \x20   udp dport {UNCOUNTED_PORT} drop\n\
                 \x20 }}\n\
                 }}\n"
            );
            let file = common::scratch(&ns.name, "ruleset.nft");
            std::fs::write(&file, ruleset).unwrap();
            common::ns_exec(&ns.name, &["nft", "-f", file.to_str().unwrap()]);
        }
        Backend::Legacy | Backend::IptablesNft => {
            let tool = if backend == Backend::Legacy {
                "iptables-legacy"
            } else {
                "iptables-nft"
            };
            for rule in [
                format!("-p udp --dport {IDLE_PORT} -j DROP"),
                format!(
                    "-p udp --dport {DROPPED_PORT} -m statistic --mode random \
                     --probability 0.25 -j DROP"
                ),
                format!("-p udp --dport {DROPPED_PORT} -j ACCEPT"),
            ] {
                let mut args = vec![tool, "-A", "INPUT"];
                args.extend(rule.split(' '));
                common::ns_exec(&ns.name, &args);
            }
        }
    }
    ns
}

/// `count` datagrams to `port`, 10 every 10 ms (1,000 a second).
fn send(ns: &Netns, port: u16, count: u32) -> ChildGuard {
    let script = format!(
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         for _ in range({}):\n    for _ in range(10): s.sendto(b'x',('{ADDR}',{port}))\n    time.sleep(0.01)\n",
        count / 10
    );
    common::python_in(&ns.name, &script)
}

/// The dropping rule as its own tool lists it: (text as netlens must
/// print it, its packet counter, the command that removes it).
fn listed_rule(ns: &Netns, backend: Backend, port: u16) -> (String, u64, String) {
    match backend {
        Backend::Nft | Backend::IptablesNft => {
            let listing = common::ns_exec(&ns.name, &["nft", "-a", "list", "ruleset"]);
            let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
            let line = listing
                .lines()
                .map(str::trim)
                .find(|l| l.contains(&format!("dport {port} ")) && l.contains(" drop"))
                .unwrap_or_else(|| panic!("no drop rule for {port}:\n{listing}"));
            let (rule, handle) = line.split_once(" # handle ").expect("a handle");
            let (text, packets) = strip_counter(rule);
            let (family, table, chain) = if backend == Backend::Nft {
                ("inet", "fw", "input")
            } else {
                ("ip", "filter", "INPUT")
            };
            let fix = format!("nft delete rule {family} {table} {chain} handle {handle}");
            (text, packets, fix)
        }
        Backend::Legacy => {
            let save = common::ns_exec(&ns.name, &["iptables-legacy-save", "-c"]);
            let save = String::from_utf8_lossy(&save.stdout).into_owned();
            let rules: Vec<&str> = save.lines().filter(|l| l.contains("-A INPUT")).collect();
            let position = rules
                .iter()
                .position(|l| l.contains(&format!("--dport {port} ")) && l.ends_with("DROP"))
                .unwrap_or_else(|| panic!("no drop rule for {port}:\n{save}"));
            let (counters, text) = rules[position].split_once("] ").unwrap();
            let packets = counters
                .trim_start_matches('[')
                .split(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let fix = format!("iptables-legacy -t filter -D INPUT {}", position + 1);
            (text.to_string(), packets, fix)
        }
    }
}

/// "udp dport 7100 counter packets 12 bytes 345 drop" → ("udp dport 7100
/// counter drop", 12).
fn strip_counter(rule: &str) -> (String, u64) {
    let words: Vec<&str> = rule.split(' ').collect();
    let Some(at) = words.iter().position(|w| *w == "packets") else {
        return (rule.to_string(), 0);
    };
    let packets = words[at + 1].parse().unwrap();
    let mut kept = words[..at].to_vec();
    kept.extend_from_slice(&words[at + 4..]);
    (kept.join(" "), packets)
}

/// The firewall section's rule of `text` in one sample.
fn rule_in<'a>(sample: &'a Value, key: &str, text: &str) -> Option<&'a Value> {
    sample["firewall"][key]
        .as_array()?
        .iter()
        .find(|r| r["text"] == text)
}

/// The NETFILTER_DROP drops counted so far.
fn netfilter_packets(sample: &Value) -> u64 {
    sample["drops"]["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["reason"] == "NETFILTER_DROP")
        .filter_map(|r| r["packets"].as_u64())
        .sum()
}

fn netfilter_per_s(sample: &Value) -> f64 {
    sample["drops"]["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["reason"] == "NETFILTER_DROP")
        .filter_map(|r| r["per_s"].as_f64())
        .sum()
}

/// Runs one backend: snapshot (with a recording) while a quarter of 4,000
/// datagrams are dropped, then every place the rule must show.
fn names_the_rule(backend: Backend, tag: &str) {
    let ns = namespace(tag, backend);
    let record = common::scratch(&ns.name, "firewall.nlr");
    let netns = format!("--netns={}", ns.name);
    // Ten samples (9 s) for a 4 s sender: the last sample must follow
    // its last datagram even when a loaded host starts python slowly.
    let snapshot = snapshot_attached(&[
        "--count",
        "10",
        "--no-capture",
        "--section",
        "drops,findings",
        &netns,
        "--record",
        record.to_str().unwrap(),
    ]);
    let (_, before, _) = listed_rule(&ns, backend, DROPPED_PORT);
    let mut sender = send(&ns, DROPPED_PORT, 4000);
    sender.0.wait().unwrap();
    let (text, after, fix) = listed_rule(&ns, backend, DROPPED_PORT);
    let samples = common::snapshot_samples(snapshot);
    let dropped = after - before;
    assert!(
        (700..=1300).contains(&dropped),
        "{backend:?}: the rule dropped {dropped} of 4000"
    );

    // Every interval's rate, summed over its length, adds up to what the
    // rule's counter says it dropped, and to the NETFILTER_DROP drops the
    // kernel reported meanwhile (each interval's two rates differ by the
    // few milliseconds between the two reads, the sums do not).
    let mut counted = 0.0;
    for (i, sample) in samples.iter().enumerate() {
        let rule = rule_in(sample, "dropping", &text).unwrap_or_else(|| {
            panic!("{backend:?}: `{text}` not among the dropping rules: {sample}")
        });
        let per_s = rule["per_s"].as_f64().unwrap_or(0.0);
        // The first shown sample's rate is over the interval before it.
        if i > 0 {
            counted += per_s * sample["interval"].as_f64().unwrap();
        }
        // No other rule is named, and nothing is unexplained.
        for other in sample["firewall"]["dropping"].as_array().unwrap() {
            if other["text"] != text.as_str() {
                assert!(
                    other["per_s"].as_f64().unwrap_or(0.0) == 0.0,
                    "{backend:?}: another rule named: {other}"
                );
            }
        }
        assert_eq!(sample["firewall"]["candidates"], serde_json::json!([]));
    }
    let packets = |sample: &Value| {
        rule_in(sample, "dropping", &text).unwrap()["packets"]
            .as_u64()
            .unwrap()
    };
    let (first, last) = (samples.first().unwrap(), samples.last().unwrap());
    assert_eq!(
        packets(last),
        after,
        "{backend:?}: the counter as the tool lists it"
    );
    let grown = (after - packets(first)) as f64;
    assert!(
        (counted - grown).abs() <= grown * 0.02 + 2.0,
        "{backend:?}: rates add up to {counted}, the counter grew by {grown}"
    );
    let kernel = (netfilter_packets(last) - netfilter_packets(first)) as f64;
    eprintln!(
        "{backend:?}: counter grew {grown}, rates sum to {counted:.1}, NETFILTER_DROP grew {kernel}"
    );
    assert!(
        (kernel - grown).abs() <= grown * 0.02 + 2.0,
        "{backend:?}: NETFILTER_DROP grew by {kernel}, the rule's counter by {grown}"
    );

    // The finding names the rule, its rate and the command that removes it.
    let finding = samples
        .iter()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .find(|f| f["id"] == "drop:NETFILTER_DROP")
        .unwrap_or_else(|| panic!("{backend:?}: no drop:NETFILTER_DROP finding"));
    let summary = finding["summary"].as_str().unwrap();
    assert!(summary.contains(&format!("the rule `{text}`")), "{summary}");
    assert!(
        !summary.contains(&format!("dport {IDLE_PORT}")),
        "{summary}"
    );
    assert_eq!(
        finding["hint"].as_str().unwrap().split(": ").last(),
        Some(fix.as_str())
    );

    // The recording replays the same rates.
    let replay = std::process::Command::new(NETLENS)
        .args(["replay", "--json", record.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let replayed = common::parse_lines(&replay.stdout);
    let rates = |samples: &[Value]| -> Vec<f64> {
        samples
            .iter()
            .filter_map(|s| rule_in(s, "dropping", &text)?["per_s"].as_f64())
            .filter(|r| *r > 0.0)
            .collect()
    };
    let live = rates(&samples);
    let again = rates(&replayed);
    assert!(!live.is_empty());
    assert!(
        live.iter()
            .all(|r| again.iter().any(|a| (a - r).abs() < 1e-6)),
        "{backend:?}: snapshot {live:?}, replay {again:?}"
    );
}

#[test]
fn nft_the_rule_that_drops_is_named_with_its_rate() {
    if common::need_root(&["ip", "nft", "python3"]) {
        return;
    }
    names_the_rule(Backend::Nft, "fwnft");
}

#[test]
fn iptables_legacy_the_rule_that_drops_is_named_with_its_rate() {
    if common::need_root(&["ip", "iptables-legacy", "python3"]) {
        return;
    }
    names_the_rule(Backend::Legacy, "fwlegacy");
}

#[test]
fn iptables_nft_the_rule_that_drops_is_named_with_its_rate() {
    if common::need_root(&["ip", "iptables-nft", "nft", "python3"]) {
        return;
    }
    names_the_rule(Backend::IptablesNft, "fwiptnft");
}

/// Drops by a rule without a counter: no counted rule explains them, so
/// the rules that drop without counting are named as candidates, with the
/// nft command that makes the first count; the counting rules are not.
#[test]
fn a_rule_without_counter_is_named_a_candidate() {
    if common::need_root(&["ip", "nft", "python3"]) {
        return;
    }
    let ns = namespace("fwcand", Backend::Nft);
    let netns = format!("--netns={}", ns.name);
    let snapshot = snapshot_attached(&[
        "--count",
        "4",
        "--no-capture",
        "--section",
        "drops,findings",
        &netns,
    ]);
    let mut sender = send(&ns, UNCOUNTED_PORT, 2500);
    sender.0.wait().unwrap();
    let samples = common::snapshot_samples(snapshot);
    let listing = common::ns_exec(
        &ns.name,
        &["nft", "-a", "list", "chain", "inet", "fw", "input"],
    );
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let handle = listing
        .lines()
        .find(|l| l.contains(&format!("dport {UNCOUNTED_PORT} drop")))
        .and_then(|l| l.split(" # handle ").nth(1))
        .unwrap_or_else(|| panic!("{listing}"))
        .trim()
        .to_string();
    let text = format!("udp dport {UNCOUNTED_PORT} drop");
    let busy: Vec<&Value> = samples
        .iter()
        .filter(|s| netfilter_per_s(s) > 100.0)
        .collect();
    assert!(!busy.is_empty(), "no interval with the drops");
    for sample in &busy {
        let firewall = &sample["firewall"];
        let candidates = firewall["candidates"].as_array().unwrap();
        assert_eq!(candidates.len(), 1, "{firewall}");
        assert_eq!(candidates[0]["text"], text.as_str(), "{firewall}");
        assert_eq!(candidates[0]["handle"].to_string(), handle);
        let unexplained = firewall["unexplained_per_s"].as_f64().unwrap();
        let kernel = netfilter_per_s(sample);
        assert!(
            (unexplained - kernel).abs() <= kernel * 0.02 + 1.0,
            "unexplained {unexplained}/s, NETFILTER_DROP {kernel}/s"
        );
    }
    let finding = samples
        .iter()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .find(|f| f["id"] == "drop:NETFILTER_DROP")
        .expect("a drop:NETFILTER_DROP finding");
    let summary = finding["summary"].as_str().unwrap();
    assert!(summary.contains("1 candidate without one"), "{summary}");
    assert!(summary.contains(&format!("`{text}`")), "{summary}");
    assert!(
        finding["hint"].as_str().unwrap().ends_with(&format!(
            "nft replace rule inet fw input handle {handle} udp dport {UNCOUNTED_PORT} counter drop"
        )),
        "{finding}"
    );
}

/// The live Drops tab at 80x24 lists the rule under the drop sites, with
/// its rate, and no other rule.
#[test]
fn the_drops_tab_lists_the_rule() {
    if common::need_root(&["ip", "nft", "python3", "tmux"]) {
        return;
    }
    let Some(tmux) = common::tmux::Tmux::new("fwtab") else {
        return;
    };
    let ns = namespace("fwtab", Backend::Nft);
    let _sender = send(&ns, DROPPED_PORT, 20_000);
    let command = format!(
        "env TZ=UTC NO_COLOR=1 TERM=tmux-256color {NETLENS} --config /dev/null --no-capture \
         --netns {} --tab drops",
        ns.name
    );
    tmux.session("fw", 80, 24, &command);
    let rule = format!("udp dport {DROPPED_PORT} numgen random mod 4 0 counter drop");
    let rate_of = |line: &str| -> Option<f64> {
        let line = line.strip_prefix("inet fw input #")?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    // The NETFILTER_DROP reason's rate, which counts the same packets.
    let reason_rate = |line: &str| -> Option<f64> {
        let line = line.strip_prefix("NETFILTER_DROP")?;
        line.split_whitespace().next()?.parse().ok()
    };
    // Both rates, once the reasons have one (the live view's first
    // samples are 250 ms apart and its drop program attaches after the
    // first: its rates start a sample later).
    let screen = tmux.wait_for("fw", "the rule with its rate", |lines| {
        lines
            .iter()
            .any(|l| l.contains("firewall rules that dropped"))
            && lines.iter().any(|l| reason_rate(l).is_some())
            && lines
                .iter()
                .any(|l| rate_of(l).is_some_and(|r| r > 50.0) && l.contains(&rule[..30]))
    });
    let text = screen.join("\n");
    let line = screen.iter().find(|l| rate_of(l).is_some()).unwrap();
    let rate = rate_of(line).unwrap();
    let reason = screen.iter().find_map(|l| reason_rate(l)).unwrap();
    // A quarter of up to 1,000 a second (python sends slower on a loaded
    // host), and what the reason counted over nearly the same interval.
    assert!((100.0..=350.0).contains(&rate), "{rate}/s\n{text}");
    assert!(
        (rate - reason).abs() <= reason * 0.25,
        "rule {rate}/s, NETFILTER_DROP {reason}/s\n{text}"
    );
    assert!(!text.contains(&format!("dport {IDLE_PORT}")), "{text}");
    assert!(screen.iter().all(|l| l.chars().count() <= 80), "{text}");
    tmux.keys("fw", &["q"]);
}
