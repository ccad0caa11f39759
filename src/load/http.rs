//! `load http`: a keep-alive HTTP/1.1 client like wrk. Each thread runs a
//! single-threaded tokio runtime with its share of the connections; each
//! connection sends one GET, reads the whole response, and sends the next.
//!
//! At the end of the duration no new request starts and the ones in flight
//! finish (or time out), so the client's counts match the server's. A stop
//! aborts everything at once.

use super::format::{count, millis, transfer};
use super::http_parse::{BadResponse, Parser, Response};
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
        // One clock read per request: the time a response completed is
        // also the next request's start.
        let mut now = Instant::now();
        loop {
            if now >= self.deadline {
                break;
            }
            if let Some(pace) = self.pace {
                if self.next > now {
                    tokio::time::sleep_until(self.next.min(self.deadline).into()).await;
                    now = Instant::now();
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
                            now = Instant::now();
                            stream.insert(s)
                        }
                        _ => {
                            Counters::add(&counters.connect);
                            let pause =
                                (Instant::now() + Duration::from_millis(10)).min(self.deadline);
                            tokio::time::sleep_until(pause.into()).await;
                            now = Instant::now();
                            continue;
                        }
                    }
                }
            };
            let sent = now;
            self.since.set(Some(sent));
            if s.write_all(&self.request).await.is_err() {
                self.since.set(None);
                Counters::add(&counters.write);
                stream = None;
                now = Instant::now();
                continue;
            }
            let answer = read_response(s, &mut buffer).await;
            self.since.set(None);
            now = Instant::now();
            match answer {
                Ok(response) => {
                    let micros = (now - sent).as_micros() as u64;
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
