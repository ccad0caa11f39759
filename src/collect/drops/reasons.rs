//! The names of the running kernel's drop reasons: numbers differ between
//! kernels, so they are read at run time, from the tracepoint's format file
//! (`__print_symbolic(REC->reason, { 2, "NOT_SPECIFIED" }, ...)`), else from
//! the `skb_drop_reason` enum in the kernel's BTF when tracefs is not
//! mounted.

use std::collections::HashMap;
use std::io::Read;

const FORMATS: &[&str] = &[
    "/sys/kernel/tracing/events/skb/kfree_skb/format",
    "/sys/kernel/debug/tracing/events/skb/kfree_skb/format",
];
const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// Bounds for what is read: a format file is a few kB, vmlinux BTF a few MB.
const MAX_FORMAT: u64 = 1 << 20;
const MAX_BTF: u64 = 64 << 20;
const MAX_REASONS: usize = 65536;

/// Reason number → name without SKB_DROP_REASON_.
#[derive(Debug, Default, Clone)]
pub struct ReasonNames {
    names: HashMap<u32, String>,
}

impl ReasonNames {
    /// From the running kernel; empty (every reason by number) when
    /// neither tracefs nor BTF can be read.
    pub fn from_kernel() -> Self {
        let names = FORMATS
            .iter()
            .find_map(|path| read_bounded(path, MAX_FORMAT).and_then(|t| parse_format(&t)))
            .or_else(|| read_bytes(VMLINUX_BTF, MAX_BTF).and_then(|b| parse_btf(&b)))
            .unwrap_or_default();
        Self { names }
    }

    /// The number of the reason named `name` (without SKB_DROP_REASON_).
    pub fn number(&self, name: &str) -> Option<u32> {
        self.names
            .iter()
            .find(|(_, n)| n.as_str() == name)
            .map(|(&number, _)| number)
    }

    pub fn name(&self, reason: u32) -> String {
        if let Some(name) = self.names.get(&reason) {
            return name.clone();
        }
        // Subsystem reasons: the subsystem id in the upper 16 bits
        // (include/net/dropreason.h), each subsystem numbering its own.
        match reason >> 16 {
            0 => format!("reason {reason}"),
            subsystem => {
                let name = match subsystem {
                    1 => "MAC80211_UNUSABLE".to_string(),
                    2 => "MAC80211_MONITOR".to_string(),
                    3 => "OPENVSWITCH".to_string(),
                    other => format!("SUBSYS {other}"),
                };
                format!("{name} reason {}", reason & 0xffff)
            }
        }
    }
}

fn read_bounded(path: &str, limit: u64) -> Option<String> {
    String::from_utf8(read_bytes(path, limit)?).ok()
}

fn read_bytes(path: &str, limit: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// The `{ N, "NAME" }` pairs of the reason's `__print_symbolic`.
fn parse_format(text: &str) -> Option<HashMap<u32, String>> {
    let start = text.find("__print_symbolic(REC->reason,")?;
    let mut names = HashMap::new();
    let mut rest = &text[start..];
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let close = rest.find('}')?;
        let (number, name) = rest[..close].split_once(',')?;
        let name = name.trim().trim_matches('"');
        let number = number.trim().parse::<u32>().ok()?;
        if !valid_name(name) || names.len() >= MAX_REASONS {
            return None;
        }
        names.insert(number, name.to_string());
        rest = &rest[close + 1..];
        // The list ends at the `)` closing __print_symbolic.
        if rest.trim_start().starts_with(')') {
            break;
        }
    }
    (!names.is_empty()).then_some(names)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

const BTF_MAGIC: u16 = 0xeb9f;
const KIND_ENUM: u32 = 6;
const KIND_ENUM64: u32 = 19;

/// The `skb_drop_reason` enum from raw BTF: a header, then type records
/// (each 12 bytes plus a kind-dependent tail), then the string section.
fn parse_btf(data: &[u8]) -> Option<HashMap<u32, String>> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?));
    if u16_at(0)? != BTF_MAGIC {
        return None; // big-endian or not BTF
    }
    let header = u32_at(4)? as usize;
    let types = header.checked_add(u32_at(8)? as usize)?;
    let types_end = types.checked_add(u32_at(12)? as usize)?;
    let strings = header.checked_add(u32_at(16)? as usize)?;
    let strings_end = strings.checked_add(u32_at(20)? as usize)?;
    if types_end > data.len() || strings_end > data.len() {
        return None;
    }
    let string = |offset: u32| -> Option<&str> {
        let from = strings.checked_add(offset as usize)?;
        let bytes = data.get(from..strings_end)?;
        let len = bytes.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&bytes[..len]).ok()
    };
    let mut at = types;
    while at + 12 <= types_end {
        let name = u32_at(at)?;
        let info = u32_at(at + 4)?;
        let vlen = (info & 0xffff) as usize;
        let kind = (info >> 24) & 0x1f;
        let tail = match kind {
            1 | 14 | 17 => 4,          // INT, VAR, DECL_TAG
            3 => 12,                   // ARRAY
            4 | 5 | 15 => vlen * 12,   // STRUCT, UNION, DATASEC
            6 | 13 => vlen * 8,        // ENUM, FUNC_PROTO
            19 => vlen * 12,           // ENUM64
            2 | 7..=12 | 16 | 18 => 0, // PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG
            _ => return None,          // a kind this parser does not know
        };
        let body = at + 12;
        if (kind == KIND_ENUM || kind == KIND_ENUM64) && string(name) == Some("skb_drop_reason") {
            let step = if kind == KIND_ENUM { 8 } else { 12 };
            let mut names = HashMap::new();
            for i in 0..vlen.min(MAX_REASONS) {
                let entry = body + i * step;
                let value = u32_at(entry + 4)?; // ENUM64: the low 32 bits
                let full = string(u32_at(entry)?)?;
                let short = full.strip_prefix("SKB_DROP_REASON_").unwrap_or(full);
                if valid_name(short) {
                    names.insert(value, short.to_string());
                }
            }
            return (!names.is_empty()).then_some(names);
        }
        at = body.checked_add(tail)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_files_symbolic_list_names_each_number() {
        let text = r#"print fmt: "skbaddr=%p reason: %s", REC->skbaddr, __print_symbolic(REC->reason, { 2, "NOT_SPECIFIED" }, { 3, "NO_SOCKET" }, { 128, "MAX" })"#;
        let names = parse_format(text).unwrap();
        assert_eq!(names[&3], "NO_SOCKET");
        assert_eq!(names[&128], "MAX");
        assert_eq!(names.len(), 3);
        // A malformed list is no list at all, not half of one.
        assert!(parse_format(r#"__print_symbolic(REC->reason, { x, "A" })"#).is_none());
        assert!(parse_format("no symbolic here").is_none());
    }

    #[test]
    fn unknown_and_subsystem_reasons_say_their_numbers() {
        let names = ReasonNames::default();
        assert_eq!(names.name(7), "reason 7");
        assert_eq!(names.name((3 << 16) | 2), "OPENVSWITCH reason 2");
        assert_eq!(names.name((9 << 16) | 1), "SUBSYS 9 reason 1");
    }

    /// A two-type BTF blob: an INT, then the enum with two values.
    fn btf_blob() -> Vec<u8> {
        let strings =
            b"\0int\0skb_drop_reason\0SKB_DROP_REASON_NO_SOCKET\0SKB_DROP_REASON_QDISC_DROP\0";
        let mut types = Vec::new();
        let mut push = |v: u32| types.extend_from_slice(&v.to_le_bytes());
        push(1); // "int"
        push(1 << 24);
        push(4);
        push(0x0100_0020);
        push(5); // "skb_drop_reason"
        push((6 << 24) | 2);
        push(4);
        push(21);
        push(3);
        push(47);
        push(64);
        let mut blob = Vec::new();
        blob.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        blob.extend_from_slice(&[1, 0]);
        for v in [
            24u32,
            0,
            types.len() as u32,
            types.len() as u32,
            strings.len() as u32,
        ] {
            blob.extend_from_slice(&v.to_le_bytes());
        }
        blob.extend_from_slice(&types);
        blob.extend_from_slice(strings);
        blob
    }

    #[test]
    fn the_btf_enum_names_the_reasons_when_tracefs_is_not_there() {
        let names = parse_btf(&btf_blob()).unwrap();
        assert_eq!(names[&3], "NO_SOCKET");
        assert_eq!(names[&64], "QDISC_DROP");
        let names = ReasonNames { names };
        assert_eq!(names.number("QDISC_DROP"), Some(64));
        assert_eq!(names.number("NETFILTER_DROP"), None);
        // Cut short anywhere: no panic, no names.
        let blob = btf_blob();
        for len in 0..blob.len() {
            assert!(parse_btf(&blob[..len]).is_none());
        }
    }

    #[test]
    fn the_running_kernels_btf_agrees_with_its_format_file() {
        let (Some(format), Some(btf)) = (
            read_bounded(FORMATS[0], MAX_FORMAT).and_then(|t| parse_format(&t)),
            read_bytes(VMLINUX_BTF, MAX_BTF).and_then(|b| parse_btf(&b)),
        ) else {
            return; // no tracefs or no BTF here: nothing to compare
        };
        for (number, name) in &format {
            assert_eq!(btf.get(number), Some(name), "reason {number}");
        }
    }
}
