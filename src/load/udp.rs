//! `load udp`: datagrams at a given rate with sendmmsg(2), and what the
//! receiving `load serve` counted: loss, reordering and jitter (RFC 3550).
//!
//! Wire format (big endian): data "NLU1" session:u32 seq:u64 send_ns:u64
//! then padding to the payload size; at the end the client repeats
//! "NLUF" session:u32 sent:u64 until the server answers "NLUR" session:u32
//! received:u64 bytes:u64 out_of_order:u64 jitter_ns:u64.

use super::format::{bitrate, transfer};
use super::{Interval, Outcome, Report, Stop, seconds};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

pub const DATA: &[u8; 4] = b"NLU1";
pub const FIN: &[u8; 4] = b"NLUF";
pub const REPLY: &[u8; 4] = b"NLUR";
pub const DATA_HEADER: usize = 24;
pub const REPLY_LEN: usize = 40;
/// Datagrams handed to the kernel per sendmmsg call.
const BATCH: usize = 64;

#[derive(Debug, Clone)]
pub struct UdpSpec {
    pub to: SocketAddr,
    pub duration: Duration,
    /// Bits per second of payload; 0 for as fast as the socket takes them.
    pub bitrate: u64,
    pub size: usize,
    pub interval: Duration,
}

/// CLOCK_MONOTONIC in nanoseconds: the send and receive stamps for jitter.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What the receiver knows about one client's run.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub received: u64,
    pub bytes: u64,
    pub out_of_order: u64,
    pub next_seq: u64,
    pub jitter_ns: f64,
    last_transit: Option<i64>,
    /// The sent count from the client's FIN, once it came.
    pub sent: Option<u64>,
}

impl Session {
    pub fn on_data(&mut self, seq: u64, send_ns: u64, recv_ns: u64, len: usize) {
        self.received += 1;
        self.bytes += len as u64;
        if seq < self.next_seq {
            self.out_of_order += 1;
        } else {
            self.next_seq = seq + 1;
        }
        // RFC 3550 A.8: J += (|D| - J) / 16, D the change in transit time.
        let transit = recv_ns as i64 - send_ns as i64;
        if let Some(last) = self.last_transit {
            let d = (transit - last).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    pub fn reply(&self, session: u32) -> [u8; REPLY_LEN] {
        let mut out = [0u8; REPLY_LEN];
        out[..4].copy_from_slice(REPLY);
        out[4..8].copy_from_slice(&session.to_be_bytes());
        out[8..16].copy_from_slice(&self.received.to_be_bytes());
        out[16..24].copy_from_slice(&self.bytes.to_be_bytes());
        out[24..32].copy_from_slice(&self.out_of_order.to_be_bytes());
        out[32..40].copy_from_slice(&(self.jitter_ns as u64).to_be_bytes());
        out
    }
}

/// A parsed datagram of the protocol.
#[derive(Debug, PartialEq)]
pub enum Datagram {
    Data {
        session: u32,
        seq: u64,
        send_ns: u64,
    },
    Fin {
        session: u32,
        sent: u64,
    },
}

pub fn parse(packet: &[u8]) -> Option<Datagram> {
    let u32_at = |i: usize| u32::from_be_bytes(packet[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_be_bytes(packet[i..i + 8].try_into().unwrap());
    if packet.len() >= DATA_HEADER && &packet[..4] == DATA {
        return Some(Datagram::Data {
            session: u32_at(4),
            seq: u64_at(8),
            send_ns: u64_at(16),
        });
    }
    if packet.len() >= 16 && &packet[..4] == FIN {
        return Some(Datagram::Fin {
            session: u32_at(4),
            sent: u64_at(8),
        });
    }
    None
}

struct ReceiverReport {
    received: u64,
    bytes: u64,
    out_of_order: u64,
    jitter_ms: f64,
}

pub fn run(spec: &UdpSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    super::check_duration(spec.duration)?;
    if spec.size < DATA_HEADER {
        bail!("--size must be at least {DATA_HEADER} bytes");
    }
    let local: SocketAddr = if spec.to.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let socket = UdpSocket::bind(local).context("cannot open a UDP socket")?;
    socket
        .connect(spec.to)
        .with_context(|| format!("cannot send to {}", spec.to))?;
    socket.set_write_timeout(Some(Duration::from_millis(100)))?;
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let session = (monotonic_ns() as u32) ^ std::process::id().rotate_left(16);
    let pps = spec.bitrate as f64 / (spec.size as f64 * 8.0);

    let mut buffers = vec![vec![0u8; spec.size]; BATCH];
    for buffer in &mut buffers {
        buffer[..4].copy_from_slice(DATA);
        buffer[4..8].copy_from_slice(&session.to_be_bytes());
    }
    let start = Instant::now();
    let deadline = start + spec.duration;
    let mut sent = 0u64;
    let mut errors = 0u64;
    let mut last_error = None;
    let mut tick = 1u32;
    let mut last_sent = 0u64;
    loop {
        let now = Instant::now();
        let next_tick = (start + spec.interval * tick).min(deadline);
        if now >= next_tick {
            let from = spec.interval * (tick - 1);
            let to = next_tick - start;
            let span = seconds(to.saturating_sub(from));
            let packets = sent - last_sent;
            let bits = (packets * spec.size as u64) as f64 * 8.0 / span;
            report(Interval {
                start: from.as_secs_f64(),
                end: to.as_secs_f64(),
                value: bits,
                json: json!({
                    "type": "interval", "kind": "udp",
                    "start": from.as_secs_f64(), "end": to.as_secs_f64(),
                    "bytes": packets * spec.size as u64, "bits_per_s": bits,
                    "packets": packets, "packets_per_s": packets as f64 / span,
                }),
                text: format!(
                    "[SUM] {:6.2}-{:<6.2} sec  {:>12}  {:>16}  {:>8}",
                    from.as_secs_f64(),
                    to.as_secs_f64(),
                    transfer((packets * spec.size as u64) as f64),
                    bitrate(bits),
                    packets,
                ),
            });
            last_sent = sent;
            tick += 1;
        }
        if stop.is_stopped() || now >= deadline {
            break;
        }
        let allowed = if spec.bitrate == 0 {
            BATCH as u64
        } else {
            let due = (now - start).as_secs_f64() * pps + 1.0;
            (due as u64).saturating_sub(sent).min(BATCH as u64)
        };
        if allowed == 0 {
            let next = start + Duration::from_secs_f64((sent as f64 + 1.0) / pps);
            std::thread::sleep((next.min(next_tick).min(deadline)).saturating_duration_since(now));
            continue;
        }
        let stamp = monotonic_ns();
        for (i, buffer) in buffers.iter_mut().take(allowed as usize).enumerate() {
            buffer[8..16].copy_from_slice(&(sent + i as u64).to_be_bytes());
            buffer[16..24].copy_from_slice(&stamp.to_be_bytes());
        }
        match send_batch(&socket, &buffers[..allowed as usize]) {
            Ok(n) => sent += n as u64,
            Err(e) => {
                errors += 1;
                last_error = Some(e.to_string());
                // ECONNREFUSED (nobody listens), ENOBUFS: back off a little.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    let elapsed = start.elapsed().min(spec.duration);
    let tries = if stop.is_stopped() { 3 } else { 20 };
    let receiver = finish(&socket, session, sent, tries);
    if sent == 0 {
        bail!(
            "no datagram could be sent to {}: {}",
            spec.to,
            last_error.unwrap_or_else(|| "unknown error".into())
        );
    }
    Ok(summary(
        spec,
        elapsed,
        sent,
        errors,
        receiver,
        stop.is_stopped(),
    ))
}

/// One sendmmsg(2) call for all `buffers`; the number the kernel took.
fn send_batch(socket: &UdpSocket, buffers: &[Vec<u8>]) -> std::io::Result<usize> {
    let mut iovecs: Vec<libc::iovec> = buffers
        .iter()
        .map(|b| libc::iovec {
            iov_base: b.as_ptr() as *mut libc::c_void,
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: zeroed mmsghdr is valid (null name, no control data).
    let mut messages: Vec<libc::mmsghdr> = (0..buffers.len())
        .map(|_| unsafe { std::mem::zeroed() })
        .collect();
    for (message, iovec) in messages.iter_mut().zip(iovecs.iter_mut()) {
        message.msg_hdr.msg_iov = iovec;
        message.msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: messages and iovecs outlive the call and point at live buffers;
    // the socket is connected, so no address is needed.
    let n = unsafe {
        libc::sendmmsg(
            socket.as_raw_fd(),
            messages.as_mut_ptr(),
            messages.len() as libc::c_uint,
            0,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Sends FIN until the server answers with its counts (or gives up).
fn finish(socket: &UdpSocket, session: u32, sent: u64, tries: u32) -> Option<ReceiverReport> {
    let mut fin = [0u8; 16];
    fin[..4].copy_from_slice(FIN);
    fin[4..8].copy_from_slice(&session.to_be_bytes());
    fin[8..16].copy_from_slice(&sent.to_be_bytes());
    let mut answer = [0u8; 64];
    for _ in 0..tries {
        if socket.send(&fin).is_err() {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let until = Instant::now() + Duration::from_millis(100);
        while Instant::now() < until {
            let Ok(n) = socket.recv(&mut answer) else {
                break;
            };
            let u64_at = |i: usize| u64::from_be_bytes(answer[i..i + 8].try_into().unwrap());
            if n >= REPLY_LEN && &answer[..4] == REPLY && answer[4..8] == session.to_be_bytes() {
                return Some(ReceiverReport {
                    received: u64_at(8),
                    bytes: u64_at(16),
                    out_of_order: u64_at(24),
                    jitter_ms: u64_at(32) as f64 / 1e6,
                });
            }
        }
    }
    None
}

fn summary(
    spec: &UdpSpec,
    elapsed: Duration,
    sent: u64,
    errors: u64,
    receiver: Option<ReceiverReport>,
    stopped: bool,
) -> Outcome {
    let secs = seconds(elapsed);
    let bytes = sent * spec.size as u64;
    let bits_per_s = bytes as f64 * 8.0 / secs;
    let lost = receiver.as_ref().map(|r| sent.saturating_sub(r.received));
    let loss_percent = lost.map(|l| l as f64 * 100.0 / sent.max(1) as f64);
    let json = json!({
        "type": "summary", "kind": "udp", "to": spec.to.to_string(), "stopped": stopped,
        "seconds": secs, "bytes": bytes, "bits_per_s": bits_per_s,
        "retransmits": null,
        "packets_per_s": sent as f64 / secs,
        "loss_percent": loss_percent,
        "jitter_ms": receiver.as_ref().map(|r| r.jitter_ms),
        "size": spec.size,
        "sent_packets": sent, "send_errors": errors,
        "received_packets": receiver.as_ref().map(|r| r.received),
        "received_bytes": receiver.as_ref().map(|r| r.bytes),
        "received_packets_per_s": receiver.as_ref().map(|r| r.received as f64 / secs),
        "lost_packets": lost,
        "out_of_order": receiver.as_ref().map(|r| r.out_of_order),
    });
    let mut text = String::from("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    text.push_str(
        "[ ID] Interval           Transfer     Bitrate           Jitter    Lost/Total Datagrams\n",
    );
    text.push_str(&format!(
        "[SUM] {:6.2}-{:<6.2} sec  {:>12}  {:>16}  {:>9}  0/{sent} (0%)  {:.0} pps  sender{}\n",
        0.0,
        secs,
        transfer(bytes as f64),
        bitrate(bits_per_s),
        "",
        sent as f64 / secs,
        if errors > 0 {
            format!(" ({errors} send errors)")
        } else {
            String::new()
        },
    ));
    match &receiver {
        Some(r) => text.push_str(&format!(
            "[SUM] {:6.2}-{:<6.2} sec  {:>12}  {:>16}  {:>6.3} ms  {}/{sent} ({:.2}%)  {:.0} pps  receiver",
            0.0,
            secs,
            transfer(r.bytes as f64),
            bitrate(r.bytes as f64 * 8.0 / secs),
            r.jitter_ms,
            lost.unwrap_or(0),
            loss_percent.unwrap_or(0.0),
            r.received as f64 / secs,
        )),
        None => text.push_str(
            "[SUM] receiver: no report (is `netlens load serve` running there?); loss unknown",
        ),
    }
    let headline = format!(
        "{} {:.0} pps{}",
        bitrate(bits_per_s),
        sent as f64 / secs,
        loss_percent.map_or(", loss ?".into(), |l| format!(", loss {l:.1}%")),
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
    fn jitter_follows_rfc3550() {
        let mut s = Session::default();
        // Transit 100, 110, 100 ns: |D| = 10, 10 → J = 10/16 + (10 - 10/16)/16.
        s.on_data(0, 0, 100, 100);
        s.on_data(1, 1000, 1110, 100);
        s.on_data(2, 2000, 2100, 100);
        let j1 = 10.0 / 16.0;
        assert!((s.jitter_ns - (j1 + (10.0 - j1) / 16.0)).abs() < 1e-9);
        s.on_data(1, 0, 0, 100);
        assert_eq!((s.received, s.out_of_order, s.next_seq), (4, 1, 3));
    }

    #[test]
    fn datagrams_parse() {
        let mut p = vec![0u8; 64];
        p[..4].copy_from_slice(DATA);
        p[4..8].copy_from_slice(&7u32.to_be_bytes());
        p[8..16].copy_from_slice(&9u64.to_be_bytes());
        assert_eq!(
            parse(&p),
            Some(Datagram::Data {
                session: 7,
                seq: 9,
                send_ns: 0
            })
        );
        assert_eq!(parse(b"hello"), None);
    }
}
