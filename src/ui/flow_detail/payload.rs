//! The payload of both directions as hex and ASCII (16 bytes a line), only
//! when whole packets are captured (--payload); otherwise how to turn it on.

use super::rel;
use crate::app::flow_detail::FlowDetail;
use crate::ui::theme::Theme;
use ratatui::text::{Line, Span};

/// Payload lines built at most (the view scrolls through them).
const MAX_LINES: usize = 20_000;

pub fn lines(detail: &FlowDetail, theme: Theme) -> Vec<Line<'static>> {
    if !detail.payload {
        return vec![
            Line::from(Span::styled(
                "Payload capture is off: only headers are kept (a 384-byte snap length).",
                theme.warn(),
            )),
            Line::from("Start netlens with --payload to capture whole packets, e.g."),
            Line::from(Span::styled("  netlens --payload --tab flows", theme.key())),
            Line::from("Payloads may hold secrets: it is off by default."),
        ];
    }
    let mut out = Vec::new();
    for p in &detail.packets {
        let data = p.payload();
        if data.is_empty() {
            continue;
        }
        let (arrow, style) = if p.from_client {
            ("→ client to server", theme.tx())
        } else {
            ("← server to client", theme.rx())
        };
        let cut = if (data.len() as u32) < p.payload_len {
            format!(" ({} captured)", data.len())
        } else {
            String::new()
        };
        out.push(Line::from(Span::styled(
            format!(
                "#{} {} {arrow}: {} bytes{cut}",
                p.n,
                rel(detail, p.t),
                p.payload_len
            ),
            style,
        )));
        for (i, chunk) in data.chunks(16).enumerate() {
            out.push(Line::from(hex_line(i * 16, chunk)));
            if out.len() >= MAX_LINES {
                return out;
            }
        }
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled(
            "no payload in the packets kept (pure ACKs and handshakes only)",
            theme.dim(),
        )));
    }
    out
}

/// "0010  68 65 6c 6c 6f 20 ...  |hello ...|", as hexdump -C.
pub fn hex_line(offset: usize, chunk: &[u8]) -> String {
    let mut hex = String::with_capacity(50);
    for (i, b) in chunk.iter().enumerate() {
        if i == 8 {
            hex.push(' ');
        }
        hex.push_str(&format!("{b:02x} "));
    }
    let ascii: String = chunk
        .iter()
        .map(|b| {
            if b.is_ascii_graphic() || *b == b' ' {
                *b as char
            } else {
                '.'
            }
        })
        .collect();
    format!("{offset:04x}  {hex:<49} |{ascii}|")
}
