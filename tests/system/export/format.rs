//! What a scrape says: OpenMetrics or the classic format by Accept header,
//! the expected series, and the dashboard and scrape config naming real ones.

use super::*;

#[test]
fn the_accept_header_chooses_openmetrics_or_the_classic_format() {
    if common::need(&["promtool"]) {
        return;
    }
    // A gauge that cannot move between two scrapes of one sample: a long
    // interval keeps both scrapes on the first one.
    let exporter = Exporter::start(&["--interval", "1h"]);
    let prometheus = request(
        exporter.addr,
        format!("GET /metrics HTTP/1.1\r\nAccept: {PROMETHEUS_ACCEPT}\r\n\r\n").as_bytes(),
    );
    assert_eq!(prometheus.headers["content-type"], OPENMETRICS);
    check_structure(&prometheus.body);
    let old = request(
        exporter.addr,
        b"GET /metrics HTTP/1.1\r\nAccept: text/plain;version=0.0.4\r\n\r\n",
    );
    assert_eq!(old.headers["content-type"], CLASSIC);
    let classic = scrape_classic(exporter.addr);
    // One page per sample; only the sample's age moves between scrapes.
    let without_age = |page: &str| -> String {
        page.lines()
            .filter(|l| !l.starts_with("netlens_sample_age_seconds{"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(
        without_age(&old.body),
        without_age(&classic),
        "one classic page per sample"
    );
    assert!(classic.contains("netlens_sample_age_seconds{"));
    assert!(!classic.contains("# EOF") && !classic.contains("# UNIT"));
    assert!(classic.contains("# TYPE node_network_receive_bytes_total counter\n"));
    assert!(classic.contains("# HELP node_network_receive_bytes_total "));
    // The same series with the same values in both (but the age).
    assert_eq!(
        series_of(&without_age(&prometheus.body)),
        series_of(&without_age(&classic))
    );
    assert!(series_of(&classic).len() > 50);
    promtool(&classic);
}

#[test]
fn scrape_is_openmetrics_with_the_expected_series() {
    if common::need(&["promtool"]) {
        return;
    }
    // Sockets held open on loopback: LISTEN and ESTABLISHED are at least these.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let clients: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(listener.local_addr().unwrap()).unwrap())
        .collect();
    let accepted: Vec<TcpStream> = (0..3).map(|_| listener.accept().unwrap().0).collect();

    let exporter = Exporter::start(&["--interval", "200ms"]);
    promtool(&scrape_classic(exporter.addr));
    let text = scrape(exporter.addr);
    let s = parse(&text);
    let lo = [("device", "lo"), ("netns", "host")];
    for metric in [
        "node_network_receive_bytes_total",
        "node_network_transmit_bytes_total",
        "node_network_receive_packets_total",
        "node_network_transmit_packets_total",
        "node_network_receive_errs_total",
        "node_network_transmit_errs_total",
        "node_network_receive_drop_total",
        "node_network_transmit_drop_total",
    ] {
        find(&s, metric, &lo);
    }
    assert_eq!(find(&s, "node_network_mtu_bytes", &lo), 65536.0);
    assert!(find(&s, "netlens_tcp_connections", &[("state", "LISTEN")]) >= 1.0);
    assert!(find(&s, "netlens_tcp_connections", &[("state", "ESTABLISHED")]) >= 6.0);
    for state in [
        "ESTABLISHED",
        "SYN_SENT",
        "SYN_RECV",
        "FIN_WAIT1",
        "FIN_WAIT2",
        "TIME_WAIT",
        "CLOSE",
        "CLOSE_WAIT",
        "LAST_ACK",
        "LISTEN",
        "CLOSING",
    ] {
        find(&s, "netlens_tcp_connections", &[("state", state)]);
    }
    assert!(find(&s, "node_netstat_Tcp_ActiveOpens_total", &[]) >= 3.0);
    find(&s, "node_netstat_Tcp_RetransSegs_total", &[]);
    find(&s, "node_netstat_TcpExt_ListenOverflows_total", &[]);
    assert!(find(&s, "netlens_sample_timestamp_seconds", &[]) > 1.6e9);
    assert!(text.contains("# TYPE netlens_finding gauge\n"));
    // Per CPU, as node_exporter's softnet and softirqs collectors name them.
    let cpus = std::fs::read_to_string("/proc/softirqs")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .count();
    for cpu in 0..cpus {
        let cpu = cpu.to_string();
        find(&s, "node_softnet_processed_total", &[("cpu", &cpu)]);
        find(&s, "node_softnet_dropped_total", &[("cpu", &cpu)]);
        find(&s, "node_softnet_times_squeezed_total", &[("cpu", &cpu)]);
        find(
            &s,
            "node_softirqs_functions_total",
            &[("cpu", &cpu), ("type", "NET_RX")],
        );
    }
    assert!(text.contains("# TYPE node_arp_entries gauge\n"));
    assert!(
        !text.contains("netlens_dns_probe_duration_seconds"),
        "no --dns-probe: no DNS series"
    );

    // HEAD: same headers, no body.
    let head = request(exporter.addr, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert!(head.headers["content-length"].parse::<usize>().unwrap() > 1000);

    // The page follows the sampler: a later scrape carries a later sample.
    let t0 = find(&s, "netlens_sample_timestamp_seconds", &[]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = find(
            &parse(&scrape(exporter.addr)),
            "netlens_sample_timestamp_seconds",
            &[],
        );
        if t > t0 {
            break;
        }
        assert!(Instant::now() < deadline, "the sample never advanced");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop((clients, accepted));
}

#[test]
fn dashboard_and_scrape_config_use_real_series() {
    let dashboard: Value =
        serde_json::from_str(include_str!("../../../assets/grafana-netlens.json"))
            .expect("dashboard");
    let text = dashboard.to_string();
    let exporter = Exporter::start(&[]);
    let page = scrape(exporter.addr);
    // Sample names, and declared families (netlens_finding has no samples
    // while nothing is wrong).
    let names: BTreeSet<&str> = page
        .lines()
        .filter_map(|l| match l.strip_prefix("# TYPE ") {
            Some(rest) => rest.split(' ').next(),
            None if !l.starts_with('#') => l.split(['{', ' ']).next(),
            None => None,
        })
        .collect();
    let mut used = BTreeSet::new();
    for (start, _) in text
        .match_indices("node_")
        .chain(text.match_indices("netlens_"))
    {
        let name: String = text[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // Skip the prefix inside a longer identifier (e.g. "netlens_" in a uid).
        if start > 0 && text.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        if name.len() > "netlens_".len() {
            used.insert(name);
        }
    }
    used.remove("netlens-export");
    assert!(used.len() > 15, "{used:?}");
    let conntrack_here = names.iter().any(|n| n.starts_with("node_nf_conntrack"));
    // Drop reasons need the eBPF program (root); without it only
    // netlens_drops_available says so.
    let drops_counted = page
        .lines()
        .any(|l| l.starts_with("netlens_drops_available{") && l.ends_with(" 1"));
    for name in &used {
        // Probe series only exist with --dns-probe; a counter family with
        // no sample yet (no drop counted) is declared by its TYPE line.
        let conditional = name.starts_with("netlens_dns_probe")
            || (!conntrack_here && name.starts_with("node_nf_conntrack"))
            || (!drops_counted && name.starts_with("netlens_drops"));
        let declared = names.contains(name.trim_end_matches("_total"));
        assert!(
            conditional || declared || names.contains(name.as_str()),
            "the dashboard uses {name}, which the exporter does not serve"
        );
    }
    match Command::new("promtool")
        .args(["check", "config"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/prometheus.yml"
        ))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "promtool check config: {}",
            String::from_utf8_lossy(&out.stdout)
        ),
        Err(_) => {
            crate::common::need::missing("promtool");
        }
    }
}
