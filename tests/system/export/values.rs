//! The exported values against `snapshot --json` in a namespace.

use super::*;

/// Raw interface counters of `dev` in the JSON sample.
fn json_counters(sample: &Value, dev: &str) -> Vec<(String, u64)> {
    let i = must_iface(sample, dev);
    [
        "rx_bytes",
        "tx_bytes",
        "rx_packets",
        "tx_packets",
        "rx_errors",
        "tx_errors",
        "rx_dropped",
        "tx_dropped",
    ]
    .iter()
    .map(|k| (k.to_string(), u64f(i, k)))
    .collect()
}

fn export_counters(s: &prometheus_parse::Scrape, dev: &str, ns: &str) -> Vec<(String, u64)> {
    let labels = [("device", dev), ("netns", ns)];
    [
        ("rx_bytes", "node_network_receive_bytes_total"),
        ("tx_bytes", "node_network_transmit_bytes_total"),
        ("rx_packets", "node_network_receive_packets_total"),
        ("tx_packets", "node_network_transmit_packets_total"),
        ("rx_errors", "node_network_receive_errs_total"),
        ("tx_errors", "node_network_transmit_errs_total"),
        ("rx_dropped", "node_network_receive_drop_total"),
        ("tx_dropped", "node_network_transmit_drop_total"),
    ]
    .iter()
    .map(|(k, m)| (k.to_string(), find(s, m, &labels) as u64))
    .collect()
}

#[test]
fn values_agree_with_snapshot_json_in_a_namespace() {
    if crate::common::need_root(&["ip"]) {
        return;
    }
    const N: u64 = 500;
    const P: usize = 300;
    const K: usize = 4;
    let pair = VethPair::new("exp");
    let traffic = udp_traffic(
        &pair.a.path(),
        IP_A,
        &pair.b.path(),
        std::net::SocketAddrV4::new(IP_B, 40_100),
        N,
        P,
        2000.0,
    );
    assert_eq!(traffic.sent, N);

    // K TCP connections held open inside namespace a: 2K ESTABLISHED, 1 LISTEN.
    // Local connections go over lo, which a new namespace has down.
    pair.a.ip(&["link", "set", "lo", "up"]);
    let path = pair.a.path();
    let held = std::thread::spawn(move || {
        enter_netns(&path).unwrap();
        let listener = TcpListener::bind((IP_A, 40_200)).unwrap();
        let clients: Vec<TcpStream> = (0..K)
            .map(|_| {
                let to = SocketAddr::from((IP_A, 40_200));
                TcpStream::connect_timeout(&to, Duration::from_secs(5)).unwrap()
            })
            .collect();
        let accepted: Vec<TcpStream> = (0..K).map(|_| listener.accept().unwrap().0).collect();
        (listener, clients, accepted)
    })
    .join()
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let settled = now_unix();

    let ns = pair.a.name.clone();
    let exporter = Exporter::start(&["--netns", &ns, "--interval", "200ms"]);
    // A scrape whose sample was taken after the setup settled.
    let deadline = Instant::now() + Duration::from_secs(10);
    let before = loop {
        let s = parse(&scrape(exporter.addr));
        if find(&s, "netlens_sample_timestamp_seconds", &[]) > settled {
            break s;
        }
        assert!(Instant::now() < deadline, "no fresh sample");
        std::thread::sleep(Duration::from_millis(100));
    };
    let json = snapshot(&["--netns", &ns, "--interval", "200ms"]);
    let json = json.last().unwrap();
    let after = parse(&scrape(exporter.addr));
    assert_eq!(json["netns"], ns.as_str());

    for dev in [DEV_A, "lo"] {
        let from_json = json_counters(json, dev);
        assert_eq!(export_counters(&before, dev, &ns), from_json, "{dev}");
        assert_eq!(export_counters(&after, dev, &ns), from_json, "{dev}");
    }
    // And they are the traffic we sent.
    let a = must_iface(json, DEV_A);
    assert_eq!(u64f(a, "tx_packets"), N);
    assert_eq!(u64f(a, "tx_bytes"), N * (P as u64 + UDP_FRAME_OVERHEAD));
    assert_eq!(find(&before, "node_network_up", &[("device", DEV_A)]), 1.0);

    let states = json["tcp"]["states"].as_object().expect("tcp.states");
    assert_eq!(states.len(), 11);
    for (state, count) in states {
        let count = count.as_f64().unwrap();
        assert_eq!(
            find(&before, "netlens_tcp_connections", &[("state", state)]),
            count,
            "{state}"
        );
    }
    assert_eq!(states["ESTABLISHED"], 2 * K as u64);
    assert_eq!(states["LISTEN"], 1);

    let counters = json["tcp"]["counters"].as_object().expect("tcp.counters");
    assert!(counters.contains_key("Tcp.ActiveOpens"));
    for (key, value) in counters {
        let (group, name) = key.split_once('.').unwrap();
        let metric = format!("node_netstat_{group}_{name}_total");
        assert_eq!(
            find(&before, &metric, &[("netns", &ns)]),
            value.as_f64().unwrap(),
            "{metric}"
        );
    }
    assert_eq!(
        find(&before, "node_netstat_Tcp_ActiveOpens_total", &[]),
        K as f64
    );

    let ct = &json["conntrack"];
    if ct["available"] == true {
        if let Some(count) = ct["count"].as_f64() {
            assert_eq!(find(&before, "node_nf_conntrack_entries", &[]), count);
        }
        if let Some(max) = ct["max"].as_f64() {
            assert_eq!(find(&before, "node_nf_conntrack_entries_limit", &[]), max);
        }
    } else {
        assert!(
            !before
                .samples
                .iter()
                .any(|s| s.metric.starts_with("node_nf_conntrack"))
        );
    }
    let json_findings: BTreeSet<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    let export_findings: BTreeSet<String> = before
        .samples
        .iter()
        .filter(|s| s.metric == "netlens_finding")
        .map(|s| s.labels.get("id").unwrap().to_string())
        .collect();
    assert_eq!(export_findings, json_findings);
    drop(held);
}
