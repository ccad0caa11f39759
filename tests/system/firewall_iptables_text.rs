//! Root checks of `collect::firewall::iptables::read` against
//! `iptables-legacy-save -c` and `ip6tables-legacy-save -c`: a varied
//! ruleset (filter, nat and mangle; user chains reached by jumps and
//! gotos; a DROP policy; the matches and targets netlens decodes) loaded
//! with iptables-legacy-restore into a namespace of the test's own, a few
//! packets through it, then every rule, policy and counter compared.
//!
//! Network safety: the namespaces are the test's own (deleted on drop);
//! the only traffic is 15 UDP datagrams to 198.18.0.1 on the namespace's
//! loopback.

use crate::common::{self, Netns, enter_netns};

use netlens::model::firewall::{Backend, Counter, Rule};
use std::io::Write;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

const TOOLS: &[&str] = &[
    "ip",
    "iptables-legacy",
    "iptables-legacy-restore",
    "iptables-legacy-save",
    "ip6tables-legacy-restore",
    "ip6tables-legacy-save",
];

const V4_RULES: &str = r#"*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:nl-from-lo - [0:0]
:nl-log-drop - [0:0]
:nl-web - [0:0]
-A INPUT -i lo -j nl-from-lo
-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A INPUT -m state --state INVALID -j DROP
-A INPUT -s 198.18.0.0/15 -p tcp -m tcp --dport 80 -m statistic --mode random --probability 0.5 -j DROP
-A INPUT -p tcp -m multiport --dports 22,80,1000:2000 -j nl-web
-A INPUT ! -s 198.19.0.0/16 -d 198.18.0.1/32 -p udp -m udp --sport 1024:65535 --dport 53 -j ACCEPT
-A INPUT -p icmp -m icmp --icmp-type 8 -m limit --limit 10/sec --limit-burst 20 -j ACCEPT
-A INPUT -p icmp -m icmp --icmp-type any
-A INPUT -m comment --comment "netlens test: drop \"all\"" -j nl-log-drop
-A INPUT -m mark --mark 0x10/0xff -m connmark ! --mark 0x3 -j RETURN
-A INPUT -m addrtype --dst-type LOCAL,BROADCAST --limit-iface-in
-A INPUT -m iprange --src-range 198.18.0.10-198.18.0.20 -m length --length 100:200
-A INPUT -m mac --mac-source 02:00:c6:12:00:01 -m comment --comment plain_word
-A INPUT -p tcp -m tcp --syn -m conntrack --ctstate NEW --ctproto 6 --ctorigdst 198.18.0.0/16 --ctorigdstport 80 --ctstatus ASSURED --ctexpire 10:20 --ctdir ORIGINAL
-A INPUT -i nlv+ -p tcp -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN
-A INPUT -p tcp -m tcp --sport 1:2 ! --dport 80 --tcp-option 5
-A INPUT ! -i lo -f -j DROP
-A INPUT -m statistic --mode nth --every 3 --packet 1
-A INPUT -p gre -j ACCEPT
-A INPUT -s 198.18.0.0/255.255.0.255 ! -p udp
-A INPUT -p udp -m multiport ! --sports 1,2,3 -m limit --limit 3/hour
-A INPUT -m mark --mark 0x5 -m addrtype ! --src-type UNICAST -m iprange ! --dst-range 198.18.0.1-198.18.0.9
-A FORWARD -i nlva -o nlvb -j ACCEPT
-A OUTPUT -m owner --uid-owner 0 --gid-owner 10-20 -j ACCEPT
-A OUTPUT -o lo -p udp -m udp --dport 7 -j REJECT --reject-with icmp-host-prohibited
-A OUTPUT -p icmp -m icmp --icmp-type 3/3 -j REJECT
-A OUTPUT -m owner ! --socket-exists
-A nl-from-lo -p udp -m udp --dport 9 -j DROP
-A nl-from-lo -p udp -m udp --dport 10
-A nl-from-lo -g nl-web
-A nl-log-drop -j LOG --log-prefix "nl drop: " --log-level 6 --log-uid --log-tcp-options
-A nl-log-drop -j LOG
-A nl-log-drop -j DROP
-A nl-web -p tcp -j REJECT --reject-with tcp-reset
-A nl-web -j RETURN
COMMIT
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -j MARK --set-xmark 0x1/0xff
-A PREROUTING -j CONNMARK --save-mark --nfmask 0xff --ctmask 0xff
-A OUTPUT -j CONNMARK --set-xmark 0x2/0xffffffff
-A POSTROUTING -j CONNMARK --restore-mark --nfmask 0xffffffff --ctmask 0xffffffff
-A POSTROUTING -j MARK --set-mark 7
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 198.18.0.1/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 198.18.0.2:80
-A PREROUTING -p tcp -m tcp --dport 8081 -j REDIRECT --to-ports 8000-8010
-A PREROUTING -p tcp -m tcp --dport 8082 -j REDIRECT
-A POSTROUTING -o nlv+ -p tcp -j MASQUERADE --to-ports 1024-2000 --random
-A POSTROUTING -o nlvb -j MASQUERADE
-A POSTROUTING -s 198.18.1.0/24 -j SNAT --to-source 198.18.0.1-198.18.0.5 --random-fully --persistent
-A OUTPUT -d 198.18.0.9/32 -p udp -j DNAT --to-destination 198.18.0.3
-A OUTPUT -d 198.18.0.10/32 -p tcp -j DNAT --to-destination 198.18.0.3-198.18.0.4:1000-1010
COMMIT
"#;

const V6_RULES: &str = r#"*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:nl6 - [0:0]
-A INPUT -s 2001:db8::/32 -p ipv6-icmp -m icmp6 --icmpv6-type 128 -j ACCEPT
-A INPUT -d ::198.18.0.1/128 -j nl6
-A INPUT -s 2001:db8::1/ffff:ffff::ff -j ACCEPT
-A INPUT ! -d ::ffff:198.18.0.2/96 -p tcp -m tcp --dport 443 -j REJECT --reject-with icmp6-adm-prohibited
-A INPUT -m iprange --src-range 2001:db8::1-2001:db8::ff -g nl6
-A INPUT -p ipv6-icmp -m icmp6 --icmpv6-type 1/4 -m conntrack --ctstate NEW --ctorigsrc 2001:db8::/64
-A INPUT -p udp -m udp --dport 53 -j REJECT
-A OUTPUT -o nlv+ -m mark ! --mark 0x1/0x1 -j DROP
-A nl6 -m limit --limit 5/min -j LOG --log-prefix "v6 \\ 'q' "
-A nl6 -j DROP
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 2001:db8::1/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination [2001:db8::2]:8080
-A PREROUTING -d 2001:db8::3/128 -j DNAT --to-destination 2001:db8::4
-A POSTROUTING -o nlvb -j MASQUERADE
-A POSTROUTING -s 2001:db8:1::/48 -j SNAT --to-source 2001:db8::5-2001:db8::6
COMMIT
"#;

/// What a Rule is compared on.
type Line = (String, String, String, u32, String, Option<Counter>, bool);

fn line(r: &Rule) -> Line {
    (
        r.family.clone(),
        r.table.clone(),
        r.chain.clone(),
        r.position,
        r.text.clone(),
        r.counter,
        r.policy,
    )
}

/// `[p:b]` as a Counter.
fn counter(text: &str) -> Counter {
    let (packets, bytes) = text
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split_once(':')
        .expect("[packets:bytes]");
    Counter {
        packets: packets.parse().expect("packets"),
        bytes: bytes.parse().expect("bytes"),
    }
}

/// `tool -c` (iptables-legacy-save or ip6tables-legacy-save) in `ns`, as
/// the Rules read() should return: per table the policies, then the rules
/// with their 1-based positions.
fn saved(ns: &Netns, tool: &str, family: &str) -> Vec<Line> {
    let out = common::ns_exec(&ns.name, &[tool, "-c"]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut lines = Vec::new();
    let mut table = String::new();
    let mut positions: Vec<(String, u32)> = Vec::new();
    for l in text.lines() {
        if let Some(name) = l.strip_prefix('*') {
            table = name.to_string();
            positions.clear();
        } else if let Some(chain) = l.strip_prefix(':') {
            let mut words = chain.split(' ');
            let (name, policy, count) = (
                words.next().unwrap(),
                words.next().unwrap(),
                words.next().unwrap(),
            );
            if policy != "-" {
                let text = format!(":{name} {policy}");
                lines.push((
                    family.into(),
                    table.clone(),
                    name.into(),
                    0,
                    text,
                    Some(counter(count)),
                    true,
                ));
            }
        } else if l.starts_with('[') {
            let (count, rule) = l.split_once(' ').expect("[p:b] -A ...");
            let chain = rule.split(' ').nth(1).expect("chain").to_string();
            let position = match positions.iter_mut().find(|(c, _)| *c == chain) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    positions.push((chain.clone(), 1));
                    1
                }
            };
            lines.push((
                family.into(),
                table.clone(),
                chain,
                position,
                rule.into(),
                Some(counter(count)),
                false,
            ));
        }
    }
    lines
}

/// Runs `f` on a thread that entered `ns`.
fn in_netns<T: Send + 'static>(ns: &Netns, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = ns.path();
    thread::spawn(move || {
        enter_netns(&path).expect("setns");
        f()
    })
    .join()
    .expect("namespace thread panicked")
}

/// The legacy tables of the calling thread's namespace: None when the
/// names file is absent (the kernel has no x_tables for the family).
fn table_names() -> [Option<String>; 2] {
    ["ip_tables_names", "ip6_tables_names"]
        .map(|name| std::fs::read_to_string(format!("/proc/thread-self/net/{name}")).ok())
}

fn restore(ns: &Netns, tool: &str, rules: &str) {
    let mut child = Command::new("ip")
        .args(["netns", "exec", &ns.name, tool])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(rules.as_bytes())
        .expect("write rules");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rules_policies_and_counters_match_iptables_legacy_save() {
    if common::need_root(TOOLS) {
        return;
    }
    let ns = Netns::new("ipt-text");
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.0.1/32", "dev", "lo"]);
    restore(&ns, "iptables-legacy-restore", V4_RULES);
    restore(&ns, "ip6tables-legacy-restore", V6_RULES);

    // 5 datagrams each: dropped in nl-from-lo (port 9); through its rule
    // without a target and the goto to nl-web, whose RETURN goes back to
    // INPUT (port 10); rejected in OUTPUT (port 7).
    in_netns(&ns, || {
        let socket = UdpSocket::bind("198.18.0.1:0").expect("bind");
        for port in [9, 10, 7] {
            for _ in 0..5 {
                let _ = socket.send_to(b"netlens", ("198.18.0.1", port));
            }
        }
    });
    // The ICMP errors the rejects and closed ports answer are on their way.
    thread::sleep(Duration::from_millis(300));

    let (before, rules, after) = in_netns(&ns, || {
        let before = table_names();
        let rules = netlens::collect::firewall::iptables::read().expect("read");
        (before, rules, table_names())
    });
    assert_eq!(before, after, "read() changed the namespace's tables");

    let mut expected = saved(&ns, "iptables-legacy-save", "ip");
    expected.extend(saved(&ns, "ip6tables-legacy-save", "ip6"));
    let got: Vec<Line> = rules.iter().map(line).collect();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "rule {i} differs");
    }
    assert_eq!(got.len(), expected.len(), "{got:#?}\n{expected:#?}");
    assert!(
        rules
            .iter()
            .all(|r| r.backend == Backend::IptablesLegacy && r.handle.is_none())
    );
    eprintln!(
        "{} rules and policies match iptables-legacy-save",
        got.len()
    );

    // The counting rules did count.
    let dropped = rules
        .iter()
        .find(|r| r.text == "-A nl-from-lo -p udp -m udp --dport 9 -j DROP")
        .expect("the port 9 rule");
    assert_eq!(dropped.counter.map(|c| c.packets), Some(5));
    assert!(dropped.verdict.drops());
    let rejected = rules
        .iter()
        .find(|r| {
            r.text
                .starts_with("-A OUTPUT -o lo -p udp -m udp --dport 7 -j REJECT")
        })
        .expect("the port 7 rule");
    assert_eq!(rejected.counter.map(|c| c.packets), Some(5));
    let input = rules
        .iter()
        .find(|r| r.policy && r.chain == "INPUT" && r.table == "filter" && r.family == "ip");
    assert!(input.is_some_and(|r| r.verdict.drops() && r.text == ":INPUT DROP"));
}

#[test]
fn no_table_is_read_nor_made_in_a_fresh_namespace() {
    if common::need_root(&["ip"]) {
        return;
    }
    let ns = Netns::new("ipt-fresh");
    let (before, rules, after) = in_netns(&ns, || {
        let before = table_names();
        let rules = netlens::collect::firewall::iptables::read();
        (before, rules.map_err(|e| e.to_string()), table_names())
    });
    // Absent without x_tables, empty until iptables-legacy makes a table.
    for names in &before {
        assert!(
            names.as_deref().is_none_or(|n| n.trim().is_empty()),
            "{before:?}"
        );
    }
    assert_eq!(rules, Ok(Vec::new()));
    assert_eq!(before, after, "read() made a table");
}
