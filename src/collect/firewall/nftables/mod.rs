//! nf_tables rules over netlink, as `nft list ruleset` prints them: tables,
//! chains, rules and the anonymous sets rules use are dumped through
//! NETLINK_NETFILTER, and each rule's expressions are turned back into
//! nft's syntax (`render`), the way nftables' netlink_delinearize.c does.

mod expr;
mod proto;
mod render;
mod sets;
mod stmt;
mod types;
mod xt;

use crate::collect::ctnetlink::Ctnetlink;
use crate::model::firewall::{Backend, Counter, Rule, Verdict, bounded_text};
use std::collections::HashMap;
use std::io;

/// enum nf_tables_msg_types.
const NFT_MSG_GETTABLE: u8 = 1;
const NFT_MSG_GETCHAIN: u8 = 4;
const NFT_MSG_GETRULE: u8 = 7;
const NFT_MSG_GETSET: u8 = 10;
const NFT_MSG_GETSETELEM: u8 = 13;
/// NFT_SET_ANONYMOUS: `{ 80, 443 }` written in a rule.
const SET_ANONYMOUS: u32 = 0x1;
/// NLA_F_NESTED and NLA_F_NET_BYTEORDER, not part of an attribute's type.
const NLA_TYPE_MASK: u16 = !(0x8000 | 0x4000);
const NFGENMSG_LEN: usize = 4;

/// Rules read at most: a ruleset is as big as a process with
/// CAP_NET_ADMIN in the namespace made it.
const MAX_RULES: usize = 100_000;
/// Elements of one anonymous set read at most; a bigger set is shown by
/// name (`@__set0`).
const MAX_ELEMENTS: usize = 65_536;

/// Every rule of every nf_tables table in the calling thread's network
/// namespace, in `nft list ruleset` order, plus one policy Rule per base
/// chain, placed before the chain's rules (where nft prints the policy).
pub fn read(netlink: &mut Ctnetlink) -> io::Result<Vec<Rule>> {
    let mut tables = Vec::new();
    netlink.nft_dump(0, NFT_MSG_GETTABLE, &[], |_, payload| {
        tables.extend(parse_table(payload));
    })?;
    let mut chains = Vec::new();
    netlink.nft_dump(0, NFT_MSG_GETCHAIN, &[], |_, payload| {
        chains.extend(parse_chain(payload));
    })?;
    let mut raw_rules = Vec::new();
    netlink.nft_dump(0, NFT_MSG_GETRULE, &[], |_, payload| {
        if raw_rules.len() < MAX_RULES {
            raw_rules.extend(parse_rule(payload));
        }
    })?;
    let mut sets: HashMap<(u8, String), HashMap<String, Set>> = HashMap::new();
    netlink.nft_dump(0, NFT_MSG_GETSET, &[], |_, payload| {
        if let Some((family, table, name, set)) = parse_set(payload) {
            sets.entry((family, table)).or_default().insert(name, set);
        }
    })?;
    fetch_anonymous_elements(netlink, &raw_rules, &mut sets);

    let mut by_chain: HashMap<(u8, &str, &str), Vec<&RawRule>> = HashMap::new();
    for rule in &raw_rules {
        by_chain
            .entry((rule.family, &rule.table, &rule.chain))
            .or_default()
            .push(rule);
    }
    let no_sets = HashMap::new();
    let mut rules = Vec::new();
    for table in &tables {
        let table_sets = sets
            .get(&(table.family, table.name.clone()))
            .unwrap_or(&no_sets);
        for chain in chains
            .iter()
            .filter(|c| c.family == table.family && c.table == table.name)
        {
            let rule = |handle, position, text, verdict, counter, policy| Rule {
                backend: Backend::Nftables,
                family: family_name(table.family).to_string(),
                table: table.name.clone(),
                chain: chain.name.clone(),
                handle,
                position,
                text: bounded_text(text),
                verdict,
                counter,
                policy,
            };
            if let Some(policy) = chain.policy {
                let (text, verdict) = match policy {
                    0 => ("policy drop", Verdict::Drop),
                    1 => ("policy accept", Verdict::Accept),
                    _ => ("policy unknown", Verdict::Other),
                };
                rules.push(rule(
                    None,
                    0,
                    text.to_string(),
                    verdict,
                    chain.counter,
                    true,
                ));
            }
            let members = by_chain
                .get(&(chain.family, chain.table.as_str(), chain.name.as_str()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            for (index, raw) in members.iter().enumerate() {
                if rules.len() >= MAX_RULES {
                    return Ok(rules);
                }
                let rendered = render::rule(table.family, &raw.exprs, table_sets);
                let mut text = rendered.text;
                if let Some(comment) = &raw.comment {
                    text.push_str(&format!(" comment \"{comment}\""));
                }
                let position = u32::try_from(index + 1).unwrap_or(u32::MAX);
                rules.push(rule(
                    Some(raw.handle),
                    position,
                    text,
                    rendered.verdict,
                    rendered.counter,
                    false,
                ));
            }
        }
    }
    Ok(rules)
}

/// The name nft gives an NFPROTO_* family.
pub(crate) fn family_name(family: u8) -> &'static str {
    match family {
        1 => "inet",
        2 => "ip",
        3 => "arp",
        5 => "netdev",
        7 => "bridge",
        10 => "ip6",
        _ => "unknown",
    }
}

struct Table {
    family: u8,
    name: String,
}

struct Chain {
    family: u8,
    table: String,
    name: String,
    /// A base chain's policy verdict (NF_DROP 0, NF_ACCEPT 1).
    policy: Option<u32>,
    counter: Option<Counter>,
}

struct RawRule {
    family: u8,
    table: String,
    chain: String,
    handle: u64,
    exprs: Vec<expr::Expr>,
    comment: Option<String>,
}

/// A set or map: what rendering a rule that looks it up needs.
pub(crate) struct Set {
    flags: u32,
    /// NFTA_SET_KEY_LEN, in bytes.
    key_len: u32,
    /// nft's datatype of a map's values (NFTA_SET_DATA_TYPE).
    data_type: u32,
    /// Read for anonymous sets only.
    elements: Option<Vec<Element>>,
}

pub(crate) struct Element {
    key: Vec<u8>,
    /// NFTA_SET_ELEM_KEY_END: the end of a concatenation's range.
    key_end: Option<Vec<u8>>,
    /// NFT_SET_ELEM_INTERVAL_END: the (exclusive) end of a range.
    interval_end: bool,
    data: Option<expr::Data>,
}

fn family_of(payload: &[u8]) -> Option<u8> {
    payload.first().copied()
}

fn parse_table(payload: &[u8]) -> Option<Table> {
    let name = attributes(payload.get(NFGENMSG_LEN..)?)
        .find(|(kind, _)| *kind == 1)
        .map(|(_, value)| string(value))?;
    Some(Table {
        family: family_of(payload)?,
        name,
    })
}

fn parse_chain(payload: &[u8]) -> Option<Chain> {
    let mut chain = Chain {
        family: family_of(payload)?,
        table: String::new(),
        name: String::new(),
        policy: None,
        counter: None,
    };
    let mut hook = false;
    for (kind, value) in attributes(payload.get(NFGENMSG_LEN..)?) {
        match kind {
            1 => chain.table = string(value),
            3 => chain.name = string(value),
            4 => hook = true,
            5 => chain.policy = be_u32(value),
            8 => chain.counter = parse_counter(value),
            _ => {}
        }
    }
    if !hook {
        chain.policy = None;
        chain.counter = None;
    }
    Some(chain)
}

/// NFTA_CHAIN_COUNTERS: nested NFTA_COUNTER_BYTES, NFTA_COUNTER_PACKETS.
fn parse_counter(nested: &[u8]) -> Option<Counter> {
    let mut counter = Counter::default();
    for (kind, value) in attributes(nested) {
        match kind {
            1 => counter.bytes = be_u64(value)?,
            2 => counter.packets = be_u64(value)?,
            _ => {}
        }
    }
    Some(counter)
}

fn parse_rule(payload: &[u8]) -> Option<RawRule> {
    let mut rule = RawRule {
        family: family_of(payload)?,
        table: String::new(),
        chain: String::new(),
        handle: 0,
        exprs: Vec::new(),
        comment: None,
    };
    for (kind, value) in attributes(payload.get(NFGENMSG_LEN..)?) {
        match kind {
            1 => rule.table = string(value),
            2 => rule.chain = string(value),
            3 => rule.handle = be_u64(value)?,
            4 => rule.exprs = expr::parse_list(value),
            7 => rule.comment = comment(value),
            _ => {}
        }
    }
    Some(rule)
}

/// The comment in a rule's userdata: type-length-value records, type 0
/// (NFTNL_UDATA_RULE_COMMENT) a NUL-terminated string.
fn comment(userdata: &[u8]) -> Option<String> {
    let mut rest = userdata;
    while let [kind, len, tail @ ..] = rest {
        let value = tail.get(..usize::from(*len))?;
        if *kind == 0 {
            return Some(string(value));
        }
        rest = &tail[usize::from(*len)..];
    }
    None
}

fn parse_set(payload: &[u8]) -> Option<(u8, String, String, Set)> {
    let mut table = String::new();
    let mut name = String::new();
    let mut set = Set {
        flags: 0,
        key_len: 0,
        data_type: 0,
        elements: None,
    };
    for (kind, value) in attributes(payload.get(NFGENMSG_LEN..)?) {
        match kind {
            1 => table = string(value),
            2 => name = string(value),
            3 => set.flags = be_u32(value)?,
            5 => set.key_len = be_u32(value)?,
            6 => set.data_type = be_u32(value)?,
            _ => {}
        }
    }
    Some((family_of(payload)?, table, name, set))
}

/// Reads the elements of the anonymous sets the rules look up: nft prints
/// them inline. A set that vanished since the rule dump stays unread.
fn fetch_anonymous_elements(
    netlink: &mut Ctnetlink,
    rules: &[RawRule],
    sets: &mut HashMap<(u8, String), HashMap<String, Set>>,
) {
    for rule in rules {
        for name in rule.exprs.iter().filter_map(expr::Expr::set_name) {
            let key = (rule.family, rule.table.clone());
            let Some(set) = sets.get_mut(&key).and_then(|s| s.get_mut(name)) else {
                continue;
            };
            if set.flags & SET_ANONYMOUS == 0 || set.elements.is_some() {
                continue;
            }
            let mut elements = Vec::new();
            let mut too_many = false;
            let request = [(1, nul_terminated(&rule.table)), (2, nul_terminated(name))];
            let result = netlink.nft_dump(rule.family, NFT_MSG_GETSETELEM, &request, |_, p| {
                for element in parse_elements(p) {
                    if elements.len() >= MAX_ELEMENTS {
                        too_many = true;
                        return;
                    }
                    elements.push(element);
                }
            });
            if result.is_ok() && !too_many {
                set.elements = Some(elements);
            }
        }
    }
}

fn nul_terminated(name: &str) -> Vec<u8> {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(0);
    bytes
}

/// The elements of one GETSETELEM reply (NFTA_SET_ELEM_LIST_ELEMENTS).
fn parse_elements(payload: &[u8]) -> Vec<Element> {
    let Some(body) = payload.get(NFGENMSG_LEN..) else {
        return Vec::new();
    };
    attributes(body)
        .filter(|(kind, _)| *kind == 3)
        .flat_map(|(_, list)| attributes(list))
        .filter(|(kind, _)| *kind == 1)
        .filter_map(|(_, element)| {
            let mut parsed = Element {
                key: Vec::new(),
                key_end: None,
                interval_end: false,
                data: None,
            };
            for (kind, value) in attributes(element) {
                match kind {
                    1 => parsed.key = data_value(value)?,
                    2 => parsed.data = expr::data(value),
                    3 => parsed.interval_end = be_u32(value)? & 1 != 0,
                    10 => parsed.key_end = data_value(value),
                    _ => {}
                }
            }
            Some(parsed)
        })
        .collect()
}

/// Netlink attributes as (type, value), the type without NLA_F_NESTED and
/// NLA_F_NET_BYTEORDER; stops at the first malformed one.
pub(crate) fn attributes(mut bytes: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let header = bytes.get(..4)?;
        let len = usize::from(u16::from_ne_bytes([header[0], header[1]]));
        let kind = u16::from_ne_bytes([header[2], header[3]]) & NLA_TYPE_MASK;
        let value = bytes.get(4..len)?;
        bytes = bytes.get(len.next_multiple_of(4)..).unwrap_or_default();
        Some((kind, value))
    })
}

pub(crate) fn be_u32(value: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(value.get(..4)?.try_into().ok()?))
}

pub(crate) fn be_u64(value: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(value.get(..8)?.try_into().ok()?))
}

/// A kernel string: up to its NUL, control characters escaped.
pub(crate) fn string(value: &[u8]) -> String {
    let end = value.iter().position(|b| *b == 0).unwrap_or(value.len());
    crate::text::escape_control(&String::from_utf8_lossy(&value[..end])).into_owned()
}

/// The NFTA_DATA_VALUE inside a nested nft_data attribute.
pub(crate) fn data_value(nested: &[u8]) -> Option<Vec<u8>> {
    attributes(nested)
        .find(|(kind, _)| *kind == 1)
        .map(|(_, value)| value.to_vec())
}

#[cfg(test)]
mod tests;
