//! Random pcap-filter expressions of the grammar netlens supports, from a
//! small deterministic generator (the same expressions every run), with
//! values the tests' traffic has (and some it has not).

/// xorshift64: deterministic, no dependency.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// One primitive of the pcap-filter grammar, with the tests'
/// addresses (198.18.0.0/15, 2001:db8::/32) and ports.
pub fn random_primitive(rng: &mut XorShift) -> String {
    let dir = ["", "src ", "dst "];
    let hosts = [
        "198.18.0.1",
        "198.18.0.2",
        "198.18.0.53",
        "198.19.1.1",
        "2001:db8::1",
        "2001:db8::2",
    ];
    let nets = [
        "198.18.0.0/16",
        "198.18.0.0/24",
        "198.18.0.2/32",
        "198.19.0.0/16",
        "2001:db8::/32",
        "2001:db8::2/128",
    ];
    let ports = ["53", "9000", "9001", "9002", "40053", "40100", "80"];
    let flags = ["tcp-syn", "tcp-ack", "tcp-fin", "tcp-rst", "tcp-push"];
    match rng.below(12) {
        0 => rng
            .pick(&["tcp", "udp", "icmp", "icmp6", "arp", "ip", "ip6"])
            .to_string(),
        1 => format!("{}host {}", rng.pick(&dir), rng.pick(&hosts)),
        2 => format!("{}net {}", rng.pick(&dir), rng.pick(&nets)),
        3 => format!(
            "{}{}port {}",
            rng.pick(&["", "tcp ", "udp "]),
            rng.pick(&dir),
            rng.pick(&ports)
        ),
        4 => format!(
            "{}portrange {}",
            rng.pick(&dir),
            rng.pick(&["9000-9002", "1-1024", "40000-40100", "9001-9001"])
        ),
        5 => format!("less {}", rng.pick(&["42", "60", "64", "100", "200"])),
        6 => format!("greater {}", rng.pick(&["42", "60", "64", "100", "200"])),
        7 => format!(
            "tcp[tcpflags] & ({}|{}) != 0",
            rng.pick(&flags),
            rng.pick(&flags)
        ),
        8 => format!(
            "tcp[13] & {} != 0",
            rng.pick(&["1", "2", "4", "8", "16", "18"])
        ),
        9 => format!(
            "tcp[13] = {}",
            rng.pick(&["2", "16", "18", "24", "17", "20"])
        ),
        10 => format!(
            "icmp[icmptype] = {}",
            rng.pick(&["icmp-echo", "icmp-echoreply", "icmp-unreach"])
        ),
        _ => format!(
            "ip[{}] = {}",
            rng.pick(&["8", "9"]),
            rng.pick(&["1", "6", "17", "64"])
        ),
    }
}

/// An expression of up to `depth` levels: not, and/or with and without
/// parentheses.
pub fn random_filter(rng: &mut XorShift, depth: u32) -> String {
    if depth == 0 {
        return random_primitive(rng);
    }
    match rng.below(5) {
        0 => random_primitive(rng),
        1 => format!("not {}", random_filter(rng, depth - 1)),
        2 => format!(
            "({}) {} ({})",
            random_filter(rng, depth - 1),
            rng.pick(&["and", "or"]),
            random_filter(rng, depth - 1)
        ),
        _ => format!(
            "{} {} {} {} {}",
            random_primitive(rng),
            rng.pick(&["and", "or"]),
            random_primitive(rng),
            rng.pick(&["and", "or", "&&", "||"]),
            random_filter(rng, depth - 1)
        ),
    }
}
