//! `load http`: a keep-alive HTTP/1.1 client like wrk. Each thread runs a
//! single-threaded tokio runtime with its share of the connections; each
//! connection sends one GET, reads the whole response, and sends the next.
//!
//! At the end of the duration no new request starts and the ones in flight
//! finish (or time out), so the client's counts match the server's. A stop
//! aborts everything at once.

use super::format::{count, millis, transfer};
use super::{Interval, Outcome, Report, Stop, seconds};
use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Clone)]
pub struct HttpSpec {
    pub url: String,
    /// The Host header: the URL's host and port as written.
    pub host: String,
    pub path: String,
    /// The one address requests go to.
    pub addr: SocketAddr,
    pub connections: u32,
    pub duration: Duration,
    pub threads: u32,
    pub timeout: Duration,
    /// Total requests per second; 0 for no limit.
    pub rate: f64,
    pub interval: Duration,
}

/// (host header, host:port to resolve, path) of an http:// URL.
pub fn parse_url(url: &str) -> Result<(String, String, String)> {
    let url = url.trim();
    let rest = if let Some(rest) = url.strip_prefix("http://") {
        rest
    } else if url.starts_with("https://") {
        bail!("'{url}': https is not supported; use an http:// URL");
    } else {
        bail!("'{url}' is not an http:// URL (e.g. http://127.0.0.1:8080/)");
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    if authority.is_empty() || authority.contains('@') || authority.contains(' ') {
        bail!("'{url}' has no usable host");
    }
    if path.contains([' ', '\r', '\n']) {
        bail!("'{url}': the path may not contain spaces or line breaks");
    }
    let has_port = match authority.rfind(':') {
        Some(i) => !authority[i..].contains(']'),
        None => false,
    };
    let target = if has_port {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority.to_string(), target, path))
}

impl HttpSpec {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        url: &str,
        connections: u32,
        duration: Duration,
        threads: u32,
        timeout: Duration,
        rate: f64,
        interval: Duration,
    ) -> Result<Self> {
        let (host, target, path) = parse_url(url)?;
        let addr = super::resolve(&target)?;
        if connections == 0 {
            bail!("at least one connection is needed");
        }
        if !(rate.is_finite() && rate >= 0.0) {
            bail!("the request rate must be 0 (no limit) or more");
        }
        Ok(Self {
            url: url.trim().to_string(),
            host,
            path,
            addr,
            connections,
            duration: super::check_duration(duration)?,
            threads: threads.clamp(1, connections),
            timeout,
            rate,
            interval,
        })
    }
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
    connect: AtomicU64,
    read: AtomicU64,
    write: AtomicU64,
    timeout: AtomicU64,
    status: AtomicU64,
}

impl Counters {
    fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The sum of every thread's counters (each thread has its own, so no
    /// cache line bounces between cores on every request).
    fn total(all: &[Arc<Counters>]) -> Counters {
        let sum = |f: fn(&Counters) -> &AtomicU64| {
            AtomicU64::new(all.iter().map(|c| f(c).load(Ordering::Relaxed)).sum())
        };
        Counters {
            requests: sum(|c| &c.requests),
            bytes: sum(|c| &c.bytes),
            connect: sum(|c| &c.connect),
            read: sum(|c| &c.read),
            write: sum(|c| &c.write),
            timeout: sum(|c| &c.timeout),
            status: sum(|c| &c.status),
        }
    }
}

pub fn run(spec: &HttpSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    super::check_duration(spec.duration)?;
    // Fail fast, with one clear line, when nothing listens there.
    std::net::TcpStream::connect_timeout(&spec.addr, spec.timeout.min(Duration::from_secs(3)))
        .with_context(|| format!("cannot connect to {} ({})", spec.addr, spec.url))?;
    let all_counters: Vec<Arc<Counters>> = (0..spec.threads)
        .map(|_| Arc::new(Counters::default()))
        .collect();
    let start = Instant::now();
    let deadline = start + spec.duration;
    let request =
        Arc::new(format!("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", spec.path, spec.host).into_bytes());
    let mut threads = Vec::new();
    for t in 0..spec.threads {
        // Connections dealt out as evenly as wrk does.
        let first = spec.connections * t / spec.threads;
        let last = spec.connections * (t + 1) / spec.threads;
        let spec = spec.clone();
        let counters = all_counters[t as usize].clone();
        let stop = stop.clone();
        let request = request.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("http-{t}"))
                .spawn(move || {
                    worker(
                        &spec,
                        first..last,
                        &request,
                        &counters,
                        &stop,
                        start,
                        deadline,
                    )
                })
                .context("cannot start a load thread")?,
        );
    }

    let mut tick = start;
    let mut k = 0u32;
    let mut last_requests = 0u64;
    let mut last_bytes = 0u64;
    while !stop.is_stopped() && Instant::now() < deadline {
        k += 1;
        tick = (start + spec.interval * k).min(deadline);
        if !stop.sleep_until(tick) {
            break;
        }
        let counters = Counters::total(&all_counters);
        let requests = counters.requests.load(Ordering::Relaxed);
        let bytes = counters.bytes.load(Ordering::Relaxed);
        let from = spec.interval * (k - 1);
        let to = tick - start;
        let span = seconds(to.saturating_sub(from));
        let rps = (requests - last_requests) as f64 / span;
        let bps = (bytes - last_bytes) as f64 / span;
        last_requests = requests;
        last_bytes = bytes;
        report(Interval {
            start: from.as_secs_f64(),
            end: to.as_secs_f64(),
            value: rps,
            json: json!({
                "type": "interval", "kind": "http",
                "start": from.as_secs_f64(), "end": to.as_secs_f64(),
                "requests": requests, "requests_per_s": rps, "bytes_per_s": bps,
            }),
            text: format!(
                "  {:6.2}-{:<6.2} sec  {:>10} requests/s  {:>12}/s",
                from.as_secs_f64(),
                to.as_secs_f64(),
                format!("{rps:.0}"),
                transfer(bps),
            ),
        });
    }
    let _ = tick;
    let mut histogram = new_histogram();
    for thread in threads {
        match thread.join() {
            Ok(Ok(h)) => histogram
                .add(&h)
                .map_err(|e| anyhow::anyhow!("cannot merge latencies: {e:?}"))?,
            Ok(Err(e)) => return Err(e),
            Err(_) => bail!("a load thread panicked"),
        }
    }
    let elapsed = start.elapsed().min(spec.duration);
    Ok(summary(
        spec,
        elapsed,
        &Counters::total(&all_counters),
        &histogram,
        stop.is_stopped(),
    ))
}

fn new_histogram() -> Histogram<u64> {
    // 1 us to 1 h in microseconds, 3 significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

fn worker(
    spec: &HttpSpec,
    connections: std::ops::Range<u32>,
    request: &Arc<Vec<u8>>,
    counters: &Arc<Counters>,
    stop: &Stop,
    start: Instant,
    deadline: Instant,
) -> Result<Histogram<u64>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a load runtime")?;
    let histogram = Rc::new(RefCell::new(new_histogram()));
    let local = tokio::task::LocalSet::new();
    let pace =
        (spec.rate > 0.0).then(|| Duration::from_secs_f64(f64::from(spec.connections) / spec.rate));
    local.block_on(&runtime, async {
        let connection = |next: Instant, since: Rc<Cell<Option<Instant>>>| Connection {
            addr: spec.addr,
            timeout: spec.timeout,
            request: request.clone(),
            counters: counters.clone(),
            histogram: histogram.clone(),
            deadline,
            pace,
            next,
            since,
        };
        let mut slots = Vec::new();
        for index in connections {
            // Paced connections start staggered across one period.
            let next = start + pace.map_or(Duration::ZERO, |p| p * index / spec.connections);
            let since = Rc::new(Cell::new(None));
            let handle = tokio::task::spawn_local(connection(next, since.clone()).run());
            slots.push((handle, since));
        }
        // Watch for a stop and for requests past the timeout. One watcher per
        // thread instead of a timer per request (which cost ~25% more CPU per
        // request): a request that times out has its connection dropped and a
        // new one takes its place, as wrk does.
        loop {
            if slots.iter().all(|(h, _)| h.is_finished()) {
                break;
            }
            if stop.is_stopped() {
                for (handle, _) in &slots {
                    handle.abort();
                }
                break;
            }
            let now = Instant::now();
            for (handle, since) in &mut slots {
                let late = since
                    .get()
                    .is_some_and(|t| now.duration_since(t) >= spec.timeout);
                if late && !handle.is_finished() {
                    handle.abort();
                    Counters::add(&counters.timeout);
                    let fresh = Rc::new(Cell::new(None));
                    *handle = tokio::task::spawn_local(connection(now, fresh.clone()).run());
                    *since = fresh;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for (handle, _) in slots {
            let _ = handle.await;
        }
    });
    let histogram = histogram.borrow().clone();
    Ok(histogram)
}

struct Connection {
    addr: SocketAddr,
    timeout: Duration,
    request: Arc<Vec<u8>>,
    counters: Arc<Counters>,
    histogram: Rc<RefCell<Histogram<u64>>>,
    deadline: Instant,
    pace: Option<Duration>,
    next: Instant,
    /// When the request in flight was sent; the watcher times it out.
    since: Rc<Cell<Option<Instant>>>,
}

enum Failure {
    Read,
}

impl Connection {
    async fn run(mut self) {
        let mut stream: Option<TcpStream> = None;
        let mut buffer = vec![0u8; 16 * 1024];
        let counters = self.counters.clone();
        loop {
            let now = Instant::now();
            if now >= self.deadline {
                break;
            }
            if let Some(pace) = self.pace {
                if self.next > now {
                    tokio::time::sleep_until(self.next.min(self.deadline).into()).await;
                    continue;
                }
                self.next += pace;
            }
            let s = match stream.as_mut() {
                Some(s) => s,
                None => {
                    match tokio::time::timeout(self.timeout, TcpStream::connect(self.addr)).await {
                        Ok(Ok(s)) => {
                            let _ = s.set_nodelay(true);
                            stream.insert(s)
                        }
                        _ => {
                            Counters::add(&counters.connect);
                            let pause =
                                (Instant::now() + Duration::from_millis(10)).min(self.deadline);
                            tokio::time::sleep_until(pause.into()).await;
                            continue;
                        }
                    }
                }
            };
            let sent = Instant::now();
            self.since.set(Some(sent));
            if s.write_all(&self.request).await.is_err() {
                self.since.set(None);
                Counters::add(&counters.write);
                stream = None;
                continue;
            }
            let answer = read_response(s, &mut buffer).await;
            self.since.set(None);
            match answer {
                Ok(response) => {
                    let micros = sent.elapsed().as_micros() as u64;
                    self.histogram.borrow_mut().saturating_record(micros.max(1));
                    Counters::add(&counters.requests);
                    counters.bytes.fetch_add(response.bytes, Ordering::Relaxed);
                    if response.status > 399 {
                        Counters::add(&counters.status);
                    }
                    if response.close {
                        stream = None;
                    }
                }
                Err(Failure::Read) => {
                    Counters::add(&counters.read);
                    stream = None;
                }
            }
        }
    }
}

async fn read_response(stream: &mut TcpStream, buffer: &mut [u8]) -> Result<Response, Failure> {
    let mut parser = Parser::default();
    loop {
        let n = stream.read(buffer).await.map_err(|_| Failure::Read)?;
        if n == 0 {
            return parser.at_close().ok_or(Failure::Read);
        }
        match parser.feed(&buffer[..n]) {
            Ok(Some(response)) => return Ok(response),
            Ok(None) => {}
            Err(BadResponse) => return Err(Failure::Read),
        }
    }
}

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
    head: Vec<u8>,
    status: u16,
    close: bool,
    body: Option<Body>,
    bytes: u64,
}

impl Parser {
    /// Takes the next bytes read; a response once it is complete.
    pub fn feed(&mut self, data: &[u8]) -> Result<Option<Response>, BadResponse> {
        let mut data = data;
        if self.body.is_none() {
            let end_in_data = if self.head.is_empty() {
                // The usual case: the whole head came in one read; parse it
                // where it lies, without copying.
                let Some(end) = find(data, b"\r\n\r\n").map(|i| i + 4) else {
                    self.head.extend_from_slice(data);
                    return Ok(None);
                };
                self.parse_head(&data[..end])?;
                self.bytes = end as u64;
                end
            } else {
                let before = self.head.len();
                let searched = before.saturating_sub(3);
                self.head.extend_from_slice(data);
                let Some(end) = find(&self.head[searched..], b"\r\n\r\n").map(|i| i + searched + 4)
                else {
                    if self.head.len() > 64 * 1024 {
                        return Err(BadResponse);
                    }
                    return Ok(None);
                };
                let head = std::mem::take(&mut self.head);
                self.parse_head(&head[..end])?;
                self.bytes = end as u64;
                end - before
            };
            data = &data[end_in_data..];
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

    fn parse_head(&mut self, head: &[u8]) -> Result<(), BadResponse> {
        let head = std::str::from_utf8(head).map_err(|_| BadResponse)?;
        let mut lines = head.split("\r\n");
        let status_line = lines.next().ok_or(BadResponse)?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().ok_or(BadResponse)?;
        if !version.starts_with("HTTP/1.") {
            return Err(BadResponse);
        }
        self.status = parts
            .next()
            .ok_or(BadResponse)?
            .parse()
            .map_err(|_| BadResponse)?;
        let http10 = version == "HTTP/1.0";
        let mut length = None;
        let mut chunked = false;
        let mut keep_alive = !http10;
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse::<u64>().map_err(|_| BadResponse)?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = contains_ignore_case(value, "chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                if contains_ignore_case(value, "close") {
                    keep_alive = false;
                } else if contains_ignore_case(value, "keep-alive") {
                    keep_alive = true;
                }
            }
        }
        self.close = !keep_alive;
        self.body = Some(if self.status == 204 || self.status == 304 {
            Body::Length(0)
        } else if chunked {
            Body::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
            })
        } else if let Some(length) = length {
            Body::Length(length)
        } else {
            self.close = true;
            Body::UntilClose
        });
        self.head = Vec::new();
        Ok(())
    }
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

fn contains_ignore_case(text: &str, needle: &str) -> bool {
    text.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn summary(
    spec: &HttpSpec,
    elapsed: Duration,
    counters: &Counters,
    histogram: &Histogram<u64>,
    stopped: bool,
) -> Outcome {
    let secs = seconds(elapsed);
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let requests = get(&counters.requests);
    let bytes = get(&counters.bytes);
    let ms = |q: f64| (requests > 0).then(|| histogram.value_at_quantile(q) as f64 / 1000.0);
    let max = (requests > 0).then(|| histogram.max() as f64 / 1000.0);
    let mean = (requests > 0).then(|| histogram.mean() / 1000.0);
    let stdev = (requests > 0).then(|| histogram.stdev() / 1000.0);
    let errors = json!({
        "connect": get(&counters.connect), "read": get(&counters.read),
        "write": get(&counters.write), "timeout": get(&counters.timeout),
        "status": get(&counters.status),
    });
    let json = json!({
        "type": "summary", "kind": "http", "url": spec.url, "stopped": stopped,
        "connections": spec.connections, "threads": spec.threads,
        "seconds": secs, "requests": requests, "requests_per_s": requests as f64 / secs,
        "bytes": bytes, "bytes_per_s": bytes as f64 / secs,
        "errors": errors,
        "latency_ms": {
            "p50": ms(0.5), "p75": ms(0.75), "p90": ms(0.9), "p99": ms(0.99),
            "p999": ms(0.999), "max": max, "mean": mean, "stdev": stdev,
        },
    });
    let show = |v: Option<f64>| v.map_or("-".into(), millis);
    let mut text = format!(
        "  Thread Stats   Avg      Stdev     Max\n    Latency   {:>8} {:>8} {:>8}\n  Latency Distribution\n",
        show(mean),
        show(stdev),
        show(max)
    );
    for (label, q) in [
        ("50%", 0.5),
        ("75%", 0.75),
        ("90%", 0.9),
        ("99%", 0.99),
        ("99.9%", 0.999),
    ] {
        text.push_str(&format!("  {label:>6}  {}\n", show(ms(q))));
    }
    text.push_str(&format!(
        "  {requests} requests in {secs:.2}s, {} read\n",
        transfer(bytes as f64)
    ));
    let (connect, read, write, timeout, status) = (
        get(&counters.connect),
        get(&counters.read),
        get(&counters.write),
        get(&counters.timeout),
        get(&counters.status),
    );
    if connect + read + write + timeout > 0 {
        text.push_str(&format!(
            "  Socket errors: connect {connect}, read {read}, write {write}, timeout {timeout}\n"
        ));
    }
    if status > 0 {
        text.push_str(&format!("  Non-2xx or 3xx responses: {status}\n"));
    }
    text.push_str(&format!(
        "Requests/sec: {:>10.2}\nTransfer/sec: {:>10}",
        requests as f64 / secs,
        transfer(bytes as f64 / secs)
    ));
    if stopped {
        text.push_str("\nstopped before the end");
    }
    let headline = format!(
        "{} req/s, p99 {}, {} errors",
        count(requests as f64 / secs),
        show(ms(0.99)),
        connect + read + write + timeout + status
    );
    Outcome {
        json,
        text,
        headline,
    }
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
    fn urls() {
        assert_eq!(
            parse_url("http://127.0.0.1:8080/a?b").unwrap(),
            (
                "127.0.0.1:8080".into(),
                "127.0.0.1:8080".into(),
                "/a?b".into()
            )
        );
        assert_eq!(
            parse_url("http://localhost").unwrap(),
            ("localhost".into(), "localhost:80".into(), "/".into())
        );
        assert_eq!(parse_url("http://[::1]/").unwrap().1, "[::1]:80");
        for bad in [
            "ftp://x/",
            "https://x/",
            "http://",
            "127.0.0.1:80",
            "http://a b/",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
