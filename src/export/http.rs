//! A small HTTP/1.1 server for GET /metrics: one request per connection,
//! bounded in size, time and number of connections.

use super::format::{self, Format, Pages};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// Largest request head accepted (request line and headers).
pub const MAX_REQUEST: usize = 8 * 1024;
/// Time a client has to send its request head.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections open at once at most (fewer when the descriptor limit is
/// lower); beyond it the oldest one still sending its request is closed.
pub const MAX_CONNECTIONS: usize = 4096;
/// Descriptors kept for the rest of the process (sampler, DNS probes, ...).
pub const RESERVED_DESCRIPTORS: usize = 64;

/// The latest rendered pages; None until the first sample.
pub type Page = watch::Receiver<Option<Arc<Pages>>>;

/// What a request asked for, or why it cannot be served.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// GET or HEAD /metrics, in the format the Accept header chose.
    Metrics {
        head: bool,
        format: Format,
    },
    NotFound,
    MethodNotAllowed,
    BadRequest,
}

/// Parses a request head (everything before the blank line).
pub fn parse(head: &[u8]) -> Request {
    let Ok(text) = std::str::from_utf8(head) else {
        return Request::BadRequest;
    };
    let mut lines = text.split("\r\n");
    let Some(line) = lines.next() else {
        return Request::BadRequest;
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Request::BadRequest;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !token(method)
        || !target.starts_with('/')
        || !matches!(version, "HTTP/1.0" | "HTTP/1.1")
        || target.bytes().any(|b| b.is_ascii_control())
    {
        return Request::BadRequest;
    }
    let mut accept = None;
    for header in lines {
        if header.is_empty() {
            continue;
        }
        match header.split_once(':') {
            Some((name, value)) if token(name) => {
                if name.eq_ignore_ascii_case("accept") {
                    accept = Some(value.trim());
                }
            }
            _ => return Request::BadRequest,
        }
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    let head = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Request::MethodNotAllowed,
    };
    if path == "/metrics" {
        Request::Metrics {
            head,
            format: format::negotiate(accept),
        }
    } else {
        Request::NotFound
    }
}

/// Serves connections from `listener` until the task is dropped.
///
/// The accept loop never waits for a free slot: a scrape must not queue
/// behind idle or slow clients. When `capacity` connections are open (or the
/// process is out of descriptors), the oldest connection still sending its
/// request is closed to make room, so a fresh scrape, which sends its request
/// at once, is served while a flood of idle connections churns.
pub async fn serve(listener: TcpListener, page: Page, capacity: usize) {
    let open = Arc::new(Mutex::new(Open::default()));
    let mut next_id = 0u64;
    let mut warned = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                let out_of_descriptors =
                    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
                if !warned {
                    eprintln!("netlens export: accept failed: {error}");
                    warned = true;
                }
                let evicted = if out_of_descriptors {
                    lock(&open).evict()
                } else {
                    None
                };
                if let Some(task) = evicted {
                    task.abort();
                    // Let the aborted task be dropped (closing its socket).
                    tokio::task::yield_now().await;
                } else {
                    // Nothing to close: back off instead of spinning.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                continue;
            }
        };
        let id = next_id;
        next_id += 1;
        let mut registry = lock(&open);
        let mut evicted = Vec::new();
        while registry.len() >= capacity.max(1) {
            match registry.evict() {
                Some(task) => evicted.push(task),
                None => break,
            }
        }
        let page = page.clone();
        let guard = Slot {
            open: Arc::clone(&open),
            id,
        };
        // Spawned under the lock, so the task cannot remove its entry before
        // it is added.
        let task = tokio::spawn(async move {
            let _ = handle(stream, page, &guard).await;
            drop(guard);
        });
        registry.reading.insert(id, task.abort_handle());
        drop(registry);
        evicted.iter().for_each(AbortHandle::abort);
    }
}

/// The open connections by age (ids grow), split by what they are doing.
#[derive(Default)]
struct Open {
    /// Still sending their request: closed first when room is needed.
    reading: BTreeMap<u64, AbortHandle>,
    /// Being answered.
    writing: BTreeMap<u64, AbortHandle>,
}

impl Open {
    fn len(&self) -> usize {
        self.reading.len() + self.writing.len()
    }

    /// Takes out the oldest connection, preferring one still sending its
    /// request, for the caller to abort once the lock is released.
    fn evict(&mut self) -> Option<AbortHandle> {
        let oldest = self
            .reading
            .pop_first()
            .or_else(|| self.writing.pop_first());
        oldest.map(|(_, task)| task)
    }
}

fn lock(open: &Mutex<Open>) -> std::sync::MutexGuard<'_, Open> {
    open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One connection's entry in `Open`, removed when its task ends or is aborted.
struct Slot {
    open: Arc<Mutex<Open>>,
    id: u64,
}

impl Slot {
    /// The request is read: from now on the connection is closed last.
    fn answering(&self) {
        let mut open = lock(&self.open);
        if let Some(task) = open.reading.remove(&self.id) {
            open.writing.insert(self.id, task);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        open.reading.remove(&self.id);
        open.writing.remove(&self.id);
    }
}

/// Reads the request head: Ok(Some(head)), Ok(None) when too large. The
/// buffer grows with what arrives, so an idle connection costs no buffer.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            return Ok(Some(buf));
        }
        if buf.len() > MAX_REQUEST {
            return Ok(None);
        }
        buf.reserve(1024);
        let n = stream.read_buf(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
}

async fn handle(mut stream: TcpStream, page: Page, slot: &Slot) -> std::io::Result<()> {
    let head = tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await;
    slot.answering();
    let head = match head {
        Err(_) => return respond(&mut stream, 408, "Request Timeout", &[], "").await,
        Ok(Err(_)) => return Ok(()), // the client went away
        Ok(Ok(None)) => {
            return respond(
                &mut stream,
                431,
                "Request Header Fields Too Large",
                &[],
                "request too large\n",
            )
            .await;
        }
        Ok(Ok(Some(head))) => head,
    };
    match parse(&head) {
        Request::Metrics { head, format } => {
            let pages = page.borrow().clone();
            match pages {
                Some(pages) => {
                    let (shared, age) = pages.served(format, now_t());
                    let length = (shared.len() + age.len()).to_string();
                    let body: &[&str] = if head { &[] } else { &[shared, &age] };
                    respond_raw(
                        &mut stream,
                        200,
                        "OK",
                        &[
                            ("Content-Type", format.content_type()),
                            ("Content-Length", &length),
                        ],
                        body,
                    )
                    .await
                }
                None => {
                    respond(
                        &mut stream,
                        503,
                        "Service Unavailable",
                        &[],
                        "no sample yet\n",
                    )
                    .await
                }
            }
        }
        Request::NotFound => {
            respond(
                &mut stream,
                404,
                "Not Found",
                &[],
                "not found: try /metrics\n",
            )
            .await
        }
        Request::MethodNotAllowed => {
            respond(
                &mut stream,
                405,
                "Method Not Allowed",
                &[("Allow", "GET, HEAD")],
                "only GET and HEAD\n",
            )
            .await
        }
        Request::BadRequest => respond(&mut stream, 400, "Bad Request", &[], "bad request\n").await,
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: u16,
    reason: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> std::io::Result<()> {
    let length = body.len().to_string();
    let mut headers: Vec<(&str, &str)> = vec![
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Length", &length),
    ];
    headers.extend_from_slice(extra);
    respond_raw(stream, status, reason, &headers, &[body]).await
}

/// The wall clock now, in Unix seconds.
fn now_t() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

async fn respond_raw(
    stream: &mut TcpStream,
    status: u16,
    reason: &str,
    headers: &[(&str, &str)],
    body: &[&str],
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {reason}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        for part in body {
            stream.write_all(part.as_bytes()).await?;
        }
        stream.shutdown().await
    };
    // A client that does not read cannot hold the connection forever.
    tokio::time::timeout(Duration::from_secs(30), write)
        .await
        .unwrap_or(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\nHost: x"),
            Request::Metrics {
                head: false,
                format: Format::Classic
            }
        );
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\naccept: application/openmetrics-text\r\nHost: x"),
            Request::Metrics {
                head: false,
                format: Format::OpenMetrics
            }
        );
        assert_eq!(
            parse(b"HEAD /metrics?x=1 HTTP/1.0"),
            Request::Metrics {
                head: true,
                format: Format::Classic
            }
        );
        assert_eq!(parse(b"GET / HTTP/1.1"), Request::NotFound);
        assert_eq!(parse(b"POST /metrics HTTP/1.1"), Request::MethodNotAllowed);
        assert_eq!(parse(b"GET /metrics"), Request::BadRequest);
        assert_eq!(parse(b"GET /metrics HTTP/2.0"), Request::BadRequest);
        assert_eq!(parse(b"GET metrics HTTP/1.1"), Request::BadRequest);
        assert_eq!(parse(b"\xff\xfe"), Request::BadRequest);
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\nno colon"),
            Request::BadRequest
        );
        assert_eq!(parse(b""), Request::BadRequest);
    }
}
