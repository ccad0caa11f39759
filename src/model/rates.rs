//! Rate math: per-second rates from two raw samples.

use super::netdev::{self, LinkCounter};
use super::{Duplex, InterfaceSample, LinkCounters, Sample};

/// Per-second change of a monotonic counter. None when there is no usable
/// interval or the counter went backwards (a reset): a reset must never show
/// as a giant spike.
pub fn counter_rate(previous: u64, current: u64, seconds: f64) -> Option<f64> {
    if current < previous || seconds <= 0.0 || !seconds.is_finite() {
        return None;
    }
    Some((current - previous) as f64 / seconds)
}

/// Seconds between two samples, by the monotonic clock.
pub fn interval(previous: &Sample, current: &Sample) -> f64 {
    current.mono - previous.mono
}

/// The seconds between the two reads of namespace `netns`'s links and
/// counters: its own read times where the samples have them
/// (`NamespaceInfo::read_mono`, `Sample::links_mono` of a late link
/// dump), else the samples' times. A late dump's counters are an earlier
/// read's: over the same read the interval is 0, and no rate is taken.
pub fn links_interval(previous: &Sample, current: &Sample, netns: u16) -> f64 {
    let read_at = |sample: &Sample| {
        sample
            .namespaces
            .iter()
            .find(|n| n.id == netns)
            .and_then(|n| n.read_mono)
            .or(sample.links_mono)
            .unwrap_or(sample.mono)
    };
    read_at(current) - read_at(previous)
}

/// The seconds between two samples' socket dumps (`Sample::sockets_mono`),
/// over which per-socket counters moved; the samples' times where a
/// recording lacks them.
pub fn sockets_interval(previous: &Sample, current: &Sample) -> f64 {
    current.sockets_mono.unwrap_or(current.mono) - previous.sockets_mono.unwrap_or(previous.mono)
}

/// Per-second rates of one interface over one interval, of any counter
/// (`rate(&netdev::RX_ERRORS)`). Every rate is None when the interface is
/// new, was re-created (its index changed) or its counters went backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InterfaceRates {
    /// The counters at both ends and the seconds between; None: no rates.
    span: Option<(LinkCounters, LinkCounters, f64)>,
}

/// A reset of these means the whole counter block restarted.
const RESET_WITNESSES: [LinkCounter; 4] = [
    netdev::RX_PACKETS,
    netdev::TX_PACKETS,
    netdev::RX_BYTES,
    netdev::TX_BYTES,
];

impl InterfaceRates {
    pub fn between(previous: &LinkCounters, current: &LinkCounters, seconds: f64) -> Self {
        // A reset of the byte or packet counters means the whole counter
        // block restarted: trust none of it for this interval.
        let reset = RESET_WITNESSES
            .iter()
            .any(|c| c.of(current) < c.of(previous));
        Self {
            span: (!reset).then_some((*previous, *current, seconds)),
        }
    }

    /// The per-second rate of `counter`; None also when it went backwards.
    pub fn rate(&self, counter: &LinkCounter) -> Option<f64> {
        let (previous, current, seconds) = self.span.as_ref()?;
        counter_rate(counter.of(previous), counter.of(current), *seconds)
    }

    /// Rates of `current` against the same interface in `previous`: the same
    /// ifindex and name. A re-created interface gets a new index, so it
    /// starts without rates instead of with a spike.
    pub fn for_interface(
        previous: Option<&Sample>,
        current: &Sample,
        iface: &InterfaceSample,
    ) -> Self {
        let before = previous
            .and_then(|p| {
                p.interface_in(iface.netns, iface.index)
                    .map(|before| (p, before))
            })
            .filter(|(_, before)| before.name == iface.name);
        match before {
            Some((previous, before)) => Self::between(
                &before.counters,
                &iface.counters,
                links_interval(previous, current, iface.netns),
            ),
            None => Self::default(),
        }
    }

    /// Errors of every kind, both directions, per second.
    pub fn errors_total(&self) -> Option<f64> {
        self.sum([netdev::RX_ERRORS, netdev::TX_ERRORS])
    }

    pub fn dropped_total(&self) -> Option<f64> {
        self.sum([netdev::RX_DROPPED, netdev::TX_DROPPED])
    }

    /// Every error-like counter: errors, drops, overruns, carrier, collisions.
    pub fn trouble_total(&self) -> Option<f64> {
        self.sum([
            netdev::RX_ERRORS,
            netdev::TX_ERRORS,
            netdev::RX_DROPPED,
            netdev::TX_DROPPED,
            netdev::RX_OVER_ERRORS,
            netdev::TX_CARRIER_ERRORS,
            netdev::COLLISIONS,
        ])
    }

    /// The summed rates of `counters`; None when one is unknown.
    fn sum<const N: usize>(&self, counters: [LinkCounter; N]) -> Option<f64> {
        sum(counters.map(|c| self.rate(&c)))
    }
}

fn sum<const N: usize>(values: [Option<f64>; N]) -> Option<f64> {
    values
        .into_iter()
        .try_fold(0.0, |acc, v| v.map(|v| acc + v))
}

/// Sum of the known values; None only when none is known.
pub fn sum_known<const N: usize>(values: [Option<f64>; N]) -> Option<f64> {
    values.into_iter().flatten().reduce(|a, b| a + b)
}

/// %ifutil exactly as sar computes it: full duplex max(rx, tx)/speed, anything
/// else (rx + tx)/speed. None when the speed is unknown, never 0.
pub fn util_percent(
    rx_bytes_per_s: f64,
    tx_bytes_per_s: f64,
    speed_mbps: Option<u32>,
    duplex: Duplex,
) -> Option<f64> {
    let speed_bits = f64::from(speed_mbps.filter(|s| *s > 0)?) * 1_000_000.0;
    let bytes = match duplex {
        Duplex::Full => rx_bytes_per_s.max(tx_bytes_per_s),
        Duplex::Half | Duplex::Unknown => rx_bytes_per_s + tx_bytes_per_s,
    };
    Some(bytes * 8.0 * 100.0 / speed_bits)
}

/// Utilisation of one interface over an interval, from its rates.
pub fn interface_util(iface: &InterfaceSample, rates: &InterfaceRates) -> Option<f64> {
    util_percent(
        rates.rate(&netdev::RX_BYTES)?,
        rates.rate(&netdev::TX_BYTES)?,
        iface.link_speed(),
        iface.duplex,
    )
}

/// Host totals for the header: every interface except loopback.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostTotals {
    pub rx_bits: f64,
    pub tx_bits: f64,
    pub rx_packets: f64,
    pub tx_packets: f64,
}

pub fn host_totals(previous: Option<&Sample>, current: &Sample) -> Option<HostTotals> {
    previous?;
    let mut totals = HostTotals::default();
    for iface in current.interfaces.iter().filter(|i| !i.loopback) {
        let rates = InterfaceRates::for_interface(previous, current, iface);
        let rate = |counter| rates.rate(&counter).unwrap_or(0.0);
        totals.rx_bits += rate(netdev::RX_BYTES) * 8.0;
        totals.tx_bits += rate(netdev::TX_BYTES) * 8.0;
        totals.rx_packets += rate(netdev::RX_PACKETS);
        totals.tx_packets += rate(netdev::TX_PACKETS);
    }
    Some(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(rx_packets: u64, rx_bytes: u64) -> LinkCounters {
        LinkCounters {
            rx_packets,
            rx_bytes,
            ..Default::default()
        }
    }

    fn sample(mono: f64, ifaces: Vec<InterfaceSample>) -> Sample {
        Sample {
            t: 1_700_000_000.0 + mono,
            mono,
            netns: "host".into(),
            interfaces: ifaces,
            ..Default::default()
        }
    }

    fn iface(index: u32, name: &str, c: LinkCounters) -> InterfaceSample {
        InterfaceSample {
            index,
            name: name.into(),
            counters: c,
            ..Default::default()
        }
    }

    #[test]
    fn rate_is_delta_over_seconds() {
        assert_eq!(counter_rate(100, 350, 2.0), Some(125.0));
        assert_eq!(counter_rate(7, 7, 1.0), Some(0.0));
    }

    #[test]
    fn counter_going_backwards_is_no_rate() {
        assert_eq!(counter_rate(1_000_000, 10, 1.0), None);
    }

    #[test]
    fn zero_or_negative_interval_is_no_rate() {
        assert_eq!(counter_rate(1, 2, 0.0), None);
        assert_eq!(counter_rate(1, 2, -1.0), None);
        assert_eq!(counter_rate(1, 2, f64::NAN), None);
    }

    #[test]
    fn rates_near_u64_max_do_not_overflow() {
        assert_eq!(counter_rate(u64::MAX - 10, u64::MAX, 2.0), Some(5.0));
    }

    /// A late link dump leaves the sample an earlier read's counters: no
    /// rate over it (not a false 0), and the next read's rate is over the
    /// whole time since that earlier read.
    #[test]
    fn a_late_link_read_gives_no_rate_and_the_next_spans_both_ticks() {
        let first = sample(10.0, vec![iface(2, "eth0", counters(1_000, 100_000))]);
        let mut late = sample(11.0, first.interfaces.clone());
        late.links_mono = Some(10.0);
        let rates = InterfaceRates::for_interface(Some(&first), &late, &late.interfaces[0]);
        let rx = |r: &InterfaceRates| (r.rate(&netdev::RX_PACKETS), r.rate(&netdev::RX_BYTES));
        assert_eq!(rx(&rates), (None, None));
        let next = sample(12.0, vec![iface(2, "eth0", counters(3_000, 500_000))]);
        let rates = InterfaceRates::for_interface(Some(&late), &next, &next.interfaces[0]);
        assert_eq!(rx(&rates), (Some(1_000.0), Some(200_000.0)));
    }

    #[test]
    fn recreated_interface_gets_no_rates() {
        let before = sample(0.0, vec![iface(5, "veth0", counters(1_000_000, 9_000_000))]);
        // Same name, new index: the interface was deleted and added again.
        let after = sample(
            1.0,
            vec![iface(9, "veth0", counters(2_000_000, 99_000_000))],
        );
        let rates = InterfaceRates::for_interface(Some(&before), &after, &after.interfaces[0]);
        assert_eq!(rates, InterfaceRates::default());
    }

    #[test]
    fn counter_reset_on_same_index_blanks_the_interval() {
        let before = sample(0.0, vec![iface(5, "eth0", counters(1_000_000, 9_000_000))]);
        let after = sample(1.0, vec![iface(5, "eth0", counters(10, 900))]);
        let rates = InterfaceRates::for_interface(Some(&before), &after, &after.interfaces[0]);
        assert_eq!(rates.rate(&netdev::RX_PACKETS), None);
        assert_eq!(rates.rate(&netdev::RX_BYTES), None);
        assert_eq!(rates.errors_total(), None);
    }

    #[test]
    fn new_interface_has_no_rates_and_next_interval_does() {
        let first = sample(0.0, vec![]);
        let second = sample(1.0, vec![iface(3, "d1", counters(10, 1000))]);
        let third = sample(3.0, vec![iface(3, "d1", counters(30, 5000))]);
        let r = InterfaceRates::for_interface(Some(&first), &second, &second.interfaces[0]);
        assert_eq!(r.rate(&netdev::RX_PACKETS), None);
        let r = InterfaceRates::for_interface(Some(&second), &third, &third.interfaces[0]);
        assert_eq!(r.rate(&netdev::RX_PACKETS), Some(10.0));
        assert_eq!(r.rate(&netdev::RX_BYTES), Some(2000.0));
    }

    #[test]
    fn util_follows_sar() {
        // 1 Gb/s full duplex: 62.5 MB/s one way is 50 %.
        let full = util_percent(62_500_000.0, 1_000.0, Some(1000), Duplex::Full);
        assert!((full.unwrap() - 50.0).abs() < 1e-9);
        // Half duplex adds both directions.
        let half = util_percent(62_500_000.0, 62_500_000.0, Some(1000), Duplex::Half);
        assert!((half.unwrap() - 100.0).abs() < 1e-9);
        // Unknown speed is unknown, never 0.
        assert_eq!(util_percent(1.0, 1.0, None, Duplex::Full), None);
        assert_eq!(util_percent(1.0, 1.0, Some(0), Duplex::Full), None);
    }

    #[test]
    fn host_totals_skip_loopback() {
        let mut lo = iface(1, "lo", counters(0, 0));
        lo.loopback = true;
        let before = sample(0.0, vec![lo.clone(), iface(2, "eth0", counters(0, 0))]);
        lo.counters = counters(500, 500_000);
        let after = sample(1.0, vec![lo, iface(2, "eth0", counters(10, 1250))]);
        let totals = host_totals(Some(&before), &after).unwrap();
        assert_eq!(totals.rx_packets, 10.0);
        assert_eq!(totals.rx_bits, 10_000.0);
        assert!(host_totals(None, &after).is_none());
    }
}

/// Per-second rates of an interface's root qdisc over one interval, and its
/// backlog one sample earlier. Every rate is None when the interface or its
/// qdisc is new (a replaced qdisc has a new handle or kind and restarts its
/// counters), or a counter went backwards.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QdiscRates {
    pub bytes: Option<f64>,
    pub packets: Option<f64>,
    pub drops: Option<f64>,
    pub overlimits: Option<f64>,
    pub requeues: Option<f64>,
    /// The backlog in packets one sample earlier (None: not known).
    pub backlog_packets_before: Option<u64>,
}

impl QdiscRates {
    pub fn for_interface(
        previous: Option<&Sample>,
        current: &Sample,
        iface: &InterfaceSample,
    ) -> Self {
        let Some(now) = &iface.qdisc else {
            return Self::default();
        };
        let before = previous.and_then(|p| {
            p.interface_in(iface.netns, iface.index)
                .filter(|b| b.name == iface.name)
                .and_then(|b| b.qdisc.as_ref())
                .filter(|q| q.kind == now.kind && q.handle == now.handle)
                .map(|q| (q, links_interval(p, current, iface.netns)))
        });
        let Some((before, seconds)) = before else {
            return Self::default();
        };
        Self {
            bytes: counter_rate(before.bytes, now.bytes, seconds),
            packets: counter_rate(before.packets, now.packets, seconds),
            drops: counter_rate(before.drops, now.drops, seconds),
            overlimits: counter_rate(before.overlimits, now.overlimits, seconds),
            requeues: counter_rate(before.requeues, now.requeues, seconds),
            backlog_packets_before: Some(before.backlog_packets),
        }
    }
}
