//! The blob of IPT_SO_GET_ENTRIES cut into chains as libiptc cuts it: an
//! ERROR entry starts a user chain (its data is the chain's name), a hook
//! entry point starts a built-in chain, and the last entry of each chain
//! is its policy (built-in) or the RETURN that ends it (user); the final
//! ERROR entry ends the table. Layouts: linux/netfilter_ipv4/ip_tables.h,
//! netfilter_ipv6/ip6_tables.h and netfilter/x_tables.h on x86_64 and
//! the other 64-bit targets (entries and extensions XT_ALIGNed to 8).

use std::io;

use crate::model::firewall::Counter;
use crate::text::escape_control;

/// Entries parsed at most per table: every rule but also the two entries
/// of each user chain.
const MAX_ENTRIES: usize = 300_000;
/// sizeof(struct xt_entry_match), sizeof(struct xt_entry_target).
const EXT_HEADER: usize = 32;
/// XT_EXTENSION_MAXNAMELEN.
const EXT_NAME_LEN: usize = 29;
/// NF_INET_NUMHOOKS hooks, named as iptables names their chains.
const HOOKS: [&str; 5] = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    V4,
    V6,
}

impl Family {
    /// Rule::family.
    pub(super) fn name(self) -> &'static str {
        match self {
            Family::V4 => "ip",
            Family::V6 => "ip6",
        }
    }

    /// sizeof(struct ipt_entry) / sizeof(struct ip6t_entry): where the
    /// matches start.
    fn entry_len(self) -> usize {
        match self {
            Family::V4 => 112,
            Family::V6 => 168,
        }
    }

    /// sizeof(struct ipt_ip) / sizeof(struct ip6t_ip6).
    fn ip_len(self) -> usize {
        match self {
            Family::V4 => 84,
            Family::V6 => 136,
        }
    }

    /// Offsets of target_offset (next_offset follows) and of the counters.
    fn offsets(self) -> (usize, usize) {
        match self {
            Family::V4 => (88, 96),
            Family::V6 => (140, 152),
        }
    }

    /// Whether the rule's jump is a goto (IPT_F_GOTO / IP6T_F_GOTO).
    pub(super) fn is_goto(self, ip: &[u8]) -> bool {
        let (at, bit) = match self {
            Family::V4 => (82, 0x02),
            Family::V6 => (131, 0x04),
        };
        ip.get(at).is_some_and(|flags| flags & bit != 0)
    }
}

/// What the blob needs of struct ipt_getinfo (struct ip6t_getinfo is the
/// same): the hooks' entry points. The underflows (policy entries) are
/// not: as in libiptc, a chain's last entry is its policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Info {
    pub(super) valid_hooks: u32,
    pub(super) hook_entry: [u32; 5],
    /// Bytes of entries.
    pub(super) size: usize,
}

impl Info {
    /// name[32], valid_hooks, hook_entry[5], underflow[5], num_entries,
    /// size.
    pub(super) fn parse(buf: &[u8]) -> io::Result<Info> {
        let word = |i: usize| u32_at(buf, 32 + 4 * i).ok_or_else(|| malformed("getinfo", 0));
        let mut info = Info {
            valid_hooks: word(0)?,
            size: word(12)? as usize,
            ..Info::default()
        };
        for (hook, entry) in info.hook_entry.iter_mut().enumerate() {
            *entry = word(1 + hook)?;
        }
        Ok(info)
    }

    /// The name of the built-in chain that starts at `offset`.
    fn hook_at(&self, offset: usize) -> Option<&'static str> {
        HOOKS.iter().enumerate().find_map(|(hook, name)| {
            let valid = self.valid_hooks & (1 << hook) != 0;
            let entry = self.hook_entry.get(hook).map(|&at| at as usize);
            (valid && entry == Some(offset)).then_some(*name)
        })
    }
}

/// A match or a target: struct xt_entry_match / xt_entry_target as
/// userspace sees them, then the extension's own data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ext<'a> {
    /// "" for the standard target (a verdict or a jump).
    pub(super) name: String,
    pub(super) revision: u8,
    pub(super) data: &'a [u8],
}

impl<'a> Ext<'a> {
    fn parse(bytes: &'a [u8]) -> Ext<'a> {
        Ext {
            name: c_string(bytes.get(2..2 + EXT_NAME_LEN).unwrap_or_default()),
            revision: bytes.get(EXT_HEADER - 1).copied().unwrap_or(0),
            data: bytes.get(EXT_HEADER..).unwrap_or_default(),
        }
    }

    /// The verdict of the standard target (struct xt_standard_target):
    /// negative, -NF_x-1 or XT_RETURN; else the offset jumped to.
    pub(super) fn verdict(&self) -> Option<i32> {
        if !self.name.is_empty() {
            return None;
        }
        Some(i32::from_ne_bytes(self.data.get(..4)?.try_into().ok()?))
    }
}

/// One entry of the blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry<'a> {
    pub(super) offset: usize,
    /// Offset of the entry after this one: what a jump that falls through
    /// to the next rule points at.
    pub(super) next: usize,
    /// struct ipt_ip / struct ip6t_ip6.
    pub(super) ip: &'a [u8],
    pub(super) counter: Counter,
    pub(super) matches: Vec<Ext<'a>>,
    pub(super) target: Ext<'a>,
}

impl<'a> Entry<'a> {
    fn parse(family: Family, blob: &'a [u8], offset: usize) -> io::Result<Entry<'a>> {
        let header = family.entry_len();
        let (target_at, counters_at) = family.offsets();
        let bad = || malformed("entry", offset);
        let head = blob.get(offset..offset + header).ok_or_else(bad)?;
        let target_offset = usize::from(u16_at(head, target_at).ok_or_else(bad)?);
        let next_offset = usize::from(u16_at(head, target_at + 2).ok_or_else(bad)?);
        if target_offset < header || target_offset + EXT_HEADER > next_offset {
            return Err(bad());
        }
        let bytes = blob.get(offset..offset + next_offset).ok_or_else(bad)?;
        let counter = Counter {
            packets: u64_at(head, counters_at).ok_or_else(bad)?,
            bytes: u64_at(head, counters_at + 8).ok_or_else(bad)?,
        };
        let mut matches = Vec::new();
        let mut at = header;
        while at < target_offset {
            let size = usize::from(u16_at(bytes, at).ok_or_else(bad)?);
            if size < EXT_HEADER || at + size > target_offset {
                return Err(bad());
            }
            matches.push(Ext::parse(bytes.get(at..at + size).ok_or_else(bad)?));
            at += size;
        }
        let size = usize::from(u16_at(bytes, target_offset).ok_or_else(bad)?);
        if size < EXT_HEADER || target_offset + size > next_offset {
            return Err(bad());
        }
        Ok(Entry {
            offset,
            next: offset + next_offset,
            ip: head.get(..family.ip_len()).ok_or_else(bad)?,
            counter,
            matches,
            target: Ext::parse(
                bytes
                    .get(target_offset..target_offset + size)
                    .ok_or_else(bad)?,
            ),
        })
    }
}

/// A built-in chain's policy: its verdict (-NF_DROP-1 or -NF_ACCEPT-1)
/// and what it counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Policy {
    pub(super) verdict: Option<i32>,
    pub(super) counter: Counter,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Chain<'a> {
    /// Control characters escaped.
    pub(super) name: String,
    /// The name as the kernel has it: user chains sort by it.
    raw_name: &'a [u8],
    builtin: bool,
    /// Offsets of the chain's first entry (the ERROR entry of a user
    /// chain) and last one (its policy or final RETURN): a jump lands
    /// between them.
    head: usize,
    foot: usize,
    pub(super) rules: Vec<Entry<'a>>,
    /// Some for a built-in chain.
    pub(super) policy: Option<Policy>,
}

/// The chains of a table in iptables-save's order: the built-in chains,
/// then the user chains by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Table<'a> {
    pub(super) chains: Vec<Chain<'a>>,
}

impl Table<'_> {
    /// The user chain a standard target's non-negative verdict jumps into.
    pub(super) fn jump_target(&self, offset: usize) -> Option<&str> {
        self.chains
            .iter()
            .find(|c| !c.builtin && c.head <= offset && offset <= c.foot)
            .map(|c| c.name.as_str())
    }
}

/// Parses the entries of a table whose getinfo is `info`.
pub(super) fn parse<'a>(family: Family, info: &Info, blob: &'a [u8]) -> io::Result<Table<'a>> {
    let mut chains: Vec<Chain<'a>> = Vec::new();
    let mut current: Option<Chain<'a>> = None;
    let mut offset = 0;
    let mut entries = 0;
    while offset < blob.len() && entries < MAX_ENTRIES {
        entries += 1;
        let entry = Entry::parse(family, blob, offset)?;
        offset = entry.next;
        if entry.next == blob.len() {
            // The ERROR entry that ends the table.
            break;
        }
        if entry.target.name == "ERROR" {
            close(&mut chains, current.take());
            let raw = entry
                .target
                .data
                .split(|&b| b == 0)
                .next()
                .unwrap_or_default();
            current = Some(Chain {
                name: escape_control(&String::from_utf8_lossy(raw)).into_owned(),
                raw_name: raw,
                builtin: false,
                head: entry.offset,
                foot: entry.offset,
                rules: Vec::new(),
                policy: None,
            });
        } else if let Some(hook) = info.hook_at(entry.offset) {
            close(&mut chains, current.take());
            current = Some(Chain {
                name: hook.to_string(),
                raw_name: hook.as_bytes(),
                builtin: true,
                head: entry.offset,
                foot: entry.offset,
                rules: vec![entry],
                policy: None,
            });
        } else if let Some(chain) = current.as_mut() {
            chain.rules.push(entry);
        }
        // An entry before any chain starts cannot come from iptables: skipped.
    }
    close(&mut chains, current.take());
    Ok(Table { chains })
}

/// Ends `chain`, whose last entry is its policy or final RETURN, not a
/// rule, and files it where libiptc does: a built-in chain at the end, a
/// user chain in name order unless it follows a built-in one.
fn close<'a>(chains: &mut Vec<Chain<'a>>, chain: Option<Chain<'a>>) {
    let Some(mut chain) = chain else { return };
    if let Some(last) = chain.rules.pop() {
        chain.foot = last.offset;
        if chain.builtin {
            chain.policy = Some(Policy {
                verdict: last.target.verdict(),
                counter: last.counter,
            });
        }
    }
    let append = chain.builtin
        || chains
            .last()
            .is_none_or(|last| last.builtin || chain.raw_name > last.raw_name);
    let at = if append {
        chains.len()
    } else {
        chains
            .iter()
            .position(|c| !c.builtin && chain.raw_name <= c.raw_name)
            .unwrap_or(chains.len())
    };
    chains.insert(at, chain);
}

fn malformed(what: &str, offset: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed iptables {what} at offset {offset}"),
    )
}

/// The text of a NUL-terminated (or full) C string.
pub(super) fn c_string(bytes: &[u8]) -> String {
    let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(text).into_owned()
}

pub(super) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

/// A __be16 (ports of the NAT targets and of conntrack revisions 1-2).
pub(super) fn be16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

pub(super) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}
