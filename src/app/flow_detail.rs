//! One flow's own screen (Enter on a flow, or on a socket with captured
//! traffic): its packets (bounded), their tcpdump lines, the detailed
//! analysis, the sub-view shown and its scroll, and `e` (export this flow
//! to a pcap). Built from packets as they come, live or from a file, so
//! tests feed it real pcaps. Rendering lives in ui/flow_detail/.

use super::keymap::Action;
use super::tabs::Tab;
use crate::capture::attribution::PacketOwners;
use crate::capture::pcap_file::{FileFormat, FileLayout, unpredictable_name, write_file};
use crate::model::capture::FlowSample;
use crate::packet::analysis::{Analysis, FlowFinding, Seg};
use crate::packet::decode::summarize;
use crate::packet::exchanges::{Answered, Exchanges};
use crate::packet::flows::FlowKey;
use crate::packet::format::{Formatter, Timestamp};
use std::collections::VecDeque;
use std::path::PathBuf;

/// Packets the drill-down keeps (the oldest go first): a long flow shows
/// its latest packets, the analysis still counts them all.
pub const DRILL_PACKETS: usize = 5_000;
/// A gap this long, and four times the smallest RTT, is marked in the
/// timeline.
pub const LONG_GAP_MS: f64 = 20.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubView {
    Summary,
    Timeline,
    Sequence,
    Findings,
    Payload,
    /// The nftables trace of the flow (`T`).
    Rules,
}

pub const SUB_VIEWS: [SubView; 6] = [
    SubView::Summary,
    SubView::Timeline,
    SubView::Sequence,
    SubView::Findings,
    SubView::Payload,
    SubView::Rules,
];

impl SubView {
    pub fn title(self) -> &'static str {
        match self {
            SubView::Summary => "Summary",
            SubView::Timeline => "Packets",
            SubView::Sequence => "Sequence",
            SubView::Findings => "Findings",
            SubView::Payload => "Payload",
            SubView::Rules => "Rules",
        }
    }
}

/// One packet of the flow, decoded once.
#[derive(Debug, Clone)]
pub struct DrillPacket {
    /// Number in the analysis (counts every packet fed, kept or not).
    pub n: u32,
    pub ts: Timestamp,
    pub t: f64,
    pub orig_len: u32,
    pub data: Box<[u8]>,
    /// The interface it crossed (0: unknown).
    pub ifindex: u32,
    /// The tcpdump line without the time.
    pub line: String,
    /// Sent by the client (the side that opened it, or the flow's src).
    pub from_client: bool,
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub win: u16,
    pub payload_len: u32,
    /// Where the payload starts in `data` (0 when unknown).
    pub payload_at: usize,
}

impl DrillPacket {
    /// The captured payload bytes (may be cut by the snap length).
    pub fn payload(&self) -> &[u8] {
        if self.payload_at == 0 || self.payload_len == 0 {
            return &[];
        }
        let end = (self.payload_at + self.payload_len as usize).min(self.data.len());
        self.data.get(self.payload_at..end).unwrap_or(&[])
    }
}

pub struct FlowDetail {
    /// `T`: the flow's packets traced through the nftables rules (live
    /// only); None while not tracing. Dropped with the screen, which
    /// removes the trace's table.
    pub trace: Option<crate::collect::firewall::session::TraceSession>,
    /// The Rules sub-view keeps its newest line in sight (as `tail -f`)
    /// until the user scrolls up.
    pub follow: bool,
    /// The flow as the table showed it (src is the client).
    pub flow: FlowSample,
    pub key: Option<FlowKey>,
    /// The tab it was opened from (it shows there).
    pub origin: Tab,
    pub linktype: u32,
    pub snaplen: u32,
    /// The capture's interface ("any", "eth0"), for the exported file.
    pub iface: String,
    /// Whole packets are captured (--payload), so the payload view works.
    pub payload: bool,
    pub packets: VecDeque<DrillPacket>,
    /// Packets fed but no longer kept, and missed by the capture.
    pub dropped: u64,
    pub missed: u64,
    pub analysis: Analysis,
    /// Direction index (the flow key's: 0 a → b) of the client's packets:
    /// the flow's src, which the table took from the SYN or, when the
    /// capture began mid-flow, from the first packet seen.
    client_dir: usize,
    formatter: Formatter,
    pub view: SubView,
    /// First line shown of the current sub-view (clamped when drawn).
    pub scroll: usize,
    /// The outcome of `e`, for the status line.
    pub message: Option<String>,
    /// Who counted the flow's whole packets and bytes, as the shown sample
    /// says: the kernel (exact), the capture, or the capture short of what
    /// it dropped (set each time the screen is drawn).
    pub counted_by: CountedBy,
    /// Its requests and their answers, timed from the packets fed.
    exchanges: Exchanges,
    pub answered: Answered,
    /// The flow's socket in the shown sample (its tcp_info), when this
    /// host holds it (set each time the screen is drawn).
    pub socket: Option<crate::model::sockets::SocketSample>,
    /// The monotonic time of the sample `socket` was looked for in.
    pub socket_from: Option<f64>,
    /// The flow's conntrack entry when NAT translated it, in one line
    /// ("ESTABLISHED dnat: 198.18.0.1:40000 → 198.18.0.2:80 ⇒
    /// 198.18.1.2:8080"), looked for with `socket`.
    pub nat: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CountedBy {
    #[default]
    Capture,
    CaptureShort,
    Kernel,
}

impl CountedBy {
    pub fn of(capture: &crate::model::capture::CaptureSample) -> Self {
        if capture.counted_by_kernel() {
            CountedBy::Kernel
        } else if capture.counts_short() {
            CountedBy::CaptureShort
        } else {
            CountedBy::Capture
        }
    }

    /// How the flow screen names the whole flow's count.
    pub fn label(self) -> &'static str {
        match self {
            CountedBy::Kernel => "kernel count",
            CountedBy::Capture => "flow table",
            CountedBy::CaptureShort => "flow table (capture dropped packets) ≥",
        }
    }
}

impl FlowDetail {
    pub fn new(flow: FlowSample, origin: Tab, linktype: u32, snaplen: u32, payload: bool) -> Self {
        let key = FlowKey::from_endpoints(&flow.proto, &flow.src, &flow.dst);
        let client_dir = key.map_or(0, |key| {
            let src: Option<std::net::SocketAddr> = flow.src.parse().ok();
            usize::from(src.is_some_and(|s| s.port() != key.a_port || !same_ip(&key.a, s)))
        });
        Self {
            flow,
            key,
            origin,
            linktype,
            snaplen,
            iface: String::new(),
            payload,
            packets: VecDeque::new(),
            dropped: 0,
            missed: 0,
            analysis: Analysis::detailed(),
            client_dir,
            formatter: Formatter::new(crate::capture::HOST),
            view: SubView::Summary,
            scroll: 0,
            message: None,
            counted_by: CountedBy::default(),
            exchanges: Exchanges::default(),
            answered: Answered::default(),
            socket: None,
            socket_from: None,
            nat: None,
            trace: None,
            follow: true,
        }
    }

    /// `T`: starts tracing this flow through the nftables rules of
    /// `target` (the watched namespace; None in a replay, where nothing
    /// is traced), or stops; either way the Rules sub-view shows.
    pub fn toggle_trace(&mut self, target: Option<&crate::collect::netns::Target>) {
        self.view = SubView::Rules;
        self.follow = true;
        if self.trace.take().is_some() {
            return;
        }
        let Some(target) = target else {
            self.message = Some("a replay traces nothing: nftrace needs the live host".into());
            return;
        };
        match self.trace_flow() {
            Some(flow) => {
                self.trace = Some(crate::collect::firewall::session::TraceSession::start(
                    target, flow,
                ));
            }
            None => {
                self.message =
                    Some("only TCP, UDP and ICMP flows of IP addresses are traced".into())
            }
        }
    }

    /// The flow as the tracer matches it: both addresses and ports.
    fn trace_flow(&self) -> Option<crate::collect::firewall::trace::TraceFlow> {
        let proto = match self.flow.proto.as_str() {
            "tcp" => libc::IPPROTO_TCP,
            "udp" => libc::IPPROTO_UDP,
            "icmp" => libc::IPPROTO_ICMP,
            "icmp6" | "icmpv6" => libc::IPPROTO_ICMPV6,
            _ => return None,
        } as u8;
        let end = |text: &str| {
            text.parse::<std::net::SocketAddr>()
                .ok()
                .or_else(|| Some(std::net::SocketAddr::new(text.parse().ok()?, 0)))
        };
        Some(crate::collect::firewall::trace::TraceFlow {
            proto,
            a: end(&self.flow.src)?,
            b: end(&self.flow.dst)?,
        })
    }

    /// The client's endpoint and the server's, as the flow shows them.
    pub fn sides(&self) -> (&str, &str) {
        (&self.flow.src, &self.flow.dst)
    }

    /// Direction index (the flow key's: 0 a → b) of the client's packets.
    pub fn client_dir(&self) -> usize {
        self.client_dir
    }

    /// Feeds one captured packet of the flow.
    pub fn push(&mut self, ts: Timestamp, orig_len: u32, data: &[u8]) {
        self.push_on(ts, orig_len, data, 0);
    }

    /// As `push`, for a packet that crossed interface `ifindex` (0:
    /// unknown).
    pub fn push_on(&mut self, ts: Timestamp, orig_len: u32, data: &[u8], ifindex: u32) {
        let s = summarize(self.linktype, data, orig_len);
        let Some((_, reverse)) = FlowKey::of(&s) else {
            return;
        };
        let t = ts.as_secs_f64();
        let n = self.analysis.n;
        if s.proto == 6 && s.tl.is_some() {
            let seg = Seg::of(&s, reverse, t);
            self.analysis.add(&seg);
            if let Some(x) = self.exchanges.add(&seg, self.client_dir, s.payload(data)) {
                self.answered.push(x);
            }
        } else {
            // Not TCP: count the packet so numbers stay aligned.
            self.analysis.n += 1;
        }
        let mut line = String::with_capacity(128);
        self.formatter
            .body(self.linktype, data, orig_len, &mut line);
        if self.packets.len() == DRILL_PACKETS {
            self.packets.pop_front();
            self.dropped += 1;
        }
        self.packets.push_back(DrillPacket {
            n,
            ts,
            t,
            orig_len,
            data: data.into(),
            ifindex,
            line,
            from_client: usize::from(reverse) == self.client_dir(),
            flags: s.tcp_flags,
            seq: s.tcp_seq,
            ack: s.tcp_ack,
            win: s.tcp_win,
            payload_len: s.payload_len,
            payload_at: s.payload_at,
        });
    }

    /// The analysis' findings, naming the endpoints.
    pub fn findings(&self) -> Vec<FlowFinding> {
        let (client, server) = self.sides();
        let names = if self.client_dir() == 0 {
            [client, server]
        } else {
            [server, client]
        };
        self.analysis.findings(names)
    }

    /// Findings the flow table's whole-flow analysis has (`flow` as the
    /// shown sample carries it) that this screen's packets do not show:
    /// their evidence came before the screen started watching.
    pub fn earlier_findings<'a>(&self, flow: &'a FlowSample) -> Vec<&'a FlowFinding> {
        let seen = self.findings();
        flow.findings
            .iter()
            .filter(|f| !seen.iter().any(|s| s.id == f.id))
            .collect()
    }

    /// The packets some finding points at, for the "*" marks.
    pub fn evidence_packets(&self) -> std::collections::HashSet<u32> {
        self.findings()
            .iter()
            .flat_map(|f| self.analysis.evidence(&f.id))
            .collect()
    }

    /// The kept packet with analysis number `n`.
    pub fn packet(&self, n: u32) -> Option<&DrillPacket> {
        let first = self.packets.front()?.n;
        self.packets.get(n.checked_sub(first)? as usize)
    }

    /// Whether the gap before packet `i` (index in `packets`) is long.
    pub fn long_gap(&self, i: usize) -> Option<f64> {
        let this = self.packets.get(i)?;
        let before = self.packets.get(i.checked_sub(1)?)?;
        let gap_ms = (this.t - before.t) * 1000.0;
        let rtt_floor = if self.analysis.rtt.count > 0 {
            self.analysis.rtt.min_ms * 4.0
        } else {
            0.0
        };
        (gap_ms >= LONG_GAP_MS.max(rtt_floor)).then_some(gap_ms)
    }

    /// Keys on the flow screen; returns whether the screen changes.
    pub fn handle(&mut self, action: Action, key: super::keymap::Key) -> bool {
        self.message = None;
        match action {
            Action::SubView => {
                let at = SUB_VIEWS.iter().position(|v| *v == self.view).unwrap_or(0);
                let next = if key == super::keymap::Key::Char('V') {
                    (at + SUB_VIEWS.len() - 1) % SUB_VIEWS.len()
                } else {
                    (at + 1) % SUB_VIEWS.len()
                };
                self.view = SUB_VIEWS[next];
                self.scroll = 0;
            }
            Action::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                self.follow = false;
            }
            Action::Down => self.scroll = self.scroll.saturating_add(1),
            Action::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                self.follow = false;
            }
            Action::PageDown => self.scroll = self.scroll.saturating_add(10),
            Action::Top => {
                self.scroll = 0;
                self.follow = false;
            }
            Action::Bottom => {
                self.scroll = usize::MAX;
                self.follow = true;
            }
            Action::ExportFlow => self.message = Some(self.export(None, None)),
            _ => return false,
        }
        true
    }

    /// Writes this flow's kept packets to `path` (default: a new file named
    /// after the flow in the current directory, with random bits so nobody
    /// can plant a link under the name), each packet noted with its
    /// interface and owner from `owners`; returns what to tell the user.
    pub fn export(&self, path: Option<PathBuf>, owners: Option<&PacketOwners>) -> String {
        if self.packets.is_empty() || self.linktype == 0 {
            return "nothing to export: no packets of this flow were captured".into();
        }
        let path = path.unwrap_or_else(|| self.default_path());
        let none = PacketOwners::default();
        let owners = owners.unwrap_or(&none);
        let layout = FileLayout {
            format: FileFormat::of_path(&path),
            linktype: self.linktype,
            snaplen: self.snaplen.max(1),
            interface: owners.interface(&self.iface),
        };
        let written = write_file(
            &path,
            layout,
            self.packets.iter().map(|p| {
                let note = owners.note(self.linktype, &p.data, p.orig_len, p.ifindex);
                (p.ts, p.orig_len, &p.data[..], note)
            }),
        );
        match written {
            Ok(count) => format!(
                "exported {count} packets of this flow to {}",
                super::flows::shown_path(&path)
            ),
            Err(e) => format!("cannot export the flow: {e:#}"),
        }
    }

    /// netlens-flow-<client port>-<server port>-<time>-<random>.pcapng.
    fn default_path(&self) -> PathBuf {
        let t = self.packets.back().map_or(0, |p| p.ts.sec);
        let port = |e: &str| e.rsplit(':').next().unwrap_or("0").to_string();
        let (c, s) = self.sides();
        unpredictable_name(&format!("netlens-flow-{}-{}", port(c), port(s)), t)
    }
}

fn same_ip(a: &[u8; 16], s: std::net::SocketAddr) -> bool {
    match s.ip() {
        std::net::IpAddr::V4(v4) => a[..4] == v4.octets(),
        std::net::IpAddr::V6(v6) => *a == v6.octets(),
    }
}
