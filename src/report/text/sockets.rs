//! The plain-text `snapshot` sections for TCP (like `sar -n TCP,ETCP` with
//! the state counts of `ss -s`) and sockets (like `ss -tuanp`).

use crate::model::Sample;
use crate::model::filter::Where;
use crate::model::snmp;
use crate::model::sockets::{TCP_SYN_RECV, TCP_TIME_WAIT};
use crate::model::tcp_rates::TcpRates;
use crate::text::escape_control;
use std::io::{self, Write};

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

pub fn write_tcp(
    out: &mut impl Write,
    time: &str,
    previous: &Sample,
    current: &Sample,
) -> io::Result<()> {
    let (Some(tcp), Some(rates)) = (current.tcp.as_ref(), TcpRates::new(Some(previous), current))
    else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "{time}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>10} {:>6}",
        "active/s",
        "passive/s",
        "iseg/s",
        "oseg/s",
        "retrans/s",
        "%retrans",
        "lsnovf/s",
        "lsndrp/s",
        "cookie/s",
        "ESTAB",
        "SYN-RECV",
        "TIME-WAIT",
        "CLOSE-WAIT",
        "orphan"
    )?;
    writeln!(
        out,
        "{time}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>10} {:>6}",
        number(rates.rate(snmp::TCP_ACTIVE_OPENS)),
        number(rates.rate(snmp::TCP_PASSIVE_OPENS)),
        number(rates.rate(snmp::TCP_IN_SEGS)),
        number(rates.rate(snmp::TCP_OUT_SEGS)),
        number(rates.rate(snmp::TCP_RETRANS_SEGS)),
        number(rates.retrans_percent()),
        number(rates.rate(snmp::TCP_EXT_LISTEN_OVERFLOWS)),
        number(rates.rate(snmp::TCP_EXT_LISTEN_DROPS)),
        number(rates.rate(snmp::TCP_EXT_SYNCOOKIES_SENT)),
        tcp.state_count(1),
        tcp.state_count(TCP_SYN_RECV),
        tcp.state_count(TCP_TIME_WAIT),
        tcp.state_count(8),
        tcp.orphans,
    )?;
    writeln!(
        out,
        "{time}  udp: inerr/s {}  rcvbuf/s {}  sndbuf/s {}  unix sockets {}",
        number(rates.rate(snmp::UDP_IN_ERRORS)),
        number(rates.rate(snmp::UDP_RCVBUF_ERRORS)),
        number(rates.rate(snmp::UDP_SNDBUF_ERRORS)),
        tcp.unix_sockets
    )
}

pub fn write_sockets(
    out: &mut impl Write,
    time: &str,
    current: &Sample,
    filter: Where<'_>,
) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{time}  {:<5} {:<10} {:>8} {:>8} {:<47} {:<47} Process",
        "Netid", "State", "Recv-Q", "Send-Q", "Local Address:Port", "Peer Address:Port"
    )?;
    let kept = current.sockets.iter();
    for socket in kept.filter(|s| filter.keeps(s, current)) {
        let owner = if socket.users.is_empty() {
            if socket.owner_denied {
                "unknown (no permission)".to_string()
            } else if socket.owner_pending {
                "(looking)".to_string()
            } else {
                String::new()
            }
        } else {
            let users: Vec<String> = socket
                .users
                .iter()
                .map(|u| {
                    let process = escape_control(&u.process);
                    format!("(\"{process}\",pid={},fd={})", u.pid, u.fd)
                })
                .collect();
            format!("users:({})", users.join(","))
        };
        writeln!(
            out,
            "{time}  {:<5} {:<10} {:>8} {:>8} {:<47} {:<47} {owner}",
            socket.proto.name(),
            socket.state_name(),
            socket.recv_q,
            socket.send_q,
            socket.local_text(),
            socket.peer_text(),
        )?;
    }
    Ok(())
}

/// The processes holding sockets and their traffic, as nethogs lists them
/// (bytes per second over the interval; "-" when unknown).
pub fn write_processes(
    out: &mut impl Write,
    time: &str,
    previous: &Sample,
    current: &Sample,
    filter: Where<'_>,
) -> io::Result<()> {
    let rate = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"));
    writeln!(out)?;
    writeln!(
        out,
        "{time}  {:>7} {:<15} {:<10} {:>14} {:>14} {:>12} {:>7} Cgroup",
        "PID", "Command", "User", "TCP-sent-B/s", "TCP-recv-B/s", "UDP-B/s", "Sockets"
    )?;
    let rows = crate::model::processes::process_rows(Some(previous), current);
    for row in rows.iter().filter(|r| filter.keeps(*r, current)) {
        writeln!(
            out,
            "{time}  {:>7} {:<15} {:<10} {:>14} {:>14} {:>12} {:>7} {}",
            row.pid,
            escape_control(&row.command),
            escape_control(&row.user),
            rate(row.tcp_send_per_s),
            rate(row.tcp_recv_per_s),
            rate(row.udp_per_s),
            row.sockets,
            escape_control(row.place().as_deref().unwrap_or("-")),
        )?;
    }
    let lost = (current.closed.as_ref()).map_or(0, |c| c.lost_since(previous.closed.as_ref()));
    if lost > 0 {
        writeln!(out, "{time}  {}", crate::model::closed::lost_note(lost))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::closed::ClosedSample;
    use crate::model::filter::Expr;

    fn with_lost(mono: f64, lost: u64) -> Sample {
        Sample {
            mono,
            closed: Some(ClosedSample {
                lost,
                ..ClosedSample::default()
            }),
            ..Sample::default()
        }
    }

    /// Connection ends the kernel dropped in the interval are said under
    /// the processes, whose rates miss their last bytes; none, nothing.
    #[test]
    fn lost_connection_ends_are_said_under_the_processes() {
        let expr = Expr::default();
        let print = |previous: &Sample, current: &Sample| {
            let mut out = Vec::new();
            write_processes(&mut out, "t", previous, current, Where::new(&expr)).unwrap();
            String::from_utf8(out).unwrap()
        };
        let text = print(&with_lost(1.0, 3), &with_lost(2.0, 10));
        assert!(
            text.contains("t  7 connection ends lost (kernel queue full): TCP rates are too low"),
            "{text}"
        );
        assert!(!print(&with_lost(2.0, 10), &with_lost(3.0, 10)).contains("lost"));
    }
}
