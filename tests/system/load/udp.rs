//! `load udp`: counts on loopback, loss against a drop rule in a namespace.

use super::*;

#[test]
fn udp_counts_agree_with_serve_on_loopback() {
    let _heavy = crate::common::heavy();
    let serve = Serve::start(None, "127.0.0.1", &[]);
    let to = format!("127.0.0.1:{}", serve.port);
    let lines = load_json(
        None,
        &[
            "udp", "--to", &to, "-t", "1", "-b", "20M", "--size", "1000", "--json",
        ],
    );
    let summary = lines.last().unwrap();
    let sent = summary["sent_packets"].as_u64().unwrap();
    // 20 Mbit/s of 1000-byte payloads for 1 s is 2500 datagrams.
    assert!((2000..=2600).contains(&sent), "{summary}");
    let received = summary["received_packets"].as_u64().unwrap();
    let served = serve.wait_for(|l| l.iter().any(|l| l["kind"] == "udp"));
    let line = served.iter().find(|l| l["kind"] == "udp").unwrap();
    assert_eq!(line["sent"].as_u64(), Some(sent));
    assert_eq!(line["packets"].as_u64(), Some(received));
    assert_eq!(summary["lost_packets"].as_u64(), Some(sent - received));
    assert!(summary["jitter_ms"].as_f64().unwrap() >= 0.0);
    assert!(summary["retransmits"].is_null());
}

/// An nftables table in a namespace that drops 10% of UDP to a port.
fn drop_ten_percent(ns: &Netns, port: u16) {
    ns_exec(&ns.name, &["nft", "add", "table", "inet", "netlens_test"]);
    ns_exec(
        &ns.name,
        &[
            "nft",
            "add chain inet netlens_test in { type filter hook input priority 0; policy accept; }",
        ],
    );
    ns_exec(
        &ns.name,
        &[
            "nft",
            &format!(
                "add rule inet netlens_test in udp dport {port} numgen random mod 100 < 10 drop"
            ),
        ],
    );
}

#[test]
fn udp_loss_is_measured_against_a_drop_rule_in_a_namespace() {
    let Some(_heavy) = crate::common::need_root_heavy(&["ip", "nft", "ss"]) else {
        return;
    };
    let pair = VethPair::new("udpl");
    let serve = Serve::start(Some(&pair.b.name), &IP_B.to_string(), &[]);
    let to = format!("{IP_B}:{}", serve.port);
    let args = [
        "udp", "--to", &to, "-t", "2", "-b", "16M", "--size", "1000", "--json",
    ];
    // Without the rule nothing is lost.
    let clean = load_json(Some(&pair.a.name), &args);
    let clean = clean.last().unwrap();
    assert_eq!(clean["loss_percent"].as_f64(), Some(0.0), "{clean}");

    // The rule lives in the namespace and goes with it. This run enters the
    // namespace itself (--netns) rather than through `ip netns exec`.
    drop_ten_percent(&pair.b, serve.port);
    let mut with_netns = args.to_vec();
    with_netns.extend(["--netns", pair.a.name.as_str()]);
    let lossy = load_json(None, &with_netns);
    let summary = lossy.last().unwrap();
    let loss = summary["loss_percent"].as_f64().unwrap();
    let sent = summary["sent_packets"].as_u64().unwrap();
    assert!(sent >= 3000, "{summary}");
    // 4000 datagrams at p = 0.1: the standard deviation is 0.47 points.
    assert!(
        (7.0..=13.0).contains(&loss),
        "loss {loss}% with a 10% drop rule"
    );
    let served = serve.wait_for(|l| l.iter().filter(|l| l["kind"] == "udp").count() == 2);
    let last = served.iter().rev().find(|l| l["kind"] == "udp").unwrap();
    assert_eq!(last["sent"].as_u64(), Some(sent));
    assert_eq!(
        last["packets"].as_u64().unwrap() + last["lost"].as_u64().unwrap(),
        sent
    );
}
