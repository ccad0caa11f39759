//! The Path view: `t` on a Sockets or Flows row traces the path to the
//! row's remote address and port with the same prober as `netlens trace`
//! (TCP SYN probes, one round per second, until closed), on its own thread,
//! so the UI only reads its report. Closing the view (Esc) drops the
//! prober, which stops the probing.

use super::App;
use super::overlay::Overlay;
use crate::collect::netns::Target;
use crate::findings::Finding;
use crate::model::path::{PathReport, ProbeKind};
use crate::path::{Prober, TraceOptions};
use std::net::SocketAddr;
use std::time::Duration;

/// The live trace and where it goes.
pub struct PathView {
    pub dest: SocketAddr,
    prober: Option<Prober>,
    /// Why probing could not start (no CAP_NET_RAW, an IPv6 peer).
    pub error: Option<String>,
}

impl PathView {
    /// The path as probed so far, with its findings.
    pub fn report(&self, app: &App) -> Option<(PathReport, Vec<Finding>)> {
        let report = self.prober.as_ref()?.report();
        let findings = crate::findings::path::evaluate(&report, &app.thresholds);
        Some((report, findings))
    }
}

impl App {
    /// Opens the Path view to `dest`, probing from the watched namespace.
    pub(super) fn open_path(&mut self, dest: SocketAddr) {
        let options = TraceOptions {
            target: dest.ip().to_string(),
            addr: dest.ip(),
            port: dest.port(),
            kind: ProbeKind::Tcp,
            max_ttl: 30,
            count: None,
            duration: None,
            rate: 20.0,
            timeout: Duration::from_secs(1),
            interval: Duration::from_secs(1),
            netns: self
                .probe_from
                .clone()
                .unwrap_or_else(|| Target::from_args(None, None)),
            resolve: false,
        };
        let (prober, error) = match Prober::start(options) {
            Ok(prober) => (Some(prober), None),
            Err(error) => (None, Some(format!("{error:#}"))),
        };
        self.overlays.push(Overlay::Path(Box::new(PathView {
            dest,
            prober,
            error,
        })));
    }

    /// The Path view, while it is open.
    pub fn path_view(&self) -> Option<&PathView> {
        self.overlays.iter().find_map(|o| match o {
            Overlay::Path(view) => Some(view.as_ref()),
            _ => None,
        })
    }
}
