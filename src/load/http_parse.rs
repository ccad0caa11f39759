//! The response parser of `load http`: incremental, over the bytes as they
//! are read, without copying them in the usual case (the whole head in one
//! read). It runs once per request, so it is on the hot path: the head is
//! scanned line by line with memchr, and only the three headers that decide
//! where the body ends are looked at (by length first, then by name).

/// A response that is not HTTP/1.x, or is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadResponse;

/// A complete response: what the latency and byte counts need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Bytes read for it, head and body.
    pub bytes: u64,
    /// The server will close the connection after it.
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Length(u64),
    Chunked(Chunk),
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size { value: u64, digits: u32 },
    Extension { value: u64 },
    SizeLf { value: u64 },
    Data { remaining: u64 },
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    FinalLf,
}

/// An incremental HTTP/1.1 response parser: Content-Length, chunked, or
/// until the connection closes.
#[derive(Debug, Default)]
pub struct Parser {
    /// The head so far, when it did not come in one read.
    head: Vec<u8>,
    /// Bytes of `head` already scanned as complete lines.
    scanned: usize,
    /// 0 until the status line is read.
    status: u16,
    http10: bool,
    length: Option<u64>,
    chunked: bool,
    keep_alive: Option<bool>,
    close: bool,
    body: Option<Body>,
    bytes: u64,
}

/// Header names by length, so most lines are dismissed by one comparison.
const CONTENT_LENGTH: &[u8] = b"content-length";
const TRANSFER_ENCODING: &[u8] = b"transfer-encoding";
const CONNECTION: &[u8] = b"connection";
/// A head longer than this is not a response netlens expects.
const MAX_HEAD: usize = 64 * 1024;

impl Parser {
    /// Takes the next bytes read; a response once it is complete.
    pub fn feed(&mut self, data: &[u8]) -> Result<Option<Response>, BadResponse> {
        let mut data = data;
        if self.body.is_none() {
            let used = if self.head.is_empty() {
                // The usual case: parse the head where it lies.
                match self.scan(data, 0)? {
                    Some(end) => end,
                    None => {
                        self.head.extend_from_slice(data);
                        return self.check_size();
                    }
                }
            } else {
                let before = self.head.len();
                let mut head = std::mem::take(&mut self.head);
                head.extend_from_slice(data);
                match self.scan(&head, self.scanned)? {
                    Some(end) => end - before,
                    None => {
                        self.head = head;
                        return self.check_size();
                    }
                }
            };
            data = &data[used..];
            if self.status < 200 {
                // 1xx: an interim response; the real one follows.
                let rest = data.to_vec();
                *self = Parser::default();
                return self.feed(&rest);
            }
        }
        let body = self.body.as_mut().ok_or(BadResponse)?;
        let (used, done) = match body {
            Body::Length(remaining) => {
                let used = (*remaining).min(data.len() as u64);
                *remaining -= used;
                (used as usize, *remaining == 0)
            }
            Body::UntilClose => (data.len(), false),
            Body::Chunked(state) => chunked(state, data)?,
        };
        self.bytes += used as u64;
        Ok(done.then_some(Response {
            status: self.status,
            bytes: self.bytes,
            close: self.close,
        }))
    }

    /// The response when the server closed the connection, if that ends it.
    pub fn at_close(&self) -> Option<Response> {
        (self.body == Some(Body::UntilClose)).then_some(Response {
            status: self.status,
            bytes: self.bytes,
            close: true,
        })
    }

    fn check_size(&self) -> Result<Option<Response>, BadResponse> {
        if self.head.len() > MAX_HEAD {
            return Err(BadResponse);
        }
        Ok(None)
    }

    /// Scans the complete lines of `head` from `from`: the end of the head
    /// (past its empty line) once it is there, which also decides the body.
    fn scan(&mut self, head: &[u8], from: usize) -> Result<Option<usize>, BadResponse> {
        let mut at = from;
        while let Some(newline) = memchr::memchr(b'\n', &head[at..]) {
            let mut line = &head[at..at + newline];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            at += newline + 1;
            if self.status == 0 {
                self.status_line(line)?;
            } else if line.is_empty() {
                self.bytes = at as u64;
                self.decide_body();
                return Ok(Some(at));
            } else {
                self.header(line)?;
            }
        }
        self.scanned = at;
        Ok(None)
    }

    fn status_line(&mut self, line: &[u8]) -> Result<(), BadResponse> {
        // "HTTP/1.x NNN reason"
        let rest = line.strip_prefix(b"HTTP/1.").ok_or(BadResponse)?;
        let [minor, b' ', rest @ ..] = rest else {
            return Err(BadResponse);
        };
        if !minor.is_ascii_digit() {
            return Err(BadResponse);
        }
        let code = rest.split(|&b| b == b' ').next().unwrap_or_default();
        let status = number(code).ok_or(BadResponse)?;
        if code.len() != 3 || !(100..=999).contains(&status) {
            return Err(BadResponse);
        }
        self.status = status as u16;
        self.http10 = *minor == b'0';
        Ok(())
    }

    fn header(&mut self, line: &[u8]) -> Result<(), BadResponse> {
        let Some(colon) = memchr::memchr(b':', line) else {
            return Ok(());
        };
        let name = &line[..colon];
        let value = line[colon + 1..].trim_ascii();
        if name.len() == CONTENT_LENGTH.len() && name.eq_ignore_ascii_case(CONTENT_LENGTH) {
            self.length = Some(number(value).ok_or(BadResponse)?);
        } else if name.len() == TRANSFER_ENCODING.len()
            && name.eq_ignore_ascii_case(TRANSFER_ENCODING)
        {
            self.chunked = contains_ignore_case(value, b"chunked");
        } else if name.len() == CONNECTION.len() && name.eq_ignore_ascii_case(CONNECTION) {
            if contains_ignore_case(value, b"close") {
                self.keep_alive = Some(false);
            } else if contains_ignore_case(value, b"keep-alive") {
                self.keep_alive = Some(true);
            }
        }
        Ok(())
    }

    fn decide_body(&mut self) {
        self.close = !self.keep_alive.unwrap_or(!self.http10);
        self.body = Some(if self.status == 204 || self.status == 304 {
            Body::Length(0)
        } else if self.chunked {
            Body::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
            })
        } else if let Some(length) = self.length {
            Body::Length(length)
        } else {
            self.close = true;
            Body::UntilClose
        });
        self.head = Vec::new();
    }
}

/// A decimal number of at most 19 digits (no sign, no spaces).
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

/// Runs the chunked-body state machine over `data`: (bytes used, done).
fn chunked(state: &mut Chunk, data: &[u8]) -> Result<(usize, bool), BadResponse> {
    let mut i = 0;
    while i < data.len() {
        let byte = data[i];
        *state = match *state {
            Chunk::Data { remaining } => {
                let take = remaining.min((data.len() - i) as u64);
                i += take as usize;
                let remaining = remaining - take;
                if remaining == 0 {
                    Chunk::DataCr
                } else {
                    Chunk::Data { remaining }
                }
            }
            other => {
                i += 1;
                match (other, byte) {
                    (Chunk::Size { value, digits }, b) if b.is_ascii_hexdigit() => {
                        if digits >= 15 {
                            return Err(BadResponse);
                        }
                        let digit = (b as char).to_digit(16).unwrap_or(0);
                        Chunk::Size {
                            value: value * 16 + u64::from(digit),
                            digits: digits + 1,
                        }
                    }
                    (Chunk::Size { value, digits }, b';' | b' ') if digits > 0 => {
                        Chunk::Extension { value }
                    }
                    (Chunk::Size { value, digits }, b'\r') if digits > 0 => Chunk::SizeLf { value },
                    (Chunk::Extension { value }, b'\r') => Chunk::SizeLf { value },
                    (Chunk::Extension { value }, _) => Chunk::Extension { value },
                    (Chunk::SizeLf { value: 0 }, b'\n') => Chunk::TrailerStart,
                    (Chunk::SizeLf { value }, b'\n') => Chunk::Data { remaining: value },
                    (Chunk::DataCr, b'\r') => Chunk::DataLf,
                    (Chunk::DataLf, b'\n') => Chunk::Size {
                        value: 0,
                        digits: 0,
                    },
                    (Chunk::TrailerStart, b'\r') => Chunk::FinalLf,
                    (Chunk::TrailerStart | Chunk::TrailerLine, b'\n') => Chunk::TrailerStart,
                    (Chunk::TrailerStart | Chunk::TrailerLine, _) => Chunk::TrailerLine,
                    (Chunk::FinalLf, b'\n') => return Ok((i, true)),
                    _ => return Err(BadResponse),
                }
            }
        };
    }
    Ok((i, false))
}

fn contains_ignore_case(text: &[u8], needle: &[u8]) -> bool {
    text.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Result<Option<Response>, BadResponse> {
        let mut parser = Parser::default();
        let mut last = None;
        for chunk in chunks {
            last = parser.feed(chunk)?;
        }
        Ok(last)
    }

    #[test]
    fn content_length_split_anywhere() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        for split in 1..raw.len() {
            let r = parse_all(&[&raw[..split], &raw[split..]]).unwrap();
            assert_eq!(
                r,
                Some(Response {
                    status: 200,
                    bytes: raw.len() as u64,
                    close: false
                }),
                "split at {split}"
            );
        }
    }

    #[test]
    fn chunked_with_extension_and_trailer_byte_by_byte() {
        let raw = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5;x=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n";
        let mut parser = Parser::default();
        let mut done = None;
        for (i, byte) in raw.iter().enumerate() {
            let r = parser.feed(std::slice::from_ref(byte)).unwrap();
            assert!(r.is_none() || i == raw.len() - 1, "early end at {i}");
            done = r;
        }
        assert_eq!(
            done,
            Some(Response {
                status: 404,
                bytes: raw.len() as u64,
                close: true
            })
        );
    }

    #[test]
    fn interim_and_until_close_and_garbage() {
        let raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse_all(&[raw]).unwrap().map(|r| r.status), Some(204));
        let mut parser = Parser::default();
        assert_eq!(parser.feed(b"HTTP/1.0 200 OK\r\n\r\nbody").unwrap(), None);
        assert_eq!(
            parser.at_close().map(|r| (r.bytes, r.close)),
            Some((23, true))
        );
        assert!(parse_all(&[b"SSH-2.0-OpenSSH\r\n\r\n"]).is_err());
        assert!(
            parse_all(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]).is_err()
        );
    }

    #[test]
    fn nginx_head_and_bad_numbers() {
        let raw = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 22 Nov 2026 03:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 3\r\nLast-Modified: Sun, 22 Nov 2026 02:00:00 GMT\r\nConnection: keep-alive\r\nETag: \"1-2\"\r\nAccept-Ranges: bytes\r\n\r\nxxx";
        assert_eq!(
            parse_all(&[raw]).unwrap(),
            Some(Response {
                status: 200,
                bytes: raw.len() as u64,
                close: false
            })
        );
        // HTTP/1.0 closes unless it says keep-alive.
        let old = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(parse_all(&[old]).unwrap().map(|r| r.close), Some(true));
        for bad in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            b"HTTP/1.1 20 OK\r\n\r\n",
            b"HTTP/1.1 2000\r\n\r\n",
            b"HTTP/2 200\r\n\r\n",
            b"\r\n\r\n",
        ] {
            assert!(
                parse_all(&[bad]).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn head_too_long_is_refused() {
        let mut parser = Parser::default();
        parser.feed(b"HTTP/1.1 200 OK\r\n").unwrap();
        let line = [b'x'; 1000];
        let mut result = Ok(None);
        for _ in 0..100 {
            result = parser.feed(&line);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(BadResponse));
    }
}
