//! connect-refused: connections refused at a rate. Two sides, from the
//! namespace's counters (the refused sockets themselves never outlive the
//! RST, so the socket table has nothing to show):
//!
//! - refused here: this host answers connection attempts with RSTs. Tcp
//!   OutRsts counts every RST sent; the ones an application caused by an
//!   abort are also counted as TcpExt TCPAbortOnData, TCPAbortOnClose,
//!   TCPAbortOnMemory or TCPAbortOnLinger, so what is left is RSTs the
//!   stack sent on its own: SYNs (or stray segments) to a port with no
//!   listener.
//! - refused there: local clients' connects fail. Tcp AttemptFails counts
//!   connections that died in SYN_SENT or SYN_RECV; the ones that timed out
//!   are also counted as TcpExt TCPAbortOnTimeout (connect-timeout's case),
//!   so what is left were refused (an RST, or an ICMP unreachable).

use super::{Evidence, Finding, Hold, Severity, Thresholds};
use crate::model::Sample;
use crate::model::tcp_rates::TcpRates;

pub const CONNECT_REFUSED: &str = "connect-refused";

/// The RSTs an application caused, each also counted in Tcp.OutRsts.
const ABORTS: [&str; 4] = [
    "TcpExt.TCPAbortOnData",
    "TcpExt.TCPAbortOnClose",
    "TcpExt.TCPAbortOnMemory",
    "TcpExt.TCPAbortOnLinger",
];

/// Per second: RSTs this host sent on its own, and connects of its own that
/// failed without timing out.
pub fn refused_rates(rates: &TcpRates) -> (f64, f64) {
    let rate = |name| rates.rate(name).unwrap_or(0.0);
    let aborts: f64 = ABORTS.iter().map(|name| rate(name)).sum();
    let here = (rate("Tcp.OutRsts") - aborts).max(0.0);
    let there = (rate("Tcp.AttemptFails") - rate("TcpExt.TCPAbortOnTimeout")).max(0.0);
    (here, there)
}

pub fn evaluate(
    previous: Option<&Sample>,
    current: &Sample,
    limits: &Thresholds,
) -> Option<Finding> {
    let rates = TcpRates::new(previous, current)?;
    let (here, there) = refused_rates(&rates);
    let warn = limits.connect_refused_warn_per_s;
    let (here_fires, there_fires) = (here >= warn && here > 0.0, there >= warn && there > 0.0);
    if !here_fires && !there_fires {
        return None;
    }
    let worst = if here_fires { here } else { 0.0 }.max(if there_fires { there } else { 0.0 });
    let severity = if worst >= limits.connect_refused_crit_per_s {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let opens = rates.rate("Tcp.PassiveOpens").unwrap_or(0.0);
    let mut parts = Vec::new();
    if here_fires {
        parts.push(format!(
            "this host refused {here:.0} connections/s (RSTs sent with no abort behind them: \
             Tcp OutRsts {:.0}/s; {opens:.0} accepted/s)",
            rates.rate("Tcp.OutRsts").unwrap_or(0.0)
        ));
    }
    if there_fires {
        parts.push(format!(
            "{there:.0} connects/s from here failed, refused (Tcp AttemptFails {:.0}/s, {:.0}/s of \
             them timeouts)",
            rates.rate("Tcp.AttemptFails").unwrap_or(0.0),
            rates.rate("TcpExt.TCPAbortOnTimeout").unwrap_or(0.0)
        ));
    }
    let hint = if here_fires {
        "nothing listens on the port the clients ask for: the service is down, crashed, or \
         listens on another address or port (compare `ss -ltnp` with where the clients connect; \
         a listener on 127.0.0.1 refuses other addresses); a capture (Flows tab) shows the \
         refused ports and peers"
    } else {
        "the servers these clients connect to refuse them (RST, or ICMP unreachable): the \
         service there is down or listens on another address or port; check the client's \
         configured address and `ss -ltnp` on the server; a capture (Flows tab) names them"
    };
    Some(Finding {
        hold: Hold::default(),
        id: CONNECT_REFUSED,
        severity,
        summary: parts.join("; "),
        hint: hint.into(),
        evidence: Evidence {
            tab: "tcp",
            row: if here_fires {
                "Tcp.OutRsts"
            } else {
                "Tcp.AttemptFails"
            }
            .into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::TcpSample;

    const D: Thresholds = Thresholds::DEFAULT;

    fn sample(mono: f64, counters: &[(&str, u64)]) -> Sample {
        let mut tcp = TcpSample::default();
        for name in [
            "Tcp.OutRsts",
            "Tcp.AttemptFails",
            "Tcp.PassiveOpens",
            "TcpExt.TCPAbortOnTimeout",
            "TcpExt.TCPAbortOnData",
            "TcpExt.TCPAbortOnClose",
            "TcpExt.TCPAbortOnMemory",
            "TcpExt.TCPAbortOnLinger",
        ] {
            tcp.counters.insert(name.into(), 0);
        }
        for (name, value) in counters {
            tcp.counters.insert(name.to_string(), *value);
        }
        Sample {
            mono,
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    #[test]
    fn rsts_without_aborts_are_refusals() {
        let a = sample(0.0, &[]);
        let b = sample(2.0, &[("Tcp.OutRsts", 400)]);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!(
            (found.id, found.severity),
            (CONNECT_REFUSED, Severity::Crit)
        );
        assert!(
            found
                .summary
                .starts_with("this host refused 200 connections/s"),
            "{}",
            found.summary
        );
        assert_eq!(found.evidence.row, "Tcp.OutRsts");
        // The same RSTs explained by aborts (linger 0, unread data): none.
        let c = sample(
            2.0,
            &[
                ("Tcp.OutRsts", 400),
                ("TcpExt.TCPAbortOnData", 300),
                ("TcpExt.TCPAbortOnClose", 100),
            ],
        );
        assert!(evaluate(Some(&a), &c, &D).is_none());
    }

    #[test]
    fn failed_connects_that_did_not_time_out_are_refusals() {
        let a = sample(0.0, &[]);
        let b = sample(1.0, &[("Tcp.AttemptFails", 20)]);
        let found = evaluate(Some(&a), &b, &D).unwrap();
        assert_eq!(found.severity, Severity::Warn);
        assert_eq!(found.evidence.row, "Tcp.AttemptFails");
        assert!(found.summary.starts_with("20 connects/s from here failed"));
        // Timeouts are connect-timeout's, not refusals.
        let c = sample(
            1.0,
            &[("Tcp.AttemptFails", 20), ("TcpExt.TCPAbortOnTimeout", 20)],
        );
        assert!(evaluate(Some(&a), &c, &D).is_none());
        // Under the threshold: quiet.
        let d = sample(1.0, &[("Tcp.AttemptFails", 2)]);
        assert!(evaluate(Some(&a), &d, &D).is_none());
    }
}
