//! `load serve`: the other end of `load tcp`, `load udp` and `load http`,
//! like `iperf3 -s`, on one port for TCP and UDP. A TCP connection whose
//! first bytes are the tcp test's header is a throughput stream; anything
//! else is served as HTTP/1.1 (keep-alive, a fixed body, an optional delay).
//! Every finished test is reported as one line (JSON with `--json`), so its
//! counts can be checked against the client's.

use super::format::{bitrate, transfer};
use super::tcp::{HEADER_LEN, Header, MAGIC, chunk, pace};
use super::udp::{Datagram, Session, monotonic_ns, parse};
use super::{Stop, seconds};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Connections served at once; more are closed at once (fds are limited).
const MAX_CONNECTIONS: usize = 8192;
/// A connection that sends nothing for this long is closed.
const IDLE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct ServeSpec {
    pub bind: IpAddr,
    pub port: u16,
    pub delay: Duration,
    pub body: usize,
}

/// Where the server reports each finished test: (JSON, text).
pub type Sink = Arc<dyn Fn(Value, String) + Send + Sync>;

/// A running server: its address; `stop` ends it.
pub struct Server {
    pub addr: SocketAddr,
    stop: Stop,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Binds TCP and UDP on the same port (port 0: a free one) and serves
    /// on background threads.
    pub fn start(spec: &ServeSpec, sink: Sink) -> Result<Self> {
        let (listener, udp) = bind_both(spec.bind, spec.port)?;
        let addr = listener.local_addr()?;
        set_timeout(&listener, Duration::from_millis(100));
        udp.set_read_timeout(Some(Duration::from_millis(100)))?;
        grow_receive_buffer(&udp);
        let stop = Stop::new();
        let mut threads = Vec::new();
        {
            let stop = stop.clone();
            let sink = sink.clone();
            let spec = spec.clone();
            threads.push(std::thread::spawn(move || {
                accept_loop(&listener, &spec, &sink, &stop)
            }));
        }
        {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || udp_loop(&udp, &sink, &stop)));
        }
        Ok(Self {
            addr,
            stop,
            threads,
        })
    }

    pub fn stop(mut self) {
        self.stop.stop();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn bind_both(ip: IpAddr, port: u16) -> Result<(TcpListener, UdpSocket)> {
    for _ in 0..20 {
        let listener = TcpListener::bind((ip, port))
            .with_context(|| format!("cannot listen on {ip} port {port}"))?;
        let bound = listener.local_addr()?.port();
        match UdpSocket::bind((ip, bound)) {
            Ok(udp) => return Ok((listener, udp)),
            Err(e) if port != 0 => {
                return Err(e).with_context(|| format!("cannot bind UDP {ip} port {port}"));
            }
            Err(_) => continue,
        }
    }
    bail!("cannot find a port free for both TCP and UDP")
}

/// SO_RCVTIMEO on a listener makes accept(2) return now and then, to see a stop.
fn set_timeout(socket: &impl AsRawFd, timeout: Duration) {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: a valid fd and a timeval of the size given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
}

/// A big UDP receive buffer, so a busy machine does not turn scheduling
/// hiccups into loss. SO_RCVBUFFORCE (root) may exceed net.core.rmem_max;
/// otherwise SO_RCVBUF is capped by it.
fn grow_receive_buffer(socket: &impl AsRawFd) {
    let size: libc::c_int = 8 << 20;
    for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: a valid fd and an int option.
        let rc = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return;
        }
    }
}

fn accept_loop(listener: &TcpListener, spec: &ServeSpec, sink: &Sink, stop: &Stop) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.is_stopped() {
        let (stream, peer) = match listener.accept() {
            Ok(pair) => pair,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => {
                // EMFILE and friends: wait a little rather than spin.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            continue;
        }
        active.fetch_add(1, Ordering::Relaxed);
        let (spec, sink, stop, active) = (spec.clone(), sink.clone(), stop.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let _ = connection(stream, peer, &spec, &sink, &stop);
                active.fetch_sub(1, Ordering::Relaxed);
            });
        if spawned.is_err() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Reads into `buffer`; Ok(0) at EOF, Err(TimedOut) after IDLE or a stop.
fn read_some(stream: &mut TcpStream, buffer: &mut [u8], stop: &Stop) -> std::io::Result<usize> {
    let since = Instant::now();
    loop {
        match stream.read(buffer) {
            Ok(n) => return Ok(n),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.is_stopped() || since.elapsed() > IDLE {
                    return Err(ErrorKind::TimedOut.into());
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    spec: &ServeSpec,
    sink: &Sink,
    stop: &Stop,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut first = Vec::new();
    let mut buffer = vec![0u8; 16 * 1024];
    while first.len() < 4 || (first.starts_with(MAGIC) && first.len() < HEADER_LEN) {
        let n = read_some(&mut stream, &mut buffer, stop)?;
        if n == 0 {
            return Ok(());
        }
        first.extend_from_slice(&buffer[..n]);
        if first.len() >= 4 && !first.starts_with(MAGIC) {
            break;
        }
    }
    match Header::decode(&first) {
        Some(h) if !h.reverse => tcp_receive(stream, peer, first.len() - HEADER_LEN, sink, stop),
        Some(h) => tcp_send(stream, peer, h, sink, stop),
        None => http(stream, peer, first, spec, sink, stop),
    }
}

fn tcp_receive(
    mut stream: TcpStream,
    peer: SocketAddr,
    already: usize,
    sink: &Sink,
    stop: &Stop,
) -> std::io::Result<()> {
    let start = Instant::now();
    let mut buffer = vec![0u8; super::tcp::BUFFER];
    let mut received = already as u64;
    loop {
        match read_some(&mut stream, &mut buffer, stop) {
            Ok(0) => break,
            Ok(n) => received += n as u64,
            Err(_) => {
                report_tcp(sink, peer, "received", received, start.elapsed(), false);
                return Ok(());
            }
        }
    }
    let elapsed = start.elapsed();
    let answered = stream.write_all(&received.to_be_bytes()).is_ok();
    report_tcp(sink, peer, "received", received, elapsed, answered);
    Ok(())
}

fn tcp_send(
    mut stream: TcpStream,
    peer: SocketAddr,
    header: Header,
    sink: &Sink,
    stop: &Stop,
) -> std::io::Result<()> {
    stream.set_write_timeout(Some(Duration::from_millis(100)))?;
    let buffer = vec![0x6e_u8; chunk(header.rate)];
    let start = Instant::now();
    let mut sent = 0u64;
    let mut clean = true;
    while start.elapsed() < header.duration && !stop.is_stopped() {
        if !pace(start, sent, header.rate) {
            continue;
        }
        match stream.write(&buffer) {
            Ok(n) => sent += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => {
                clean = false;
                break;
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
    report_tcp(sink, peer, "sent", sent, start.elapsed(), clean);
    Ok(())
}

fn report_tcp(
    sink: &Sink,
    peer: SocketAddr,
    direction: &str,
    bytes: u64,
    elapsed: Duration,
    complete: bool,
) {
    let secs = seconds(elapsed);
    sink(
        json!({
            "type": "served", "kind": "tcp", "peer": peer.to_string(),
            "direction": direction, "bytes": bytes, "seconds": secs,
            "bits_per_s": bytes as f64 * 8.0 / secs, "complete": complete,
        }),
        format!(
            "[tcp ] {peer}: {direction} {} in {secs:.2} sec = {}{}",
            transfer(bytes as f64),
            bitrate(bytes as f64 * 8.0 / secs),
            if complete { "" } else { " (cut short)" }
        ),
    );
}

fn http(
    mut stream: TcpStream,
    peer: SocketAddr,
    mut pending: Vec<u8>,
    spec: &ServeSpec,
    sink: &Sink,
    stop: &Stop,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let body = vec![b'x'; spec.body];
    let head = |close: bool| {
        format!(
            "HTTP/1.1 200 OK\r\nServer: netlens\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}\r\n",
            spec.body,
            if close { "Connection: close\r\n" } else { "" }
        )
    };
    let keep = [head(false).into_bytes(), body.clone()].concat();
    let close = [head(true).into_bytes(), body].concat();
    let start = Instant::now();
    let (mut requests, mut sent, mut received) = (0u64, 0u64, 0u64);
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        // A request head never holds a NUL: this is not HTTP (iperf3's
        // cookie ends in one). Closing at once tells `load tcp`'s probe that
        // this is not an iperf3 server.
        if pending.contains(&0) {
            break;
        }
        let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") else {
            if pending.len() > 64 * 1024 {
                break;
            }
            match read_some(&mut stream, &mut buffer, stop) {
                Ok(n) if n > 0 => {
                    pending.extend_from_slice(&buffer[..n]);
                    continue;
                }
                _ => break,
            }
        };
        let request = String::from_utf8_lossy(&pending[..end]).to_string();
        let mut lines = request.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let http10 = request_line.ends_with("HTTP/1.0");
        let head_only = request_line.starts_with("HEAD ");
        let mut length = 0usize;
        let mut wants_close = http10;
        for line in lines {
            if let Some((name, value)) = line.split_once(':') {
                let value = value.trim().to_ascii_lowercase();
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("connection") {
                    wants_close =
                        value.contains("close") || (http10 && !value.contains("keep-alive"));
                }
            }
        }
        let total = end + 4 + length;
        while pending.len() < total {
            match read_some(&mut stream, &mut buffer, stop) {
                Ok(n) if n > 0 => pending.extend_from_slice(&buffer[..n]),
                _ => break,
            }
        }
        if pending.len() < total {
            break;
        }
        pending.drain(..total);
        received += total as u64;
        if !spec.delay.is_zero() && !stop.sleep_until(Instant::now() + spec.delay) {
            break;
        }
        let response: &[u8] = if wants_close { &close } else { &keep };
        let response = if head_only {
            &response[..response.len() - spec.body]
        } else {
            response
        };
        if stream.write_all(response).is_err() {
            break;
        }
        requests += 1;
        sent += response.len() as u64;
        if wants_close {
            break;
        }
    }
    if requests > 0 {
        let secs = seconds(start.elapsed());
        sink(
            json!({
                "type": "served", "kind": "http", "peer": peer.to_string(),
                "requests": requests, "bytes_sent": sent, "bytes_received": received,
                "seconds": secs,
            }),
            format!(
                "[http] {peer}: {requests} requests, {} sent in {secs:.2} sec",
                transfer(sent as f64)
            ),
        );
    }
    Ok(())
}

fn udp_loop(socket: &UdpSocket, sink: &Sink, stop: &Stop) {
    let mut sessions: HashMap<(SocketAddr, u32), (Session, Instant)> = HashMap::new();
    let mut buffer = vec![0u8; 65_536];
    let mut last_sweep = Instant::now();
    while !stop.is_stopped() {
        let Ok((n, peer)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let now = Instant::now();
        match parse(&buffer[..n]) {
            Some(Datagram::Data {
                session,
                seq,
                send_ns,
            }) => {
                if sessions.len() >= 4096 && !sessions.contains_key(&(peer, session)) {
                    continue;
                }
                let entry = sessions
                    .entry((peer, session))
                    .or_insert_with(|| (Session::default(), now));
                entry.0.on_data(seq, send_ns, monotonic_ns(), n);
                entry.1 = now;
            }
            Some(Datagram::Fin { session, sent }) => {
                let entry = sessions
                    .entry((peer, session))
                    .or_insert_with(|| (Session::default(), now));
                entry.1 = now;
                let first = entry.0.sent.is_none();
                entry.0.sent = Some(sent);
                let _ = socket.send_to(&entry.0.reply(session), peer);
                if first {
                    report_udp(sink, peer, session, &entry.0, sent);
                }
            }
            None => {}
        }
        if now.duration_since(last_sweep) > Duration::from_secs(10) {
            sessions.retain(|_, (_, seen)| now.duration_since(*seen) < IDLE);
            last_sweep = now;
        }
    }
}

fn report_udp(sink: &Sink, peer: SocketAddr, session: u32, s: &Session, sent: u64) {
    let lost = sent.saturating_sub(s.received);
    let loss = lost as f64 * 100.0 / sent.max(1) as f64;
    sink(
        json!({
            "type": "served", "kind": "udp", "peer": peer.to_string(), "session": session,
            "packets": s.received, "bytes": s.bytes, "sent": sent, "lost": lost,
            "loss_percent": loss, "out_of_order": s.out_of_order,
            "jitter_ms": s.jitter_ns / 1e6,
        }),
        format!(
            "[udp ] {peer}: {}/{sent} datagrams, {lost} lost ({loss:.2}%), jitter {:.3} ms, {} out of order",
            s.received,
            s.jitter_ns / 1e6,
            s.out_of_order
        ),
    );
}
