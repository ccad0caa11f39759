//! `load tcp`: iperf3-style TCP throughput against `load serve` or a real
//! iperf3 server, told apart by a probe at the start (see [`super::iperf3`]).
//!
//! `load serve`'s wire protocol: the client sends a 16-byte header (magic, direction, the
//! run's duration in ms). Forward: the client writes for the duration, shuts
//! down its side, and the server answers with the byte count it received (8
//! bytes, big endian). Reverse: the server writes for the duration (capped by
//! [`super::MAX_DURATION`]) and closes.

use super::format::{bitrate, transfer};
use super::{Interval, Outcome, Report, Stop, iperf3, seconds};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub const MAGIC: &[u8; 4] = b"NLT1";
pub const HEADER_LEN: usize = 24;
/// Write and read size, as iperf3's default for TCP.
pub const BUFFER: usize = 128 * 1024;

#[derive(Debug, Clone)]
pub struct TcpSpec {
    pub to: SocketAddr,
    pub duration: Duration,
    pub streams: u32,
    /// Total bits per second; 0 for unlimited.
    pub bitrate: u64,
    pub reverse: bool,
    pub interval: Duration,
}

/// What a client asks of the server in its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The server sends and the client receives.
    pub reverse: bool,
    pub duration: Duration,
    /// Bits per second the sender keeps to; 0 for unlimited.
    pub rate: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut header = [0u8; HEADER_LEN];
        header[..4].copy_from_slice(MAGIC);
        header[4] = if self.reverse { b'R' } else { b'S' };
        let ms = self.duration.as_millis().min(u128::from(u64::MAX)) as u64;
        header[8..16].copy_from_slice(&ms.to_be_bytes());
        header[16..24].copy_from_slice(&self.rate.to_be_bytes());
        header
    }

    /// The header at the start of `bytes`, or None when it is not one. The
    /// duration is capped at [`super::MAX_DURATION`].
    pub fn decode(bytes: &[u8]) -> Option<Header> {
        if bytes.len() < HEADER_LEN || &bytes[..4] != MAGIC {
            return None;
        }
        let reverse = match bytes[4] {
            b'R' => true,
            b'S' => false,
            _ => return None,
        };
        let ms = u64::from_be_bytes(bytes[8..16].try_into().ok()?);
        let rate = u64::from_be_bytes(bytes[16..24].try_into().ok()?);
        Some(Header {
            reverse,
            duration: Duration::from_millis(ms).min(super::MAX_DURATION),
            rate,
        })
    }
}

/// Waits until `sent` bytes are due at `rate` bits/s since `start`; false
/// when it is not yet time (the caller loops). Sleeps at most 50 ms.
pub fn pace(start: Instant, sent: u64, rate: u64) -> bool {
    if rate == 0 {
        return true;
    }
    let due = start + Duration::from_secs_f64(sent as f64 * 8.0 / rate as f64);
    let now = Instant::now();
    if due > now {
        std::thread::sleep((due - now).min(Duration::from_millis(50)));
        return false;
    }
    true
}

/// Bytes per write: about 10 ms of data at `rate`, so pacing stays smooth.
pub fn chunk(rate: u64) -> usize {
    if rate == 0 {
        BUFFER
    } else {
        ((rate / 8 / 100) as usize).clamp(1024, BUFFER)
    }
}

/// The kernel's tcp_info for a socket.
pub fn tcp_info(stream: &impl AsRawFd) -> Option<libc::tcp_info> {
    // SAFETY: tcp_info is plain old data; getsockopt writes at most `len`
    // bytes into it and the fd is valid for the call.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        (rc == 0).then_some(info)
    }
}

struct StreamEnd {
    /// What this side sent (forward) or received (reverse).
    bytes: u64,
    /// What the server reports for the stream: what it received (forward)
    /// or sent (reverse); None when it did not say.
    peer: Option<u64>,
    info: Option<libc::tcp_info>,
}

/// The server at the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Netlens,
    Iperf3,
}

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Netlens => "netlens",
            Peer::Iperf3 => "iperf3",
        }
    }
}

pub fn run(spec: &TcpSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    super::check_duration(spec.duration)?;
    match iperf3::probe(spec.to)? {
        iperf3::Server::Iperf3 {
            mut control,
            cookie,
        } => run_iperf3(spec, &mut control, &cookie, stop, report),
        iperf3::Server::Other => run_netlens(spec, stop, report),
    }
}

/// The test against `netlens load serve`.
fn run_netlens(spec: &TcpSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    let per_stream_rate = spec.bitrate / u64::from(spec.streams.max(1));
    let mut streams = Vec::new();
    for _ in 0..spec.streams {
        let mut stream = TcpStream::connect_timeout(&spec.to, Duration::from_secs(3))
            .with_context(|| {
                format!(
                    "cannot connect to {} (is `netlens load serve` running there?)",
                    spec.to
                )
            })?;
        stream
            .write_all(
                &Header {
                    reverse: spec.reverse,
                    duration: spec.duration,
                    rate: per_stream_rate,
                }
                .encode(),
            )
            .context("cannot send the test header")?;
        streams.push(stream);
    }
    let (elapsed, ends, _) = move_data(spec, streams, Peer::Netlens, stop, report)?;
    Ok(summary(
        spec,
        Peer::Netlens,
        elapsed,
        &ends,
        stop.is_stopped(),
    ))
}

/// The test against an iperf3 server: its protocol around the same data
/// streams; the server's byte counts come in the results exchange.
fn run_iperf3(
    spec: &TcpSpec,
    control: &mut TcpStream,
    cookie: &iperf3::Cookie,
    stop: &Stop,
    report: Report,
) -> Result<Outcome> {
    let params = iperf3::Params {
        streams: spec.streams,
        duration: spec.duration,
        reverse: spec.reverse,
        rate: spec.bitrate / u64::from(spec.streams.max(1)),
    };
    let streams = iperf3::start(spec.to, control, cookie, &params)?;
    let cpu_before = cpu_seconds();
    // The data connections stay open until the end of the exchange, as
    // iperf3's client keeps them: a server still sending to a closed one
    // fails the test.
    let (elapsed, mut ends, _open) = move_data(spec, streams, Peer::Iperf3, stop, report)?;
    let (user, system) = cpu_seconds();
    let wall = seconds(elapsed);
    let cpu = (
        (user + system - cpu_before.0 - cpu_before.1) * 100.0 / wall,
        (user - cpu_before.0) * 100.0 / wall,
        (system - cpu_before.1) * 100.0 / wall,
    );
    let ours: Vec<iperf3::StreamResult> = ends
        .iter()
        .map(|e| iperf3::StreamResult {
            bytes: e.bytes,
            retransmits: (!spec.reverse)
                .then(|| e.info.map_or(0, |i| u64::from(i.tcpi_total_retrans))),
            seconds: wall,
        })
        .collect();
    let theirs = iperf3::finish(control, &ours, cpu, !spec.reverse)?;
    for (end, peer) in ends.iter_mut().zip(theirs) {
        end.peer = peer;
    }
    Ok(summary(
        spec,
        Peer::Iperf3,
        elapsed,
        &ends,
        stop.is_stopped(),
    ))
}

/// User and system CPU seconds of this process so far.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// Moves data on `streams` until the duration is over (or a stop),
/// reporting each interval; returns the time it ran, each stream's end and
/// a handle on each stream (the connections close when those are dropped).
fn move_data(
    spec: &TcpSpec,
    streams: Vec<TcpStream>,
    peer: Peer,
    stop: &Stop,
    report: Report,
) -> Result<(Duration, Vec<StreamEnd>, Vec<TcpStream>)> {
    let per_stream_rate = spec.bitrate / u64::from(spec.streams.max(1));
    let start = Instant::now();
    let deadline = start + spec.duration;
    let mut counters = Vec::new();
    let mut watchers = Vec::new();
    let mut threads = Vec::new();
    for stream in streams {
        let counter = Arc::new(AtomicU64::new(0));
        counters.push(counter.clone());
        watchers.push(stream.try_clone().context("cannot duplicate a socket")?);
        let stop = stop.clone();
        let reverse = spec.reverse;
        threads.push(std::thread::spawn(move || {
            if reverse {
                receive(stream, &counter, &stop, deadline, peer)
            } else {
                send(
                    stream,
                    &counter,
                    &stop,
                    start,
                    deadline,
                    per_stream_rate,
                    peer,
                )
            }
        }));
    }

    let mut last_bytes = 0u64;
    let mut last_retrans = 0u64;
    let mut tick = start;
    let mut intervals = 0u32;
    while !stop.is_stopped() && Instant::now() < deadline {
        tick = (tick + spec.interval).min(deadline);
        if !stop.sleep_until(tick) || threads.iter().all(|t| t.is_finished()) {
            break;
        }
        let bytes: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let infos: Vec<libc::tcp_info> = watchers.iter().filter_map(tcp_info).collect();
        let retrans: u64 = infos.iter().map(|i| u64::from(i.tcpi_total_retrans)).sum();
        let cwnd: u64 = infos
            .iter()
            .map(|i| u64::from(i.tcpi_snd_cwnd) * u64::from(i.tcpi_snd_mss))
            .sum();
        let from = (start + spec.interval * intervals).min(tick) - start;
        let to = tick - start;
        intervals += 1;
        let span = seconds(to - from);
        let delta = bytes - last_bytes;
        let bits_per_s = delta as f64 * 8.0 / span;
        let retransmits = (!spec.reverse).then_some(retrans.saturating_sub(last_retrans));
        last_bytes = bytes;
        last_retrans = retrans;
        report(Interval {
            start: from.as_secs_f64(),
            end: to.as_secs_f64(),
            value: bits_per_s,
            json: json!({
                "type": "interval", "kind": "tcp",
                "start": from.as_secs_f64(), "end": to.as_secs_f64(),
                "bytes": delta, "bits_per_s": bits_per_s,
                "retransmits": retransmits, "cwnd_bytes": (!spec.reverse).then_some(cwnd),
            }),
            text: format!(
                "[SUM] {:6.2}-{:<6.2} sec  {:>12}  {:>16}  {:>4}  {:>12}",
                from.as_secs_f64(),
                to.as_secs_f64(),
                transfer(delta as f64),
                bitrate(bits_per_s),
                retransmits.map_or("-".into(), |r| r.to_string()),
                if spec.reverse {
                    "-".into()
                } else {
                    transfer(cwnd as f64)
                },
            ),
        });
    }
    let elapsed = start.elapsed().min(spec.duration);
    let mut ends = Vec::new();
    for thread in threads {
        match thread.join() {
            Ok(result) => ends.push(result?),
            Err(_) => bail!("a load thread panicked"),
        }
    }
    Ok((elapsed, ends, watchers))
}

fn send(
    mut stream: TcpStream,
    counter: &AtomicU64,
    stop: &Stop,
    start: Instant,
    deadline: Instant,
    rate: u64,
    peer: Peer,
) -> Result<StreamEnd> {
    // A short timeout so a stalled receiver cannot hold the run past a stop.
    stream.set_write_timeout(Some(Duration::from_millis(100)))?;
    let buffer = vec![0x6e_u8; chunk(rate)];
    let mut sent = 0u64;
    loop {
        let now = Instant::now();
        if stop.is_stopped() || now >= deadline {
            break;
        }
        if !pace(start, sent, rate) {
            continue;
        }
        match stream.write(&buffer) {
            Ok(n) => {
                sent += n as u64;
                counter.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e).context("the connection failed while sending"),
        }
    }
    let info = tcp_info(&stream);
    // iperf3 reports on the control connection; a stopped run gets no answer.
    if stop.is_stopped() || peer == Peer::Iperf3 {
        return Ok(StreamEnd {
            bytes: sent,
            peer: None,
            info,
        });
    }
    stream.shutdown(Shutdown::Write)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut answer = [0u8; 8];
    let receiver = stream
        .read_exact(&mut answer)
        .ok()
        .map(|()| u64::from_be_bytes(answer));
    Ok(StreamEnd {
        bytes: sent,
        peer: receiver,
        info: tcp_info(&stream).or(info),
    })
}

fn receive(
    mut stream: TcpStream,
    counter: &AtomicU64,
    stop: &Stop,
    deadline: Instant,
    peer: Peer,
) -> Result<StreamEnd> {
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut buffer = vec![0u8; BUFFER];
    let mut received = 0u64;
    let mut clean = false;
    while !stop.is_stopped() {
        // iperf3's client stops counting at the end of the test; the server
        // stops sending when told (TEST_END).
        if peer == Peer::Iperf3 && Instant::now() >= deadline {
            break;
        }
        match stream.read(&mut buffer) {
            Ok(0) => {
                clean = true;
                break;
            }
            Ok(n) => {
                received += n as u64;
                counter.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if Instant::now() > deadline + Duration::from_secs(5) {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("the connection failed while receiving"),
        }
    }
    Ok(StreamEnd {
        bytes: received,
        peer: clean.then_some(received),
        info: tcp_info(&stream),
    })
}

fn summary(
    spec: &TcpSpec,
    peer: Peer,
    elapsed: Duration,
    ends: &[StreamEnd],
    stopped: bool,
) -> Outcome {
    let secs = seconds(elapsed);
    let moved: u64 = ends.iter().map(|e| e.bytes).sum();
    let reported: Option<u64> = ends.iter().map(|e| e.peer).sum();
    let infos: Vec<&libc::tcp_info> = ends.iter().filter_map(|e| e.info.as_ref()).collect();
    let segments: u64 = infos
        .iter()
        .map(|i| {
            u64::from(if spec.reverse {
                i.tcpi_segs_in
            } else {
                i.tcpi_segs_out
            })
        })
        .sum();
    let retransmits: Option<u64> =
        (!spec.reverse).then(|| infos.iter().map(|i| u64::from(i.tcpi_total_retrans)).sum());
    let cwnd: u64 = infos
        .iter()
        .map(|i| u64::from(i.tcpi_snd_cwnd) * u64::from(i.tcpi_snd_mss))
        .sum();
    // Forward: the client sent `moved`, the server reports what it got.
    // Reverse: the client received `moved`; the server reports what it sent
    // (netlens' server: all of it on a clean close).
    let (sender_bytes, receiver_bytes) = if spec.reverse {
        (reported, Some(moved))
    } else {
        (Some(moved), reported)
    };
    let bytes = receiver_bytes.unwrap_or(moved);
    let bits_per_s = bytes as f64 * 8.0 / secs;
    let loss_percent = retransmits
        .filter(|_| segments > 0)
        .map(|r| r as f64 * 100.0 / segments as f64);
    let rate = |b: Option<u64>| b.map(|b| b as f64 * 8.0 / secs);
    let json = json!({
        "type": "summary", "kind": "tcp", "to": spec.to.to_string(), "server": peer.name(),
        "streams": spec.streams, "reverse": spec.reverse, "stopped": stopped,
        "seconds": secs, "bytes": bytes, "bits_per_s": bits_per_s,
        "retransmits": retransmits,
        "packets_per_s": segments as f64 / secs,
        "loss_percent": loss_percent,
        "cwnd_bytes": (!spec.reverse).then_some(cwnd),
        "sender": {"bytes": sender_bytes, "bits_per_s": rate(sender_bytes)},
        "receiver": {"bytes": receiver_bytes, "bits_per_s": rate(receiver_bytes)},
    });
    let line = |b: Option<u64>, retr: Option<u64>, who: &str| match b {
        Some(b) => format!(
            "[SUM] {:6.2}-{:<6.2} sec  {:>12}  {:>16}  {:>4}               {who}",
            0.0,
            secs,
            transfer(b as f64),
            bitrate(b as f64 * 8.0 / secs),
            retr.map_or(String::new(), |r| r.to_string()),
        ),
        None => format!("[SUM] {who}: no report (the run was stopped or the peer did not answer)"),
    };
    let mut text = String::from("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    if peer == Peer::Iperf3 {
        text.push_str(&format!("(iperf3 server at {}: its own counts)\n", spec.to));
    }
    text.push_str("[ ID] Interval           Transfer     Bitrate            Retr\n");
    text.push_str(&line(sender_bytes, retransmits, "sender"));
    text.push('\n');
    text.push_str(&line(receiver_bytes, None, "receiver"));
    if stopped {
        text.push_str("\nstopped before the end");
    }
    let headline = format!(
        "{} in {:.1}s{}",
        bitrate(bits_per_s),
        secs,
        retransmits.map_or(String::new(), |r| format!(", {r} retr")),
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
    fn header_round_trips() {
        let h = Header {
            reverse: true,
            duration: Duration::from_millis(2500),
            rate: 40_000_000,
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        let long = Header {
            duration: Duration::from_secs(99_999),
            ..h
        };
        assert_eq!(
            Header::decode(&long.encode()).map(|h| h.duration),
            Some(super::super::MAX_DURATION)
        );
        assert_eq!(Header::decode(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), None);
    }

    #[test]
    fn tcp_info_of_a_loopback_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let info = tcp_info(&stream).expect("tcp_info");
        assert!(info.tcpi_snd_mss > 0 && info.tcpi_snd_cwnd > 0);
    }
}
