//! Attribute parsing and rendering on hand-built netlink bytes.

use super::expr::{Data, Expr};
use super::*;

/// One netlink attribute, padded.
fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(4 + value.len() as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

fn nested(kind: u16, parts: &[Vec<u8>]) -> Vec<u8> {
    attr(kind | 0x8000, &parts.concat())
}

fn u32be(value: u32) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

fn data(value: &[u8]) -> Vec<u8> {
    attr(1, value)
}

/// One NFTA_LIST_ELEM expression.
fn expression(name: &str, attributes: &[Vec<u8>]) -> Vec<u8> {
    let mut name = name.as_bytes().to_vec();
    name.push(0);
    nested(1, &[attr(1, &name), nested(2, attributes)])
}

fn payload(base: u32, offset: u32, len: u32) -> Vec<u8> {
    expression(
        "payload",
        &[
            attr(1, &u32be(1)),
            attr(2, &u32be(base)),
            attr(3, &u32be(offset)),
            attr(4, &u32be(len)),
        ],
    )
}

fn meta(key: u32) -> Vec<u8> {
    expression("meta", &[attr(1, &u32be(1)), attr(2, &u32be(key))])
}

fn cmp(op: u32, value: &[u8]) -> Vec<u8> {
    expression(
        "cmp",
        &[
            attr(1, &u32be(1)),
            attr(2, &u32be(op)),
            nested(3, &[data(value)]),
        ],
    )
}

fn verdict(code: i32) -> Vec<u8> {
    let verdict = nested(2, &[nested(2, &[attr(1, &(code as u32).to_be_bytes())])]);
    expression("immediate", &[attr(1, &u32be(0)), verdict])
}

fn counter(packets: u64, bytes: u64) -> Vec<u8> {
    expression(
        "counter",
        &[
            attr(1, &bytes.to_be_bytes()),
            attr(2, &packets.to_be_bytes()),
        ],
    )
}

fn render(family: u8, expressions: &[Vec<u8>]) -> render::Rendered {
    render_with(family, expressions, &HashMap::new())
}

fn render_with(
    family: u8,
    expressions: &[Vec<u8>],
    sets: &HashMap<String, Set>,
) -> render::Rendered {
    let exprs = expr::parse_list(&expressions.concat());
    render::rule(family, &exprs, sets)
}

#[test]
fn attributes_mask_flags_and_stop_at_garbage() {
    let mut bytes = nested(3, &[attr(1, b"ab")]);
    bytes.extend_from_slice(&attr(0x4002, &[1, 2, 3, 4]));
    bytes.extend_from_slice(&[200, 0, 1, 0]); // claims 200 bytes
    let parsed: Vec<(u16, &[u8])> = attributes(&bytes).collect();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].0, 3);
    assert_eq!(parsed[1], (2, &[1u8, 2, 3, 4][..]));
    assert_eq!(attributes(&[0, 0, 0, 0, 1]).count(), 0);
    assert_eq!(attributes(&[]).count(), 0);
    assert_eq!(be_u32(&[1, 2]), None);
    assert_eq!(string(b"x\x1by\0junk"), "x\\x1by");
}

#[test]
fn tables_chains_rules_and_comments_parse() {
    let mut payload = vec![2, 0, 0, 0];
    payload.extend(attr(1, b"filter\0"));
    payload.extend(attr(3, b"INPUT\0"));
    payload.extend(nested(4, &[attr(1, &u32be(1))]));
    payload.extend(attr(5, &u32be(0)));
    payload.extend(nested(
        8,
        &[attr(1, &100u64.to_be_bytes()), attr(2, &2u64.to_be_bytes())],
    ));
    let chain = parse_chain(&payload).unwrap();
    assert_eq!((chain.family, chain.name.as_str()), (2, "INPUT"));
    assert_eq!(chain.policy, Some(0));
    assert_eq!(
        chain.counter,
        Some(Counter {
            packets: 2,
            bytes: 100
        })
    );

    let mut payload = vec![1, 0, 0, 0];
    payload.extend(attr(1, b"t\0"));
    payload.extend(attr(2, b"c\0"));
    payload.extend(attr(3, &7u64.to_be_bytes()));
    payload.extend(nested(4, &[verdict(1)]));
    payload.extend(attr(7, b"\x00\x04web\x00"));
    let rule = parse_rule(&payload).unwrap();
    assert_eq!((rule.handle, rule.comment.as_deref()), (7, Some("web")));
    assert_eq!(rule.exprs.len(), 1);
    assert_eq!(comment(b"\x00\x09"), None);
    assert!(parse_rule(&[]).is_none());
}

#[test]
fn dependencies_are_dropped_like_nft() {
    // inet: meta l4proto tcp; tcp dport 22; counter; accept
    let rendered = render(
        1,
        &[
            meta(16),
            cmp(0, &[6]),
            payload(2, 2, 2),
            cmp(0, &[0, 22]),
            counter(3, 180),
            verdict(1),
        ],
    );
    assert_eq!(rendered.text, "tcp dport 22 counter accept");
    assert_eq!(rendered.verdict, Verdict::Accept);
    assert_eq!(
        rendered.counter,
        Some(Counter {
            packets: 3,
            bytes: 180
        })
    );

    // inet: meta nfproto ipv4; ip protocol tcp; tcp dport 22 -> ip protocol stays.
    let rendered = render(
        1,
        &[
            meta(15),
            cmp(0, &[2]),
            payload(1, 9, 1),
            cmp(0, &[6]),
            payload(2, 2, 2),
            cmp(0, &[0, 22]),
            verdict(0),
        ],
    );
    assert_eq!(rendered.text, "ip protocol tcp tcp dport 22 drop");

    // ip: a merged 8-byte load of saddr and daddr, then a /24 prefix.
    let rendered = render(
        2,
        &[
            payload(1, 12, 8),
            cmp(0, &[198, 18, 0, 1, 198, 18, 0, 2]),
            payload(1, 12, 3),
            cmp(1, &[198, 18, 0]),
        ],
    );
    assert_eq!(
        rendered.text,
        "ip saddr 198.18.0.1 ip daddr 198.18.0.2 ip saddr != 198.18.0.0/24"
    );
    assert_eq!(rendered.verdict, Verdict::Other);
    assert_eq!(rendered.counter, None);
}

#[test]
fn ranges_masks_and_flags() {
    let bitwise = |mask: &[u8]| {
        expression(
            "bitwise",
            &[
                attr(1, &u32be(1)),
                attr(2, &u32be(1)),
                attr(3, &u32be(mask.len() as u32)),
                nested(4, &[data(mask)]),
                nested(5, &[data(&vec![0; mask.len()])]),
            ],
        )
    };
    let ct_state = expression("ct", &[attr(1, &u32be(1)), attr(2, &u32be(0))]);
    let rendered = render(
        2,
        &[
            ct_state,
            bitwise(&6u32.to_ne_bytes()),
            cmp(1, &0u32.to_ne_bytes()),
            meta(16),
            cmp(0, &[17]),
            payload(2, 2, 2),
            cmp(5, &[3, 232]),
            cmp(3, &[7, 208]),
            meta(16),
            cmp(0, &[6]),
            payload(2, 13, 1),
            bitwise(&[0x17]),
            cmp(0, &[0x02]),
            payload(1, 1, 1),
            bitwise(&[0xfc]),
            cmp(0, &[0x40]),
            meta(3),
            bitwise(&15u32.to_ne_bytes()),
            cmp(0, &1u32.to_ne_bytes()),
        ],
    );
    assert_eq!(
        rendered.text,
        "ct state established,related udp dport 1000-2000 tcp flags syn / fin,syn,rst,ack \
         ip dscp cs2 meta mark & 0x0000000f == 0x00000001"
    );
}

#[test]
fn anonymous_sets_render_inline_sorted() {
    let element = |key: &[u8], end: bool| Element {
        key: key.to_vec(),
        key_end: None,
        interval_end: end,
        data: None,
    };
    let mut sets = HashMap::new();
    sets.insert(
        "__set0".to_string(),
        Set {
            flags: SET_ANONYMOUS | 0x2,
            key_len: 2,
            data_type: 0,
            elements: Some(vec![element(&[1, 187], false), element(&[0, 80], false)]),
        },
    );
    sets.insert(
        "__set1".to_string(),
        Set {
            flags: SET_ANONYMOUS | 0x4,
            key_len: 4,
            data_type: 0,
            elements: Some(vec![
                element(&[198, 20, 0, 0], true),
                element(&[198, 18, 0, 0], false),
                element(&[0, 0, 0, 0], true),
                element(&[10, 0, 0, 1], false),
                element(&[10, 0, 0, 2], true),
            ]),
        },
    );
    sets.insert(
        "allowed".to_string(),
        Set {
            flags: 0,
            key_len: 4,
            data_type: 0,
            elements: None,
        },
    );
    let lookup = |set: &str, flags: u32| {
        let mut name = set.as_bytes().to_vec();
        name.push(0);
        expression(
            "lookup",
            &[attr(1, &name), attr(2, &u32be(1)), attr(5, &u32be(flags))],
        )
    };
    let rendered = render_with(
        2,
        &[
            meta(16),
            cmp(0, &[6]),
            payload(2, 2, 2),
            lookup("__set0", 0),
            payload(1, 12, 4),
            lookup("__set1", 1),
            payload(1, 16, 4),
            lookup("allowed", 0),
            verdict(1),
        ],
        &sets,
    );
    assert_eq!(
        rendered.text,
        "tcp dport { 80, 443 } ip saddr != { 10.0.0.1, 198.18.0.0/15 } ip daddr @allowed accept"
    );
}

#[test]
fn statements_render() {
    let reject = expression("reject", &[attr(1, &u32be(0)), attr(2, &[1])]);
    let log = expression("log", &[attr(2, b"dropped: \0"), attr(5, &u32be(4))]);
    let limit = expression(
        "limit",
        &[
            attr(1, &10u64.to_be_bytes()),
            attr(2, &1u64.to_be_bytes()),
            attr(3, &u32be(5)),
        ],
    );
    let rendered = render(2, &[log, limit, reject]);
    assert_eq!(
        rendered.text,
        "log prefix \"dropped: \" limit rate 10/second reject with icmp host-unreachable"
    );
    assert_eq!(rendered.verdict, Verdict::Reject);

    let imm = |reg: u32, value: &[u8]| {
        expression(
            "immediate",
            &[attr(1, &u32be(reg)), nested(2, &[data(value)])],
        )
    };
    let nat = expression(
        "nat",
        &[
            attr(1, &u32be(1)),
            attr(2, &u32be(2)),
            attr(3, &u32be(1)),
            attr(4, &u32be(1)),
            attr(5, &u32be(2)),
            attr(6, &u32be(2)),
        ],
    );
    let rendered = render(2, &[imm(1, &[198, 18, 0, 2]), imm(2, &[0, 80]), nat]);
    assert_eq!(rendered.text, "dnat to 198.18.0.2:80");

    let masq = expression("masq", &[]);
    assert_eq!(render(2, &[masq]).text, "masquerade");
    let unknown = expression("fib", &[attr(1, &u32be(1))]);
    assert_eq!(render(2, &[unknown]).text, "[fib 1=0x00000001]");
    // A comparison of a register nothing loaded stays low-level.
    assert_eq!(render(2, &[cmp(0, &[1])]).text, "[cmp eq reg 1 0x01]");
}

#[test]
fn malformed_expressions_never_panic() {
    let mut bytes = Vec::new();
    for e in [payload(2, 2, 2), cmp(0, &[0, 22]), verdict(1)] {
        bytes.extend(e);
    }
    for cut in 0..bytes.len() {
        let exprs = expr::parse_list(&bytes[..cut]);
        let _ = render::rule(1, &exprs, &HashMap::new());
    }
    let odd = [Expr::Immediate {
        dreg: 0,
        data: Data::Value(vec![1]),
    }];
    assert_eq!(
        render::rule(2, &odd, &HashMap::new()).text,
        "[immediate reg 0 0x01]"
    );
}

#[test]
fn swapped_meta_values_and_link_layer_dependencies() {
    let byteorder = expression(
        "byteorder",
        &[
            attr(1, &u32be(1)),
            attr(2, &u32be(1)),
            attr(3, &u32be(1)),
            attr(4, &u32be(4)),
            attr(5, &u32be(4)),
        ],
    );
    // meta length > 1000: compared in network byte order.
    let rendered = render(1, &[meta(0), byteorder, cmp(4, &1000u32.to_be_bytes())]);
    assert_eq!(rendered.text, "meta length > 1000");
    // ether saddr in an ip table: nft's `meta iiftype ether` goes.
    let rendered = render(
        2,
        &[
            meta(8),
            cmp(0, &1u16.to_ne_bytes()),
            payload(0, 6, 6),
            cmp(0, &[2, 0, 0, 0, 0, 1]),
            verdict(0),
        ],
    );
    assert_eq!(rendered.text, "ether saddr 02:00:00:00:00:01 drop");
}

#[test]
fn absurd_offsets_and_registers_never_panic() {
    let exprs = [
        Expr::Payload {
            dreg: u32::MAX,
            base: 9,
            offset: u32::MAX,
            len: u32::MAX,
        },
        Expr::Cmp {
            sreg: u32::MAX,
            op: 0,
            data: vec![0xff; 80],
        },
        Expr::Lookup {
            sreg: u32::MAX,
            dreg: None,
            set: "s".into(),
            invert: false,
        },
        Expr::Payload {
            dreg: 8,
            base: 1,
            offset: u32::MAX / 4,
            len: 40,
        },
        Expr::Bitwise {
            sreg: 8,
            dreg: 8,
            mask: vec![0x0f; 40],
            xor: vec![0; 40],
        },
        Expr::Cmp {
            sreg: 8,
            op: 1,
            data: vec![1; 40],
        },
    ];
    let mut sets = HashMap::new();
    sets.insert(
        "s".to_string(),
        Set {
            flags: SET_ANONYMOUS | 0x4,
            key_len: u32::MAX,
            data_type: 0,
            elements: Some(vec![Element {
                key: vec![],
                key_end: Some(vec![1]),
                interval_end: false,
                data: Some(Data::Value(vec![])),
            }]),
        },
    );
    let _ = render::rule(1, &exprs, &sets);
}
