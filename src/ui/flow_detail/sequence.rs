//! The sequence diagram, like Wireshark's Flow Graph: a client lane and a
//! server lane, one arrow per packet with its flags and length, then the
//! relative sequence numbers. Evidence packets are marked "*".

use super::{fit, no_packets, rel};
use crate::app::flow_detail::{DrillPacket, FlowDetail};
use crate::ui::theme::Theme;
use ratatui::text::{Line, Span};

pub fn lines(detail: &FlowDetail, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if detail.packets.is_empty() {
        return no_packets(theme);
    }
    let evidence = detail.evidence_packets();
    // time (9) + mark (2) + lane ... lane + notes.
    let lane = width.saturating_sub(11 + 20).clamp(16, 40);
    let (client, server) = detail.sides();
    let client_label = format!("client {client}");
    let header = format!("{:<11}{client_label:<lane$}  server {server}", "time");
    let mut out = vec![Line::from(Span::styled(
        fit(&header, width),
        theme.header(),
    ))];
    let isn = initial_seqs(detail);
    for p in &detail.packets {
        let label = flags_label(p);
        let arrow = arrow(&label, lane, p.from_client);
        let (own, peer) = if p.from_client {
            (isn.0, isn.1)
        } else {
            (isn.1, isn.0)
        };
        let mut notes = format!("seq {}", p.seq.wrapping_sub(own));
        if p.flags & 0x10 != 0 {
            notes.push_str(&format!(" ack {}", p.ack.wrapping_sub(peer)));
        }
        notes.push_str(&format!(" win {}", p.win));
        let mark = if evidence.contains(&p.n) { "*" } else { " " };
        let text = format!("{:<9} {mark}|{arrow}|  {notes}", rel(detail, p.t));
        let style = if evidence.contains(&p.n) {
            theme.warn()
        } else {
            ratatui::style::Style::new()
        };
        out.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    out
}

/// The first sequence number seen from the client and from the server
/// (the SYNs' when seen), so both lanes count from 0 as Wireshark does.
fn initial_seqs(detail: &FlowDetail) -> (u32, u32) {
    let first = |from_client: bool| {
        detail
            .packets
            .iter()
            .find(|p| p.from_client == from_client)
            .map_or(0, |p| p.seq)
    };
    (first(true), first(false))
}

/// "SYN", "SYN, ACK", "PSH, ACK Len=30", "FIN, ACK", "RST".
fn flags_label(p: &DrillPacket) -> String {
    let names = [
        (0x02, "SYN"),
        (0x01, "FIN"),
        (0x04, "RST"),
        (0x08, "PSH"),
        (0x10, "ACK"),
        (0x20, "URG"),
    ];
    let mut parts: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| p.flags & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if parts.is_empty() {
        parts.push("none");
    }
    let mut label = parts.join(", ");
    if p.payload_len > 0 {
        label.push_str(&format!(" Len={}", p.payload_len));
    }
    label
}

/// "---- SYN ---->" or "<---- SYN ----" exactly `lane` wide.
fn arrow(label: &str, lane: usize, right: bool) -> String {
    let label: String = label.chars().take(lane.saturating_sub(4)).collect();
    let body = lane.saturating_sub(2);
    let pad = body.saturating_sub(label.chars().count() + 2);
    let left = pad / 2;
    let right_pad = pad - left;
    let middle = format!("{} {label} {}", "-".repeat(left), "-".repeat(right_pad));
    if right {
        format!("-{middle}>")
    } else {
        format!("<{middle}-")
    }
}
