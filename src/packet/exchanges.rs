//! Request and response of one TCP connection, timed from its packets.
//!
//! A server's response time is the gap between the last segment of a
//! client's request and the first segment of the server's answer, as the
//! capture saw them: on the server's host that is the server's own time;
//! on the client's it adds one network round trip (the flow's analysis
//! says which, `Handshake::at_server`). Timing needs no payload, so any
//! protocol counts, TLS too; where the payload is plain HTTP/1.x the
//! request line and the status are kept as well.
//!
//! Only new data counts (a retransmission does not move a request's end
//! or start an answer). A TLS handshake is not an exchange: the client's
//! requests are its application-data records after its Finished, and in
//! TLS 1.3 the session tickets the server sends after the handshake
//! (encrypted records, one length repeated) are not its answer.

use super::analysis::Seg;

/// Bytes of an HTTP request target kept (the rest is cut, marked "…").
pub const PATH_MAX: usize = 64;

/// One request answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// When the answer's first segment was seen.
    pub t: f64,
    /// The gap from the request's last segment to the answer's first.
    pub ms: f64,
    pub http: Option<Http>,
}

/// The plain HTTP/1.x request line and status of an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Http {
    pub method: String,
    /// The request target, at most `PATH_MAX` bytes, as sent (escape it
    /// before printing).
    pub path: String,
    /// None: the answer did not start with an HTTP status line.
    pub status: Option<u16>,
}

/// The answered requests of one connection, for the flow screen.
#[derive(Debug, Clone, Default)]
pub struct Answered {
    pub count: u64,
    /// The first `ANSWERS_KEPT` times, for the median.
    times_ms: Vec<f64>,
    pub max_ms: f64,
    pub last: Option<Exchange>,
}

/// Response times a flow screen keeps for its median.
pub const ANSWERS_KEPT: usize = 4096;

impl Answered {
    pub fn push(&mut self, x: Exchange) {
        self.count += 1;
        self.max_ms = self.max_ms.max(x.ms);
        if self.times_ms.len() < ANSWERS_KEPT {
            self.times_ms.push(x.ms);
        }
        self.last = Some(x);
    }

    pub fn median_ms(&self) -> Option<f64> {
        let mut times = self.times_ms.clone();
        times.sort_by(f64::total_cmp);
        times.get(times.len() / 2).copied()
    }
}

/// What the connection carries, learnt from the client's first payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Payload {
    #[default]
    Unknown,
    Plain,
    Tls(Tls),
}

/// Where a TLS connection is in its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Tls {
    /// The server chose TLS 1.3 (its ServerHello says so).
    v13: bool,
    /// The server sent its first flight (the ServerHello's).
    server_spoke: bool,
    /// The client sent its Finished: its records from now on are data.
    client_done: bool,
    /// TLS 1.3: the record length of the server's first encrypted record
    /// after the client's Finished (a session ticket), and whether the
    /// tickets are over.
    ticket_len: Option<u16>,
    tickets_done: bool,
}

/// The request being answered.
#[derive(Debug, Clone, Default)]
struct Request {
    last_t: f64,
    http: Option<Http>,
}

/// The tracker of one connection.
#[derive(Debug, Clone, Default)]
pub struct Exchanges {
    /// Next new sequence number per direction (the flow key's).
    next: [Option<u32>; 2],
    payload: Payload,
    request: Option<Request>,
    /// Requests answered so far.
    pub answered: u64,
}

impl Exchanges {
    /// Feeds one TCP segment (`seg.dir` in the flow key's directions),
    /// `client` the direction the client sends in and `payload` the
    /// captured part of its payload (perhaps cut short). Returns the
    /// exchange this segment completed, if any.
    pub fn add(&mut self, seg: &Seg, client: usize, payload: &[u8]) -> Option<Exchange> {
        let dir = seg.dir & 1;
        if seg.payload == 0 || !self.is_new(dir, seg.seq, seg.payload) {
            return None;
        }
        if dir == client {
            self.client_sent(seg.t, payload);
            None
        } else {
            self.server_sent(seg.t, payload)
        }
    }

    /// True for data past what this direction sent before (and moves the
    /// mark); a retransmission or an old segment is not new.
    fn is_new(&mut self, dir: usize, seq: u32, len: u32) -> bool {
        let end = seq.wrapping_add(len);
        match self.next[dir] {
            Some(next) if (end.wrapping_sub(next) as i32) <= 0 => false,
            _ => {
                self.next[dir] = Some(end);
                true
            }
        }
    }

    fn client_sent(&mut self, t: f64, payload: &[u8]) {
        if self.payload == Payload::Unknown {
            self.payload = if payload.starts_with(&[0x16, 0x03]) {
                Payload::Tls(Tls::default())
            } else {
                Payload::Plain
            };
        }
        if let Payload::Tls(tls) = &mut self.payload {
            if !tls.client_done {
                // The client's flight after the server's first one holds
                // its Finished (TLS 1.2 and 1.3, full or resumed).
                tls.client_done = tls.server_spoke;
                return;
            }
            if !is_tls_data(payload) && self.request.is_none() {
                return;
            }
        }
        match &mut self.request {
            Some(request) => request.last_t = t,
            None => {
                let http = (self.payload == Payload::Plain)
                    .then(|| request_line(payload))
                    .flatten();
                self.request = Some(Request { last_t: t, http });
            }
        }
    }

    fn server_sent(&mut self, t: f64, payload: &[u8]) -> Option<Exchange> {
        if let Payload::Tls(tls) = &mut self.payload {
            if !tls.client_done {
                tls.server_spoke = true;
                if server_hello_is_v13(payload) {
                    tls.v13 = true;
                }
                return None;
            }
            if !is_tls_data(payload) {
                return None;
            }
            if tls.v13 && !tls.tickets_done {
                let len = record_len(payload);
                match tls.ticket_len {
                    None => {
                        tls.ticket_len = len;
                        return None;
                    }
                    Some(ticket) if len == Some(ticket) => return None,
                    Some(_) => tls.tickets_done = true,
                }
            }
        }
        let request = self.request.take()?;
        let http = request.http.map(|mut http| {
            http.status = status_code(payload);
            http
        });
        self.answered += 1;
        Some(Exchange {
            t,
            ms: (t - request.last_t).max(0.0) * 1000.0,
            http,
        })
    }
}

/// A segment that starts with a TLS application-data record.
fn is_tls_data(payload: &[u8]) -> bool {
    payload.starts_with(&[0x17, 0x03, 0x03])
}

fn record_len(payload: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*payload.get(3)?, *payload.get(4)?]))
}

/// A ServerHello whose supported_versions extension chose TLS 1.3.
fn server_hello_is_v13(p: &[u8]) -> bool {
    // Record header (5), handshake type 2 and length (4), legacy version
    // (2), random (32), then the session id.
    if p.len() < 44 || p[0] != 0x16 || p[5] != 2 {
        return false;
    }
    let mut at = 43;
    let Some(&id_len) = p.get(at) else {
        return false;
    };
    at += 1 + usize::from(id_len) + 2 + 1; // session id, cipher, compression
    let Some(ext) = p.get(at..at + 2) else {
        return false;
    };
    let end = (at + 2 + usize::from(u16::from_be_bytes([ext[0], ext[1]]))).min(p.len());
    at += 2;
    while at + 4 <= end {
        let kind = u16::from_be_bytes([p[at], p[at + 1]]);
        let len = usize::from(u16::from_be_bytes([p[at + 2], p[at + 3]]));
        if kind == 0x002b {
            return p.get(at + 4..at + 6) == Some(&[0x03, 0x04]);
        }
        at += 4 + len;
    }
    false
}

const METHODS: [&str; 9] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE",
];

/// "GET /path HTTP/1.1": the method and the target (cut at `PATH_MAX`).
fn request_line(payload: &[u8]) -> Option<Http> {
    let space = payload.iter().take(8).position(|&b| b == b' ')?;
    let method = std::str::from_utf8(&payload[..space]).ok()?;
    if !METHODS.contains(&method) {
        return None;
    }
    let rest = &payload[space + 1..];
    let end = rest
        .iter()
        .position(|&b| b == b' ' || b == b'\r' || b == b'\n')
        .unwrap_or(rest.len());
    let mut path = String::from_utf8_lossy(&rest[..end.min(PATH_MAX)]).into_owned();
    if end > PATH_MAX {
        path.push('…');
    }
    Some(Http {
        method: method.to_string(),
        path,
        status: None,
    })
}

/// The status of "HTTP/1.x NNN ...".
fn status_code(payload: &[u8]) -> Option<u16> {
    let rest = payload
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| payload.strip_prefix(b"HTTP/1.0 "))?;
    let digits = rest.get(..3)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::packet::analysis::Analysis;

    const C: usize = 0;
    const S: usize = 1;
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;

    fn seg(t: f64, dir: usize, flags: u8, seq: u32, payload: &[u8]) -> Seg {
        Seg {
            t,
            dir,
            flags,
            seq,
            payload: payload.len() as u32,
            ..Seg::default()
        }
    }

    /// Feeds (time, dir, flags, payload) with sequence numbers kept per
    /// direction to the exchanges and to the flow's analysis (which says
    /// where the capture sits); returns the exchanges and the analysis.
    fn run_with(packets: &[(f64, usize, u8, &[u8])]) -> (Vec<Exchange>, Analysis) {
        let mut x = Exchanges::default();
        let mut analysis = Analysis::default();
        let mut seq = [1000u32, 5000];
        let mut out = Vec::new();
        for &(t, dir, flags, payload) in packets {
            let seg = seg(t, dir, flags, seq[dir], payload);
            analysis.add(&seg);
            out.extend(x.add(&seg, C, payload));
            let syn = u32::from(flags & SYN != 0);
            seq[dir] = seq[dir].wrapping_add(payload.len() as u32 + syn);
        }
        (out, analysis)
    }

    fn run(packets: &[(f64, usize, u8, &[u8])]) -> Vec<Exchange> {
        run_with(packets).0
    }

    fn handshake(syn_ack_at: f64, ack_at: f64) -> Vec<(f64, usize, u8, &'static [u8])> {
        vec![
            (0.0, C, SYN, b""),
            (syn_ack_at, S, SYN | ACK, b""),
            (ack_at, C, ACK, b""),
        ]
    }

    #[test]
    fn plain_http_is_timed_from_the_requests_last_segment_with_its_line_and_status() {
        let mut p = handshake(0.000_01, 0.020);
        p.extend([
            (1.000, C, ACK, &b"GET /slow?x=1 HTTP/1.1\r\nHost: a\r\n"[..]),
            (1.002, C, ACK, b"Accept: */*\r\n\r\n"),
            (1.152, S, ACK, b"HTTP/1.1 503 Busy\r\n\r\n"),
            (1.153, S, ACK, b"body"),
            (2.000, C, ACK, b"POST / HTTP/1.1\r\n\r\n"),
            (2.040, S, ACK, b"HTTP/1.1 200 OK\r\n\r\n"),
        ]);
        let (got, analysis) = run_with(&p);
        assert_eq!(got.len(), 2);
        assert!((got[0].ms - 150.0).abs() < 1e-6, "{}", got[0].ms);
        assert!(
            analysis.handshake.at_server(),
            "the server answered its SYN at once"
        );
        let http = got[0].http.as_ref().unwrap();
        assert_eq!(
            (http.method.as_str(), http.path.as_str(), http.status),
            ("GET", "/slow?x=1", Some(503))
        );
        assert!((got[1].ms - 40.0).abs() < 1e-6);
        assert_eq!(got[1].http.as_ref().unwrap().status, Some(200));
    }

    #[test]
    fn at_the_client_the_gap_holds_a_round_trip_and_says_so() {
        let mut p = handshake(0.030, 0.030_05);
        p.extend([
            (1.0, C, ACK, &b"\x01binary"[..]),
            (1.1, S, ACK, b"\x02answer"),
        ]);
        let (got, analysis) = run_with(&p);
        assert_eq!(got.len(), 1);
        assert!(!analysis.handshake.at_server());
        assert_eq!(analysis.handshake.total_ms().map(f64::round), Some(30.0));
        assert_eq!(got[0].http, None);
    }

    #[test]
    fn a_retransmitted_request_and_a_server_first_banner_are_not_exchanges() {
        let mut x = Exchanges::default();
        // A banner before any request (SMTP, SSH): nothing to answer.
        let mut add =
            |t, dir, seq, payload: &[u8]| x.add(&seg(t, dir, ACK, seq, payload), C, payload);
        assert_eq!(add(0.0, S, 1, b"220 x"), None);
        assert_eq!(add(1.0, C, 100, b"HELO"), None);
        // The same bytes again later: not a new end of the request.
        assert_eq!(add(1.5, C, 100, b"HELO"), None);
        let answer = add(1.6, S, 6, b"250").unwrap();
        assert!((answer.ms - 600.0).abs() < 1e-6, "{}", answer.ms);
        // A retransmitted answer answers nothing.
        assert_eq!(add(1.7, S, 6, b"250"), None);
    }

    /// A TLS 1.3 ServerHello choosing 0x0304 (supported_versions).
    fn server_hello_13() -> Vec<u8> {
        let mut p = vec![0x16, 0x03, 0x03, 0, 0, 2, 0, 0, 0, 0x03, 0x03];
        p.extend([7u8; 32]); // random
        p.push(0); // session id
        p.extend([0x13, 0x01, 0]); // cipher, compression
        p.extend([0, 6, 0x00, 0x2b, 0, 2, 0x03, 0x04]);
        p
    }

    fn record(kind: u8, len: u16) -> Vec<u8> {
        let mut r = vec![kind, 0x03, 0x03];
        r.extend(len.to_be_bytes());
        r.resize(5 + usize::from(len), 0xab);
        r
    }

    #[test]
    fn tls13_skips_the_handshake_and_the_session_tickets() {
        let hello = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0, 0];
        let finished = [record(0x14, 1), record(0x17, 53)].concat();
        let ticket = record(0x17, 250);
        let request = record(0x17, 96);
        let response = record(0x17, 129);
        let sh = server_hello_13();
        let got = run(&[
            (0.000, C, ACK, &hello[..]),
            (0.007, S, ACK, &sh),
            (0.009, C, ACK, &finished),
            (0.0093, C, ACK, &request),
            (0.0096, S, ACK, &ticket),
            (0.050, S, ACK, &ticket),
            (0.1093, S, ACK, &response),
            (0.2000, C, ACK, &request),
            (0.3000, S, ACK, &response),
        ]);
        let ms: Vec<f64> = got.iter().map(|x| (x.ms * 10.0).round() / 10.0).collect();
        assert_eq!(ms, [100.0, 100.0]);
        assert!(got.iter().all(|x| x.http.is_none()));
    }

    #[test]
    fn tls12_times_application_records_after_the_finished() {
        let hello = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0, 0];
        let mut sh12 = server_hello_13();
        sh12.truncate(sh12.len() - 8); // no extensions: TLS 1.2
        let key_exchange = [0x16, 0x03, 0x03, 0x00, 0x25, 0x10];
        let server_finished = record(0x14, 1);
        let got = run(&[
            (0.000, C, ACK, &hello[..]),
            (0.005, S, ACK, &sh12),
            (0.010, C, ACK, &key_exchange),
            (0.012, S, ACK, &server_finished),
            (0.020, C, ACK, &record(0x17, 80)),
            (0.095, S, ACK, &record(0x17, 300)),
        ]);
        assert_eq!(got.len(), 1);
        assert!((got[0].ms - 75.0).abs() < 1e-6, "{}", got[0].ms);
    }

    #[test]
    fn request_lines_are_bounded_and_only_known_methods_count() {
        let long = format!("GET /{} HTTP/1.1\r\n", "a".repeat(500));
        let http = request_line(long.as_bytes()).unwrap();
        assert_eq!(http.path.chars().count(), PATH_MAX + 1);
        assert!(http.path.ends_with('…'));
        assert_eq!(request_line(b"BREW /pot HTTP/1.1"), None);
        assert_eq!(request_line(b"GET"), None);
        assert_eq!(status_code(b"HTTP/1.1 2x0"), None);
        assert_eq!(status_code(b"HTTP/1.0 404 Not Found"), Some(404));
    }
}
