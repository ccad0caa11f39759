//! How rules print the values they compare: one value, a range, or the
//! elements of an anonymous set inline as nft sorts them.

use super::expr::Data;
use super::types::{self, Ty};
use super::{Element, SET_ANONYMOUS, Set};
use std::collections::HashMap;

/// NFT_SET_INTERVAL.
const SET_INTERVAL: u32 = 0x4;

/// How one part of a compared value prints: its type, its bytes in the
/// key (`pad` with a concatenation's alignment), and the bits of them
/// that count when a mask selected a field.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    pub ty: Ty,
    pub size: usize,
    pub pad: usize,
    pub bits: Option<(u32, u32)>,
}

impl Part {
    pub fn whole(ty: Ty, size: usize) -> Part {
        Part {
            ty,
            size,
            pad: size,
            bits: None,
        }
    }

    /// This part's value out of `key`, in the type's byte order.
    pub fn value(&self, key: &[u8]) -> Vec<u8> {
        let bytes = key.get(..self.size).unwrap_or(key);
        match self.bits {
            Some((start, count)) => types::bits(bytes, start, count),
            None => bytes.to_vec(),
        }
    }

    /// The value's bytes most significant first, to sort and count with.
    pub fn numeric(&self, value: &[u8]) -> Vec<u8> {
        let mut bytes = value.to_vec();
        if self.ty.host_order() && cfg!(target_endian = "little") {
            bytes.reverse();
        }
        bytes
    }

    pub fn format(&self, value: &[u8]) -> String {
        types::format(self.ty, value)
    }

    /// A set element: several flags as `syn | ack`.
    fn element(&self, value: &[u8]) -> String {
        let n = types::number(self.ty, value);
        match types::flag_list(self.ty, n, " | ") {
            Some(list) if self.ty.is_bitmask() && !n.is_power_of_two() => list,
            _ => self.format(value),
        }
    }
}

/// `@name`, or an anonymous set's elements inline, sorted as nft
/// sorts them, ranges merged from their interval ends.
pub fn set_text(sets: &HashMap<String, Set>, name: &str, parts: &[Part], verdicts: bool) -> String {
    let named = format!("@{name}");
    let Some(set) = sets.get(name) else {
        return named;
    };
    let Some(elements) = set
        .elements
        .as_ref()
        .filter(|_| set.flags & SET_ANONYMOUS != 0)
    else {
        return named;
    };
    let data = |element: &Element| match &element.data {
        Some(Data::Verdict { code, chain }) => {
            format!(" : {}", types::verdict(*code, chain.as_deref()))
        }
        Some(Data::Value(value)) if !verdicts => {
            format!(" : {}", types::format(Ty::from_id(set.data_type), value))
        }
        _ => String::new(),
    };
    let mut items: Vec<(Vec<u8>, String)> = Vec::new();
    let single = match parts {
        [part] if set.flags & SET_INTERVAL != 0 => Some(*part),
        _ => None,
    };
    if let Some(part) = single.filter(|_| elements.iter().all(|e| e.key_end.is_none())) {
        let mut sorted: Vec<(Vec<u8>, &Element)> = elements
            .iter()
            .map(|e| (part.numeric(&part.value(&e.key)), e))
            .collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut i = 0;
        while let Some((low, element)) = sorted.get(i) {
            i += 1;
            if element.interval_end {
                continue;
            }
            let high = match sorted.get(i) {
                Some((end, next)) if next.interval_end => {
                    i += 1;
                    decrement(end)
                }
                _ => vec![0xff; low.len()],
            };
            let text = range_text(&part, low, &high);
            items.push((low.clone(), format!("{text}{}", data(element))));
        }
    } else {
        for element in elements.iter().filter(|e| !e.interval_end) {
            let mut sort = Vec::new();
            let mut texts = Vec::new();
            let mut at = 0;
            for part in parts {
                let key = element.key.get(at..).unwrap_or_default();
                let value = part.value(key);
                let mut text = part.element(&value);
                if let Some(end) = &element.key_end {
                    let end = part.value(end.get(at..).unwrap_or_default());
                    if end != value {
                        text = format!("{text}-{}", part.format(&end));
                    }
                }
                sort.extend(part.numeric(&value));
                texts.push(text);
                at += part.pad;
            }
            items.push((sort, format!("{}{}", texts.join(" . "), data(element))));
        }
        items.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let texts: Vec<String> = items.into_iter().map(|(_, text)| text).collect();
    format!("{{ {} }}", texts.join(", "))
}

/// One element range of an interval set: a value, a prefix, or `a-b`.
pub fn range_text(part: &Part, low: &[u8], high: &[u8]) -> String {
    let back = |numeric: &[u8]| {
        let mut bytes = numeric.to_vec();
        if part.ty.host_order() && cfg!(target_endian = "little") {
            bytes.reverse();
        }
        bytes
    };
    let (low_bytes, high_bytes) = (back(low), back(high));
    if low == high {
        return part.format(&low_bytes);
    }
    if part.ty.has_prefix()
        && let Some(len) = prefix_of(low, high)
    {
        return format!("{}/{len}", part.format(&low_bytes));
    }
    format!("{}-{}", part.format(&low_bytes), part.format(&high_bytes))
}

/// The prefix length when big-endian `low..=high` is exactly a prefix.
pub fn prefix_of(low: &[u8], high: &[u8]) -> Option<u32> {
    let same: Vec<u8> = low.iter().zip(high).map(|(l, h)| !(l ^ h)).collect();
    let aligned = low
        .iter()
        .zip(high)
        .all(|(l, h)| l & (l ^ h) == 0 && h | l == *h);
    types::prefix_len(&same).filter(|_| aligned)
}

/// A big-endian number minus one (zero stays zero).
fn decrement(value: &[u8]) -> Vec<u8> {
    let mut out = value.to_vec();
    if out.iter().all(|b| *b == 0) {
        return out;
    }
    for byte in out.iter_mut().rev() {
        let (next, borrow) = byte.overflowing_sub(1);
        *byte = next;
        if !borrow {
            break;
        }
    }
    out
}
