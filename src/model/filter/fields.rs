//! The filter language's tables: its fields, state names, examples and
//! limits. Plain constants only (build.rs includes this file to render the
//! man page's FILTERS section from the same tables the parser uses).

/// The longest expression, in characters: the tabs' filter line and a
/// command line hold far less; the cap bounds the parser's work.
pub const MAX_LEN: usize = 1024;
/// How deeply parentheses and `!` may nest (evaluation recurses).
pub const MAX_DEPTH: usize = 32;
/// The most terms (fields and words) in one expression.
pub const MAX_TERMS: usize = 64;

/// The fields: name, meaning, example.
pub const FIELDS: &[(&str, &str, &str)] = &[
    (
        "port",
        "either end's port: N, >N, >=N, <N, <=N or A-B",
        "port:443",
    ),
    (
        "sport",
        "the source port (a socket's local end)",
        "sport:>=1024",
    ),
    (
        "dport",
        "the destination port (a socket's peer)",
        "dport:53",
    ),
    (
        "src",
        "the source: ADDR, ADDR/LEN, ADDR:PORT or [V6]:PORT",
        "src:198.18.0.1",
    ),
    ("dst", "the destination, as src", "dst:[2001:db8::1]:443"),
    (
        "net",
        "either end in a v4 or v6 CIDR (or one address)",
        "net:198.18.0.0/15",
    ),
    (
        "host",
        "either end: an address (ADDR:PORT too), or a whole name (any case): a server name its captured flows sent (TLS or QUIC SNI, HTTP Host) or, while names are on (N, --resolve), the reverse DNS name the cache holds for it; a process by its sockets' ends",
        "host:198.18.0.2",
    ),
    (
        "proto",
        "the protocol: tcp udp icmp icmp6 sctp igmp gre dccp udplite",
        "proto:udp",
    ),
    (
        "state",
        "a state, by ss's names and short forms (below)",
        "state:estab",
    ),
    (
        "proc",
        "a process holding the row, by name (substring)",
        "proc:nginx",
    ),
    (
        "pid",
        "a process holding the row, by pid (N, >N, A-B...)",
        "pid:812",
    ),
    (
        "uid",
        "the owner's user, by number (or range) or name",
        "uid:www-data",
    ),
    ("ns", "the network namespace's label (substring)", "ns:host"),
    (
        "container",
        "the container or cgroup of the row's process (substring)",
        "container:docker",
    ),
    (
        "sni",
        "the server name its captured traffic carried: TLS or QUIC SNI, else HTTP Host (substring; needs capture)",
        "sni:example",
    ),
];

/// Every connected state as the filter compares them (`rows::normal_state`).
const CONNECTED: &[&str] = &[
    "ESTAB",
    "SYN-SENT",
    "SYN-RECV",
    "NEW-SYN-RECV",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "FIN-WAIT",
    "TIME-WAIT",
    "CLOSE-WAIT",
    "LAST-ACK",
    "CLOSING",
];

const SYNCHRONIZED: &[&str] = &[
    "ESTAB",
    "SYN-RECV",
    "NEW-SYN-RECV",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "FIN-WAIT",
    "TIME-WAIT",
    "CLOSE-WAIT",
    "LAST-ACK",
    "CLOSING",
];

const BIG: &[&str] = &[
    "ESTAB",
    "SYN-SENT",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "FIN-WAIT",
    "CLOSE-WAIT",
    "LAST-ACK",
    "CLOSING",
    "LISTEN",
    "CLOSE",
    "CLOSED",
    "UNCONN",
];

/// ss's state names (ss(8) STATE-FILTER), its groups and short forms, and
/// the states each matches; `fin-wait` also matches a flow's FIN_WAIT,
/// which does not say which.
pub const STATES: &[(&str, &[&str])] = &[
    ("established", &["ESTAB"]),
    ("estab", &["ESTAB"]),
    ("syn-sent", &["SYN-SENT"]),
    ("syn-recv", &["SYN-RECV", "NEW-SYN-RECV"]),
    ("new-syn-recv", &["NEW-SYN-RECV"]),
    ("fin-wait-1", &["FIN-WAIT-1", "FIN-WAIT"]),
    ("fin-wait-2", &["FIN-WAIT-2", "FIN-WAIT"]),
    ("fin-wait", &["FIN-WAIT-1", "FIN-WAIT-2", "FIN-WAIT"]),
    ("time-wait", &["TIME-WAIT"]),
    ("tw", &["TIME-WAIT"]),
    ("closed", &["CLOSE", "CLOSED", "UNCONN"]),
    ("close", &["CLOSE", "CLOSED", "UNCONN"]),
    ("unconn", &["UNCONN"]),
    ("close-wait", &["CLOSE-WAIT"]),
    ("last-ack", &["LAST-ACK"]),
    ("listening", &["LISTEN"]),
    ("listen", &["LISTEN"]),
    ("closing", &["CLOSING"]),
    ("connected", CONNECTED),
    ("synchronized", SYNCHRONIZED),
    ("bucket", &["SYN-RECV", "NEW-SYN-RECV", "TIME-WAIT"]),
    ("big", BIG),
];

/// Examples for the man page: expression, what it keeps.
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "nginx",
        "rows showing \"nginx\" anywhere, as before: bare words still work",
    ),
    (
        "port:443 state:estab",
        "established connections on port 443 (either end)",
    ),
    ("proc:nginx or proc:envoy", "the sockets of either program"),
    (
        "dport:>=1024 !net:198.18.0.0/15",
        "to high ports, outside 198.18.0.0/15",
    ),
    (
        "state:time-wait and (sport:80 or sport:443)",
        "TIME-WAIT of the web servers",
    ),
    ("uid:www-data !state:listen", "www-data's connections"),
    (
        "container:docker proto:udp",
        "UDP sockets of processes in Docker containers",
    ),
    (
        "\"a b\"",
        "the phrase a b; a quoted word is never a field or an operator",
    ),
];

/// The man page's FILTERS section (roff), from the tables above.
pub fn man_section() -> String {
    let esc = |text: &str| text.replace('\\', "\\\\").replace('-', "\\-");
    let mut page = String::from(
        ".SH FILTERS\n\
         The \\fB/\\fR filter of the Interfaces, Sockets, Conntrack, Flows and Procs tabs, \
         F3's search and \\fBsnapshot \\-\\-where\\fR take one language (\\fB\\-\\-filter\\fR \
         stays the capture's pcap\\-filter). An expression is terms joined by \\fBand\\fR \
         (also implied between adjacent terms), \\fBor\\fR (lower than and), \\fB!\\fR or \
         \\fBnot\\fR, and parentheses. A term is \\fIfield\\fR\\fB:\\fR\\fIvalue\\fR or a bare \
         word, which matches any text the row shows (case-insensitive substring), so \
         filters of words keep working. A word with a colon whose part before it is not a \
         field name (an address: 198.18.0.1:80, fd00::1) is a bare word; quote a word \
         (\"proc:x\") to search for it as text. A field a row has no value for matches \
         nothing: a process row has no ports, an interface's ends are its addresses, a \
         socket's source is its local end (as ss's sport). While a typed filter does not \
         parse, the table is not filtered and the line under it shows the error with a \
         caret; Enter keeps the line open until it parses.\n",
    );
    for (name, meaning, example) in FIELDS {
        page.push_str(&format!(
            ".TP\n\\fB{}:\\fR\n{} (\\fB{}\\fR)\n",
            esc(name),
            esc(meaning),
            esc(example)
        ));
    }
    let names: Vec<&str> = STATES.iter().map(|(name, _)| *name).collect();
    page.push_str(&format!(
        ".PP\nStates (\\fBstate:\\fR, any case, _ or \\-): {}. The groups are ss's: connected \
         is every state but listen and closed, synchronized is connected but syn\\-sent, \
         bucket is syn\\-recv and time\\-wait, big is the rest.\n.PP\nExamples:\n",
        esc(&names.join(", "))
    ));
    for (expression, keeps) in EXAMPLES {
        page.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            esc(expression),
            esc(keeps)
        ));
    }
    page.push_str(&format!(
        ".PP\nLimits: {MAX_LEN} characters, {MAX_TERMS} terms, parentheses and \\fB!\\fR \
         nested {MAX_DEPTH} deep. An error names the character it is at; \
         \\fBsnapshot \\-\\-where\\fR prints it, the expression and a caret under that \
         character, and exits with status 1.\n"
    ));
    page
}
