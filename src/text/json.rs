//! JSON as netlens writes it for people and scripts: serde_json's compact
//! form, with every character [`is_unsafe`](super::is_unsafe) names written
//! as `\uXXXX`. serde_json escapes only C0 controls; C1 (U+009B is a CSI),
//! DEL, the bidirectional controls and the line and paragraph separators
//! would pass raw, and `jq -r` or a plain `cat` hands them to the terminal.
//! The escapes decode back to the same characters, so no reader loses data.

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io::{self, Write};

/// serde_json's compact formatter, writing unsafe characters as `\uXXXX`
/// (each is in the Basic Multilingual Plane: one escape, no surrogates).
pub struct SafeFormatter;

impl Formatter for SafeFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if super::is_unsafe(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// `serde_json::to_writer` with [`SafeFormatter`].
pub fn to_writer<W: Write, T: ?Sized + Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut Serializer::with_formatter(writer, SafeFormatter))
}

/// `serde_json::to_string` with [`SafeFormatter`].
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    // serde_json writes UTF-8 (the escapes are ASCII).
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_decode_back() {
        let hostile = "a\x1b]0;t\x07\u{9b}31m\u{202e}\u{2028}\x7fé\"\\";
        let value = serde_json::json!({ hostile: [hostile, 1] });
        let line = to_string(&value).unwrap();
        assert_eq!(
            line,
            r#"{"a\u001b]0;t\u0007\u009b31m\u202e\u2028\u007fé\"\\":["a\u001b]0;t\u0007\u009b31m\u202e\u2028\u007fé\"\\",1]}"#
        );
        assert!(!line.chars().any(crate::text::is_unsafe));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&line).unwrap(),
            value
        );
        // Otherwise the same as serde_json's compact form.
        let plain = serde_json::json!({"name": "eth0", "rx": [1.5, null, true]});
        assert_eq!(to_string(&plain).unwrap(), plain.to_string());
    }
}
