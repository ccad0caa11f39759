//! A small HTTP/1.1 server for GET /metrics: one request per connection,
//! bounded in size, time and number of connections.

use super::render::CONTENT_TYPE;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// Largest request head accepted (request line and headers).
pub const MAX_REQUEST: usize = 8 * 1024;
/// Time a client has to send its request head.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more wait in the accept queue.
pub const MAX_CONNECTIONS: usize = 64;

/// The latest rendered page; None until the first sample.
pub type Page = watch::Receiver<Option<Arc<str>>>;

/// What a request asked for, or why it cannot be served.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    Metrics { head: bool },
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
    for header in lines {
        if header.is_empty() {
            continue;
        }
        match header.split_once(':') {
            Some((name, _)) if token(name) => {}
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
        Request::Metrics { head }
    } else {
        Request::NotFound
    }
}

/// Serves connections from `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, page: Page) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // EMFILE and the like: back off instead of spinning.
                eprintln!("netlens export: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let page = page.clone();
        tokio::spawn(async move {
            let _ = handle(stream, page).await;
            drop(permit);
        });
    }
}

/// Reads the request head: Ok(Some(head)), Ok(None) when too large.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            return Ok(Some(buf));
        }
        if buf.len() > MAX_REQUEST {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn handle(mut stream: TcpStream, page: Page) -> std::io::Result<()> {
    let head = match tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await {
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
        Request::Metrics { head } => {
            let text = page.borrow().clone();
            match text {
                Some(text) => {
                    let body = if head { "" } else { &text };
                    let length = text.len().to_string();
                    respond_raw(
                        &mut stream,
                        200,
                        "OK",
                        &[("Content-Type", CONTENT_TYPE), ("Content-Length", &length)],
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
    respond_raw(stream, status, reason, &headers, body).await
}

async fn respond_raw(
    stream: &mut TcpStream,
    status: u16,
    reason: &str,
    headers: &[(&str, &str)],
    body: &str,
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
        stream.write_all(body.as_bytes()).await?;
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
            Request::Metrics { head: false }
        );
        assert_eq!(
            parse(b"HEAD /metrics?x=1 HTTP/1.0"),
            Request::Metrics { head: true }
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
