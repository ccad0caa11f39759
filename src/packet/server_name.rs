//! The name a client asks a server for, read from the first payload it
//! sends: the TLS ClientHello's server_name (SNI), the HTTP/1 request's
//! Host header, or (in `quic`) the SNI inside a QUIC v1 Initial. Bounded
//! parsers over captured bytes (which may be cut short by the snap
//! length): every read is checked, nothing allocates until a name is
//! found, malformed or truncated input gives None, never a panic.

/// A name longer than this is not kept (a DNS name is at most 253 bytes;
/// an HTTP Host may carry a port).
pub const MAX_NAME: usize = 260;
/// How far into an HTTP request the Host header is looked for.
pub const MAX_HTTP_HEAD: usize = 4096;

/// What a flow's client named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// TLS SNI over TCP.
    Tls(String),
    /// The SNI of a QUIC Initial.
    Quic(String),
    /// An HTTP/1 request's Host header.
    Http(String),
}

/// Looks at one payload a client sent: TLS or HTTP over TCP, QUIC over UDP.
pub fn find(proto: u8, payload: &[u8]) -> Option<Found> {
    match proto {
        6 => match payload.first()? {
            0x16 => tls_sni(payload).map(Found::Tls),
            b'A'..=b'Z' => http_host(payload).map(Found::Http),
            _ => None,
        },
        17 => super::quic::initial_sni(payload).map(Found::Quic),
        _ => None,
    }
}

/// A cursor that never reads past its slice.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u24(&mut self) -> Option<usize> {
        let b = self.take(3)?;
        Some(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }

    /// A QUIC variable-length integer (RFC 9000 16).
    pub(crate) fn varint(&mut self) -> Option<u64> {
        let first = self.u8()?;
        let len = 1usize << (first >> 6);
        let mut value = u64::from(first & 0x3f);
        for &b in self.take(len - 1)? {
            value = value << 8 | u64::from(b);
        }
        Some(value)
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or(&[])
    }

    pub(crate) fn position(&self) -> usize {
        self.at
    }
}

/// The SNI of a TLS record carrying a ClientHello (the record's start).
pub fn tls_sni(record: &[u8]) -> Option<String> {
    let mut r = Reader::new(record);
    if r.u8()? != 0x16 || r.u8()? != 3 {
        return None;
    }
    r.take(1)?; // minor version
    r.u16()?; // length: the capture may hold less, read what is there
    client_hello_sni(r.rest())
}

/// The SNI of a ClientHello handshake message (TLS without its record
/// header, as QUIC's CRYPTO frames carry it).
pub fn client_hello_sni(handshake: &[u8]) -> Option<String> {
    let mut r = Reader::new(handshake);
    if r.u8()? != 1 {
        return None;
    }
    r.u24()?;
    r.take(2 + 32)?; // legacy_version, random
    let session = usize::from(r.u8()?);
    r.take(session)?;
    let suites = usize::from(r.u16()?);
    r.take(suites)?;
    let compression = usize::from(r.u8()?);
    r.take(compression)?;
    let extensions_len = usize::from(r.u16()?);
    // The extensions as far as they were captured.
    let available = r.rest();
    let mut e = Reader::new(&available[..extensions_len.min(available.len())]);
    loop {
        let kind = e.u16()?;
        let len = usize::from(e.u16()?);
        let body = e.take(len)?;
        if kind == 0 {
            return server_name_list(body);
        }
    }
}

/// The first host_name of a server_name extension (RFC 6066 3).
fn server_name_list(body: &[u8]) -> Option<String> {
    let mut r = Reader::new(body);
    let list = usize::from(r.u16()?);
    let mut l = Reader::new(r.take(list)?);
    loop {
        let kind = l.u8()?;
        let len = usize::from(l.u16()?);
        let name = l.take(len)?;
        if kind == 0 {
            return clean(name, false);
        }
    }
}

/// The Host header of an HTTP/1 request (its start): a request line with
/// a known method and an HTTP/1 version, then headers up to the blank line.
pub fn http_host(payload: &[u8]) -> Option<String> {
    const METHODS: &[&[u8]] = &[
        b"GET ",
        b"POST ",
        b"HEAD ",
        b"PUT ",
        b"DELETE ",
        b"OPTIONS ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
    ];
    let head = &payload[..payload.len().min(MAX_HTTP_HEAD)];
    if !METHODS.iter().any(|m| head.starts_with(m)) {
        return None;
    }
    // Whole lines only: a Host line cut by the capture is not a name.
    let end = head.iter().rposition(|&b| b == b'\n')?;
    let head = &head[..end];
    let mut lines = head.split(|&b| b == b'\n');
    let request = lines.next()?;
    let request = request.strip_suffix(b"\r").unwrap_or(request);
    if !request.windows(7).any(|w| w == b"HTTP/1.") {
        return None;
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            break;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        if line[..colon].eq_ignore_ascii_case(b"host") {
            return clean(line[colon + 1..].trim_ascii(), true);
        }
    }
    None
}

/// A name from the wire made safe to print: letters, digits, '-', '_',
/// '.' (and ':', '[', ']' for an HTTP Host with a port or an IPv6
/// literal), at most `MAX_NAME` bytes, lowercase; else None.
fn clean(name: &[u8], host_header: bool) -> Option<String> {
    let allowed = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.')
            || (host_header && matches!(b, b':' | b'[' | b']'))
    };
    let ok = !name.is_empty() && name.len() <= MAX_NAME && name.iter().all(|&b| allowed(b));
    ok.then(|| String::from_utf8_lossy(name).to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello as a TLS record, with extensions before and after SNI.
    pub(crate) fn client_hello(name: &[u8]) -> Vec<u8> {
        let mut sni = Vec::new();
        sni.extend_from_slice(&((name.len() + 3) as u16).to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
        sni.extend_from_slice(name);
        let mut extensions = Vec::new();
        // ec_point_formats first, then server_name, then a padding one.
        extensions.extend_from_slice(&[0x00, 0x0b, 0x00, 0x02, 0x01, 0x00]);
        extensions.extend_from_slice(&[0x00, 0x00]);
        extensions.extend_from_slice(&(sni.len() as u16).to_be_bytes());
        extensions.extend_from_slice(&sni);
        extensions.extend_from_slice(&[0x00, 0x15, 0x00, 0x03, 0, 0, 0]);
        let mut body = vec![0x03, 0x03];
        body.extend_from_slice(&[7u8; 32]);
        body.push(32);
        body.extend_from_slice(&[9u8; 32]);
        body.extend_from_slice(&[0x00, 0x04, 0x13, 0x01, 0x13, 0x02]);
        body.extend_from_slice(&[0x01, 0x00]);
        body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
        body.extend_from_slice(&extensions);
        let mut handshake = vec![1];
        handshake.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        handshake.extend_from_slice(&body);
        let mut record = vec![0x16, 0x03, 0x01];
        record.extend_from_slice(&(handshake.len() as u16).to_be_bytes());
        record.extend_from_slice(&handshake);
        record
    }

    #[test]
    fn sni_from_a_client_hello() {
        let record = client_hello(b"Web.Example.TEST");
        assert_eq!(tls_sni(&record), Some("web.example.test".into()));
        assert_eq!(
            find(6, &record),
            Some(Found::Tls("web.example.test".into()))
        );
        // Not a handshake, not a ClientHello, a hostile name.
        let mut other = record.clone();
        other[0] = 0x17;
        assert_eq!(tls_sni(&other), None);
        let mut server_hello = record.clone();
        server_hello[5] = 2;
        assert_eq!(tls_sni(&server_hello), None);
        assert_eq!(tls_sni(&client_hello(b"evil\x1b[2Jname")), None);
        assert_eq!(tls_sni(&client_hello(&[b'a'; MAX_NAME + 1])), None);
    }

    #[test]
    fn host_from_http_requests() {
        let get = b"GET /x HTTP/1.1\r\nUser-Agent: t\r\nhOsT:  Api.Test:8080 \r\n\r\n";
        assert_eq!(http_host(get), Some("api.test:8080".into()));
        assert_eq!(find(6, get), Some(Found::Http("api.test:8080".into())));
        let v6 = b"POST / HTTP/1.0\nHost: [2001:db8::1]:80\n\n";
        assert_eq!(http_host(v6), Some("[2001:db8::1]:80".into()));
        // No Host, a header after the blank line, a response, not HTTP/1.
        assert_eq!(http_host(b"GET / HTTP/1.0\r\n\r\n"), None);
        assert_eq!(http_host(b"GET / HTTP/1.1\r\n\r\nHost: a\r\n"), None);
        assert_eq!(http_host(b"HTTP/1.1 200 OK\r\nHost: a\r\n\r\n"), None);
        assert_eq!(http_host(b"GET / FOO\r\nHost: a\r\n\r\n"), None);
        assert_eq!(http_host(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), None);
    }

    /// Every prefix and many garbled copies of real-shaped input: never a
    /// panic, and a prefix yields the name or nothing, never another name.
    #[test]
    fn truncated_and_garbled_input_never_panics() {
        let record = client_hello(b"web.example.test");
        let http = b"GET / HTTP/1.1\r\nHost: api.test\r\n\r\n".to_vec();
        for sample in [&record, &http] {
            for end in 0..=sample.len() {
                let found = find(6, &sample[..end]);
                assert!(
                    found.is_none()
                        || found == Some(Found::Tls("web.example.test".into()))
                        || found == Some(Found::Http("api.test".into())),
                    "{found:?}"
                );
            }
            let mut seed = 0x9e37_79b9_u32;
            for _ in 0..20_000 {
                let mut garbled = sample.clone();
                for _ in 0..4 {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    let at = seed as usize % garbled.len();
                    garbled[at] = (seed >> 8) as u8;
                }
                let _ = find(6, &garbled);
                let _ = find(17, &garbled);
            }
        }
        // Lengths that claim the maximum.
        let _ = tls_sni(&[0x16, 3, 1, 0xff, 0xff, 1, 0xff, 0xff, 0xff]);
        let _ = client_hello_sni(&[1, 0xff, 0xff, 0xff, 3, 3]);
    }
}
