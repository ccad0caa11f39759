//! The run the Load tab's form describes: its text through the parsers
//! the command line uses, so the form takes what `netlens load` takes.

use super::{Kind, LoadView, TICK};
use crate::load::{self, Spec};
use crate::units::{parse_duration, parse_rate, parse_request_rate};
use std::time::Duration;

/// The longest a pktgen run from the tab may take (as the command line's
/// default); its count usually ends it first.
const PKTGEN_CAP: Duration = Duration::from_secs(60);

impl LoadView {
    /// Builds the run the form describes.
    pub fn spec(&self) -> Result<Spec, String> {
        let duration = parse_duration(&self.duration).map_err(|e| format!("duration: {e}"))?;
        load::check_duration(duration).map_err(|e| format!("duration: {e}"))?;
        let connections = || -> Result<u32, String> {
            match self.connections.trim().parse::<u32>() {
                Ok(n) if (1..=10_000).contains(&n) => Ok(n),
                _ => Err(format!(
                    "conns: '{}' is not a number from 1 to 10000",
                    self.connections
                )),
            }
        };
        let addr = || load::resolve(&self.target).map_err(|e| format!("target: {e:#}"));
        Ok(match self.kind {
            Kind::Tcp => Spec::Tcp(load::tcp::TcpSpec {
                to: addr()?,
                duration,
                streams: connections()?.min(128),
                bitrate: parse_rate(&self.rate).map_err(|e| format!("rate: {e}"))?,
                reverse: false,
                interval: TICK,
            }),
            Kind::Udp => Spec::Udp(load::udp::UdpSpec {
                to: addr()?,
                duration,
                bitrate: parse_rate(&self.rate).map_err(|e| format!("rate: {e}"))?,
                size: 1400,
                interval: TICK,
            }),
            Kind::Http => Spec::Http(
                load::http::HttpSpec::new(
                    &self.target,
                    connections()?,
                    duration,
                    2,
                    Duration::from_secs(2),
                    parse_request_rate(&self.rate).map_err(|e| format!("rate: {e}"))?,
                    TICK,
                )
                .map_err(|e| format!("target: {e:#}"))?,
            ),
            Kind::Pktgen => Spec::Pktgen(self.pktgen_spec()?),
            Kind::Probe => {
                let rate = parse_request_rate(&self.rate).map_err(|e| format!("rate: {e}"))?;
                if !(0.01..=1000.0).contains(&rate) {
                    return Err("rate: probes per second, from 0.01 to 1000".into());
                }
                let count = (duration.as_secs_f64() * rate).ceil().clamp(1.0, 100_000.0) as u32;
                Spec::Probe(load::probe::ProbeSpec {
                    to: addr()?,
                    count,
                    every: Duration::from_secs_f64(1.0 / rate),
                    timeout: Duration::from_secs(1),
                })
            }
        })
    }

    fn pktgen_spec(&self) -> Result<load::pktgen::PktgenSpec, String> {
        let p = &self.pktgen;
        fn number<T: std::str::FromStr + PartialOrd>(
            name: &str,
            text: &str,
            range: std::ops::RangeInclusive<T>,
            what: &str,
        ) -> Result<T, String> {
            match text.trim().parse::<T>() {
                Ok(n) if range.contains(&n) => Ok(n),
                _ => Err(format!("{name}: '{text}' is not {what}")),
            }
        }
        if p.dev.trim().is_empty() {
            return Err("dev: give the interface pktgen sends on".into());
        }
        Ok(load::pktgen::PktgenSpec {
            root: self.pktgen_root.clone(),
            dev: p.dev.trim().to_string(),
            dst: p
                .dst
                .trim()
                .parse()
                .map_err(|_| format!("dst: '{}' is not an IP address", p.dst))?,
            dst_mac: load::pktgen::parse_mac(&p.dst_mac).map_err(|e| format!("dst-mac: {e:#}"))?,
            count: number(
                "count",
                &p.count,
                1..=1_000_000_000,
                "a packet count from 1 to 1000000000",
            )?,
            size: number("size", &p.size, 42..=9000, "a size from 42 to 9000 bytes")?,
            delay_ns: number("delay", &p.delay, 0..=u64::MAX, "a delay in ns")?,
            threads: number("threads", &p.threads, 1..=64, "a thread count from 1 to 64")?,
            clone_skb: 0,
            duration: PKTGEN_CAP,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::keymap::{Action, Key};

    #[test]
    fn form_builds_specs_and_rejects_bad_input() {
        let mut view = LoadView::default();
        assert!(matches!(view.spec(), Ok(Spec::Tcp(_))));
        view.duration = "2h".into();
        assert!(view.spec().unwrap_err().starts_with("duration"));
        view.duration = "1s".into();
        view.rate = "fast".into();
        assert!(view.spec().unwrap_err().starts_with("rate"));
        view.rate = "0".into();
        view.target = "nowhere".into();
        assert!(view.spec().unwrap_err().starts_with("target"));
        view.target = "127.0.0.1:80".into();
        view.cycle(true);
        view.cycle(true);
        assert_eq!(view.kind, Kind::Http);
        assert_eq!(view.target, "http://127.0.0.1:80/");
        assert!(matches!(view.spec(), Ok(Spec::Http(_))));
        view.cycle(true);
        assert_eq!(
            (view.kind, view.target.as_str()),
            (Kind::Probe, "127.0.0.1:80")
        );
        let Ok(Spec::Probe(probe)) = view.spec() else {
            panic!("probe spec")
        };
        assert_eq!(probe.count, 1);
    }

    #[test]
    fn pktgen_form_builds_its_spec_or_offers_udp() {
        let mut view = LoadView::default();
        view.pktgen_root = std::env::temp_dir().join("netlens-no-pktgen-here");
        view.set_kind(Kind::Pktgen);
        assert_eq!(view.fields().len(), 8);
        let Ok(Spec::Pktgen(spec)) = view.spec() else {
            panic!("pktgen spec")
        };
        assert_eq!((spec.count, spec.size, spec.threads), (100_000, 60, 1));
        assert_eq!(spec.root, view.pktgen_root);
        view.pktgen.dst_mac = "02:00".into();
        assert!(view.spec().unwrap_err().starts_with("dst-mac"));
        view.pktgen.dst_mac = "02:00:00:00:00:02".into();
        view.pktgen.threads = "0".into();
        assert!(view.spec().unwrap_err().starts_with("threads"));
        view.pktgen.threads = "2".into();
        // The last field selected, then back to a kind with fewer fields.
        view.handle(Action::Bottom, Key::End);
        assert_eq!(view.field, 7);
        // No module: r offers udp to the same destination instead.
        assert!(view.pktgen_missing().is_some());
        view.handle(Action::Start, Key::Char('r'));
        assert!(view.running.is_none() && view.confirm.is_none());
        assert_eq!(view.kind, Kind::Udp);
        assert_eq!(view.target, "198.18.0.2:5201");
        assert!(view.field < view.fields().len());
        assert!(view.error.as_deref().unwrap_or("").contains("udp"));
    }
}
