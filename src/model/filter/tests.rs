//! The language against fixed rows: a table of expressions and the rows
//! each keeps, its errors with their positions, and its limits.

use super::rows::InSample;
use super::*;
use crate::model::Sample;
use crate::model::capture::FlowSample;
use crate::model::processes::{ProcessInfo, ProcessRow};
use crate::model::sockets::{Proto, SocketSample, SocketUser};

fn socket(
    proto: Proto,
    state: u8,
    local: &str,
    peer: &str,
    uid: u32,
    owner: Option<(&str, u32)>,
) -> SocketSample {
    SocketSample {
        proto,
        netns: 0,
        state,
        local: local.parse().unwrap(),
        peer: peer.parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid,
        inode: 1,
        users: owner
            .map(|(process, pid)| SocketUser {
                process: process.into(),
                pid,
                fd: 3,
            })
            .into_iter()
            .collect(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        limits: None,
    }
}

/// Six sockets: nginx listening and serving 443, its client, sshd, a DNS
/// client over UDP, a TIME-WAIT without an owner and a v6 connection.
fn sample() -> Sample {
    let sockets = vec![
        socket(
            Proto::Tcp,
            10,
            "0.0.0.0:443",
            "0.0.0.0:0",
            33,
            Some(("nginx", 812)),
        ),
        socket(
            Proto::Tcp,
            1,
            "198.18.0.1:443",
            "198.18.0.2:51000",
            33,
            Some(("nginx", 812)),
        ),
        socket(
            Proto::Tcp,
            1,
            "198.18.0.2:51000",
            "198.18.0.1:443",
            1000,
            Some(("curl", 4242)),
        ),
        socket(
            Proto::Tcp,
            1,
            "198.19.5.5:22",
            "198.18.7.7:60022",
            0,
            Some(("sshd", 700)),
        ),
        socket(
            Proto::Udp,
            1,
            "198.18.0.2:40053",
            "198.18.0.53:53",
            1000,
            Some(("dig", 4300)),
        ),
        socket(
            Proto::Tcp,
            6,
            "198.18.0.2:50999",
            "198.18.0.1:8080",
            0,
            None,
        ),
        socket(
            Proto::Tcp,
            1,
            "[2001:db8::2]:40000",
            "[2001:db8::1]:443",
            1000,
            Some(("curl", 4243)),
        ),
    ];
    let info = |pid, command: &str, uid, user: &str, cgroup: Option<&str>| ProcessInfo {
        pid,
        command: command.into(),
        uid,
        user: user.into(),
        cgroup: cgroup.map(Into::into),
        container: None,
    };
    Sample {
        netns: "fltns".into(),
        sockets: sockets.into(),
        processes: vec![
            info(812, "nginx", 33, "www-data", Some("docker:3f2a1b9c8d7e")),
            info(4242, "curl", 1000, "alice", Some("session-2.scope")),
            info(700, "sshd", 0, "root", Some("ssh.service")),
            info(4300, "dig", 1000, "alice", None),
            info(4243, "curl", 1000, "alice", None),
        ]
        .into(),
        ..Sample::default()
    }
}

/// The indices of the sockets `expression` keeps.
fn kept(sample: &Sample, expression: &str) -> Vec<usize> {
    let expr = Expr::parse(expression).unwrap_or_else(|e| panic!("{expression}: {e}"));
    (0..sample.sockets.len())
        .filter(|&i| expr.matches(&InSample::new(&sample.sockets.at(i), sample)))
        .collect()
}

#[test]
fn expressions_keep_the_sockets_they_name() {
    let sample = sample();
    let table: &[(&str, &[usize])] = &[
        ("", &[0, 1, 2, 3, 4, 5, 6]),
        // Bare words: case-insensitive substrings of the shown text, all
        // of them (as the tabs' filters always were).
        ("nginx", &[0, 1]),
        ("NGINX listen", &[0]),
        (":443", &[0, 1, 2, 6]),
        ("pid=4242", &[2]),
        ("udp", &[4]),
        ("time-wait", &[5]),
        // Fields.
        ("port:443", &[0, 1, 2, 6]),
        ("sport:443", &[0, 1]),
        ("dport:443", &[2, 6]),
        ("port:>1024", &[1, 2, 3, 4, 5, 6]),
        ("port:<=53", &[3, 4]),
        ("port:8000-8100", &[5]),
        ("proc:nginx", &[0, 1]),
        ("proc:CURL", &[2, 6]),
        ("pid:812", &[0, 1]),
        ("pid:4000-4299", &[2, 6]),
        ("uid:0", &[3, 5]),
        ("uid:www-data", &[0, 1]),
        ("uid:alice", &[2, 4, 6]),
        ("uid:>=1000", &[2, 4, 6]),
        ("ns:flt", &[0, 1, 2, 3, 4, 5, 6]),
        ("ns:other", &[]),
        ("container:docker", &[0, 1]),
        ("container:3F2A", &[0, 1]),
        ("state:estab", &[1, 2, 3, 4, 6]),
        ("state:established", &[1, 2, 3, 4, 6]),
        ("state:listening", &[0]),
        ("state:tw", &[5]),
        ("state:TIME_WAIT", &[5]),
        ("state:connected", &[1, 2, 3, 4, 5, 6]),
        ("state:synchronized proto:tcp", &[1, 2, 3, 5, 6]),
        ("net:198.18.0.0/15", &[1, 2, 3, 4, 5]),
        ("net:198.19.0.0/16", &[3]),
        ("net:2001:db8::/32", &[6]),
        ("net:198.18.0.53", &[4]),
        ("src:198.18.0.2", &[2, 4, 5]),
        ("dst:198.18.0.1", &[2, 5]),
        ("dst:198.18.0.1:443", &[2]),
        ("src:[2001:db8::2]:40000", &[6]),
        ("src:198.18.0.0/24", &[1, 2, 4, 5]),
        ("host:198.18.0.1", &[1, 2, 5]),
        ("host:198.18.0.1:443 host:198.18.0.2:51000", &[1, 2]),
        ("proto:udp", &[4]),
        ("proto:TCP", &[0, 1, 2, 3, 5, 6]),
        // Nothing collects peer names or SNI yet: they match no row.
        ("host:example.org", &[]),
        ("sni:example", &[]),
        // Operators.
        ("!proc:nginx", &[2, 3, 4, 5, 6]),
        ("not proc:nginx", &[2, 3, 4, 5, 6]),
        ("proc:nginx or proc:sshd", &[0, 1, 3]),
        ("proc:nginx and state:estab", &[1]),
        ("proc:nginx state:estab", &[1]),
        ("(proc:curl or proc:dig) !net:2001:db8::/32", &[2, 4]),
        ("!(port:443 or port:22)", &[4, 5]),
        ("!!proc:sshd", &[3]),
        (
            "proto:tcp and (dport:443 or sport:22) and uid:alice",
            &[2, 6],
        ),
        (
            "state:estab or state:listen and proc:sshd",
            &[1, 2, 3, 4, 6],
        ),
        // Quotes: a bare phrase, a word that would be a field or operator.
        ("\"198.18.0.1:443 198.18.0.2\"", &[1]),
        ("\"or\"", &[]),
        ("\"proc:nginx\"", &[]),
        ("proc:\"ngi\"", &[0, 1]),
        // An IPv6 address is a bare word, not a field.
        ("2001:db8::1", &[6]),
    ];
    for (expression, want) in table {
        assert_eq!(kept(&sample, expression), *want, "{expression}");
    }
}

#[test]
fn flows_and_processes_answer_the_same_fields() {
    let sample = sample();
    let flow =
        |proto: &str, src: &str, dst: &str, state: &str, owner: Option<(&str, u32)>| FlowSample {
            proto: proto.into(),
            src: src.into(),
            dst: dst.into(),
            state: state.into(),
            process: owner.map(|o| o.0.into()),
            pid: owner.map(|o| o.1),
            ..FlowSample::default()
        };
    let flows = [
        flow(
            "tcp",
            "198.18.0.2:51000",
            "198.18.0.1:443",
            "ESTABLISHED",
            Some(("curl", 4242)),
        ),
        flow(
            "udp",
            "198.18.0.2:40053",
            "198.18.0.53:53",
            "",
            Some(("dig", 4300)),
        ),
        flow("icmp", "198.18.0.2", "198.18.0.9", "", None),
        flow("tcp", "198.18.0.9:1234", "198.18.0.1:443", "FIN_WAIT", None),
    ];
    let keep = |expression: &str| -> Vec<usize> {
        let expr = Expr::parse(expression).unwrap();
        (0..flows.len())
            .filter(|&i| expr.matches(&InSample::new(&flows[i], &sample)))
            .collect()
    };
    assert_eq!(keep("dport:443"), [0, 3]);
    assert_eq!(keep("sport:443"), [] as [usize; 0]);
    assert_eq!(keep("state:estab"), [0]);
    assert_eq!(keep("state:fin-wait-1"), [3]);
    assert_eq!(keep("proto:icmp"), [2]);
    assert_eq!(keep("host:198.18.0.9"), [2, 3]);
    assert_eq!(keep("container:session"), [0]);
    assert_eq!(keep("198.18.0.2:51000 > 198.18.0.1:443"), [0]);
    assert_eq!(keep("\"198.18.0.2:51000 > 198.18.0.1:443\""), [0]);
    assert_eq!(keep("curl/4242"), [0]);

    let row = |pid: u32, command: &str, user: &str, states: &[(&'static str, usize)]| ProcessRow {
        pid,
        command: command.into(),
        user: user.into(),
        states: states.iter().copied().collect(),
        ..ProcessRow::default()
    };
    let rows = [
        row(812, "nginx", "www-data", &[("LISTEN", 1), ("ESTAB", 1)]),
        row(4242, "curl", "alice", &[("ESTAB", 1)]),
        row(700, "sshd", "root", &[("ESTAB", 1)]),
    ];
    let keep = |expression: &str| -> Vec<u32> {
        let expr = Expr::parse(expression).unwrap();
        rows.iter()
            .filter(|r| expr.matches(&InSample::new(*r, &sample)))
            .map(|r| r.pid)
            .collect()
    };
    assert_eq!(keep("state:listen"), [812]);
    assert_eq!(keep("uid:0"), [700]);
    assert_eq!(keep("uid:alice"), [4242]);
    assert_eq!(keep("container:.service or pid:812"), [812, 700]);
    assert_eq!(keep("www"), [812]);
    assert_eq!(keep("4242"), [4242]);
    // A field a process row has not (ports) matches none of them.
    assert_eq!(keep("port:443"), [] as [u32; 0]);
}

/// The message of `expression`'s error and the expression with its caret.
fn error(expression: &str) -> (String, String) {
    let e = Expr::parse(expression).unwrap_err();
    (e.to_string(), e.caret(expression, 0))
}

#[test]
fn errors_point_at_the_bad_character() {
    let cases: &[(&str, usize, &str)] = &[
        ("prot:tcp", 0, "unknown field 'prot'"),
        ("proto:tpc", 6, "unknown protocol 'tpc'"),
        ("state:estabished", 6, "unknown state 'estabished'"),
        ("port:", 5, "'port:' needs a value"),
        ("port:99999", 5, "99999 is over the largest value, 65535"),
        ("port:http", 5, "expected a number"),
        ("port:100-80", 5, "runs backwards"),
        ("port:<0", 5, "nothing is below 0"),
        ("port:>x", 6, "expected a number"),
        ("sport:80-9x", 9, "expected a number"),
        ("net:198.18.0.0/33", 15, "the prefix length must be 0 to 32"),
        ("net:198.18.0.1:80", 4, "expected ADDR or ADDR/LEN"),
        (
            "src:nothing/8",
            4,
            "'nothing' is not an IPv4 or IPv6 address",
        ),
        ("host:a:b", 5, "expected ADDR"),
        ("pid:-1", 4, "expected a number"),
        ("(port:80", 0, "this '(' is not closed"),
        ("port:80)", 7, "this ')' closes no '('"),
        ("port:80 and", 11, "nothing after 'and'"),
        ("or port:80", 0, "'or' needs a term before it"),
        ("port:80 or or port:81", 11, "'or' needs a term before it"),
        ("!", 1, "nothing after '!'"),
        ("()", 1, "expected a term before this ')'"),
        ("proc:\"ngin", 5, "this quote is not closed"),
    ];
    for (expression, position, message) in cases {
        let e = Expr::parse(expression).unwrap_err();
        assert_eq!(e.position, *position, "{expression}: {e}");
        assert!(e.message.contains(message), "{expression}: {e}");
    }
    let (line, caret) = error("proc:nginx and prot:tcp");
    assert_eq!(
        line,
        "filter error at character 16: unknown field 'prot' (fields: port sport dport src dst \
         net host proto state proc pid uid ns container sni; quote a word with a colon)"
    );
    assert_eq!(caret, "proc:nginx and prot:tcp\n               ^");
    let (_, caret) = error("port:443 and (state:bogus or x)");
    assert_eq!(
        caret,
        "port:443 and (state:bogus or x)\n                    ^"
    );
    // A caret after the end, where something is missing.
    let (_, caret) = error("port:1 or");
    assert_eq!(caret, "port:1 or\n         ^");
}

#[test]
fn limits_on_length_depth_and_terms_are_errors() {
    let long = "a".repeat(MAX_LEN + 1);
    let e = Expr::parse(&long).unwrap_err();
    assert_eq!(e.position, MAX_LEN);
    assert!(e.message.contains("over the limit of 1024"), "{e}");
    assert!(Expr::parse(&"a".repeat(MAX_LEN)).is_ok());

    let deep = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
    assert!(Expr::parse(&deep(MAX_DEPTH)).is_ok());
    let e = Expr::parse(&deep(MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(e.position, MAX_DEPTH);
    assert!(e.message.contains("nested more than 32 deep"), "{e}");
    let nots = "!".repeat(MAX_DEPTH + 1) + "x";
    assert!(Expr::parse(&nots).unwrap_err().message.contains("nested"));

    let terms = |n: usize| vec!["port:1"; n].join(" or ");
    assert!(Expr::parse(&terms(MAX_TERMS)).is_ok());
    let e = Expr::parse(&terms(MAX_TERMS + 1)).unwrap_err();
    assert_eq!(e.position, MAX_TERMS * "port:1 or ".len());
    assert!(e.message.contains("more than 64 terms"), "{e}");
    // Within the limits, the largest expression still matches quickly and
    // without deep recursion: 64 terms, 32 levels.
    let sample = sample();
    let first = sample.sockets.at(0);
    let row = InSample::new(&first, &sample);
    assert!(Expr::parse(&deep(MAX_DEPTH)).unwrap().matches(&row) == row.shown_text().contains('x'));
    assert!(!Expr::parse(&terms(MAX_TERMS)).unwrap().matches(&row));
}

/// A namespace scope (Enter in the NS tab) matches the whole label, where
/// `ns:` matches a part of it, and comes before the tab's own filter.
#[test]
fn a_scope_matches_the_whole_namespace_label() {
    use crate::model::netns::NamespaceInfo;
    let mut sample = sample();
    sample.sockets.modify(0, |s| s.netns = 1);
    sample.sockets.modify(1, |s| s.netns = 2);
    let info = |id: u16, label: &str| NamespaceInfo {
        id,
        label: label.into(),
        ..Default::default()
    };
    sample.namespaces = vec![info(0, "fltns"), info(1, "web-1"), info(2, "web-10")];
    let scoped = |scope: &str, own: &str| -> Vec<usize> {
        let expr = Expr::netns_is(scope).and(Expr::parse(own).unwrap());
        (0..sample.sockets.len())
            .filter(|&i| expr.matches(&InSample::new(&sample.sockets.at(i), &sample)))
            .collect()
    };
    assert_eq!(kept(&sample, "ns:web-1"), [0, 1]);
    assert_eq!(scoped("web-1", ""), [0]);
    assert_eq!(scoped("WEB-10", ""), [1]);
    assert_eq!(scoped("fltns", "").len(), sample.sockets.len() - 2);
    assert_eq!(scoped("fltns", "port:443"), [2, 6]);
    assert!(scoped("web-1", "port:22").is_empty());
}

#[test]
fn host_names_match_the_reverse_names_known() {
    let sample = sample();
    let names: KnownNames = [
        ("198.18.7.7".parse().unwrap(), "jump.test".to_string()),
        ("198.18.0.53".parse().unwrap(), "ns1.test".to_string()),
    ]
    .into();
    let expr = |text: &str| Expr::parse(text).unwrap();
    let sockets = |expression: &str, names: Option<&KnownNames>| -> Vec<usize> {
        let expr = expr(expression);
        (0..sample.sockets.len())
            .filter(|&i| {
                expr.matches(&InSample::new(&sample.sockets.at(i), &sample).with_names(names))
            })
            .collect()
    };
    // Names off (none known): a name matches nothing, as before.
    assert_eq!(sockets("host:jump.test", None), [] as [usize; 0]);
    assert_eq!(sockets("host:jump.test", Some(&names)), [3]);
    // Any case, whole names only (no substring: "ns1" is not a name).
    assert_eq!(sockets("host:NS1.TEST", Some(&names)), [4]);
    assert_eq!(sockets("host:ns1", Some(&names)), [] as [usize; 0]);
    assert_eq!(
        sockets("!host:ns1.test proto:udp", Some(&names)),
        [] as [usize; 0]
    );
    // A process matches by its sockets' peers; a flow by either end.
    let sshd = ProcessRow {
        pid: 700,
        command: "sshd".into(),
        ..ProcessRow::default()
    };
    let nginx = ProcessRow {
        pid: 812,
        command: "nginx".into(),
        ..ProcessRow::default()
    };
    let jump = expr("host:jump.test");
    let process =
        |row: &ProcessRow| jump.matches(&InSample::new(row, &sample).with_names(Some(&names)));
    assert!(process(&sshd));
    assert!(!process(&nginx));
    let flow = FlowSample {
        proto: "tcp".into(),
        src: "198.18.7.7:60022".into(),
        dst: "198.19.5.5:22".into(),
        ..FlowSample::default()
    };
    assert!(jump.matches(&InSample::new(&flow, &sample).with_names(Some(&names))));
    assert!(!jump.matches(&InSample::new(&flow, &sample)));
    // snapshot --where's form.
    let kept = Where {
        expr: &jump,
        names: Some(&names),
    };
    assert!(kept.keeps(&sample.sockets.at(3), &sample));
    assert!(!Where::new(&jump).keeps(&sample.sockets.at(3), &sample));
}
