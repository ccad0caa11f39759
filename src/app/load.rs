//! The Load tab's state: the form, the running load and the past runs.
//! A run goes on its own thread and reports over a channel the event loop
//! waits on; nothing here blocks. Rendering lives in ui/load.rs.

use super::keymap::{Action, Key};
use crate::collect::netns;
use crate::load::{self, Interval, Outcome, Spec, Stop};
use crate::units::{parse_duration, parse_rate, parse_request_rate};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// How often a run in the tab reports: the chart's step and the redraw rate.
pub const TICK: Duration = Duration::from_millis(250);
/// Past runs kept.
const HISTORY: usize = 50;
/// Chart points kept per run.
const POINTS: usize = 600;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tcp,
    Udp,
    Http,
    Probe,
    Pktgen,
}

pub const KINDS: [Kind; 5] = [Kind::Tcp, Kind::Udp, Kind::Http, Kind::Probe, Kind::Pktgen];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tcp => "tcp",
            Kind::Udp => "udp",
            Kind::Http => "http",
            Kind::Probe => "probe",
            Kind::Pktgen => "pktgen",
        }
    }

    /// What the rate field means for this kind.
    pub fn rate_unit(self) -> &'static str {
        match self {
            Kind::Tcp | Kind::Udp => "bits/s, 0 = max",
            Kind::Http => "req/s, 0 = max",
            Kind::Probe => "probes/s",
            Kind::Pktgen => "",
        }
    }

    /// What the connections field means, if anything.
    pub fn connections_unit(self) -> Option<&'static str> {
        match self {
            Kind::Tcp => Some("streams"),
            Kind::Http => Some("connections"),
            Kind::Udp | Kind::Probe | Kind::Pktgen => None,
        }
    }

    /// The unit of the chart's values.
    pub fn chart_unit(self) -> &'static str {
        match self {
            Kind::Tcp | Kind::Udp => "bits/s",
            Kind::Http => "req/s",
            Kind::Probe => "ms",
            Kind::Pktgen => "pps",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Kind,
    Target,
    Duration,
    Rate,
    Connections,
    // pktgen's own, as `netlens load pktgen` takes them.
    Dev,
    Dst,
    DstMac,
    Count,
    Size,
    Delay,
    Threads,
}

/// The form of the socket kinds (tcp, udp, http, probe).
const FIELDS: [Field; 5] = [
    Field::Kind,
    Field::Target,
    Field::Duration,
    Field::Rate,
    Field::Connections,
];

/// The form of pktgen: no target or rate, a device and a packet count.
const PKTGEN_FIELDS: [Field; 8] = [
    Field::Kind,
    Field::Dev,
    Field::Dst,
    Field::DstMac,
    Field::Count,
    Field::Size,
    Field::Delay,
    Field::Threads,
];

/// The longest a pktgen run from the tab may take (as the command line's
/// default); its count usually ends it first.
const PKTGEN_CAP: Duration = Duration::from_secs(60);

impl Field {
    pub fn label(self) -> &'static str {
        match self {
            Field::Kind => "kind",
            Field::Target => "target",
            Field::Duration => "duration",
            Field::Rate => "rate",
            Field::Connections => "conns",
            Field::Dev => "dev",
            Field::Dst => "dst",
            Field::DstMac => "dst-mac",
            Field::Count => "count",
            Field::Size => "size",
            Field::Delay => "delay",
            Field::Threads => "threads",
        }
    }

    /// The unit shown after the value, if any.
    pub fn unit(self, kind: Kind) -> &'static str {
        match self {
            Field::Rate => kind.rate_unit(),
            Field::Connections => kind.connections_unit().unwrap_or(""),
            Field::Count => "packets/thread",
            Field::Size => "bytes",
            Field::Delay => "ns",
            _ => "",
        }
    }
}

/// What a run sends back to the event loop.
#[derive(Debug)]
pub enum LoadEvent {
    Interval(u64, Interval),
    Done(u64, Result<Outcome, String>),
}

pub struct Running {
    pub id: u64,
    pub kind: Kind,
    pub target: String,
    pub started: Instant,
    pub planned: Duration,
    pub stop: Stop,
    /// Chart points (the kind's headline value per tick).
    pub series: Vec<f64>,
    /// The latest interval's text line.
    pub last: Option<String>,
    /// Every interval's text line so far (the newest last), as the command
    /// line would print them.
    pub log: Vec<String>,
    pub stopping: bool,
}

impl Running {
    /// Fraction done, 0 to 1.
    pub fn progress(&self) -> f64 {
        (self.started.elapsed().as_secs_f64() / self.planned.as_secs_f64().max(1e-3))
            .clamp(0.0, 1.0)
    }
}

pub struct PastRun {
    pub id: u64,
    pub kind: Kind,
    pub target: String,
    /// One line: the outcome's headline, or the error.
    pub headline: String,
    /// The summary as text, or the error.
    pub text: String,
    pub ok: bool,
    pub series: Vec<f64>,
}

/// The pktgen form's fields, as typed.
pub struct PktgenForm {
    pub dev: String,
    pub dst: String,
    pub dst_mac: String,
    pub count: String,
    pub size: String,
    pub delay: String,
    pub threads: String,
}

impl Default for PktgenForm {
    fn default() -> Self {
        Self {
            dev: "veth0".into(),
            dst: "198.18.0.2".into(),
            dst_mac: "02:00:00:00:00:02".into(),
            count: "100000".into(),
            size: "60".into(),
            delay: "0".into(),
            threads: "1".into(),
        }
    }
}

pub struct LoadView {
    pub kind: Kind,
    pub target: String,
    pub duration: String,
    pub rate: String,
    pub connections: String,
    pub pktgen: PktgenForm,
    /// Where pktgen's control files are: /proc/net/pktgen (tests: a scratch
    /// directory standing in for it).
    pub pktgen_root: PathBuf,
    pub field: usize,
    /// The text being typed into the selected field.
    pub editing: Option<String>,
    /// A run waiting for "y": its target is not on loopback.
    pub confirm: Option<(Spec, String)>,
    pub running: Option<Running>,
    /// Newest first.
    pub runs: Vec<PastRun>,
    /// Why the form could not start a run.
    pub error: Option<String>,
    /// Why the value being typed is refused (shown by the field).
    pub field_error: Option<String>,
    /// The namespace being watched (`--netns`/`--pid`): runs happen there,
    /// so their traffic shows in the other tabs, as `netlens load --netns`.
    pub netns: Option<(Arc<File>, String)>,
    next_id: u64,
    sender: UnboundedSender<LoadEvent>,
    receiver: Option<UnboundedReceiver<LoadEvent>>,
}

impl Default for LoadView {
    fn default() -> Self {
        let (sender, receiver) = unbounded_channel();
        Self {
            kind: Kind::Tcp,
            target: "127.0.0.1:5201".into(),
            duration: "10s".into(),
            rate: "0".into(),
            connections: "1".into(),
            pktgen: PktgenForm::default(),
            pktgen_root: PathBuf::from(load::pktgen::PROC_ROOT),
            field: 0,
            editing: None,
            confirm: None,
            running: None,
            runs: Vec::new(),
            error: None,
            field_error: None,
            netns: None,
            next_id: 1,
            sender,
            receiver: Some(receiver),
        }
    }
}

impl Drop for LoadView {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            running.stop.stop();
        }
    }
}

impl LoadView {
    /// The channel runs report on, for the event loop (taken once).
    pub fn take_events(&mut self) -> Option<UnboundedReceiver<LoadEvent>> {
        self.receiver.take()
    }

    /// The form's fields for the chosen kind.
    pub fn fields(&self) -> &'static [Field] {
        match self.kind {
            Kind::Pktgen => &PKTGEN_FIELDS,
            _ => &FIELDS,
        }
    }

    /// None when pktgen can run here; otherwise why not and what to do (a
    /// short form of `netlens load pktgen`'s message, which also names the
    /// kernel release).
    pub fn pktgen_missing(&self) -> Option<String> {
        (!self.pktgen_root.join("pgctrl").exists()).then(|| {
            "pktgen is not available: no /proc/net/pktgen. It needs a kernel with \
             CONFIG_NET_PKTGEN (=m, then `modprobe pktgen` as root)."
                .to_string()
        })
    }

    pub fn value(&self, field: Field) -> String {
        let p = &self.pktgen;
        match field {
            Field::Kind => self.kind.name().to_string(),
            Field::Target => self.target.clone(),
            Field::Duration => self.duration.clone(),
            Field::Rate => self.rate.clone(),
            Field::Connections => self.connections.clone(),
            Field::Dev => p.dev.clone(),
            Field::Dst => p.dst.clone(),
            Field::DstMac => p.dst_mac.clone(),
            Field::Count => p.count.clone(),
            Field::Size => p.size.clone(),
            Field::Delay => p.delay.clone(),
            Field::Threads => p.threads.clone(),
        }
    }

    fn set(&mut self, field: Field, value: String) {
        match field {
            Field::Kind => {}
            Field::Target => self.target = value,
            Field::Duration => self.duration = value,
            Field::Rate => self.rate = value,
            Field::Connections => self.connections = value,
            Field::Dev => self.pktgen.dev = value,
            Field::Dst => self.pktgen.dst = value,
            Field::DstMac => self.pktgen.dst_mac = value,
            Field::Count => self.pktgen.count = value,
            Field::Size => self.pktgen.size = value,
            Field::Delay => self.pktgen.delay = value,
            Field::Threads => self.pktgen.threads = value,
        }
    }

    /// Checks `text` as the value of `field` with the parsers a run uses
    /// (the command line's): the form with it must not fail on that field.
    /// Errors from other fields do not count here; they have been checked
    /// when they were entered.
    fn check(&mut self, field: Field, text: &str) -> Result<(), String> {
        let old = self.value(field);
        self.set(field, text.to_string());
        let result = match self.spec() {
            Err(error) if error.starts_with(&format!("{}: ", field.label())) => Err(error),
            _ => Ok(()),
        };
        self.set(field, old);
        result
    }

    /// True while keys go to the field editor or the confirmation prompt.
    pub fn modal(&self) -> bool {
        self.editing.is_some() || self.confirm.is_some()
    }

    /// Raw keys while modal; returns whether to redraw.
    pub fn on_modal_key(&mut self, key: Key) -> bool {
        if let Some((spec, _)) = self.confirm.take() {
            if key == Key::Char('y') || key == Key::Char('Y') {
                self.start(spec);
            }
            return true;
        }
        let Some(text) = self.editing.as_mut() else {
            return false;
        };
        match key {
            key if super::line_edit::edit(text, key) => {}
            Key::Enter => {
                let text = text.trim().to_string();
                let field = self.fields()[self.field];
                match self.check(field, &text) {
                    Ok(()) => {
                        self.editing = None;
                        self.field_error = None;
                        self.set(field, text);
                    }
                    // The text stays in the editor to be fixed.
                    Err(error) => self.field_error = Some(error),
                }
            }
            Key::Esc => {
                self.editing = None;
                self.field_error = None;
            }
            _ => return false,
        }
        true
    }

    /// A bound action in the Load tab; returns whether to redraw.
    pub fn handle(&mut self, action: Action, key: Key) -> bool {
        match action {
            Action::Up => self.field = self.field.saturating_sub(1),
            Action::Down => self.field = (self.field + 1).min(self.fields().len() - 1),
            Action::Top => self.field = 0,
            Action::Bottom => self.field = self.fields().len() - 1,
            Action::Choose => {
                if self.fields()[self.field] != Field::Kind {
                    return false;
                }
                self.cycle(key != Key::Left);
            }
            Action::Edit => match self.fields()[self.field] {
                Field::Kind => self.cycle(true),
                field => self.editing = Some(self.value(field)),
            },
            Action::Start => self.request_start(),
            Action::Stop => match &mut self.running {
                Some(running) => {
                    running.stop.stop();
                    running.stopping = true;
                }
                None => return false,
            },
            _ => return false,
        }
        true
    }

    fn cycle(&mut self, forward: bool) {
        let at = KINDS.iter().position(|k| *k == self.kind).unwrap_or(0);
        let next = if forward {
            (at + 1) % KINDS.len()
        } else {
            (at + KINDS.len() - 1) % KINDS.len()
        };
        self.set_kind(KINDS[next]);
    }

    /// Switches the form to `kind`, with defaults that fit it.
    fn set_kind(&mut self, kind: Kind) {
        let old = self.kind;
        self.kind = kind;
        self.field = self.field.min(self.fields().len() - 1);
        // Sensible defaults when the target no longer fits the kind.
        match (old, self.kind) {
            (Kind::Http, _) => {
                if let Some(rest) = self.target.strip_prefix("http://") {
                    self.target = rest.trim_end_matches('/').to_string();
                }
            }
            (_, Kind::Http) => {
                self.target = format!("http://{}/", self.target);
            }
            _ => {}
        }
        self.rate = match self.kind {
            Kind::Udp => "1M".into(),
            Kind::Probe => "1".into(),
            Kind::Tcp | Kind::Http | Kind::Pktgen => "0".into(),
        };
        self.connections = match self.kind {
            Kind::Http => "10".into(),
            _ => "1".into(),
        };
    }

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

    fn request_start(&mut self) {
        self.error = None;
        if self.running.is_some() {
            self.error = Some("a load is running: s or Esc stops it first".into());
            return;
        }
        if self.kind == Kind::Pktgen && self.pktgen_missing().is_some() {
            // The offer the tab shows: the same destination with udp, which
            // needs no kernel module. The form changes; r again starts it.
            let dst = self.pktgen.dst.trim().to_string();
            self.set_kind(Kind::Udp);
            self.target = match dst.parse::<std::net::IpAddr>() {
                Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]:5201"),
                _ => format!("{dst}:5201"),
            };
            self.error = Some(
                "pktgen is not available here: the form now holds udp to the same destination \
                 (a `netlens load serve` there counts it); r starts it"
                    .into(),
            );
            return;
        }
        match self.spec() {
            Err(error) => self.error = Some(error),
            Ok(spec) => match spec.destination() {
                Some(ip) if !ip.is_loopback() => {
                    self.confirm = Some((spec, self.target.clone()));
                }
                _ => self.start(spec),
            },
        }
    }

    fn start(&mut self, spec: Spec) {
        let id = self.next_id;
        self.next_id += 1;
        let stop = Stop::new();
        let target = match self.kind {
            Kind::Pktgen => format!("{} {}", self.pktgen.dev.trim(), self.pktgen.dst.trim()),
            _ => self.target.clone(),
        };
        self.running = Some(Running {
            id,
            kind: self.kind,
            target,
            started: Instant::now(),
            planned: spec.planned(),
            stop: stop.clone(),
            series: Vec::new(),
            last: None,
            log: Vec::new(),
            stopping: false,
        });
        let sender = self.sender.clone();
        let netns = self.netns.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("load-{id}"))
            .spawn(move || {
                let report = |interval: Interval| {
                    let _ = sender.send(LoadEvent::Interval(id, interval));
                };
                // Threads the run starts inherit this thread's namespace.
                let entered = match &netns {
                    Some((file, label)) => netns::enter(file, label),
                    None => Ok(()),
                };
                let result = entered
                    .and_then(|()| spec.run(&stop, &report))
                    .map_err(|e| format!("{e:#}"));
                let _ = sender.send(LoadEvent::Done(id, result));
            });
        if let Err(error) = spawned {
            self.running = None;
            self.error = Some(format!("cannot start the load thread: {error}"));
        }
    }

    /// Takes a run's report; returns whether to redraw.
    pub fn on_event(&mut self, event: LoadEvent) -> bool {
        match event {
            LoadEvent::Interval(id, interval) => {
                let Some(running) = self.running.as_mut().filter(|r| r.id == id) else {
                    return false;
                };
                if running.series.len() >= POINTS {
                    running.series.remove(0);
                }
                running.series.push(interval.value);
                if running.log.len() >= POINTS {
                    running.log.remove(0);
                }
                running.log.push(interval.text.clone());
                running.last = Some(interval.text);
                true
            }
            LoadEvent::Done(id, result) => {
                let Some(running) = self.running.take_if(|r| r.id == id) else {
                    return false;
                };
                let (headline, text, ok) = match result {
                    Ok(outcome) => (outcome.headline, outcome.text, true),
                    Err(error) => (format!("failed: {error}"), error, false),
                };
                self.runs.insert(
                    0,
                    PastRun {
                        id,
                        kind: running.kind,
                        target: running.target,
                        headline,
                        text,
                        ok,
                        series: running.series,
                    },
                );
                self.runs.truncate(HISTORY);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_target_off_loopback_asks_first() {
        let mut view = LoadView::default();
        view.target = "198.18.0.2:5201".into();
        view.handle(Action::Start, Key::Char('r'));
        assert!(view.confirm.is_some() && view.running.is_none());
        // Anything but y cancels.
        view.on_modal_key(Key::Char('n'));
        assert!(view.confirm.is_none() && view.running.is_none());
    }
}
