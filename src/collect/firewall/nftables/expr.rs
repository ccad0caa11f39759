//! A rule's expressions (NFTA_RULE_EXPRESSIONS) as the kernel gives them:
//! register loads, comparisons and statements, before `render` turns them
//! back into nft's syntax. Each also has a low-level form like
//! `nft --debug=netlink` prints, for what `render` cannot name.

use super::{attributes, be_u32, be_u64, data_value, string};
use std::fmt::Write;

/// A register, numbered in 32-bit units (NFT_REG32_00 = 8): nft writes
/// the 16-byte NFT_REG_1..4 too, which are NFT_REG32_00, 04, 08, 12.
pub type Reg = u32;
/// NFT_REG_VERDICT.
pub const VERDICT: Reg = 0;

fn reg(value: &[u8]) -> Option<Reg> {
    let r = be_u32(value)?;
    Some(match r {
        1..=4 => 8 + (r - 1) * 4,
        _ => r,
    })
}

/// An immediate's or set element's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    Value(Vec<u8>),
    Verdict { code: i32, chain: Option<String> },
}

/// Parses an nft_data attribute (NFTA_DATA_VALUE or NFTA_DATA_VERDICT).
pub fn data(nested: &[u8]) -> Option<Data> {
    for (kind, value) in attributes(nested) {
        match kind {
            1 => return Some(Data::Value(value.to_vec())),
            2 => {
                let mut code = None;
                let mut chain = None;
                for (kind, value) in attributes(value) {
                    match kind {
                        1 => code = be_u32(value).map(|c| c as i32),
                        2 => chain = Some(string(value)),
                        _ => {}
                    }
                }
                return Some(Data::Verdict { code: code?, chain });
            }
            _ => {}
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Payload {
        dreg: Reg,
        base: u32,
        offset: u32,
        len: u32,
    },
    PayloadSet {
        sreg: Reg,
        base: u32,
        offset: u32,
        len: u32,
    },
    Meta {
        dreg: Reg,
        key: u32,
    },
    MetaSet {
        sreg: Reg,
        key: u32,
    },
    Ct {
        dreg: Reg,
        key: u32,
        dir: Option<u8>,
    },
    CtSet {
        sreg: Reg,
        key: u32,
    },
    Cmp {
        sreg: Reg,
        op: u32,
        data: Vec<u8>,
    },
    Range {
        sreg: Reg,
        op: u32,
        from: Vec<u8>,
        to: Vec<u8>,
    },
    /// A byte order swap of `size`-byte words (ntoh or hton, alike here).
    Byteorder {
        sreg: Reg,
        dreg: Reg,
        size: u32,
    },
    /// NFT_BITWISE_MASK_XOR: `dreg = (sreg & mask) ^ xor`.
    Bitwise {
        sreg: Reg,
        dreg: Reg,
        mask: Vec<u8>,
        xor: Vec<u8>,
    },
    Lookup {
        sreg: Reg,
        dreg: Option<Reg>,
        set: String,
        invert: bool,
    },
    Immediate {
        dreg: Reg,
        data: Data,
    },
    Counter {
        packets: u64,
        bytes: u64,
    },
    Log(Log),
    Limit {
        rate: u64,
        unit: u64,
        burst: u32,
        bytes: bool,
        over: bool,
    },
    Reject {
        kind: u32,
        code: u8,
    },
    Nat(Nat),
    Numgen {
        dreg: Reg,
        modulus: u32,
        random: bool,
        offset: u32,
    },
    /// xt match (`target` false) or target of iptables-nft.
    Xt {
        target: bool,
        name: String,
        rev: u32,
        info: Vec<u8>,
    },
    Notrack,
    /// Anything else, in its low-level form.
    Other(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    pub prefix: Option<String>,
    pub group: Option<u16>,
    pub snaplen: Option<u32>,
    pub qthreshold: Option<u16>,
    pub level: Option<u32>,
    pub flags: u32,
}

/// nat, masq and redir: `kind` is "snat", "dnat", "masquerade" or
/// "redirect".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nat {
    pub kind: &'static str,
    pub family: u32,
    pub addr: (Option<Reg>, Option<Reg>),
    pub proto: (Option<Reg>, Option<Reg>),
    pub flags: u32,
}

/// The expressions of NFTA_RULE_EXPRESSIONS, in order.
pub fn parse_list(list: &[u8]) -> Vec<Expr> {
    attributes(list)
        .filter(|(kind, _)| *kind == 1) // NFTA_LIST_ELEM
        .map(|(_, element)| {
            let mut name = String::new();
            let mut body: &[u8] = &[];
            for (kind, value) in attributes(element) {
                match kind {
                    1 => name = string(value),
                    2 => body = value,
                    _ => {}
                }
            }
            parse(&name, body).unwrap_or_else(|| Expr::Other(format!("[{name}]")))
        })
        .collect()
}

/// One expression; None when a needed attribute is missing.
fn parse(name: &str, body: &[u8]) -> Option<Expr> {
    let a: Vec<(u16, &[u8])> = attributes(body).collect();
    let get = |kind: u16| a.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v);
    let u32_of = |kind: u16| get(kind).and_then(be_u32);
    let reg_of = |kind: u16| get(kind).and_then(reg);
    Some(match name {
        "payload" => {
            let (base, offset, len) = (u32_of(2)?, u32_of(3)?, u32_of(4)?);
            match reg_of(1) {
                Some(dreg) => Expr::Payload {
                    dreg,
                    base,
                    offset,
                    len,
                },
                None => Expr::PayloadSet {
                    sreg: reg_of(5)?,
                    base,
                    offset,
                    len,
                },
            }
        }
        "meta" => match reg_of(1) {
            Some(dreg) => Expr::Meta {
                dreg,
                key: u32_of(2)?,
            },
            None => Expr::MetaSet {
                sreg: reg_of(3)?,
                key: u32_of(2)?,
            },
        },
        "ct" => match reg_of(1) {
            Some(dreg) => Expr::Ct {
                dreg,
                key: u32_of(2)?,
                dir: get(3).and_then(|v| v.first().copied()),
            },
            None => Expr::CtSet {
                sreg: reg_of(4)?,
                key: u32_of(2)?,
            },
        },
        "cmp" => Expr::Cmp {
            sreg: reg_of(1)?,
            op: u32_of(2)?,
            data: data_value(get(3)?)?,
        },
        "range" => Expr::Range {
            sreg: reg_of(1)?,
            op: u32_of(2)?,
            from: data_value(get(3)?)?,
            to: data_value(get(4)?)?,
        },
        // Only mask-and-xor: shifts stay low-level.
        "bitwise" if u32_of(6).unwrap_or(0) == 0 => Expr::Bitwise {
            sreg: reg_of(1)?,
            dreg: reg_of(2)?,
            mask: data_value(get(4)?)?,
            xor: data_value(get(5)?)?,
        },
        "byteorder" => Expr::Byteorder {
            sreg: reg_of(1)?,
            dreg: reg_of(2)?,
            size: u32_of(5)?,
        },
        "lookup" => Expr::Lookup {
            sreg: reg_of(2)?,
            dreg: reg_of(3),
            set: string(get(1)?),
            invert: u32_of(5).unwrap_or(0) & 1 != 0,
        },
        "immediate" => Expr::Immediate {
            dreg: reg_of(1)?,
            data: data(get(2)?)?,
        },
        "counter" => Expr::Counter {
            bytes: get(1).and_then(be_u64).unwrap_or(0),
            packets: get(2).and_then(be_u64).unwrap_or(0),
        },
        "log" => Expr::Log(Log {
            group: get(1).and_then(|v| Some(u16::from_be_bytes(v.get(..2)?.try_into().ok()?))),
            prefix: get(2).map(string),
            snaplen: u32_of(3),
            qthreshold: get(4).and_then(|v| Some(u16::from_be_bytes(v.get(..2)?.try_into().ok()?))),
            level: u32_of(5),
            flags: u32_of(6).unwrap_or(0),
        }),
        "limit" => Expr::Limit {
            rate: get(1).and_then(be_u64)?,
            unit: get(2).and_then(be_u64)?,
            burst: u32_of(3).unwrap_or(0),
            bytes: u32_of(4) == Some(1),
            over: u32_of(5).unwrap_or(0) & 1 != 0,
        },
        "reject" => Expr::Reject {
            kind: u32_of(1)?,
            code: get(2).and_then(|v| v.first().copied()).unwrap_or(0),
        },
        "nat" => Expr::Nat(Nat {
            kind: if u32_of(1)? == 0 { "snat" } else { "dnat" },
            family: u32_of(2).unwrap_or(0),
            addr: (reg_of(3), reg_of(4)),
            proto: (reg_of(5), reg_of(6)),
            flags: u32_of(7).unwrap_or(0),
        }),
        "masq" => Expr::Nat(Nat {
            kind: "masquerade",
            flags: u32_of(1).unwrap_or(0),
            proto: (reg_of(2), reg_of(3)),
            ..Nat::default()
        }),
        "redir" => Expr::Nat(Nat {
            kind: "redirect",
            proto: (reg_of(1), reg_of(2)),
            flags: u32_of(3).unwrap_or(0),
            ..Nat::default()
        }),
        "numgen" => Expr::Numgen {
            dreg: reg_of(1)?,
            modulus: u32_of(2)?,
            random: u32_of(3)? == 1,
            offset: u32_of(4).unwrap_or(0),
        },
        "match" | "target" => Expr::Xt {
            target: name == "target",
            name: string(get(1)?),
            rev: u32_of(2).unwrap_or(0),
            info: get(3).unwrap_or_default().to_vec(),
        },
        "notrack" => Expr::Notrack,
        _ => Expr::Other(other(name, &a)),
    })
}

/// An expression netlens does not decode: its name and attributes.
fn other(name: &str, attributes: &[(u16, &[u8])]) -> String {
    let mut out = format!("[{name}");
    for (kind, value) in attributes {
        let _ = write!(out, " {kind}={}", super::types::hex(value));
    }
    out.push(']');
    out
}

const BASES: [&str; 4] = ["link layer", "network", "transport", "inner"];
const CMP_OPS: [&str; 6] = ["eq", "neq", "lt", "lte", "gt", "gte"];

/// The register as nft --debug=netlink names it.
fn r(reg: Reg) -> String {
    match reg {
        VERDICT => "0".to_string(),
        8.. => format!("{}", (reg - 8) / 4 + 1),
        _ => reg.to_string(),
    }
}

impl Expr {
    /// The set a lookup uses.
    pub fn set_name(&self) -> Option<&str> {
        match self {
            Expr::Lookup { set, .. } => Some(set),
            _ => None,
        }
    }

    /// The low-level form, like `nft --debug=netlink`.
    pub fn low_level(&self) -> String {
        let base = |b: &u32| BASES.get(*b as usize).copied().unwrap_or("unknown");
        match self {
            Expr::Payload {
                dreg,
                base: b,
                offset,
                len,
            } => format!(
                "[payload load {len}b @ {} header + {offset} => reg {}]",
                base(b),
                r(*dreg)
            ),
            Expr::PayloadSet {
                sreg,
                base: b,
                offset,
                len,
            } => format!(
                "[payload write reg {} => {len}b @ {} header + {offset}]",
                r(*sreg),
                base(b)
            ),
            Expr::Meta { dreg, key } => format!("[meta load {key} => reg {}]", r(*dreg)),
            Expr::MetaSet { sreg, key } => format!("[meta set {key} with reg {}]", r(*sreg)),
            Expr::Ct { dreg, key, .. } => format!("[ct load {key} => reg {}]", r(*dreg)),
            Expr::CtSet { sreg, key } => format!("[ct set {key} with reg {}]", r(*sreg)),
            Expr::Cmp { sreg, op, data } => format!(
                "[cmp {} reg {} {}]",
                CMP_OPS.get(*op as usize).unwrap_or(&"?"),
                r(*sreg),
                super::types::hex(data)
            ),
            Expr::Range { sreg, op, from, to } => format!(
                "[range {} reg {} {} {}]",
                if *op == 0 { "eq" } else { "neq" },
                r(*sreg),
                super::types::hex(from),
                super::types::hex(to)
            ),
            Expr::Bitwise {
                sreg,
                dreg,
                mask,
                xor,
            } => format!(
                "[bitwise reg {} = ( reg {} & {} ) ^ {}]",
                r(*dreg),
                r(*sreg),
                super::types::hex(mask),
                super::types::hex(xor)
            ),
            Expr::Lookup {
                sreg, dreg, set, ..
            } => match dreg {
                Some(dreg) => format!("[lookup reg {} set {set} dreg {}]", r(*sreg), r(*dreg)),
                None => format!("[lookup reg {} set {set}]", r(*sreg)),
            },
            Expr::Immediate { dreg, data } => match data {
                Data::Value(v) => format!("[immediate reg {} {}]", r(*dreg), super::types::hex(v)),
                Data::Verdict { code, chain } => format!(
                    "[immediate reg {} {}]",
                    r(*dreg),
                    super::types::verdict(*code, chain.as_deref())
                ),
            },
            Expr::Numgen {
                dreg,
                modulus,
                random,
                offset,
            } => format!(
                "[numgen reg {} = {} mod {modulus} offset {offset}]",
                r(*dreg),
                if *random { "random" } else { "inc" }
            ),
            Expr::Other(text) => text.clone(),
            // Statements always have a rendering of their own.
            other => format!("[{other:?}]"),
        }
    }
}
