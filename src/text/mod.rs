//! Text that comes from outside (names other users and containers choose,
//! recordings handed over by others) made safe to keep and to print.
//!
//! Two rules, applied at two places:
//! - At the source, every name read from outside is bounded to
//!   [`MAX_NAME`] bytes and loses its control characters
//!   ([`bounded_name`]): a 16 MB container name costs 253 bytes.
//! - Where text leaves netlens (terminal, text output, exporter labels,
//!   JSON), the characters a terminal would act on are escaped
//!   ([`escape_control`]), as tcpdump does: `\x1b`, `\u{202e}`.

use std::borrow::Cow;

pub mod json;

/// The longest name netlens keeps from outside, in bytes: a DNS name's
/// limit, a good model for container, cgroup, process, interface and
/// namespace names alike.
pub const MAX_NAME: usize = 253;

/// Whether a terminal (or a reader of it) would act on `c` rather than
/// show it: C0 and C1 controls and DEL (escape sequences, OSC, CSI), and
/// the bidirectional formatting characters that reorder what follows
/// (Trojan Source), and the line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `text` with each unsafe character written as an escape: `\x1b` for a
/// control below U+0100, `\u{202e}` above. Borrows when nothing is unsafe.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    if !is_unsafe(c) {
        out.push(c);
    } else if (c as u32) < 0x100 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// A name from outside as netlens keeps it: unsafe characters escaped,
/// then cut to at most [`MAX_NAME`] bytes on a character boundary (a cut
/// name ends in '~' so it is not mistaken for the whole one).
pub fn bounded_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(MAX_NAME));
    for c in raw.chars() {
        let before = out.len();
        push_escaped(&mut out, c);
        if out.len() > MAX_NAME {
            out.truncate(before);
            while out.len() + 1 > MAX_NAME {
                out.pop();
            }
            out.push('~');
            break;
        }
    }
    out
}

/// [`bounded_name`] of bytes that should be UTF-8 (a file's contents, a
/// kernel name); only the first few times [`MAX_NAME`] bytes are read, so a
/// huge input costs no more than a short one.
pub fn bounded_name_bytes(raw: &[u8]) -> String {
    // Escapes at most quadruple a byte, so this prefix covers the limit.
    let prefix = &raw[..raw.len().min(MAX_NAME * 4 + 4)];
    let mut name = bounded_name(&String::from_utf8_lossy(prefix));
    if prefix.len() < raw.len() && !name.ends_with('~') {
        while name.len() + 1 > MAX_NAME {
            name.pop();
        }
        name.push('~');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_acts_on() {
        assert_eq!(escape_control("eth0"), Cow::Borrowed("eth0"));
        assert_eq!(escape_control("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape_control("\u{9b}31m"), "\\x9b31m");
        assert_eq!(escape_control("x\u{202e}y\u{2066}"), "x\\u{202e}y\\u{2066}");
        assert_eq!(escape_control("tab\there\n\x7f"), "tab\\x09here\\x0a\\x7f");
        assert_eq!(escape_control("café ünïcode"), "café ünïcode");
    }

    #[test]
    fn names_are_bounded_and_cut_visibly() {
        let huge = "n".repeat(16 << 20);
        let name = bounded_name(&huge);
        assert_eq!(name.len(), MAX_NAME);
        assert!(name.ends_with('~'));
        assert_eq!(bounded_name("web-1"), "web-1");
        assert_eq!(bounded_name("a\x1bb"), "a\\x1bb");
        // A cut never splits a character or an escape.
        let wide = "é".repeat(300);
        let cut = bounded_name(&wide);
        assert!(cut.len() <= MAX_NAME && cut.ends_with('~'));
        let escapes = "\x1b".repeat(100);
        let cut = bounded_name(&escapes);
        assert!(cut.len() <= MAX_NAME);
        assert!(cut.trim_end_matches('~').ends_with("\\x1b"));
        assert_eq!(bounded_name_bytes(&huge.into_bytes()).len(), MAX_NAME);
        assert_eq!(bounded_name_bytes(b"ok\xffname"), "ok\u{fffd}name");
    }
}
