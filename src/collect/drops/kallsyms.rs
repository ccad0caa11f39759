//! Drop locations by function name. /proc/kallsyms is ~10 MB of text: it is
//! read once for each batch of addresses not seen before, keeping only the
//! nearest function below each, and the answers are cached.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

const KALLSYMS: &str = "/proc/kallsyms";
/// Cached addresses at most; beyond it the cache starts over.
const MAX_CACHED: usize = 65536;

#[derive(Debug, Default)]
pub struct Symbols {
    cache: HashMap<u64, String>,
}

impl Symbols {
    /// Names every address of `addresses` not known yet, in one pass.
    pub fn learn(&mut self, addresses: impl Iterator<Item = u64>) {
        let mut wanted: Vec<u64> = addresses.filter(|a| !self.cache.contains_key(a)).collect();
        if wanted.is_empty() {
            return;
        }
        wanted.sort_unstable();
        wanted.dedup();
        if self.cache.len() + wanted.len() > MAX_CACHED {
            self.cache.clear();
        }
        let found = std::fs::File::open(KALLSYMS)
            .map(|file| nearest(BufReader::new(file), &wanted))
            .unwrap_or_default();
        for (address, name) in wanted.iter().zip(found) {
            let name = name.unwrap_or_else(|| format!("{address:#x}"));
            self.cache.insert(*address, name);
        }
    }

    /// The function `address` lies in, or the address in hex.
    pub fn name(&self, address: u64) -> String {
        self.cache
            .get(&address)
            .cloned()
            .unwrap_or_else(|| format!("{address:#x}"))
    }
}

/// For each of the sorted `wanted` addresses, the text symbol with the
/// highest address not above it ("ADDR TYPE NAME [MODULE]" lines, in no
/// guaranteed order). Addresses all zero (kptr_restrict) name nothing.
fn nearest(reader: impl BufRead, wanted: &[u64]) -> Vec<Option<String>> {
    let mut best: Vec<Option<(u64, String)>> = vec![None; wanted.len()];
    for line in reader.lines().map_while(Result::ok) {
        let mut fields = line.split_ascii_whitespace();
        let (Some(address), Some(kind), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !matches!(kind, "t" | "T") {
            continue;
        }
        let Ok(address) = u64::from_str_radix(address, 16) else {
            continue;
        };
        if address == 0 {
            continue;
        }
        // The wanted addresses this symbol may be the function of: those
        // at or above it.
        let from = wanted.partition_point(|&w| w < address);
        for (slot, _) in best[from..].iter_mut().zip(&wanted[from..]) {
            if slot.as_ref().is_none_or(|(start, _)| *start < address) {
                *slot = Some((address, name.to_string()));
            }
        }
    }
    best.into_iter().map(|b| b.map(|(_, name)| name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_the_function_it_lies_in() {
        let kallsyms = "\
ffffffff81000000 T _stext
ffffffff81a00000 T nf_hook_slow
ffffffff81a00200 t nf_hook_slow_list
ffffffff81b00000 D some_data
ffffffff81c00000 T udp_queue_rcv_one_skb
ffffffffc0100000 t nft_do_chain\t[nf_tables]
0000000000000000 T zero
";
        let wanted = [
            0x10,
            0xffffffff81a00010,
            0xffffffff81b00010,
            0xffffffffc0100040,
        ];
        let names = nearest(kallsyms.as_bytes(), &wanted);
        // Below every function: no name (shown in hex).
        assert_eq!(names[0], None);
        assert_eq!(names[1].as_deref(), Some("nf_hook_slow"));
        // Data symbols are not functions: the text symbol below it wins.
        assert_eq!(names[2].as_deref(), Some("nf_hook_slow_list"));
        assert_eq!(names[3].as_deref(), Some("nft_do_chain"));
    }
}
