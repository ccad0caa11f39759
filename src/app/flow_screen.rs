//! The flow screen (Enter on a flow, or on a socket with traffic): one
//! flow's packets, opened over the tab it was opened from and kept there
//! while other tabs are shown. It takes that tab's keys while it is open.

use super::keymap::{Action, Key, Scope};
use super::{App, flow_detail};

impl App {
    /// Whether the flow screen is what the body shows now.
    pub fn flow_detail_shown(&self) -> bool {
        !self.help_open()
            && self
                .flow_detail
                .as_ref()
                .is_some_and(|d| d.origin == self.tab)
    }

    /// Opens a flow's screen over the current tab and starts watching the
    /// flow's packets (its recent ones first).
    pub fn open_flow_detail(&mut self, flow: crate::model::capture::FlowSample) {
        let (linktype, snaplen) = self
            .flows
            .capture
            .as_ref()
            .map_or((0, 0), |c| (c.linktype(), c.snaplen()));
        let payload = snaplen >= crate::capture::ring::PAYLOAD_SNAPLEN;
        let mut detail = flow_detail::FlowDetail::new(flow, self.tab, linktype, snaplen, payload);
        if let Some(capture) = &self.flows.capture {
            capture.watch(detail.key);
            detail.iface = capture.iface().to_string();
        }
        self.flow_detail = Some(detail);
        self.refresh_flow_detail();
    }

    pub fn close_flow_detail(&mut self) {
        if let Some(capture) = &self.flows.capture {
            capture.watch(None);
        }
        self.flow_detail = None;
    }

    /// Moves the watched flow's new packets into its screen; returns
    /// whether there were any.
    pub fn refresh_flow_detail(&mut self) -> bool {
        let (Some(detail), Some(capture)) = (self.flow_detail.as_mut(), &self.flows.capture) else {
            return false;
        };
        let (packets, missed) = capture.take_watched();
        detail.missed += missed;
        let changed = !packets.is_empty() || missed > 0;
        for p in packets {
            detail.push_on(p.ts, p.orig_len, &p.data, p.ifindex);
        }
        changed
    }

    /// Starts the open flow screen again from the capture's recent packets
    /// (a replay seek rebuilt the capture), keeping the sub-view shown.
    pub fn rebuild_flow_detail(&mut self) {
        let Some(old) = self.flow_detail.take() else {
            return;
        };
        let (tab, view) = (self.tab, old.view);
        self.tab = old.origin;
        self.open_flow_detail(old.flow);
        self.tab = tab;
        if let Some(detail) = self.flow_detail.as_mut() {
            detail.view = view;
        }
    }

    /// Takes a capture event (replayed packets, the watched flow's new
    /// ones, capture stopped): into the Flows tab's list and an open flow
    /// screen. Returns whether the flow screen shown now got packets: only
    /// it is drawn at the capture's pace. The Flows tab's list moves with
    /// each sample, as its table does: a frame costs about a millisecond,
    /// which at five a second was most of the live view's CPU under a
    /// flood (docs/performance.md).
    pub fn on_capture(&mut self, event: crate::capture::live::CaptureEvent) -> bool {
        self.flows.on_capture(event);
        self.refresh_flow_detail() && self.flow_detail_shown()
    }

    /// A key of the tab while the flow screen is open over it: Esc
    /// closes it, the table and flow-screen keys are its own, the tab's
    /// other keys do nothing here.
    pub(super) fn flow_screen_action(&mut self, scope: Scope, action: Action, key: Key) -> bool {
        match scope {
            Scope::View if action == Action::Close => {
                self.close_flow_detail();
                true
            }
            Scope::View | Scope::FlowDetail if action == Action::ExportFlow => {
                let owners = crate::capture::attribution::PacketOwners::from_samples(
                    self.shown_view().recent(super::flows::OWNER_SAMPLES),
                );
                let Some(detail) = self.flow_detail.as_mut() else {
                    return false;
                };
                detail.message = Some(detail.export(None, Some(&owners)));
                true
            }
            Scope::View | Scope::FlowDetail if action == Action::TraceRules => {
                let target = self.probe_from.clone();
                let Some(detail) = self.flow_detail.as_mut() else {
                    return false;
                };
                detail.toggle_trace(target.as_ref());
                true
            }
            Scope::View | Scope::FlowDetail => self
                .flow_detail
                .as_mut()
                .is_some_and(|d| d.handle(action, key)),
            _ => false,
        }
    }
}
