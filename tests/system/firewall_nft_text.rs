//! Root test of the nf_tables reader against nft itself: a varied ruleset
//! (several families, sets, maps, counters, policy-drop chains, NAT, and
//! the xt matches iptables-nft leaves to x_tables) is loaded into a
//! namespace this test makes, a few packets go through a counting rule on
//! its loopback (198.18.7.1, nowhere else), and every rule netlens reads
//! must be the rule `nft -a list ruleset` prints: same order, handle,
//! text (counter values aside), counter values and verdict.

use crate::common;

use common::*;
use netlens::model::firewall::{Counter, Rule, Verdict};
use std::net::UdpSocket;

/// The address on the namespace's loopback the counted packets go to.
const LOCAL: &str = "198.18.7.1";
const PACKETS: usize = 5;
const PAYLOAD: usize = 20;

const RULESET: &str = r#"
table inet nl_filter {
	set allowed4 {
		type ipv4_addr
		flags interval
		elements = { 198.18.0.0/24, 198.18.5.1 }
	}
	set ports {
		type inet_service
		elements = { 22, 8080 }
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		ct state invalid counter drop
		iifname "lo" udp dport 9999 counter drop
		ip saddr @allowed4 tcp dport @ports accept
		tcp dport { 80, 443 } counter accept comment "web"
		udp dport 1000-2000 drop
		ip saddr 198.18.0.0/15 ip daddr != 198.19.1.1 accept
		ip saddr 198.18.1.1-198.18.1.9 drop
		meta l4proto icmp icmp type { echo-request, echo-reply } limit rate 10/second accept
		ip protocol tcp tcp flags & (fin|syn|rst|ack) == syn counter jump checks
		tcp flags syn,ack drop
		meta pkttype broadcast drop
		ct status dnat accept
		ct mark 0x00000001 accept
		meta mark & 0xf == 0x1 drop
		meta mark 0x00000010 drop
		log prefix "nl-drop: " counter reject
		tcp dport 25 reject with tcp reset
		udp dport 53 reject with icmp type port-unreachable
		reject with icmpx type admin-prohibited
		th dport 9998 drop
		oifname "eth*" accept
		tcp sport != 1024-65535 drop
		meta nfproto ipv4 accept
		meta l4proto { tcp, udp } accept
		numgen random mod 2 0 drop
		ip6 saddr 2001:db8::1 drop
		ip6 daddr 2001:db8::/32 accept
		iif "lo" accept
		oif "lo" accept
		ip dscp cs1 drop
		tcp dport vmap { 22 : accept, 23 : drop }
		ct state vmap { invalid : drop, established : accept }
		ip saddr != { 198.18.0.0/16, 198.19.0.1-198.19.0.9 } drop
		ip daddr . tcp dport { 198.18.0.1 . 22, 198.18.0.2 . 80 } accept
		iifname { "lo", "veth0" } accept
		limit rate over 1 mbytes/second drop
		meta mark set 0x00000005
		icmpv6 type echo-request accept
		meta length > 1000 drop
		meta mark 0x00000001-0x00000005 drop
		ether saddr 02:00:00:00:00:01 drop
		ct status & dnat == dnat accept
		tcp flags & syn == syn drop
		tcp flags != syn / syn,ack drop
		ct state ! established drop
	}
	chain checks {
		tcp dport 22 goto sshc
		return
	}
	chain sshc {
		counter drop
	}
	chain output {
		type filter hook output priority filter; policy accept;
		ip daddr 198.18.7.1 udp dport 9999 counter accept
	}
}
table ip nl_nat {
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		tcp dport 8080 dnat to 198.18.0.2:80
		udp dport 5353 dnat to 198.18.0.3
	}
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "veth0" masquerade
		ip saddr 198.18.0.0/24 snat to 198.18.1.1
		meta l4proto tcp masquerade to :1000-2000 random
	}
}
table ip6 nl_f6 {
	chain out {
		type filter hook output priority 0; policy accept;
		ip6 nexthdr ipv6-icmp accept
		tcp dport 80 counter drop
		reject with icmpv6 type admin-prohibited
	}
}
table bridge nl_br {
	chain forward {
		type filter hook forward priority 0; policy accept;
		meta pkttype multicast drop
		ip saddr 198.18.0.1 drop
		ether type arp accept
	}
}
table arp nl_arp {
	chain input {
		type filter hook input priority 0; policy accept;
		counter
	}
}
table netdev nl_nd {
}
"#;

/// iptables-nft rules: matches it translates to nf_tables expressions, and
/// xt matches and targets it leaves to x_tables.
const IPTABLES: &[&[&str]] = &[
    &[
        "-A",
        "INPUT",
        "-p",
        "tcp",
        "--dport",
        "80",
        "-m",
        "statistic",
        "--mode",
        "random",
        "--probability",
        "0.5",
        "-j",
        "DROP",
    ],
    &[
        "-A",
        "INPUT",
        "-m",
        "statistic",
        "--mode",
        "nth",
        "--every",
        "3",
        "--packet",
        "1",
        "-j",
        "DROP",
    ],
    &[
        "-A",
        "INPUT",
        "-s",
        "198.18.0.0/16",
        "-i",
        "lo",
        "-m",
        "comment",
        "--comment",
        "nl test",
        "-j",
        "ACCEPT",
    ],
    &[
        "-A",
        "INPUT",
        "-m",
        "conntrack",
        "--ctstate",
        "RELATED,ESTABLISHED",
        "-j",
        "ACCEPT",
    ],
    &[
        "-A",
        "INPUT",
        "-p",
        "udp",
        "-m",
        "multiport",
        "--dports",
        "1,2:5",
        "-j",
        "DROP",
    ],
    &[
        "-A", "INPUT", "-m", "recent", "--name", "nl", "--rcheck", "-j", "DROP",
    ],
    &["-A", "INPUT", "-p", "tcp", "--syn", "-j", "DROP"],
    &[
        "-A",
        "INPUT",
        "-j",
        "REJECT",
        "--reject-with",
        "icmp-host-prohibited",
    ],
    &["-A", "INPUT", "-j", "REJECT"],
    &["-P", "FORWARD", "DROP"],
    // The counted packets leave through this policy.
    &["-P", "OUTPUT", "ACCEPT"],
    &["-t", "nat", "-A", "POSTROUTING", "-j", "MASQUERADE"],
    &[
        "-t",
        "nat",
        "-A",
        "PREROUTING",
        "-p",
        "tcp",
        "-j",
        "DNAT",
        "--to-destination",
        "198.18.0.2:80",
    ],
];
const IP6TABLES: &[&[&str]] = &[
    &[
        "-A",
        "INPUT",
        "-p",
        "tcp",
        "-j",
        "REJECT",
        "--reject-with",
        "tcp-reset",
    ],
    &["-A", "INPUT", "-j", "REJECT"],
];

/// A rule as `nft -a list ruleset` prints it.
#[derive(Debug)]
struct Expected {
    family: String,
    table: String,
    chain: String,
    handle: Option<u64>,
    position: u32,
    text: String,
    counter: Option<Counter>,
    policy: bool,
}

#[test]
fn nft_rules_read_as_nft_lists_them() {
    if common::need_root(&["ip", "nft", "iptables-nft", "ip6tables-nft"]) {
        return;
    }
    let ns = Netns::new("nfttext");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", &format!("{LOCAL}/32"), "dev", "lo"]);
    let file = scratch("nfttext", "ruleset.nft");
    std::fs::write(&file, RULESET).expect("write the ruleset");
    ns_exec(&ns.name, &["nft", "-f", file.to_str().expect("utf-8 path")]);
    for args in IPTABLES {
        ns_exec(&ns.name, &[&["iptables-nft"], *args].concat());
    }
    for args in IP6TABLES {
        ns_exec(&ns.name, &[&["ip6tables-nft"], *args].concat());
    }
    send_counted_packets(&ns);

    let path = ns.path();
    let rules = std::thread::spawn(move || -> std::io::Result<Vec<Rule>> {
        enter_netns(&path)?;
        let mut netlink = netlens::collect::ctnetlink::Ctnetlink::new()?;
        netlens::collect::firewall::nftables::read(&mut netlink)
    })
    .join()
    .expect("the reader thread panicked")
    .expect("read the nf_tables rules");
    let listing = ns_exec(&ns.name, &["nft", "-a", "list", "ruleset"]);
    let mut expected = parse_listing(&String::from_utf8_lossy(&listing.stdout));
    // The tables iptables-nft made: their base chains count.
    for e in expected
        .iter_mut()
        .filter(|e| e.policy && !e.table.starts_with("nl_"))
    {
        e.counter = Some(iptables_policy_counter(&ns, &e.family, &e.table, &e.chain));
    }

    let mut problems = Vec::new();
    for (i, (got, want)) in rules.iter().zip(&expected).enumerate() {
        let same = got.family == want.family
            && got.table == want.table
            && got.chain == want.chain
            && got.handle == want.handle
            && got.position == want.position
            && got.text == want.text
            && (got.counter == want.counter || chain_without_counters(got, want))
            && got.policy == want.policy
            && got.verdict == verdict_of(&want.text);
        if !same {
            problems.push(format!(
                "#{i} {} {} {} handle {:?}:\n  nft:     {:?} {:?} {:?}\n  netlens: {:?} {:?} {:?} (position {} vs {})",
                want.family,
                want.table,
                want.chain,
                want.handle,
                want.text,
                want.counter,
                verdict_of(&want.text),
                got.text,
                got.counter,
                got.verdict,
                got.position,
                want.position,
            ));
        }
    }
    if rules.len() != expected.len() {
        problems.push(format!(
            "netlens read {} rules, nft lists {}",
            rules.len(),
            expected.len()
        ));
    }
    eprintln!(
        "compared {} rules ({} policies) with nft -a list ruleset",
        expected.len(),
        expected.iter().filter(|e| e.policy).count()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every packet leaves through the output chain's counting rule (the
    // input chains of two tables see them in either order).
    let counted = rules
        .iter()
        .find(|r| r.chain == "output" && r.text.contains("udp dport 9999 counter accept"))
        .and_then(|r| r.counter);
    let bytes = (PACKETS * (20 + 8 + PAYLOAD)) as u64;
    assert_eq!(
        counted,
        Some(Counter {
            packets: PACKETS as u64,
            bytes
        }),
        "the counting rule saw the packets"
    );
    let policy = rules
        .iter()
        .find(|r| r.policy && r.family == "ip" && r.table == "filter" && r.chain == "OUTPUT")
        .and_then(|r| r.counter);
    assert_eq!(
        policy.map(|c| c.packets),
        Some(PACKETS as u64),
        "iptables' OUTPUT policy"
    );
}

/// iptables-nft gives a base chain counters when it sets its policy, not
/// when it makes the chain for a rule; iptables -L shows zeros for both.
fn chain_without_counters(got: &Rule, want: &Expected) -> bool {
    got.policy && got.counter.is_none() && want.counter == Some(Counter::default())
}

/// A few datagrams through the counting rules, on the namespace's
/// loopback only.
fn send_counted_packets(ns: &Netns) {
    let path = ns.path();
    std::thread::spawn(move || {
        enter_netns(&path).expect("enter the namespace");
        let socket = UdpSocket::bind(format!("{LOCAL}:0")).expect("bind");
        for _ in 0..PACKETS {
            socket
                .send_to(&[0u8; PAYLOAD], format!("{LOCAL}:9999"))
                .expect("send");
        }
    })
    .join()
    .expect("the sender thread panicked");
}

/// The rules of an `nft -a list ruleset` listing, policies first in each
/// base chain, `counter packets N bytes M` turned into `counter`.
fn parse_listing(listing: &str) -> Vec<Expected> {
    let mut rules = Vec::new();
    let (mut family, mut table, mut chain) = (String::new(), String::new(), String::new());
    let mut position = 0;
    let mut in_set = false;
    for line in listing.lines() {
        // Only the indentation goes: an empty first statement (an xt
        // comment match) leaves a leading space.
        let line = line.trim_start_matches('\t').trim_end();
        if in_set {
            in_set = line != "}";
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["table", f, t, ..] => {
                (family, table) = (f.to_string(), t.to_string());
            }
            ["set" | "map", ..] => in_set = true,
            ["chain", c, ..] => {
                chain = c.to_string();
                position = 0;
            }
            ["type", .., "policy", policy] if line.starts_with("type ") => rules.push(Expected {
                family: family.clone(),
                table: table.clone(),
                chain: chain.clone(),
                handle: None,
                position: 0,
                text: format!("policy {}", policy.trim_end_matches(';')),
                counter: None,
                policy: true,
            }),
            [] => {}
            _ if line.trim_start().starts_with('}') || line.starts_with('#') => {}
            _ => {
                let (text, handle) = line.rsplit_once(" # handle ").expect("a rule's handle");
                let (text, counter) = strip_counter(text);
                position += 1;
                rules.push(Expected {
                    family: family.clone(),
                    table: table.clone(),
                    chain: chain.clone(),
                    handle: Some(handle.parse().expect("a numeric handle")),
                    position,
                    text,
                    counter,
                    policy: false,
                });
            }
        }
    }
    rules
}

/// `counter packets N bytes M` becomes `counter`; the first one's values.
fn strip_counter(text: &str) -> (String, Option<Counter>) {
    let mut out = String::new();
    let mut counter = None;
    let mut rest = text;
    while let Some(at) = rest.find("counter packets ") {
        out.push_str(&rest[..at]);
        out.push_str("counter");
        let after = &rest[at + "counter packets ".len()..];
        let words: Vec<&str> = after.splitn(4, ' ').collect();
        let packets = words[0].parse().expect("packets");
        let bytes = words[2].parse().expect("bytes");
        counter.get_or_insert(Counter { packets, bytes });
        let used = words[..3].iter().map(|w| w.len() + 1).sum::<usize>() - 1;
        rest = &after[used..];
    }
    out.push_str(rest);
    (out, counter)
}

/// The verdict a rule's text ends with (before its comment).
fn verdict_of(text: &str) -> Verdict {
    let text = text.split(" comment \"").next().unwrap_or(text);
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        [.., "drop"] => Verdict::Drop,
        [.., "accept"] => Verdict::Accept,
        [.., "jump", chain] => Verdict::Jump(chain.to_string()),
        [.., "goto", chain] => Verdict::Goto(chain.to_string()),
        [.., "return"] => Verdict::Return,
        _ if words.contains(&"reject") => Verdict::Reject,
        _ => Verdict::Other,
    }
}

/// A base chain's policy counters as iptables-nft shows them: nft does
/// not print them.
fn iptables_policy_counter(ns: &Netns, family: &str, table: &str, chain: &str) -> Counter {
    let tool = if family == "ip6" {
        "ip6tables-nft"
    } else {
        "iptables-nft"
    };
    let out = ns_exec(
        &ns.name,
        &[tool, "-t", table, "-L", chain, "-v", "-x", "-n"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // Chain INPUT (policy ACCEPT 0 packets, 0 bytes)
    let first = text.lines().next().unwrap_or_default();
    let numbers: Vec<u64> = first
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "policy counters in {first:?}");
    Counter {
        packets: numbers[0],
        bytes: numbers[1],
    }
}
