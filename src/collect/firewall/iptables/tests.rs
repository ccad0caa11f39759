//! Blobs built by hand as the kernel returns them, parsed and printed.

use super::blob::{self, Family, Info};
use super::{push_table, render};
use crate::model::firewall::{Backend, Counter, Rule, Verdict};

/// XT_ALIGN.
fn align(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// An xt_entry_match / xt_entry_target with its data.
fn ext(name: &str, revision: u8, data: &[u8]) -> Vec<u8> {
    let size = 32 + align(data.len());
    let mut out = vec![0u8; size];
    out[..2].copy_from_slice(&(size as u16).to_ne_bytes());
    out[2..2 + name.len()].copy_from_slice(name.as_bytes());
    out[31] = revision;
    out[32..32 + data.len()].copy_from_slice(data);
    out
}

/// struct ipt_ip as iptables fills it (xtables_parse_interface for the
/// interfaces).
#[derive(Default)]
struct Ip4 {
    src: [u8; 4],
    smsk: [u8; 4],
    dst: [u8; 4],
    dmsk: [u8; 4],
    iniface: &'static str,
    outiface: &'static str,
    proto: u16,
    flags: u8,
    invflags: u8,
}

fn iface(name: &str, bytes: &mut [u8], at: usize, mask_at: usize) {
    bytes[at..at + name.len()].copy_from_slice(name.as_bytes());
    let masked = match name.strip_suffix('+') {
        Some(stem) => stem.len(),
        None if name.is_empty() => 0,
        None => name.len() + 1,
    };
    bytes[mask_at..mask_at + masked].fill(0xff);
}

impl Ip4 {
    fn bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; 84];
        b[0..4].copy_from_slice(&self.src);
        b[4..8].copy_from_slice(&self.dst);
        b[8..12].copy_from_slice(&self.smsk);
        b[12..16].copy_from_slice(&self.dmsk);
        iface(self.iniface, &mut b, 16, 48);
        iface(self.outiface, &mut b, 32, 64);
        b[80..82].copy_from_slice(&self.proto.to_ne_bytes());
        b[82] = self.flags;
        b[83] = self.invflags;
        b
    }
}

/// A table's blob and getinfo, entry by entry.
struct Builder {
    family: Family,
    bytes: Vec<u8>,
    info: Info,
}

impl Builder {
    fn new(family: Family) -> Builder {
        Builder {
            family,
            bytes: Vec::new(),
            info: Info::default(),
        }
    }

    /// Appends an entry; returns its offset.
    fn entry(
        &mut self,
        ip: &[u8],
        matches: &[Vec<u8>],
        target: Vec<u8>,
        counter: (u64, u64),
    ) -> usize {
        let (header, target_at, counters_at) = match self.family {
            Family::V4 => (112, 88, 96),
            Family::V6 => (168, 140, 152),
        };
        let mut e = vec![0u8; header];
        e[..ip.len()].copy_from_slice(ip);
        for m in matches {
            e.extend_from_slice(m);
        }
        let target_offset = e.len() as u16;
        e.extend_from_slice(&target);
        let next_offset = e.len() as u16;
        e[target_at..target_at + 2].copy_from_slice(&target_offset.to_ne_bytes());
        e[target_at + 2..target_at + 4].copy_from_slice(&next_offset.to_ne_bytes());
        e[counters_at..counters_at + 8].copy_from_slice(&counter.0.to_ne_bytes());
        e[counters_at + 8..counters_at + 16].copy_from_slice(&counter.1.to_ne_bytes());
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(&e);
        offset
    }

    fn standard(
        &mut self,
        ip: &[u8],
        matches: &[Vec<u8>],
        verdict: i32,
        counter: (u64, u64),
    ) -> usize {
        self.entry(ip, matches, ext("", 0, &verdict.to_ne_bytes()), counter)
    }

    fn user_chain(&mut self, name: &str) {
        let mut data = [0u8; 30];
        data[..name.len()].copy_from_slice(name.as_bytes());
        self.entry(&[], &[], ext("ERROR", 0, &data), (0, 0));
    }

    /// The next entry starts built-in chain `hook`.
    fn hook(&mut self, hook: usize) {
        self.info.valid_hooks |= 1 << hook;
        self.info.hook_entry[hook] = self.bytes.len() as u32;
    }

    /// Points the jump of the entry at `entry` to `to`.
    fn jump(&mut self, entry: usize, to: usize) {
        let target_at = match self.family {
            Family::V4 => 88,
            Family::V6 => 140,
        };
        let at = entry + target_at;
        let target_offset = u16::from_ne_bytes([self.bytes[at], self.bytes[at + 1]]);
        let at = entry + usize::from(target_offset) + 32;
        self.bytes[at..at + 4].copy_from_slice(&(to as i32).to_ne_bytes());
    }

    fn finish(mut self) -> (Info, Vec<u8>) {
        self.user_chain("ERROR");
        self.info.size = self.bytes.len();
        (self.info, self.bytes)
    }
}

const DROP: i32 = -1;
const ACCEPT: i32 = -2;
const RETURN: i32 = -5;

fn filter_table() -> (Info, Vec<u8>) {
    let mut b = Builder::new(Family::V4);
    let any = Ip4::default().bytes();
    b.hook(1);
    let tcp = Ip4 {
        src: [198, 18, 0, 0],
        smsk: [255, 254, 0, 0],
        proto: 6,
        ..Ip4::default()
    };
    let mut tcp_data = vec![0u8; 12];
    tcp_data[..4].copy_from_slice(&[0, 0, 0xff, 0xff]);
    tcp_data[4..8].copy_from_slice(&[80, 0, 80, 0]);
    let half = 0x4000_0000u32;
    let mut statistic = vec![0u8; 24];
    statistic[4..8].copy_from_slice(&half.to_ne_bytes());
    b.standard(
        &tcp.bytes(),
        &[ext("tcp", 0, &tcp_data), ext("statistic", 0, &statistic)],
        DROP,
        (3, 180),
    );
    let eth = Ip4 {
        iniface: "eth+",
        ..Ip4::default()
    };
    let to_web = b.standard(&eth.bytes(), &[], 0, (1, 60));
    let not_lo = Ip4 {
        iniface: "lo",
        flags: 0x02,
        invflags: 0x01,
        ..Ip4::default()
    };
    let to_aaa = b.standard(&not_lo.bytes(), &[], 0, (0, 0));
    let mut comment = vec![0u8; 256];
    comment[..6].copy_from_slice(b"a \"b\"\x1b");
    let fallthrough = b.standard(&any, &[ext("comment", 0, &comment)], 0, (2, 2));
    let mut log = vec![0u8; 32];
    log[0] = 6;
    log[2..5].copy_from_slice(b"x: ");
    b.entry(&any, &[], ext("LOG", 0, &log), (0, 0));
    b.entry(&any, &[], ext("REJECT", 0, &3u32.to_ne_bytes()), (0, 0));
    b.entry(
        &any,
        &[ext("foo", 0, &[1, 2, 3])],
        ext("BAR", 0, &[4]),
        (0, 0),
    );
    b.standard(&any, &[], DROP, (7, 420));
    b.hook(2);
    b.standard(&any, &[], ACCEPT, (0, 0));
    b.hook(3);
    b.standard(&any, &[], ACCEPT, (5, 500));
    // "web" before "aaa": iptables-save sorts the user chains by name.
    b.user_chain("web");
    let web = b.standard(&any, &[], RETURN, (0, 0));
    b.standard(&any, &[], RETURN, (0, 0));
    b.user_chain("aaa");
    let aaa = b.standard(&any, &[], ACCEPT, (0, 0));
    b.standard(&any, &[], RETURN, (0, 0));
    b.jump(to_web, web);
    b.jump(to_aaa, aaa);
    let next = fallthrough + 112 + align(32 + 256) + 40;
    b.jump(fallthrough, next);
    b.finish()
}

fn read(family: Family, info: &Info, bytes: &[u8]) -> Vec<Rule> {
    let table = blob::parse(family, info, bytes).expect("parses");
    let mut rules = Vec::new();
    push_table(&mut rules, family, "filter", &table);
    rules
}

#[test]
fn filter_table_reads_as_iptables_save_prints_it() {
    let (info, bytes) = filter_table();
    let rules = read(Family::V4, &info, &bytes);
    let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            ":INPUT DROP",
            ":FORWARD ACCEPT",
            ":OUTPUT ACCEPT",
            "-A INPUT -s 198.18.0.0/15 -p tcp -m tcp --dport 80 -m statistic --mode random --probability 0.50000000000 -j DROP",
            "-A INPUT -i eth+ -j web",
            "-A INPUT ! -i lo -g aaa",
            "-A INPUT -m comment --comment \"a \\\"b\\\"\\x1b\"",
            "-A INPUT -j LOG --log-prefix \"x: \" --log-level 6",
            "-A INPUT -j REJECT --reject-with icmp-port-unreachable",
            "-A INPUT -m foo -j BAR",
            "-A aaa -j ACCEPT",
            "-A web -j RETURN",
        ]
    );
    let verdicts: Vec<&Verdict> = rules.iter().map(|r| &r.verdict).collect();
    assert_eq!(
        verdicts,
        [
            &Verdict::Drop,
            &Verdict::Accept,
            &Verdict::Accept,
            &Verdict::Drop,
            &Verdict::Jump("web".into()),
            &Verdict::Goto("aaa".into()),
            &Verdict::Other,
            &Verdict::Other,
            &Verdict::Reject,
            &Verdict::Other,
            &Verdict::Accept,
            &Verdict::Return,
        ]
    );
    assert_eq!(
        rules[0],
        Rule {
            backend: Backend::IptablesLegacy,
            family: "ip".into(),
            table: "filter".into(),
            chain: "INPUT".into(),
            handle: None,
            position: 0,
            text: ":INPUT DROP".into(),
            verdict: Verdict::Drop,
            counter: Some(Counter {
                packets: 7,
                bytes: 420
            }),
            policy: true,
        }
    );
    assert_eq!(
        rules[3].counter,
        Some(Counter {
            packets: 3,
            bytes: 180
        })
    );
    assert_eq!(rules[3].position, 1);
    assert!(!rules[3].policy);
    assert_eq!(rules[9].position, 7);
    assert_eq!((rules[10].chain.as_str(), rules[10].position), ("aaa", 1));
}

#[test]
fn broken_blobs_are_errors_never_panics() {
    let (info, bytes) = filter_table();
    for len in 0..bytes.len() {
        let mut short = info.clone();
        short.size = len;
        let _ = blob::parse(Family::V4, &short, &bytes[..len]);
    }
    // Every byte of the headers and extensions set to extremes in turn.
    for at in 0..bytes.len() {
        for value in [0u8, 1, 0x7f, 0xff] {
            let mut bad = bytes.clone();
            bad[at] = value;
            if let Ok(table) = blob::parse(Family::V4, &info, &bad) {
                let mut rules = Vec::new();
                push_table(&mut rules, Family::V4, "filter", &table);
            }
        }
    }
    let mut zero_size = bytes.clone();
    zero_size[90..92].copy_from_slice(&0u16.to_ne_bytes());
    assert!(blob::parse(Family::V4, &info, &zero_size).is_err());
}

/// One rule of a one-chain table, printed.
fn one_rule(family: Family, ip: &[u8], matches: &[Vec<u8>], target: Vec<u8>) -> String {
    let mut b = Builder::new(family);
    b.hook(1);
    b.entry(ip, matches, target, (0, 0));
    let any = vec![0u8; if family == Family::V4 { 84 } else { 136 }];
    b.standard(&any, &[], ACCEPT, (0, 0));
    let (info, bytes) = b.finish();
    let rules = read(family, &info, &bytes);
    assert_eq!(rules.len(), 2, "{rules:?}");
    rules[1].text.clone()
}

fn v4_rule(ip: Ip4, matches: &[Vec<u8>], target: Vec<u8>) -> String {
    one_rule(Family::V4, &ip.bytes(), matches, target)
}

#[test]
fn ip_part_of_a_rule() {
    let drop = || ext("", 0, &DROP.to_ne_bytes());
    let ip = Ip4 {
        src: [198, 18, 0, 0],
        smsk: [255, 255, 0, 255],
        dst: [0, 0, 0, 0],
        invflags: 0x10 | 0x40 | 0x20,
        proto: 47,
        flags: 0x01,
        outiface: "nlv+",
        ..Ip4::default()
    };
    assert_eq!(
        v4_rule(ip, &[], drop()),
        format!(
            "-A INPUT -s 198.18.0.0/255.255.0.255 ! -d 0.0.0.0/0 -o nlv+ ! -p {} ! -f -j DROP",
            proto_47()
        )
    );
    let plus = Ip4 {
        iniface: "+",
        proto: 58,
        ..Ip4::default()
    };
    assert_eq!(v4_rule(plus, &[], drop()), "-A INPUT -p ipv6-icmp -j DROP");
    let host = Ip4 {
        dst: [198, 18, 0, 1],
        dmsk: [255; 4],
        proto: 253,
        ..Ip4::default()
    };
    let expected =
        match render::etc_protocols(&std::fs::read_to_string("/etc/protocols").unwrap_or_default())
            .get(&253)
        {
            Some(name) => format!("-A INPUT -d 198.18.0.1/32 -p {name} -j DROP"),
            None => "-A INPUT -d 198.18.0.1/32 -p 253 -j DROP".to_string(),
        };
    assert_eq!(v4_rule(host, &[], drop()), expected);
}

/// What iptables-save calls protocol 47 here (/etc/protocols: gre).
fn proto_47() -> String {
    render::etc_protocols(&std::fs::read_to_string("/etc/protocols").unwrap_or_default())
        .get(&47)
        .cloned()
        .unwrap_or_else(|| "47".into())
}

#[test]
fn ip6_part_of_a_rule() {
    let mut ip = vec![0u8; 136];
    ip[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    ip[32..36].copy_from_slice(&[0xff; 4]);
    ip[16..32].copy_from_slice(&std::net::Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0xc612, 1).octets());
    ip[48..64].copy_from_slice(&[0xff; 16]);
    ip[128] = 6;
    ip[132] = 0x08;
    let mut tcp = vec![0u8; 12];
    tcp[..4].copy_from_slice(&[0, 0, 0xff, 0xff]);
    tcp[4..8].copy_from_slice(&[0xbb, 1, 0xbb, 1]);
    let reject = ext("REJECT", 0, &1u32.to_ne_bytes());
    assert_eq!(
        one_rule(Family::V6, &ip, &[ext("tcp", 0, &tcp)], reject),
        "-A INPUT ! -s 2001:db8::/32 -d ::198.18.0.1/128 -p tcp -m tcp --dport 443 -j REJECT --reject-with icmp6-adm-prohibited"
    );
    let mut odd_mask = vec![0u8; 136];
    odd_mask[32..36].copy_from_slice(&[0xff, 0xff, 0, 0xff]);
    odd_mask[131] = 0x04;
    assert_eq!(
        one_rule(Family::V6, &odd_mask, &[], ext("", 0, &DROP.to_ne_bytes())),
        "-A INPUT -s ::/ffff:ff:: -g DROP"
    );
}

#[test]
fn matches_as_iptables_save_prints_them() {
    let rule = |m: Vec<u8>| {
        // A fallthrough verdict: the rule's own offset plus its size.
        let mut b = Builder::new(Family::V4);
        b.hook(1);
        let at = b.standard(&Ip4::default().bytes(), std::slice::from_ref(&m), 0, (0, 0));
        let next = b.bytes.len();
        b.jump(at, next);
        b.standard(&Ip4::default().bytes(), &[], ACCEPT, (0, 0));
        let (info, bytes) = b.finish();
        read(Family::V4, &info, &bytes)[1].text.clone()
    };
    let mut syn = vec![0u8; 12];
    syn[..8].copy_from_slice(&[0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff]);
    syn[9] = 0x17;
    syn[10] = 0x02;
    syn[11] = 0x04;
    assert_eq!(
        rule(ext("tcp", 0, &syn)),
        "-A INPUT -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN"
    );
    let mut multiport = vec![0u8; 48];
    multiport[0] = 1;
    multiport[1] = 4;
    for (i, port) in [22u16, 1000, 2000, 80].iter().enumerate() {
        multiport[2 + 2 * i..4 + 2 * i].copy_from_slice(&port.to_ne_bytes());
    }
    multiport[33] = 1;
    multiport[47] = 1;
    assert_eq!(
        rule(ext("multiport", 1, &multiport)),
        "-A INPUT -m multiport ! --dports 22,1000:2000,80"
    );
    let mut state = vec![0u8; 164];
    state[146..148].copy_from_slice(&(1u16 | 1 << 13).to_ne_bytes());
    state[150..152].copy_from_slice(&(1u16 << 1 | 1 << 2).to_ne_bytes());
    assert_eq!(
        rule(ext("conntrack", 3, &state)),
        "-A INPUT -m state --state RELATED,ESTABLISHED"
    );
    let mut ct = vec![0u8; 164];
    ct[32..36].copy_from_slice(&[198, 18, 0, 0]);
    ct[48..52].copy_from_slice(&[255, 255, 0, 0]);
    ct[136..138].copy_from_slice(&6u16.to_ne_bytes());
    ct[140..142].copy_from_slice(&80u16.to_ne_bytes());
    ct[146..148].copy_from_slice(&(0x1u16 | 0x2 | 0x8 | 0x200 | 0x40 | 0x1000).to_ne_bytes());
    ct[148..150].copy_from_slice(&(0x1u16 | 0x1000).to_ne_bytes());
    ct[150..152].copy_from_slice(&(1u16 << 3).to_ne_bytes());
    assert_eq!(
        rule(ext("conntrack", 3, &ct)),
        "-A INPUT -m conntrack ! --ctstate NEW --ctproto 6 --ctorigdst 198.18.0.0/16 --ctorigdstport 80 --ctstatus NONE --ctdir REPLY"
    );
    let mut limit = vec![0u8; 40];
    limit[..4].copy_from_slice(&(10_000u32 * 3600 / 3).to_ne_bytes());
    limit[4..8].copy_from_slice(&5u32.to_ne_bytes());
    assert_eq!(
        rule(ext("limit", 0, &limit)),
        "-A INPUT -m limit --limit 3/hour"
    );
    limit[..4].copy_from_slice(&1000u32.to_ne_bytes());
    limit[4..8].copy_from_slice(&20u32.to_ne_bytes());
    assert_eq!(
        rule(ext("limit", 0, &limit)),
        "-A INPUT -m limit --limit 10/sec --limit-burst 20"
    );
    let mut nth = vec![0u8; 24];
    nth[..2].copy_from_slice(&1u16.to_ne_bytes());
    nth[4..8].copy_from_slice(&2u32.to_ne_bytes());
    nth[8..12].copy_from_slice(&1u32.to_ne_bytes());
    assert_eq!(
        rule(ext("statistic", 0, &nth)),
        "-A INPUT -m statistic --mode nth --every 3 --packet 1"
    );
    let mut mark = vec![0u8; 12];
    mark[..4].copy_from_slice(&0x10u32.to_ne_bytes());
    mark[4..8].copy_from_slice(&0xffu32.to_ne_bytes());
    mark[8] = 1;
    assert_eq!(
        rule(ext("mark", 1, &mark)),
        "-A INPUT -m mark ! --mark 0x10/0xff"
    );
    let mut addrtype = vec![0u8; 8];
    addrtype[2..4].copy_from_slice(&(1u16 << 2 | 1 << 3).to_ne_bytes());
    addrtype[4..8].copy_from_slice(&(0x2u32 | 0x4).to_ne_bytes());
    assert_eq!(
        rule(ext("addrtype", 1, &addrtype)),
        "-A INPUT -m addrtype ! --dst-type LOCAL,BROADCAST --limit-iface-in"
    );
    let mut iprange = vec![0u8; 68];
    iprange[..4].copy_from_slice(&[198, 18, 0, 10]);
    iprange[16..20].copy_from_slice(&[198, 18, 0, 20]);
    iprange[64] = 0x01 | 0x10;
    assert_eq!(
        rule(ext("iprange", 1, &iprange)),
        "-A INPUT -m iprange ! --src-range 198.18.0.10-198.18.0.20"
    );
    let mut mac = vec![0u8; 12];
    mac[..6].copy_from_slice(&[2, 0, 0xc6, 0x12, 0, 1]);
    assert_eq!(
        rule(ext("mac", 0, &mac)),
        "-A INPUT -m mac --mac-source 02:00:c6:12:00:01"
    );
    assert_eq!(
        rule(ext("length", 0, &[100, 0, 200, 0, 1, 0, 0, 0])),
        "-A INPUT -m length ! --length 100:200"
    );
    let mut owner = vec![0u8; 20];
    owner[8..12].copy_from_slice(&10u32.to_ne_bytes());
    owner[12..16].copy_from_slice(&20u32.to_ne_bytes());
    owner[16] = 0x2 | 0x4;
    owner[17] = 0x4;
    assert_eq!(
        rule(ext("owner", 1, &owner)),
        "-A INPUT -m owner ! --socket-exists --gid-owner 10-20"
    );
    let mut comment = vec![0u8; 256];
    comment[..10].copy_from_slice(b"plain_word");
    assert_eq!(
        rule(ext("comment", 0, &comment)),
        "-A INPUT -m comment --comment plain_word"
    );
    // A revision netlens does not decode: the name alone.
    assert_eq!(
        rule(ext("multiport", 0, &multiport)),
        "-A INPUT -m multiport"
    );
    // Data too short for its match: the name alone too.
    assert_eq!(rule(ext("tcp", 0, &[])), "-A INPUT -m tcp");
}

#[test]
fn targets_as_iptables_save_prints_them() {
    let v4 = |t: Vec<u8>| v4_rule(Ip4::default(), &[], t);
    let mut dnat = vec![0u8; 44];
    dnat[..4].copy_from_slice(&(1u32 | 2).to_ne_bytes());
    dnat[4..8].copy_from_slice(&[198, 18, 0, 2]);
    dnat[20..24].copy_from_slice(&[198, 18, 0, 2]);
    dnat[36..38].copy_from_slice(&80u16.to_be_bytes());
    dnat[38..40].copy_from_slice(&80u16.to_be_bytes());
    assert_eq!(
        v4(ext("DNAT", 2, &dnat)),
        "-A INPUT -j DNAT --to-destination 198.18.0.2:80"
    );
    let mut masq = vec![0u8; 20];
    masq[..4].copy_from_slice(&1u32.to_ne_bytes());
    masq[4..8].copy_from_slice(&(2u32 | 4).to_ne_bytes());
    masq[16..18].copy_from_slice(&1024u16.to_be_bytes());
    masq[18..20].copy_from_slice(&2000u16.to_be_bytes());
    assert_eq!(
        v4(ext("MASQUERADE", 0, &masq)),
        "-A INPUT -j MASQUERADE --to-ports 1024-2000 --random"
    );
    let mut snat = vec![0u8; 20];
    snat[4..8].copy_from_slice(&(1u32 | 16 | 8).to_ne_bytes());
    snat[8..12].copy_from_slice(&[198, 18, 0, 1]);
    snat[12..16].copy_from_slice(&[198, 18, 0, 5]);
    assert_eq!(
        v4(ext("SNAT", 0, &snat)),
        "-A INPUT -j SNAT --to-source 198.18.0.1-198.18.0.5 --random-fully --persistent"
    );
    let mut dnat6 = vec![0u8; 44];
    dnat6[..4].copy_from_slice(&(1u32 | 2).to_ne_bytes());
    let addr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2).octets();
    dnat6[4..20].copy_from_slice(&addr);
    dnat6[20..36].copy_from_slice(&addr);
    dnat6[36..38].copy_from_slice(&8080u16.to_be_bytes());
    dnat6[38..40].copy_from_slice(&8080u16.to_be_bytes());
    assert_eq!(
        one_rule(Family::V6, &[0; 136], &[], ext("DNAT", 2, &dnat6)),
        "-A INPUT -j DNAT --to-destination [2001:db8::2]:8080"
    );
    let mut mark = vec![0u8; 8];
    mark[..4].copy_from_slice(&7u32.to_ne_bytes());
    mark[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
    assert_eq!(
        v4(ext("MARK", 2, &mark)),
        "-A INPUT -j MARK --set-xmark 0x7/0xffffffff"
    );
    let mut connmark = vec![0u8; 16];
    connmark[4..8].copy_from_slice(&0xffu32.to_ne_bytes());
    connmark[8..12].copy_from_slice(&0xffu32.to_ne_bytes());
    connmark[13] = 2;
    connmark[14] = 1;
    assert_eq!(
        v4(ext("CONNMARK", 2, &connmark)),
        "-A INPUT -j CONNMARK --save-mark --nfmask 0xff --ctmask 0xff --left-shift-mark 2"
    );
    let mut log = vec![0u8; 32];
    log[0] = 4;
    log[1] = 0x02 | 0x08;
    log[2..10].copy_from_slice(b"v6 \\ 'q'");
    assert_eq!(
        v4(ext("LOG", 0, &log)),
        "-A INPUT -j LOG --log-prefix \"v6 \\\\ \\'q\\'\" --log-tcp-options --log-uid"
    );
    assert_eq!(
        v4(ext("REJECT", 0, &7u32.to_ne_bytes())),
        "-A INPUT -j REJECT --reject-with tcp-reset"
    );
    // ECHOREPLY has no name: the target alone.
    assert_eq!(
        v4(ext("REJECT", 0, &4u32.to_ne_bytes())),
        "-A INPUT -j REJECT"
    );
}

#[test]
fn addresses_print_as_glibc_does() {
    use std::net::Ipv6Addr;
    assert_eq!(
        render::ipv6_text(Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0xc612, 1).octets()),
        "::198.18.0.1"
    );
    assert_eq!(
        render::ipv6_text(Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0xc612, 2).octets()),
        "::ffff:198.18.0.2"
    );
    assert_eq!(render::ipv6_text(Ipv6Addr::LOCALHOST.octets()), "::1");
    assert_eq!(render::ipv6_text([0; 16]), "::");
    assert_eq!(
        render::ipv6_text(Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, 1).octets()),
        "2001:db8:0:1::1"
    );
    assert_eq!(render::v4_prefix([255, 254, 0, 0]), Some(15));
    assert_eq!(render::v4_prefix([0; 4]), Some(0));
    assert_eq!(render::v4_prefix([255, 0, 255, 0]), None);
    let protocols = render::etc_protocols("# c\nip 0 IP\ngre\t47\tGRE # comment\nalso-gre 47\n");
    assert_eq!(protocols.get(&47).map(String::as_str), Some("gre"));
    assert_eq!(protocols.get(&0).map(String::as_str), Some("ip"));
    let mut out = String::new();
    render::push_quoted(&mut out, "");
    render::push_quoted(&mut out, "a-b_1");
    render::push_quoted(&mut out, "a b");
    assert_eq!(out, " \"\" a-b_1 \"a b\"");
}
