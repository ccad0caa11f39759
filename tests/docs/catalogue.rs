//! The counter catalogue (issue 26): the man page and docs/catalogue.md are
//! generated from it, `netlens explain` prints its entries, and its findings
//! fire in a namespace for counters no hand-written finding covers (and stay
//! quiet in a healthy busy one).

use crate::common;

use common::{ChildGuard, NETLENS, Netns, ns_exec, snapshot};
use netlens::findings::catalogue;
use serde_json::Value;
use std::process::{Command, Stdio};

/// The page the catalogue and the drop reasons are rendered into.
const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/catalogue.md");
const BEGIN: &str = "<!-- catalogue:begin -->";
const END: &str = "<!-- catalogue:end -->";

/// Whether this run rewrites the page's blocks instead of checking them.
fn updating() -> bool {
    std::env::var_os("NETLENS_UPDATE_DOCS").is_some()
        || std::env::var_os("NETLENS_UPDATE_README").is_some()
}

/// docs/catalogue.md's block between the markers is the catalogue rendered;
/// rewrite it with `NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::catalogue`.
#[test]
fn docs_catalogue_block_is_generated_from_the_table() {
    let text = std::fs::read_to_string(PAGE).expect("docs/catalogue.md");
    let (head, rest) = text
        .split_once(BEGIN)
        .expect("the page has the begin marker");
    let (old, tail) = rest.split_once(END).expect("the page has the end marker");
    let wanted = format!("\n{}", catalogue::readme_block());
    if updating() {
        std::fs::write(PAGE, format!("{head}{BEGIN}{wanted}{END}{tail}")).unwrap();
        return;
    }
    assert!(
        old == wanted,
        "docs/catalogue.md's catalogue is stale: NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::catalogue"
    );
    for entry in catalogue::entries() {
        assert!(old.contains(&format!("| `{}` |", entry.id)), "{}", entry.id);
    }
}

/// docs/catalogue.md's drop reasons block is the reasons table rendered
/// (rewritten by the same NETLENS_UPDATE_DOCS=1 run).
#[test]
fn docs_reasons_block_is_generated_from_the_table() {
    let text = std::fs::read_to_string(PAGE).expect("docs/catalogue.md");
    let (head, rest) = text
        .split_once("<!-- reasons:begin -->")
        .expect("the page has the reasons begin marker");
    let (old, tail) = rest
        .split_once("<!-- reasons:end -->")
        .expect("the page has the reasons end marker");
    let wanted = format!("\n{}", catalogue::reasons_readme_block());
    if updating() {
        std::fs::write(
            PAGE,
            format!("{head}<!-- reasons:begin -->{wanted}<!-- reasons:end -->{tail}"),
        )
        .unwrap();
        return;
    }
    assert!(
        old == wanted,
        "docs/catalogue.md's drop reasons are stale: NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::catalogue"
    );
    for r in catalogue::REASONS {
        assert!(old.contains(&format!("| `{}` |", r.name)), "{}", r.name);
    }
}

/// docs/catalogue.md's connection catalogue block is the connection
/// table rendered (rewritten by the same NETLENS_UPDATE_DOCS=1 run).
#[test]
fn docs_conns_block_is_generated_from_the_table() {
    let text = std::fs::read_to_string(PAGE).expect("docs/catalogue.md");
    let (head, rest) = text
        .split_once("<!-- conns:begin -->")
        .expect("the page has the conns begin marker");
    let (old, tail) = rest
        .split_once("<!-- conns:end -->")
        .expect("the page has the conns end marker");
    let wanted = format!("\n{}", catalogue::conns_readme_block());
    if updating() {
        std::fs::write(
            PAGE,
            format!("{head}<!-- conns:begin -->{wanted}<!-- conns:end -->{tail}"),
        )
        .unwrap();
        return;
    }
    assert!(
        old == wanted,
        "docs/catalogue.md's connection catalogue is stale: NETLENS_UPDATE_DOCS=1 cargo test --profile fast-build --test suite docs::catalogue"
    );
    for c in catalogue::conns::CONNS {
        assert!(
            old.contains(&format!("| `{}` |", c.finding)),
            "{}",
            c.finding
        );
    }
}

/// `netlens man` has the DROP REASONS section, every reason in it, and
/// FINDINGS names the drop: id scheme; `netlens explain` explains a reason.
#[test]
fn man_page_lists_every_reason_and_explain_prints_one() {
    let out = Command::new(NETLENS)
        .arg("man")
        .output()
        .expect("netlens man");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(&catalogue::reasons_man_section()),
        "man page lacks DROP REASONS"
    );
    for r in catalogue::REASONS {
        let roff = r.name.replace('-', "\\-");
        assert!(
            page.contains(&format!(".TP\n\\fB{roff}\\fR (")),
            "man page lacks {}",
            r.name
        );
    }
    assert!(
        page.contains("drop:\\fIREASON"),
        "FINDINGS names the drop: ids"
    );
    for name in ["NO_SOCKET", "skb_drop_reason_no_socket"] {
        let out = Command::new(NETLENS)
            .args(["explain", name])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let r = catalogue::reason("NO_SOCKET").unwrap();
        assert!(
            text.starts_with("NO_SOCKET  (drop reason SKB_DROP_REASON_NO_SOCKET)"),
            "{text}"
        );
        assert!(
            text.contains(r.meaning) && text.contains(r.fix) && text.contains("Udp.NoPorts"),
            "{text}"
        );
    }
}

/// `netlens man` has the catalogue section with every entry, rendered from the table.
#[test]
fn man_page_lists_every_catalogue_entry() {
    let out = Command::new(NETLENS)
        .arg("man")
        .output()
        .expect("netlens man");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(&catalogue::man_section()),
        "man page lacks the rendered section"
    );
    for entry in catalogue::entries() {
        let roff = entry.id.replace('-', "\\-");
        assert!(
            page.contains(&format!("\\fB{roff}\\fR")),
            "man page lacks {}",
            entry.id
        );
    }
    assert!(
        page.contains("counter:\\fIGroup.Name"),
        "FINDINGS names the id scheme"
    );
}

#[test]
fn explain_prints_an_entry_and_refuses_an_unknown_name() {
    let out = Command::new(NETLENS)
        .args(["explain", "udp.rcvbuferrors"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let entry = catalogue::get("Udp.RcvbufErrors").unwrap();
    assert!(
        text.starts_with("Udp.RcvbufErrors  (/proc/net/snmp)"),
        "{text}"
    );
    assert!(
        text.contains(entry.meaning) && text.contains(entry.fix),
        "{text}"
    );
    assert!(text.contains("SOCKET_RCVBUFF"), "{text}");
    let out = Command::new(NETLENS)
        .args(["explain", "ListenOverflow"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("closest: TcpExt.ListenOverflows"), "{err}");
    let out = Command::new(NETLENS)
        .args(["explain", &"x".repeat(200)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // A field this kernel has that the catalogue does not classify (MPTCP's).
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap();
    if netstat.contains("MPTcpExt:") {
        let out = Command::new(NETLENS)
            .args(["explain", "MPJoinSynRx"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("MPTcpExt.MPJoinSynRx: not in the catalogue"),
            "{text}"
        );
    }
}

/// A namespace with lo up and 198.18.0.1/32 on it.
fn lo_namespace(tag: &str) -> Netns {
    let ns = Netns::new(tag);
    ns.ip(&["link", "set", "lo", "up"]);
    ns.ip(&["addr", "add", "198.18.0.1/32", "dev", "lo"]);
    ns
}

/// A python3 program in `ns` (run by `ip netns exec`, which execs it, so
/// ChildGuard kills python itself), bounded to 20 s.
fn python(ns: &Netns, code: &str) -> ChildGuard {
    ChildGuard(
        Command::new("nsenter")
            .arg(format!("--net={}", ns.path()))
            .args(["python3", "-c"])
            // Bounded: SIGALRM ends it after 20 s whatever happens.
            .arg(format!("import signal\nsignal.alarm(20)\n{code}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3"),
    )
}

/// Waits (at most 10 s) until a UDP socket is bound to `port` in `ns`.
fn wait_bound(ns: &Netns, port: u16) {
    common::wait_until(
        &format!("a socket bound to :{port}"),
        std::time::Duration::from_secs(10),
        || {
            let out = ns_exec(&ns.name, &["ss", "-Hunl", &format!("sport = {port}")]);
            !String::from_utf8_lossy(&out.stdout).trim().is_empty()
        },
    );
}

fn nstat(ns: &Netns, name: &str) -> u64 {
    let out = ns_exec(&ns.name, &["nstat", "-az", "--json", name]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["kernel"][name].as_u64().unwrap_or(0)
}

/// Every catalogue finding of every sample: (id, rate in the summary, the
/// counter's delta over that sample's interval / the interval).
/// The `counter:` findings of a snapshot without drop reasons (--no-bpf):
/// with them, a reason counting the same drops (NO_SOCKET for
/// Udp.NoPorts) is raised instead, which tests/system/drops_tmux.rs and the
/// findings' unit tests check.
fn counter_findings(ns: &Netns, count: &str) -> Vec<(String, f64, f64, String)> {
    let samples = snapshot(&["--netns", &ns.path(), "--count", count, "--no-bpf"]);
    let mut out = Vec::new();
    for sample in &samples {
        for f in sample["findings"].as_array().into_iter().flatten() {
            let id = f["id"].as_str().unwrap_or("");
            let Some(counter) = id.strip_prefix("counter:") else {
                continue;
            };
            let summary = f["summary"].as_str().unwrap();
            let rate: f64 = summary
                .split_once(&format!("{counter} "))
                .and_then(|(_, r)| r.split_once("/s"))
                .and_then(|(r, _)| r.parse().ok())
                .unwrap_or_else(|| panic!("no rate in {summary}"));
            let per_s = sample["tcp"]["counters_per_s"][counter]
                .as_f64()
                .unwrap_or(-1.0);
            let hint = f["hint"].as_str().unwrap_or_default().to_string();
            out.push((id.to_string(), rate, per_s, hint));
        }
    }
    out
}

const SEND: &str = "import socket,time,sys\n\
    s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
    rate,total,port=int(sys.argv[1]),int(sys.argv[2]),int(sys.argv[3])\n\
    for i in range(total):\n    try: s.sendto(b'x'*32,(sys.argv[4],port))\n    \
    except OSError: pass\n    time.sleep(1.0/rate)\n";

fn send(ns: &Netns, rate: u32, total: u32, port: u16, to: &str) -> ChildGuard {
    let code = format!("import sys; sys.argv=['', '{rate}', '{total}', '{port}', '{to}']\n{SEND}");
    python(ns, &code)
}

/// Datagrams to a closed port raise counter:Udp.NoPorts with nstat's rate;
/// a rate under the entry's threshold raises nothing; ten times the rate
/// shows ten times higher.
#[test]
fn udp_to_a_closed_port_raises_counter_udp_noports() {
    if crate::common::need_root(&["ip", "nsenter", "python3"]) {
        return;
    }
    let ns = lo_namespace("cat-noports");
    let mut rates = Vec::new();
    for (rate, total) in [(2u32, 8u32), (20, 80), (200, 800)] {
        let before = nstat(&ns, "UdpNoPorts");
        let mut sender = send(&ns, rate, total, 9, "198.18.0.1");
        let found = counter_findings(&ns, "3");
        let _ = sender.0.wait();
        let sent = nstat(&ns, "UdpNoPorts") - before;
        assert_eq!(sent, u64::from(total), "nstat counts every datagram");
        let noports: Vec<_> = found
            .iter()
            .filter(|f| f.0 == "counter:Udp.NoPorts")
            .collect();
        assert!(
            found.iter().all(|f| f.0 == "counter:Udp.NoPorts"),
            "{found:?}"
        );
        for (_, shown, per_s, _) in &noports {
            assert!(
                (shown - per_s).abs() < 0.06,
                "shown {shown}/s, counters_per_s {per_s}"
            );
        }
        if rate < 5 {
            assert!(
                noports.is_empty(),
                "{rate}/s is under the 5/s threshold: {found:?}"
            );
        } else {
            assert!(!noports.is_empty(), "{rate}/s raised nothing");
            rates.push(noports.iter().map(|f| f.1).fold(0.0, f64::max));
        }
    }
    assert!(
        rates[1] > rates[0] * 3.0,
        "200/s shows higher than 20/s: {rates:?}"
    );
}

/// A UDP socket nobody reads: udp-drops reports it (with the socket and
/// its process), so the catalogue's Udp.RcvbufErrors and Udp.InErrors,
/// which name udp-drops, raise nothing of their own. Sends to a
/// destination without a route: counter:Ip.OutNoRoutes.
#[test]
fn rcvbuf_errors_and_no_routes_raise_their_findings() {
    if crate::common::need_root(&["ip", "nsenter", "python3", "ss"]) {
        return;
    }
    let ns = lo_namespace("cat-rcvbuf");
    let _reader = python(
        &ns,
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,2048)\ns.bind(('198.18.0.1',5353))\n\
         time.sleep(15)\n",
    );
    // Bound before the first datagram: a reader that python starts late
    // on a loaded host turned the first sends into Udp.NoPorts.
    wait_bound(&ns, 5353);
    let before = nstat(&ns, "UdpRcvbufErrors");
    let mut sender = send(&ns, 100, 400, 5353, "198.18.0.1");
    let found = counter_findings(&ns, "3");
    let _ = sender.0.wait();
    assert!(nstat(&ns, "UdpRcvbufErrors") > before);
    let ids: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert!(!ids.contains(&"counter:Udp.RcvbufErrors"), "{found:?}");
    assert!(!ids.contains(&"counter:Udp.InErrors"), "{found:?}");
    for (id, shown, per_s, _) in &found {
        assert!(
            (shown - per_s).abs() < 0.06,
            "{id}: shown {shown}/s, counters_per_s {per_s}"
        );
    }
    // 198.19.255.1: in 198.18.0.0/15, no route in this namespace.
    let before = nstat(&ns, "IpOutNoRoutes");
    let mut sender = send(&ns, 50, 200, 9, "198.19.255.1");
    let found = counter_findings(&ns, "3");
    let _ = sender.0.wait();
    assert!(nstat(&ns, "IpOutNoRoutes") >= before + 200);
    let hint = |found: &[(String, f64, f64, String)]| {
        found
            .iter()
            .find(|f| f.0 == "counter:Ip.OutNoRoutes")
            .map(|f| f.3.clone())
            .unwrap_or_else(|| panic!("{found:?}"))
    };
    // The setting behind it: the table has no default route, as
    // `ip route` lists it.
    let listed = ns.ip(&["-4", "route", "show", "table", "main"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let routes = listed.lines().filter(|l| !l.trim().is_empty()).count();
    let plural = if routes == 1 { "" } else { "s" };
    let named = format!("here table main ({routes} route{plural}) has no default route");
    assert!(hint(&found).contains(&named), "{named:?} in {found:?}");
    // With a default route, a policy rule that answers unreachable: the
    // finding names the default route and points at the rules.
    ns.ip(&["route", "add", "default", "dev", "lo"]);
    ns.ip(&["rule", "add", "to", "198.19.255.0/24", "unreachable"]);
    let mut sender = send(&ns, 50, 200, 9, "198.19.255.1");
    let found = counter_findings(&ns, "3");
    let _ = sender.0.wait();
    let named = "has a default route (default dev lo): the packets without one met a policy rule";
    assert!(hint(&found).contains(named), "{named:?} in {found:?}");
}

/// Thousands of short TCP connections closed properly and a bulk transfer
/// raise no catalogue finding.
#[test]
fn a_healthy_busy_namespace_raises_no_counter_finding() {
    if crate::common::need_root(&["ip", "nsenter", "python3"]) {
        return;
    }
    let ns = lo_namespace("cat-healthy");
    let _server = python(
        &ns,
        "import socket,threading\nl=socket.socket()\nl.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
         l.bind(('198.18.0.1',8080))\nl.listen(1024)\n\
         def bulk():\n    b=socket.socket();b.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n    b.bind(('198.18.0.1',8081));b.listen(8)\n    c,_=b.accept()\n    while c.recv(1<<20): pass\n    c.close()\n\
         threading.Thread(target=bulk,daemon=True).start()\n\
         while True:\n    c,_=l.accept()\n    c.recv(100)\n    c.sendall(b'ok')\n    c.close()\n",
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _short = python(
        &ns,
        "import socket,time\nend=time.time()+5\nn=0\nwhile time.time()<end and n<6000:\n    \
         s=socket.create_connection(('198.18.0.1',8080))\n    s.sendall(b'hi')\n    \
         s.recv(10)\n    s.close()\n    n+=1\n",
    );
    let _bulk = python(
        &ns,
        "import socket\ns=socket.create_connection(('198.18.0.1',8081))\nb=b'x'*(1<<20)\n\
         for i in range(400): s.sendall(b)\ns.close()\n",
    );
    let before = nstat(&ns, "TcpActiveOpens");
    // With drop reasons counted (the eBPF program, as root): neither a
    // counter: nor a drop: finding; closed connections' drops (TCP_CLOSE,
    // SOCKET_CLOSE, NOT_SPECIFIED...) are normal life.
    let samples = snapshot(&["--netns", &ns.path(), "--count", "4"]);
    assert!(
        nstat(&ns, "TcpActiveOpens") > before + 500,
        "the namespace was busy"
    );
    let found: Vec<&str> = samples
        .iter()
        .flat_map(|s| s["findings"].as_array().into_iter().flatten())
        .filter_map(|f| f["id"].as_str())
        .filter(|id| id.starts_with("counter:") || id.starts_with("drop:"))
        .collect();
    assert!(found.is_empty(), "a healthy namespace raised {found:?}");
}
