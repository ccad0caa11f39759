//! The DNS tab's state: the monitor (probes can be added with `n`), the
//! selected server, and the figures folded from the samples in history
//! (computed once per shown sample, not once per frame).

use super::keymap::{Action, Key, Scope};
use super::view::{Reply, Shown, TabView};
use crate::dns::config::ResolverConfig;
use crate::dns::stats::{self, Stats};
use crate::dns::{DnsMonitor, DnsResult, Outcome};
use crate::model::Sample;

/// One sample's probes to one server, for the timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tick {
    /// No probe finished in that interval.
    Idle,
    /// The slowest answer, in ms.
    Answered(f64),
    /// A probe failed (the worst outcome).
    Failed(Outcome),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerRow {
    /// "probe" or "passive".
    pub source: &'static str,
    pub stats: Stats,
    /// Counts per bucket of `stats::BUCKETS_MS`, then slower.
    pub histogram: Vec<u64>,
    /// One tick per sample, oldest first (probe rows only).
    pub timeline: Vec<Tick>,
}

/// Everything the tab shows, over the samples in history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DnsSummary {
    pub config: Option<ResolverConfig>,
    pub servers: Vec<ServerRow>,
    pub names: Vec<Stats>,
    pub probe_specs: Vec<String>,
    pub probe_servers: Vec<String>,
    pub passive_on: bool,
    pub passive_error: Option<String>,
    pub timeout_s: f64,
    /// Seconds of history the figures cover.
    pub span_s: f64,
}

impl DnsSummary {
    /// Folds the DNS results of `samples` (oldest first).
    pub fn from_samples<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Self {
        let mut summary = Self::default();
        let mut probes: Vec<&DnsResult> = Vec::new();
        let mut passive: Vec<&DnsResult> = Vec::new();
        let mut per_sample: Vec<&[DnsResult]> = Vec::new();
        let (mut first, mut last) = (None, 0.0);
        for sample in samples {
            let Some(dns) = &sample.dns else { continue };
            first.get_or_insert(sample.t);
            last = sample.t;
            probes.extend(&dns.probes);
            passive.extend(&dns.passive);
            per_sample.push(&dns.probes);
            summary.config = Some(dns.config.clone());
            summary.probe_specs = dns.probe_specs.clone();
            summary.probe_servers = dns.servers.clone();
            summary.passive_on = dns.passive_on;
            summary.passive_error = dns.passive_error.clone();
            summary.timeout_s = dns.timeout_s;
        }
        summary.span_s = first.map_or(0.0, |f| last - f);
        let row = |stats: Stats, source| ServerRow {
            histogram: stats::histogram(&stats.latencies).to_vec(),
            timeline: if source == "probe" {
                per_sample.iter().map(|s| tick(s, &stats.key)).collect()
            } else {
                Vec::new()
            },
            source,
            stats,
        };
        summary.servers = stats::by_server(probes.iter().copied())
            .into_iter()
            .map(|s| row(s, "probe"))
            .chain(
                stats::by_server(passive.iter().copied())
                    .into_iter()
                    .map(|s| row(s, "passive")),
            )
            .collect();
        summary.names = stats::by_name(probes.into_iter().chain(passive));
        summary
    }
}

fn tick(results: &[DnsResult], server: &str) -> Tick {
    let mine = results.iter().filter(|r| r.server == server);
    let mut tick = Tick::Idle;
    for r in mine {
        tick = match (tick, r.outcome, r.latency_ms) {
            (Tick::Failed(worse), _, _) => Tick::Failed(worse),
            (_, Outcome::Ok, Some(ms)) => match tick {
                Tick::Answered(before) if before >= ms => tick,
                _ => Tick::Answered(ms),
            },
            (_, outcome, _) => Tick::Failed(outcome),
        };
    }
    tick
}

#[derive(Default)]
pub struct DnsView {
    /// None in replay (nothing is probed there).
    pub monitor: Option<DnsMonitor>,
    pub selected: usize,
    /// The probe being typed after `n`.
    pub prompt: Option<String>,
    /// The outcome of the last `n`.
    pub message: Option<String>,
    cache: Option<((Option<f64>, usize), DnsSummary)>,
}

impl DnsView {
    /// The summary for the samples up to the shown one; `key` identifies
    /// that set (shown sample time, history length).
    pub fn summary<'a>(
        &mut self,
        key: (Option<f64>, usize),
        samples: impl FnOnce() -> Vec<&'a Sample>,
    ) -> &DnsSummary {
        if self.cache.as_ref().is_none_or(|(k, _)| *k != key) {
            self.cache = Some((key, DnsSummary::from_samples(samples())));
        }
        let (_, summary) = self.cache.as_ref().expect("just set");
        if self.selected >= summary.servers.len() {
            self.selected = summary.servers.len().saturating_sub(1);
        }
        summary
    }

    /// Moves the server selection.
    pub fn handle(&mut self, action: Action, rows: usize) -> bool {
        let last = rows.saturating_sub(1);
        let before = self.selected;
        self.selected = match action {
            Action::Up => self.selected.saturating_sub(1),
            Action::Down => (self.selected + 1).min(last),
            Action::PageUp => self.selected.saturating_sub(10),
            Action::PageDown => (self.selected + 10).min(last),
            Action::Top => 0,
            Action::Bottom => last,
            _ => return false,
        };
        before != self.selected
    }

    /// `n`: start typing a probe.
    pub fn start_prompt(&mut self) -> bool {
        if self.monitor.is_none() {
            self.message = Some("no probes in replay: a recording is not re-probed".into());
        } else {
            self.prompt = Some(String::new());
            self.message = None;
        }
        true
    }

    /// A key while typing a probe: Enter adds it, Esc cancels.
    pub fn edit_prompt(&mut self, key: Key) -> bool {
        let Some(text) = self.prompt.as_mut() else {
            return false;
        };
        match key {
            key if super::line_edit::edit(text, key) => {}
            Key::Esc => self.prompt = None,
            Key::Enter => {
                let text = self.prompt.take().unwrap_or_default();
                if let Some(monitor) = self.monitor.as_mut() {
                    self.message = Some(match monitor.add_probe(&text) {
                        Ok(label) => format!("probing {label} from the next interval"),
                        Err(error) => error,
                    });
                }
            }
            _ => return false,
        }
        true
    }
}

impl DnsView {
    /// The DNS tab's figures over the samples up to the shown one (of the
    /// shown sample's namespace).
    pub fn summary_of(&mut self, shown: &Shown) -> &DnsSummary {
        let key = (shown.current().map(|s| s.mono), shown.history.len());
        self.summary(key, || shown.same_netns())
    }
}

impl TabView for DnsView {
    fn scope(&self) -> Scope {
        Scope::Dns
    }

    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        if action == Action::AddProbe {
            return Reply::Redraw(self.start_prompt());
        }
        let rows = self.summary_of(shown).servers.len();
        Reply::Redraw(self.handle(action, rows))
    }

    fn prompt_key(&mut self, key: Key) -> Option<bool> {
        self.prompt.is_some().then(|| self.edit_prompt(key))
    }
}
