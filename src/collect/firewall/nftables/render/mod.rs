//! A rule's expressions back into the statements `nft list ruleset`
//! prints, following nftables' netlink_delinearize.c: registers are
//! tracked from loads to the comparisons that use them, merged header
//! loads are split into fields, and the protocol matches nft adds as
//! dependencies (`meta l4proto tcp` before `tcp dport 22`) are dropped
//! again when a later match implies them. What is not understood keeps
//! its low-level form (`[payload load ...]`).

mod matches;

use super::Set;
use super::expr::{Data, Expr, Reg, VERDICT};
use super::proto::{self, Proto};
use super::sets::{self, Part};
use super::stmt;
use super::types::{self, Ty};
use crate::model::firewall::{Counter, Verdict};
use std::collections::HashMap;

/// Payload bases (NFT_PAYLOAD_*_HEADER).
const LL: usize = 0;
const NET: usize = 1;
const TH: usize = 2;
/// NFPROTO_*.
const INET: u8 = 1;
const IPV4: u8 = 2;
const ARP: u8 = 3;
const NETDEV: u8 = 5;
const BRIDGE: u8 = 7;
const IPV6: u8 = 10;
/// Meta keys that name protocols.
const META_PROTOCOL: u32 = 1;
const META_NFPROTO: u32 = 15;
const META_L4PROTO: u32 = 16;

pub struct Rendered {
    pub text: String,
    pub verdict: Verdict,
    /// The first counter's values.
    pub counter: Option<Counter>,
}

/// What a register holds.
#[derive(Debug, Clone)]
enum Src {
    /// Offset and length in bits.
    Payload {
        base: usize,
        offset: u32,
        len: u32,
    },
    Meta(u32),
    Ct {
        key: u32,
        dir: Option<u8>,
    },
    Numgen {
        random: bool,
        modulus: u32,
        offset: u32,
    },
    Masked {
        inner: Box<Src>,
        mask: Vec<u8>,
        xor: Vec<u8>,
    },
    Value(Vec<u8>),
    Map {
        key: Box<Src>,
        set: String,
    },
    /// `inner` with its `size`-byte words swapped (nft compares meta and
    /// ct values with `<` and ranges in network byte order).
    Swapped {
        inner: Box<Src>,
        size: u32,
    },
    /// Consecutive registers a set lookup reads: (source, length in bytes).
    Concat(Vec<(Src, u32)>),
    /// The low-level form of an expression not decoded.
    Raw(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Neq,
    Lt,
    Lte,
    Gt,
    Gte,
}

impl Op {
    fn from_cmp(op: u32) -> Option<Op> {
        [Op::Eq, Op::Neq, Op::Lt, Op::Lte, Op::Gt, Op::Gte]
            .get(op as usize)
            .copied()
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Neq => "!=",
            Op::Lt => "<",
            Op::Lte => "<=",
            Op::Gt => ">",
            Op::Gte => ">=",
        }
    }

    /// What goes before the right-hand side: nothing for an implicit `==`.
    fn prefix(self) -> String {
        match self {
            Op::Eq => String::new(),
            op => format!("{} ", op.symbol()),
        }
    }
}

enum Rhs {
    Value(Vec<u8>),
    Range(Vec<u8>, Vec<u8>),
    Set(String),
}

/// The left-hand side of a match, printed.
struct Field {
    text: String,
    parts: Vec<Part>,
}

/// A protocol match that a later match may make redundant.
#[derive(Debug, Clone, Copy)]
struct Dep {
    out: usize,
    meta: Option<u32>,
    proto: Option<Proto>,
    base: usize,
    value: u32,
}

struct Ctx<'a> {
    family: u8,
    sets: &'a HashMap<String, Set>,
    regs: HashMap<Reg, (Src, u32)>,
    /// The protocol of each header, as far as the rule told so far.
    proto: [Option<Proto>; 3],
    /// The match that selected the protocol of each base.
    deps: [Option<Dep>; 4],
    out: Vec<Option<String>>,
    verdict: Verdict,
    counter: Option<Counter>,
}

/// Renders one rule of a table of `family` whose sets are `sets`.
pub fn rule(family: u8, exprs: &[Expr], sets: &HashMap<String, Set>) -> Rendered {
    let mut proto = [None; 3];
    match family {
        INET => proto[LL] = Some(Proto::Inet),
        NETDEV => proto[LL] = Some(Proto::Netdev),
        BRIDGE => proto[LL] = Some(Proto::Ether),
        IPV4 => proto[NET] = Some(Proto::Ip),
        IPV6 => proto[NET] = Some(Proto::Ip6),
        ARP => proto[NET] = Some(Proto::Arp),
        _ => {}
    }
    let mut ctx = Ctx {
        family,
        sets,
        regs: HashMap::new(),
        proto,
        deps: [None; 4],
        out: Vec::new(),
        verdict: Verdict::Other,
        counter: None,
    };
    let mut i = 0;
    while let Some(e) = exprs.get(i) {
        i += 1;
        // nft writes `a-b` as cmp gte a, cmp lte b; `!= a-b` as lt, gt.
        if let (Expr::Cmp { sreg, op, data }, Some(second)) = (e, exprs.get(i))
            && let Expr::Cmp {
                sreg: s2,
                op: o2,
                data: d2,
            } = second
            && sreg == s2
            && matches!((op, o2), (5, 3) | (2, 4))
        {
            i += 1;
            let op = if *op == 5 { Op::Eq } else { Op::Neq };
            let raw = format!("{} {}", e.low_level(), second.low_level());
            ctx.relational(*sreg, op, Rhs::Range(data.clone(), d2.clone()), &raw);
            continue;
        }
        ctx.expr(e);
    }
    Rendered {
        text: ctx.out.into_iter().flatten().collect::<Vec<_>>().join(" "),
        verdict: ctx.verdict,
        counter: ctx.counter,
    }
}

impl Ctx<'_> {
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Payload {
                dreg,
                base,
                offset,
                len,
            } => {
                let src = Src::Payload {
                    base: *base as usize,
                    offset: offset.saturating_mul(8),
                    len: (*len).min(64) * 8,
                };
                self.load(*dreg, src, *len);
            }
            Expr::Meta { dreg, key } => {
                let len = proto::meta_key(*key).map_or(4, |m| m.2);
                self.load(*dreg, Src::Meta(*key), len);
            }
            Expr::Ct { dreg, key, dir } => {
                let len = proto::ct_key(*key).map_or(4, |c| c.2);
                let dir = *dir;
                self.load(*dreg, Src::Ct { key: *key, dir }, len);
            }
            Expr::Numgen {
                dreg,
                modulus,
                random,
                offset,
            } => {
                let src = Src::Numgen {
                    random: *random,
                    modulus: *modulus,
                    offset: *offset,
                };
                self.load(*dreg, src, 4);
            }
            Expr::Bitwise {
                sreg,
                dreg,
                mask,
                xor,
            } => {
                let src = match self.regs.get(sreg) {
                    Some((inner, _)) => Src::Masked {
                        inner: Box::new(inner.clone()),
                        mask: mask.clone(),
                        xor: xor.clone(),
                    },
                    None => Src::Raw(e.low_level()),
                };
                self.load(*dreg, src, mask.len() as u32);
            }
            Expr::Byteorder { sreg, dreg, size } => {
                let src = match self.regs.get(sreg) {
                    Some((inner, len)) => (
                        Src::Swapped {
                            inner: Box::new(inner.clone()),
                            size: *size,
                        },
                        *len,
                    ),
                    None => (Src::Raw(e.low_level()), 4),
                };
                self.load(*dreg, src.0, src.1);
            }
            Expr::Immediate {
                dreg: VERDICT,
                data: Data::Verdict { code, chain },
            } => {
                self.verdict = match code {
                    0 => Verdict::Drop,
                    1 => Verdict::Accept,
                    -3 => Verdict::Jump(chain.clone().unwrap_or_default()),
                    -4 => Verdict::Goto(chain.clone().unwrap_or_default()),
                    -5 => Verdict::Return,
                    _ => Verdict::Other,
                };
                self.statement(types::verdict(*code, chain.as_deref()));
            }
            Expr::Immediate {
                dreg,
                data: Data::Value(value),
            } if *dreg != VERDICT => {
                self.load(*dreg, Src::Value(value.clone()), value.len() as u32);
            }
            Expr::Cmp { sreg, op, data } => match Op::from_cmp(*op) {
                Some(op) => self.relational(*sreg, op, Rhs::Value(data.clone()), &e.low_level()),
                None => self.statement(e.low_level()),
            },
            Expr::Range { sreg, op, from, to } => {
                let op = if *op == 0 { Op::Eq } else { Op::Neq };
                let rhs = Rhs::Range(from.clone(), to.clone());
                self.relational(*sreg, op, rhs, &e.low_level());
            }
            Expr::Lookup {
                sreg,
                dreg,
                set,
                invert,
            } => match (self.lookup_key(*sreg, set), dreg) {
                (None, _) => self.statement(e.low_level()),
                (Some(key), None) => {
                    let op = if *invert { Op::Neq } else { Op::Eq };
                    self.relational_src(key, op, Rhs::Set(set.clone()), &e.low_level());
                }
                (Some(key), Some(VERDICT)) => match self.field(&key) {
                    Some(field) => {
                        let set = sets::set_text(self.sets, set, &field.parts, true);
                        self.statement(format!("{} vmap {set}", field.text));
                    }
                    None => self.statement(e.low_level()),
                },
                (Some(key), Some(dreg)) => {
                    let len = self.sets.get(set).map_or(4, |s| s.key_len);
                    let map = Src::Map {
                        key: Box::new(key),
                        set: set.clone(),
                    };
                    self.load(*dreg, map, len);
                }
            },
            Expr::Counter { packets, bytes } => {
                self.counter.get_or_insert(Counter {
                    packets: *packets,
                    bytes: *bytes,
                });
                self.statement("counter".to_string());
            }
            Expr::Log(log) => self.statement(stmt::log_text(log)),
            Expr::Limit {
                rate,
                unit,
                burst,
                bytes,
                over,
            } => self.statement(stmt::limit_text(*rate, *unit, *burst, *bytes, *over)),
            Expr::Reject { kind, code } => {
                self.verdict = Verdict::Reject;
                let text = self.reject(*kind, *code);
                self.statement(text);
            }
            Expr::Nat(nat) => {
                let ip6 = nat.family == u32::from(IPV6);
                let addr_ty = if ip6 { Ty::Ip6Addr } else { Ty::IpAddr };
                let addr = self.nat_range(nat.addr, addr_ty);
                let proto = self.nat_range(nat.proto, Ty::InetService);
                let text = match (addr, proto) {
                    (Some(addr), Some(proto)) => {
                        stmt::nat_text(nat, self.family == INET, addr, proto)
                    }
                    _ => e.low_level(),
                };
                self.statement(text);
            }
            Expr::MetaSet { sreg, key } => {
                let src = self.regs.get(sreg).map(|r| r.0.clone());
                let text = match (proto::meta_key(*key), src) {
                    (Some((name, ty, _, plain)), Some(src)) => {
                        let meta = if plain { "" } else { "meta " };
                        self.src_text(&src, ty)
                            .map(|value| format!("{meta}{name} set {value}"))
                    }
                    _ => None,
                };
                self.statement(text.unwrap_or_else(|| e.low_level()));
            }
            Expr::CtSet { sreg, key } => {
                let src = self.regs.get(sreg).map(|r| r.0.clone());
                let text = match (proto::ct_key(*key), src) {
                    (Some((name, ty, _)), Some(src)) => self
                        .src_text(&src, ty)
                        .map(|value| format!("ct {name} set {value}")),
                    _ => None,
                };
                self.statement(text.unwrap_or_else(|| e.low_level()));
            }
            Expr::PayloadSet {
                sreg,
                base,
                offset,
                len,
            } => {
                let text = match self.regs.get(sreg) {
                    Some((Src::Value(value), _)) => {
                        let (field, ty, _) = self.payload_field(
                            *base as usize,
                            offset.saturating_mul(8),
                            len.saturating_mul(8),
                        );
                        Some(format!("{field} set {}", types::format(ty, value)))
                    }
                    _ => None,
                };
                self.statement(text.unwrap_or_else(|| e.low_level()));
            }
            Expr::Xt {
                target,
                name,
                rev,
                info,
            } => {
                if *target && name == "REJECT" {
                    self.verdict = Verdict::Reject;
                }
                let text =
                    super::xt::render(self.family, *target, name, *rev, info, self.proto[TH]);
                self.statement(text);
            }
            Expr::Notrack => self.statement("notrack".to_string()),
            Expr::Immediate { .. } | Expr::Other(_) => self.statement(e.low_level()),
        }
    }

    /// `len` bytes from `src` into `dreg` (registers hold 64 at most).
    fn load(&mut self, dreg: Reg, src: Src, len: u32) {
        self.regs.insert(dreg, (src, len.min(64)));
    }

    /// A match: kept as a possible dependency, so returns its index.
    fn expression(&mut self, text: String) -> usize {
        self.out.push(Some(text));
        self.out.len() - 1
    }

    /// Any other statement ends what later matches can make redundant.
    fn statement(&mut self, text: String) {
        self.out.push(Some(text));
        self.deps = [None; 4];
    }

    /// What a lookup compares: one register, or the concatenation the
    /// set's key length spans.
    fn lookup_key(&self, sreg: Reg, set: &str) -> Option<Src> {
        let (first, len) = self.regs.get(&sreg)?.clone();
        let key_len = self.sets.get(set).map_or(0, |s| s.key_len);
        if key_len <= len.next_multiple_of(4) {
            return Some(first);
        }
        let mut parts = vec![(first, len)];
        let mut total = len.next_multiple_of(4);
        let mut reg = sreg.saturating_add(len.div_ceil(4).max(1));
        while total < key_len && parts.len() < 16 {
            let (src, len) = self.regs.get(&reg)?.clone();
            total += len.next_multiple_of(4);
            reg = reg.saturating_add(len.div_ceil(4).max(1));
            parts.push((src, len));
        }
        Some(Src::Concat(parts))
    }

    /// The text of a value a statement writes (`meta mark set ...`).
    fn src_text(&mut self, src: &Src, ty: Ty) -> Option<String> {
        match src {
            Src::Value(value) => Some(types::format(ty, value)),
            Src::Map { key, set } => {
                let field = self.field(key)?;
                let set = sets::set_text(self.sets, set, &field.parts, false);
                Some(format!("{} map {set}", field.text))
            }
            Src::Masked { inner, mask, xor } => {
                let inner = self.field(inner)?.text;
                let ones = mask.iter().all(|b| *b == 0xff);
                let complement = mask.iter().zip(xor).all(|(m, x)| *m == !*x);
                if xor.iter().all(|b| *b == 0) {
                    Some(format!("{inner} & {}", types::format(ty, mask)))
                } else if complement {
                    Some(format!("{inner} | {}", types::format(ty, xor)))
                } else if ones {
                    Some(format!("{inner} ^ {}", types::format(ty, xor)))
                } else {
                    None
                }
            }
            src => self.field(src).map(|f| f.text),
        }
    }

    fn reject(&mut self, kind: u32, code: u8) -> String {
        let icmpx = |code: u8| match code {
            1 => "reject".to_string(),
            _ => format!(
                "reject with icmpx {}",
                types::format(Ty::IcmpxCode, &[code])
            ),
        };
        let reset = "reject with tcp reset".to_string();
        match (self.family, kind) {
            (IPV4 | IPV6, 1) => {
                self.drop_dep(TH);
                reset
            }
            (IPV4, 0) if code == 3 => "reject".to_string(),
            (IPV4, 0) => format!("reject with icmp {}", types::format(Ty::IcmpCode, &[code])),
            (IPV6, 0) if code == 4 => "reject".to_string(),
            (IPV6, 0) => format!(
                "reject with icmpv6 {}",
                types::format(Ty::Icmpv6Code, &[code])
            ),
            (_, 2) => icmpx(code),
            (INET | BRIDGE | NETDEV, _) => {
                let text = match (kind, self.proto[NET]) {
                    (1, _) => reset,
                    (_, Some(Proto::Ip)) => {
                        format!("reject with icmp {}", types::format(Ty::IcmpCode, &[code]))
                    }
                    (_, Some(Proto::Ip6)) => {
                        format!(
                            "reject with icmpv6 {}",
                            types::format(Ty::Icmpv6Code, &[code])
                        )
                    }
                    _ => "reject".to_string(),
                };
                self.drop_dep(NET);
                text
            }
            (_, 1) => reset,
            _ => "reject".to_string(),
        }
    }

    /// A NAT address or port range from its registers: None when a
    /// register is not understood, Some(None) when there is none.
    fn nat_range(&mut self, (min, max): (Option<Reg>, Option<Reg>), ty: Ty) -> Option<stmt::Range> {
        let Some(min) = min else {
            return Some(None);
        };
        let low = self.regs.get(&min)?.0.clone();
        let high = max
            .filter(|max| *max != min)
            .and_then(|max| self.regs.get(&max))
            .map(|h| h.0.clone());
        match (&low, &high) {
            (Src::Value(a), Some(Src::Value(b))) if a != b => {
                let part = Part::whole(ty, a.len());
                if ty.has_prefix()
                    && let Some(len) = sets::prefix_of(a, b)
                {
                    return Some(Some((format!("{}/{len}", part.format(a)), None)));
                }
                Some(Some((part.format(a), Some(part.format(b)))))
            }
            _ => Some(Some((self.src_text(&low, ty)?, None))),
        }
    }
}
