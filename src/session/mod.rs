//! One watching session: the sampler, the packet capture and the DNS
//! monitor for a target, started in one order, and every sample filled in
//! the same way (capture summary, each flow's owning process, DNS results).
//! The live view, `snapshot`, `record` and `export` all start here, so what
//! a sample carries cannot differ between them. (Replay reads samples that
//! were filled when they were recorded.)

pub mod stop;

use crate::capture::live::{Capture, CaptureEvent, CaptureOptions};
use crate::collect::netns::Target;
use crate::collect::{Demand, Sampler, SamplerEvent};
use crate::dns::{DnsMonitor, DnsOptions};
use crate::model::Sample;
use anyhow::Result;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// What to watch and how.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub target: Target,
    pub interval: Duration,
    /// The packet capture; None: none at all (export).
    pub capture: Option<CaptureOptions>,
    pub dns: DnsOptions,
    /// Dump the conntrack entries from the first sample on (a recording
    /// replays the Conntrack tab's list too).
    pub conntrack_entries: bool,
    /// Look up the sockets' owners (false: nothing shown names a process).
    pub owners: bool,
    /// Read the firewall's rules every sample, not only while the
    /// namespace has NETFILTER_DROP drops (snapshot's drops section).
    pub firewall_rules: bool,
    /// The first sample is only the baseline for rates and is not shown
    /// (snapshot, export): it takes no DNS results, which stay for the next.
    pub first_is_baseline: bool,
    /// Count the kernel's drop reasons with the eBPF program (false:
    /// `--no-bpf`; each sample's drops then say so).
    pub drop_reasons: bool,
    /// `--all-netns`: every network namespace, the target's first.
    pub all_netns: bool,
    /// Whether the first sample waits for the eBPF programs (the live
    /// view's does not).
    pub start: crate::collect::Start,
}

/// Writes each filled sample somewhere (a recording): `previous` is the
/// sample before it, for the findings.
pub trait Sink {
    fn write(&mut self, previous: Option<&Sample>, sample: &mut Sample) -> Result<()>;
}

/// A running session: a source of filled-in samples. Dropping it stops
/// the DNS probes, the capture and the sampler.
pub struct Session {
    dns: DnsMonitor,
    capture: Option<Capture>,
    packets: Option<UnboundedReceiver<CaptureEvent>>,
    sampler: Sampler,
    events: UnboundedReceiver<SamplerEvent>,
    label: String,
    /// Whether the next sample is the baseline (takes no DNS results).
    baseline: bool,
}

/// A session taken apart, for the live view, whose App owns the capture
/// and the DNS monitor (it changes the filter and adds probes) and fills
/// each sample with [`fill`].
pub struct Parts {
    pub sampler: Sampler,
    pub samples: UnboundedReceiver<SamplerEvent>,
    pub capture: Option<Capture>,
    /// The capture's events: a flow screen's packets to take, capture
    /// stopped (printed lines wait in the capture: `take_lines`).
    pub packets: Option<UnboundedReceiver<CaptureEvent>>,
    pub dns: DnsMonitor,
}

impl Session {
    /// Starts the sampler (a bad namespace is an error here, before
    /// anything else), the capture (a bad filter or interface is an error;
    /// a missing privilege is not: the capture says why it is off) and the
    /// DNS monitor (a bad --dns-probe or --dns-server is an error).
    pub fn start(options: &SessionOptions) -> Result<Self> {
        let demand = Arc::new(Demand::default());
        demand.set_conntrack_entries(options.conntrack_entries);
        demand.set_all_netns(options.all_netns);
        demand.set_firewall_rules(options.firewall_rules);
        demand.set_no_owners(!options.owners);
        demand.set_no_flow_counts(options.capture.as_ref().is_none_or(|c| c.off));
        let (sampler, events) = Sampler::spawn_with(
            options.target.clone(),
            options.interval,
            demand,
            if options.drop_reasons {
                crate::collect::Bpf::All
            } else {
                crate::collect::Bpf::Off
            },
            options.start,
        )?;
        let (capture, packets) = match &options.capture {
            Some(args) => crate::capture::live::start(&options.target, args)?,
            None => (None, None),
        };
        let dns = DnsMonitor::start(&options.target, &options.dns, options.interval)?;
        dns.attach(capture.as_ref());
        Ok(Self {
            dns,
            capture,
            packets,
            sampler,
            events,
            label: options.target.label().to_string(),
            baseline: options.first_is_baseline,
        })
    }

    /// The watched namespace's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn capture(&self) -> Option<&Capture> {
        self.capture.as_ref()
    }

    /// The flags that ask the sampler for costly collections.
    pub fn demand(&self) -> Arc<Demand> {
        self.sampler.demand()
    }

    /// The next sample, filled in, or a sampler error; None once the
    /// sampler stopped.
    pub async fn next(&mut self) -> Option<SamplerEvent> {
        let event = self.events.recv().await;
        self.filled(event)
    }

    fn filled(&mut self, event: Option<SamplerEvent>) -> Option<SamplerEvent> {
        let mut event = event?;
        if let SamplerEvent::Sample(sample) = &mut event {
            let take_dns = !std::mem::take(&mut self.baseline);
            fill(
                sample,
                self.capture.as_ref(),
                Some(&self.dns).filter(|_| take_dns),
            );
        }
        Some(event)
    }

    pub fn into_parts(self) -> Parts {
        Parts {
            sampler: self.sampler,
            samples: self.events,
            capture: self.capture,
            packets: self.packets,
            dns: self.dns,
        }
    }
}

/// Fills a fresh sample from the sampler: the capture's summary with each
/// flow's owning process (from the sample's socket table), and the DNS
/// results since the last call (None: leave them for the next sample).
pub fn fill(sample: &mut Sample, capture: Option<&Capture>, dns: Option<&DnsMonitor>) {
    if let Some(capture) = capture {
        if let Some(kernel) = &sample.flow_counts {
            let all = kernel.counts_all_of(capture.iface());
            capture.set_kernel_counts(all, kernel.not_counted_packets);
        }
        let mut summary = capture.summary();
        if let Some(kernel) = sample.flow_counts.take() {
            // To the millisecond, so that an idle flow's times are the same
            // from sample to sample (and the samples share it).
            let mono_to_wall = ((sample.t - sample.mono) * 1000.0).round() / 1000.0;
            crate::model::flow_counts::merge(&mut summary, &kernel, mono_to_wall);
        }
        crate::model::capture::join_owners(&mut summary.flows, &sample.sockets);
        sample.capture = Some(summary);
    }
    // Folded into the capture's flows or of no use (no capture): never kept
    // (the history holds samples for minutes; the kernel lists up to
    // ~80,000 flows).
    sample.flow_counts = None;
    if let Some(dns) = dns {
        sample.dns = Some(dns.sample(capture));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a capture the kernel's flow list has nowhere to go: a
    /// sample kept for minutes in the history must not carry it.
    #[test]
    fn kernel_flow_counts_are_not_kept_without_a_capture() {
        let mut sample = Sample {
            flow_counts: Some(crate::model::flow_counts::KernelFlows::default()),
            ..Sample::default()
        };
        fill(&mut sample, None, None);
        assert!(sample.flow_counts.is_none());
    }
}
