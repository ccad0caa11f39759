//! Per-second rates of the TCP/UDP stack counters between two samples.

use super::Sample;
use super::rates::{counter_rate, interval};
use super::snmp;
use super::sockets::TcpSample;

/// Rates of the stack counters over one interval.
#[derive(Debug, Clone, Copy)]
pub struct TcpRates<'a> {
    previous: Option<&'a TcpSample>,
    current: &'a TcpSample,
    seconds: f64,
}

impl<'a> TcpRates<'a> {
    pub fn new(previous: Option<&'a Sample>, current: &'a Sample) -> Option<Self> {
        let now = current.tcp.as_ref()?;
        Some(Self {
            previous: previous.and_then(|p| p.tcp.as_ref()),
            current: now,
            seconds: previous.map_or(0.0, |p| interval(p, current)),
        })
    }

    pub fn between(previous: Option<&'a TcpSample>, current: &'a TcpSample, seconds: f64) -> Self {
        Self {
            previous,
            current,
            seconds,
        }
    }

    /// Per-second change of one counter ("Tcp.RetransSegs"); None without an
    /// earlier sample or after a reset.
    pub fn rate(&self, name: &str) -> Option<f64> {
        let before = self.previous?.counter(name)?;
        counter_rate(before, self.current.counter(name)?, self.seconds)
    }

    /// Change of one counter over the interval (not per second).
    pub fn delta(&self, name: &str) -> Option<u64> {
        let before = self.previous?.counter(name)?;
        self.current.counter(name)?.checked_sub(before)
    }

    /// Retransmitted segments as a percentage of segments sent, over the
    /// interval (as `nstat` would give it: RetransSegs / OutSegs).
    pub fn retrans_percent(&self) -> Option<f64> {
        let retrans = self.delta(snmp::TCP_RETRANS_SEGS)?;
        let out = self.delta(snmp::TCP_OUT_SEGS)?;
        (out > 0).then(|| retrans as f64 * 100.0 / out as f64)
    }

    pub fn current(&self) -> &TcpSample {
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(retrans: u64, out: u64) -> Sample {
        let mut tcp = TcpSample::default();
        tcp.counters.insert(snmp::TCP_RETRANS_SEGS.into(), retrans);
        tcp.counters.insert(snmp::TCP_OUT_SEGS.into(), out);
        Sample {
            tcp: Some(tcp),
            ..Default::default()
        }
    }

    #[test]
    fn rates_and_retransmit_percent() {
        let mut a = tcp(10, 1000);
        a.mono = 1.0;
        let mut b = tcp(30, 1400);
        b.mono = 3.0;
        let rates = TcpRates::new(Some(&a), &b).unwrap();
        assert_eq!(rates.rate(snmp::TCP_RETRANS_SEGS), Some(10.0));
        assert_eq!(rates.rate(snmp::TCP_OUT_SEGS), Some(200.0));
        assert_eq!(rates.retrans_percent(), Some(5.0));
        assert_eq!(rates.rate("Tcp.Missing"), None);
    }

    #[test]
    fn reset_or_first_sample_has_no_rate() {
        let b = tcp(30, 1400);
        assert_eq!(
            TcpRates::new(None, &b).unwrap().rate(snmp::TCP_OUT_SEGS),
            None
        );
        let mut a = tcp(50, 2000);
        a.mono = 0.0;
        let mut b = b;
        b.mono = 1.0;
        let rates = TcpRates::new(Some(&a), &b).unwrap();
        assert_eq!(rates.rate(snmp::TCP_OUT_SEGS), None);
        assert_eq!(rates.retrans_percent(), None);
    }
}
