//! `load probe`: TCP connect latency, like `hping3 -S -c N -p PORT`. Each
//! probe is one connect(2): a SYN answered by SYN-ACK (open, "SA") or RST
//! (closed, "RA") is a reply and its round trip is timed; no answer within
//! the timeout is a loss.

use super::{Interval, Outcome, Report, Stop};
use anyhow::Result;
use serde_json::json;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub to: SocketAddr,
    pub count: u32,
    pub every: Duration,
    pub timeout: Duration,
}

/// What one probe saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// SYN-ACK: the port is open.
    Open(f64),
    /// RST: the port is closed, but the host answered.
    Closed(f64),
    /// No answer within the timeout, or the network said unreachable.
    Lost,
}

pub fn probe_once(to: SocketAddr, timeout: Duration) -> Answer {
    let start = Instant::now();
    match TcpStream::connect_timeout(&to, timeout) {
        Ok(stream) => {
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            drop(stream);
            Answer::Open(ms)
        }
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            Answer::Closed(start.elapsed().as_secs_f64() * 1000.0)
        }
        Err(_) => Answer::Lost,
    }
}

pub fn run(spec: &ProbeSpec, stop: &Stop, report: Report) -> Result<Outcome> {
    super::check_duration(spec.every * spec.count)
        .map_err(|e| anyhow::anyhow!("{e} (count × interval)"))?;
    let start = Instant::now();
    let mut rtts = Vec::new();
    let mut sent = 0u32;
    let mut closed = 0u32;
    for seq in 0..spec.count {
        if stop.is_stopped() {
            break;
        }
        let at = start + spec.every * seq;
        if !stop.sleep_until(at) {
            break;
        }
        sent += 1;
        let answer = probe_once(spec.to, spec.timeout);
        let begin = (at - start).as_secs_f64();
        let (flags, rtt) = match answer {
            Answer::Open(ms) => ("SA", Some(ms)),
            Answer::Closed(ms) => {
                closed += 1;
                ("RA", Some(ms))
            }
            Answer::Lost => ("", None),
        };
        if let Some(ms) = rtt {
            rtts.push(ms);
        }
        let text = match rtt {
            Some(ms) => format!(
                "len=0 ip={} sport={} flags={flags} seq={seq} rtt={ms:.3} ms",
                spec.to.ip(),
                spec.to.port()
            ),
            None => format!(
                "seq={seq}: no answer from {} within {:?}",
                spec.to, spec.timeout
            ),
        };
        report(Interval {
            start: begin,
            end: start.elapsed().as_secs_f64(),
            value: rtt.unwrap_or(0.0),
            json: json!({
                "type": "probe", "kind": "probe", "seq": seq,
                "flags": flags, "rtt_ms": rtt,
            }),
            text,
        });
    }
    let received = rtts.len() as u32;
    let min = rtts.iter().copied().reduce(f64::min);
    let max = rtts.iter().copied().reduce(f64::max);
    let avg = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64);
    let loss = if sent == 0 {
        0.0
    } else {
        f64::from(sent - received) * 100.0 / f64::from(sent)
    };
    let json = json!({
        "type": "summary", "kind": "probe", "to": spec.to.to_string(),
        "stopped": stop.is_stopped(),
        "sent": sent, "received": received, "closed": closed,
        "loss_percent": loss, "min_ms": min, "avg_ms": avg, "max_ms": max,
    });
    let show = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let text = format!(
        "--- {} hping statistic ---\n{sent} packets transmitted, {received} packets received, {loss:.0}% packet loss\nround-trip min/avg/max = {}/{}/{} ms",
        spec.to,
        show(min),
        show(avg),
        show(max)
    );
    let headline = format!(
        "{received}/{sent} answered, avg {} ms{}",
        show(avg),
        if closed > 0 {
            format!(", {closed} closed (RST)")
        } else {
            String::new()
        }
    );
    Ok(Outcome {
        json,
        text,
        headline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_and_closed_ports_answer() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap();
        assert!(matches!(
            probe_once(open, Duration::from_secs(1)),
            Answer::Open(ms) if ms >= 0.0
        ));
        drop(listener);
        assert!(matches!(
            probe_once(open, Duration::from_secs(1)),
            Answer::Closed(_)
        ));
    }
}
