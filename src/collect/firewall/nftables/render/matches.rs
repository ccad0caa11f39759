//! Matches: a comparison or set lookup of a register, printed as nft
//! prints it, with the protocol matches a later one makes redundant
//! dropped (nftables' payload_dependency_kill and friends).

use super::super::expr::Reg;
use super::super::proto::{self, Proto};
use super::super::sets::{self, Part};
use super::super::types::{self, Ty};
use super::{
    BRIDGE, Ctx, Dep, Field, INET, IPV4, IPV6, LL, META_L4PROTO, META_NFPROTO, META_PROTOCOL, NET,
    NETDEV, Op, Rhs, Src, TH,
};

/// NFT_META_IIFTYPE, and its value for ethernet devices.
const META_IIFTYPE: u32 = 8;
const ARPHRD_ETHER: u32 = 1;

/// `bytes` with each `size`-byte word reversed.
fn swap_words(bytes: &[u8], size: usize) -> Vec<u8> {
    bytes
        .chunks(size.max(1))
        .flat_map(|word| word.iter().rev().copied())
        .collect()
}

impl Ctx<'_> {
    pub(super) fn relational(&mut self, sreg: Reg, op: Op, rhs: Rhs, raw: &str) {
        match self.regs.get(&sreg).cloned() {
            Some((src, _)) => self.relational_src(src, op, rhs, raw),
            None => self.statement(raw.to_string()),
        }
    }

    pub(super) fn relational_src(&mut self, src: Src, op: Op, rhs: Rhs, raw: &str) {
        match src {
            Src::Payload { base, offset, len } => {
                if let (Op::Eq | Op::Neq, Rhs::Value(value)) = (op, &rhs) {
                    self.expand(base, offset, len, op, value);
                    return;
                }
                let (text, ty, key) = self.payload_field(base, offset, len);
                self.kill_for_payload(base, key);
                let part = Part::whole(ty, len.div_ceil(8) as usize);
                let rhs = self.rhs_text(op, &rhs, &[part], true);
                self.expression(format!("{text} {rhs}"));
            }
            Src::Masked { inner, mask, xor } if xor.iter().all(|b| *b == 0) => {
                self.masked(*inner, &mask, op, rhs, raw);
            }
            Src::Meta(key) => self.meta_match(key, op, &rhs, raw),
            Src::Swapped { inner, size } => {
                let swap = |bytes: &[u8]| swap_words(bytes, size as usize);
                let rhs = match rhs {
                    Rhs::Value(value) => Rhs::Value(swap(&value)),
                    Rhs::Range(from, to) => Rhs::Range(swap(&from), swap(&to)),
                    set => set,
                };
                self.relational_src(*inner, op, rhs, raw);
            }
            Src::Raw(load) => self.statement(format!("{load} {raw}")),
            src => match self.field(&src) {
                Some(mut field) => {
                    // ct saddr and daddr are IPv6 when 16 bytes are compared.
                    if let (Src::Ct { key: 8 | 9, .. }, Rhs::Value(v)) = (&src, &rhs)
                        && v.len() == 16
                    {
                        field.parts = vec![Part::whole(Ty::Ip6Addr, 16)];
                    }
                    let rhs = self.rhs_text(op, &rhs, &field.parts, false);
                    self.expression(format!("{} {rhs}", field.text));
                }
                None => self.statement(raw.to_string()),
            },
        }
    }

    /// The field at `offset`/`len` bits of header `base`: named when the
    /// header's protocol is known and has a field there, else raw
    /// (`@nh,96,32`; transport ports are `th sport`/`th dport`).
    pub(super) fn payload_field(&self, base: usize, offset: u32, len: u32) -> (String, Ty, bool) {
        let proto = self.proto.get(base).copied().flatten();
        if let Some(proto) = proto
            && let Some(field) = proto
                .templates()
                .iter()
                .find(|t| t.offset == offset && t.len == len)
        {
            let key = proto.protocol_key() == Some(field.name) && base < TH;
            return (format!("{} {}", proto.name(), field.name), field.ty, key);
        }
        if base == TH && len == 16 && (offset == 0 || offset == 16) {
            let name = if offset == 0 { "sport" } else { "dport" };
            return (format!("th {name}"), Ty::InetService, false);
        }
        let names = ["ll", "nh", "th", "ih"];
        let name = names.get(base).copied().unwrap_or("ih");
        (format!("@{name},{offset},{len}"), Ty::Hex, false)
    }

    /// Whether fields of the header's protocol tile `offset`/`len` bits.
    pub(super) fn covered(&self, base: usize, offset: u32, len: u32) -> bool {
        let Some(proto) = self.proto.get(base).copied().flatten() else {
            return false;
        };
        let mut at = offset;
        let end = offset.saturating_add(len);
        while at < end {
            match proto
                .templates()
                .iter()
                .find(|t| t.offset == at && t.len > 0)
            {
                Some(t) => at = at.saturating_add(t.len),
                None => return false,
            }
        }
        at == end
    }

    /// `==`/`!=` against a value: one match per header field the load
    /// spans (nft merges adjacent loads), a prefix for a partial field.
    /// `value` is right-aligned.
    pub(super) fn expand(&mut self, base: usize, offset: u32, len: u32, op: Op, value: &[u8]) {
        let proto = self.proto.get(base).copied().flatten();
        let mut at = offset;
        let mut pos = (value.len() as u32 * 8).saturating_sub(len);
        let end = offset.saturating_add(len);
        while at < end {
            let left = end - at;
            let template = proto.and_then(|p| {
                p.templates()
                    .iter()
                    .find(|t| t.offset == at && t.len > 0)
                    .map(|t| (p, t))
            });
            match template {
                Some((p, t)) if t.len <= left => {
                    let field_value = types::bits(value, pos, t.len);
                    let key = p.protocol_key() == Some(t.name) && base < TH;
                    let part = Part::whole(t.ty, field_value.len());
                    let rhs = self.rhs_text(op, &Rhs::Value(field_value.clone()), &[part], true);
                    let out = self.expression(format!("{} {} {rhs}", p.name(), t.name));
                    let number = types::number(t.ty, &field_value) as u32;
                    if op == Op::Eq
                        && key
                        && let Some(upper) = p.upper(number)
                    {
                        self.proto[base + 1] = Some(upper);
                    }
                    self.kill_for_payload(base, key);
                    if op == Op::Eq && key {
                        self.deps[base + 1] = Some(Dep {
                            out,
                            meta: None,
                            proto: Some(p),
                            base,
                            value: number,
                        });
                    }
                    at = at.saturating_add(t.len);
                    pos = pos.saturating_add(t.len);
                }
                Some((p, t)) => {
                    // The first `left` bits of the field: a prefix.
                    let bits = types::bits(value, pos, left);
                    let prefix = types::format(t.ty, &types::shift_left(&bits, t.len, left));
                    self.kill_for_payload(base, false);
                    let name = format!("{} {}", p.name(), t.name);
                    self.expression(format!("{name} {}{prefix}/{left}", op.prefix()));
                    return;
                }
                None => {
                    let (name, ty, _) = self.payload_field(base, at, left);
                    let field_value = types::bits(value, pos, left);
                    self.kill_for_payload(base, false);
                    let part = Part::whole(ty, field_value.len());
                    let rhs = self.rhs_text(op, &Rhs::Value(field_value), &[part], true);
                    self.expression(format!("{name} {rhs}"));
                    return;
                }
            }
        }
    }

    /// Drops the dependency a match on header `base` makes redundant
    /// (nft's payload_dependency_kill).
    pub(super) fn kill_for_payload(&mut self, base: usize, protocol_key: bool) {
        let Some(dep) = self.deps.get(base).copied().flatten() else {
            return;
        };
        let mixed = matches!(self.family, INET | BRIDGE | NETDEV);
        if let Some(proto) = dep.proto {
            // `ip protocol tcp tcp dport 22` in inet: ip protocol also
            // says IPv4, which tcp dport does not.
            if mixed && dep.base == NET && matches!(proto, Proto::Ip | Proto::Ip6) && base == TH {
                return;
            }
            if (mixed && dep.base == base && protocol_key) || dep.base == TH {
                return;
            }
        }
        self.drop_dep(base);
    }

    pub(super) fn drop_dep(&mut self, index: usize) {
        if let Some(dep) = self.deps.get_mut(index).and_then(Option::take)
            && let Some(slot) = self.out.get_mut(dep.out)
        {
            *slot = None;
        }
    }

    pub(super) fn meta_match(&mut self, key: u32, op: Op, rhs: &Rhs, raw: &str) {
        let Some((name, ty, len, plain)) = proto::meta_key(key) else {
            self.statement(raw.to_string());
            return;
        };
        let meta = if plain { "" } else { "meta " };
        let rhs_text = self.rhs_text(op, rhs, &[Part::whole(ty, len as usize)], false);
        let out = self.expression(format!("{meta}{name} {rhs_text}"));
        let (Op::Eq, Rhs::Value(value)) = (op, rhs) else {
            return;
        };
        let number = types::number(ty, value) as u32;
        if key == META_IIFTYPE {
            // An ethernet device: the link layer header nft checked this
            // for (`ether saddr` in an ip or inet table).
            if number == ARPHRD_ETHER {
                self.proto[LL] = Some(Proto::Ether);
            }
            self.deps[LL] = Some(Dep {
                out,
                meta: Some(key),
                proto: None,
                base: LL,
                value: number,
            });
            return;
        }
        let base = match key {
            META_PROTOCOL | META_NFPROTO => LL,
            META_L4PROTO => NET,
            _ => return,
        };
        let upper = match key {
            META_L4PROTO => proto::transport(number),
            _ => self.proto[LL].and_then(|p| p.upper(number)),
        };
        if let Some(upper) = upper {
            self.proto[base + 1] = Some(upper);
        }
        if let Some(dep) = self.deps[base]
            && self.meta_may_kill(dep, key, number)
        {
            self.drop_dep(base);
        }
        self.deps[base + 1] = Some(Dep {
            out,
            meta: Some(key),
            proto: None,
            base,
            value: number,
        });
    }

    /// nft's meta_may_dependency_kill: `meta nfproto ipv4 meta l4proto
    /// tcp` keeps its nfproto in mixed families, `... l4proto icmp` not.
    pub(super) fn meta_may_kill(&self, dep: Dep, key: u32, l4proto: u32) -> bool {
        let ethertype_family = |value| match value {
            0x0800 => IPV4 as u32,
            0x86dd => IPV6 as u32,
            _ => 0,
        };
        let nfproto = match (dep.meta, dep.proto) {
            (Some(META_NFPROTO), _) => dep.value,
            (Some(META_PROTOCOL), _) | (None, Some(Proto::Ether)) => ethertype_family(dep.value),
            _ => return true,
        };
        match self.family {
            IPV4 | IPV6 => return u32::from(self.family) == nfproto,
            INET | NETDEV | BRIDGE => {}
            _ => return true,
        }
        if key != META_L4PROTO || !matches!(l4proto, 1 | 58) {
            return key != META_L4PROTO;
        }
        !((nfproto == u32::from(IPV4) && l4proto == 58)
            || (nfproto == u32::from(IPV6) && l4proto == 1))
    }

    /// A match on a masked load: flags (`ct state established,related`,
    /// `tcp flags syn / syn,ack`), a prefix, a header field narrower than
    /// a byte (`ip dscp`), or `meta mark & 0x0f == 0x01`.
    pub(super) fn masked(&mut self, inner: Src, mask: &[u8], op: Op, rhs: Rhs, raw: &str) {
        let Some(field) = self.field(&inner) else {
            self.statement(raw.to_string());
            return;
        };
        let Some(&part) = field.parts.first() else {
            self.statement(raw.to_string());
            return;
        };
        let (text, ty) = (field.text, part.ty);
        if let (Op::Eq | Op::Neq, Rhs::Value(value)) = (op, &rhs) {
            if ty.is_bitmask() {
                let list = |n: u128| types::flag_list(ty, n, ",").unwrap_or(format!("0x{n:x}"));
                let (mask, value) = (types::number(ty, mask), types::number(ty, value));
                let text = match (value, op) {
                    // One flag against itself stays as written:
                    // `ct status & dnat == dnat`.
                    (v, _) if v == mask && mask.is_power_of_two() => {
                        format!("{text} & {} {} {}", list(mask), op.symbol(), list(value))
                    }
                    (0, Op::Eq) => format!("{text} ! {}", list(mask)),
                    (0, _) => format!("{text} {}", list(mask)),
                    _ => format!("{text} {}{} / {}", op.prefix(), list(value), list(mask)),
                };
                self.expression(text);
                return;
            }
            if ty.has_prefix()
                && let Some(len) = types::prefix_len(mask)
            {
                let value = types::format(ty, value);
                self.expression(format!("{text} {}{value}/{len}", op.prefix()));
                return;
            }
        }
        if let Src::Payload { base, offset, .. } = inner
            && let Some((start, end)) = types::mask_range(mask)
            && self.covered(base, offset.saturating_add(start), end - start)
        {
            let (offset, len) = (offset.saturating_add(start), end - start);
            match rhs {
                Rhs::Value(value) => {
                    let value = types::bits(&value, start, len);
                    let sub = Src::Payload { base, offset, len };
                    self.relational_src(sub, op, Rhs::Value(value), raw);
                    return;
                }
                Rhs::Set(ref set) => {
                    let (name, ty, _) = self.payload_field(base, offset, len);
                    let part = Part {
                        ty,
                        bits: Some((start, len)),
                        ..part
                    };
                    let set = sets::set_text(self.sets, set, &[part], false);
                    self.expression(format!("{name} {}{set}", op.prefix()));
                    return;
                }
                Rhs::Range(..) => {}
            }
        }
        let mask = types::format(ty, mask);
        let rhs = match rhs {
            Rhs::Value(value) => format!("{} {}", op.symbol(), part.format(&value)),
            rhs => self.rhs_text(op, &rhs, &[part], false),
        };
        self.expression(format!("{text} & {mask} {rhs}"));
    }

    /// The printed left-hand side of a source; payload fields drop the
    /// dependency they make redundant.
    pub(super) fn field(&mut self, src: &Src) -> Option<Field> {
        let (text, ty, size) = match src {
            Src::Swapped { inner, .. } => return self.field(inner),
            Src::Payload { base, offset, len } => {
                let (text, ty, key) = self.payload_field(*base, *offset, *len);
                self.kill_for_payload(*base, key);
                (text, ty, len.div_ceil(8) as usize)
            }
            Src::Meta(key) => {
                let (name, ty, len, plain) = proto::meta_key(*key)?;
                let meta = if plain { "" } else { "meta " };
                (format!("{meta}{name}"), ty, len as usize)
            }
            Src::Ct { key, dir } => {
                let (name, ty, len) = proto::ct_key(*key)?;
                let dir = match dir {
                    Some(0) => "original ",
                    Some(1) => "reply ",
                    _ => "",
                };
                (format!("ct {dir}{name}"), ty, len as usize)
            }
            Src::Numgen {
                random,
                modulus,
                offset,
            } => {
                let kind = if *random { "random" } else { "inc" };
                let offset = match offset {
                    0 => String::new(),
                    n => format!(" offset {n}"),
                };
                (
                    format!("numgen {kind} mod {modulus}{offset}"),
                    Ty::HostInteger,
                    4,
                )
            }
            Src::Concat(parts) => {
                let mut texts = Vec::new();
                let mut all = Vec::new();
                for (src, len) in parts {
                    let field = self.field(src)?;
                    let part = *field.parts.first()?;
                    all.push(Part {
                        size: *len as usize,
                        pad: len.next_multiple_of(4) as usize,
                        ..part
                    });
                    texts.push(field.text);
                }
                return Some(Field {
                    text: texts.join(" . "),
                    parts: all,
                });
            }
            _ => return None,
        };
        Some(Field {
            text,
            parts: vec![Part::whole(ty, size)],
        })
    }

    pub(super) fn rhs_text(&self, op: Op, rhs: &Rhs, parts: &[Part], payload: bool) -> String {
        let Some(part) = parts.first() else {
            return String::new();
        };
        match rhs {
            Rhs::Value(value) if part.ty.is_bitmask() && parts.len() == 1 => {
                let n = types::number(part.ty, value);
                let single = types::flag_list(part.ty, n, "").filter(|_| n.is_power_of_two());
                match (payload, single, op) {
                    // nft prints `==` before a flag value, and lists
                    // several flags of ct and meta keys with `|`.
                    (true, _, _) | (false, Some(_), _) => {
                        format!("{} {}", op.symbol(), part.format(value))
                    }
                    (false, None, _) => {
                        let list = types::flag_list(part.ty, n, " | ");
                        format!("{}{}", op.prefix(), list.unwrap_or(format!("0x{n:x}")))
                    }
                }
            }
            Rhs::Value(value) => format!("{}{}", op.prefix(), part.format(value)),
            Rhs::Range(from, to) => {
                format!("{}{}-{}", op.prefix(), part.format(from), part.format(to))
            }
            Rhs::Set(name) => format!(
                "{}{}",
                op.prefix(),
                sets::set_text(self.sets, name, parts, false)
            ),
        }
    }
}
