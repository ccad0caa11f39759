//! The stack's counters by name ("Tcp.RetransSegs"), as a sample keeps
//! them: about 400 of them, read each sample. Their names change only with
//! the kernel, so a sample shares the names of the one before
//! (`share_names`) and costs 8 bytes a counter instead of a map entry with
//! its own name (about 100 bytes): the history keeps 300 samples. Under
//! traffic a sample changes a few dozen of them at most, so the values are
//! kept in chunks of `CHUNK` that a sample shares with the one before where
//! none of them moved (`share`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Values a chunk holds: the counters that move under light traffic
/// change 6 to 8 of 26 chunks of 16 (of 403 counters).
const CHUNK: usize = 16;

type Chunk = Arc<[u64; CHUNK]>;

/// Counter values by name, names in order; a map to serde.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Sorted, no duplicates.
    names: Arc<Names>,
    /// The value of `names[i]` is `chunks[i / CHUNK][i % CHUNK]`; the last
    /// chunk's tail is zero.
    chunks: Vec<Chunk>,
}

impl Counters {
    pub fn get(&self, name: &str) -> Option<&u64> {
        let at = self.names.find(name)?;
        Some(self.value(at))
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets `name` to `value`, returning the value it had.
    pub fn insert(&mut self, name: String, value: u64) -> Option<u64> {
        match self.position(&name) {
            Ok(at) => {
                let chunk = Arc::make_mut(&mut self.chunks[at / CHUNK]);
                Some(std::mem::replace(&mut chunk[at % CHUNK], value))
            }
            Err(at) => {
                let mut values: Vec<u64> = self.values().copied().collect();
                values.insert(at, value);
                Arc::make_mut(&mut self.names).insert(at, name.into_boxed_str());
                self.chunks = chunks(values);
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Name and value, in name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            counters: self,
            range: 0..self.len(),
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|name| &**name)
    }

    fn values(&self) -> impl Iterator<Item = &u64> {
        self.chunks.iter().flat_map(|c| c.iter()).take(self.len())
    }

    fn value(&self, at: usize) -> &u64 {
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    /// Takes `earlier`'s names when they are the same as these, so that
    /// both samples hold one list.
    pub fn share_names(&mut self, earlier: &Counters) {
        if !Arc::ptr_eq(&self.names, &earlier.names) && self.names == earlier.names {
            self.names = Arc::clone(&earlier.names);
        }
    }

    /// As `share_names`, and the chunks of values none of which changed.
    pub fn share(&mut self, earlier: &Counters) {
        self.share_names(earlier);
        if !self.shares_names_with(earlier) {
            return;
        }
        for (chunk, old) in self.chunks.iter_mut().zip(&earlier.chunks) {
            if !Arc::ptr_eq(chunk, old) && chunk == old {
                *chunk = Arc::clone(old);
            }
        }
    }

    /// Whether `other` holds the very same list of names.
    pub fn shares_names_with(&self, other: &Counters) -> bool {
        Arc::ptr_eq(&self.names, &other.names)
    }

    /// How many chunks of values `other` holds too (for tests).
    pub fn chunks_shared_with(&self, other: &Counters) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.names.binary_search_by(|probe| (**probe).cmp(name))
    }
}

/// The counters' names, sorted, with an index by name: the findings read
/// dozens of counters a sample, and a binary search of 400 names that
/// share their first bytes ("TcpExt.") took a sixth of their time.
#[derive(Debug, Clone, Default)]
struct Names {
    sorted: Vec<Box<str>>,
    /// Positions in `sorted`, hashed by name.
    index: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl Names {
    fn new(sorted: Vec<Box<str>>) -> Self {
        let hasher = foldhash::fast::RandomState::default();
        let mut index = hashbrown::HashTable::with_capacity(sorted.len());
        for (at, name) in sorted.iter().enumerate() {
            index.insert_unique(hasher.hash_one(&**name), at as u32, |&i| {
                hasher.hash_one(&*sorted[i as usize])
            });
        }
        Self {
            sorted,
            index,
            hasher,
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(name);
        let at = self
            .index
            .find(hash, |&i| *self.sorted[i as usize] == *name)?;
        Some(*at as usize)
    }

    fn insert(&mut self, at: usize, name: Box<str>) {
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.insert(at, name);
        *self = Names::new(sorted);
    }
}

impl std::ops::Deref for Names {
    type Target = [Box<str>];

    fn deref(&self) -> &[Box<str>] {
        &self.sorted
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.sorted == other.sorted
    }
}

/// `values` in chunks, the last one padded with zeros.
fn chunks(values: Vec<u64>) -> Vec<Chunk> {
    values
        .chunks(CHUNK)
        .map(|part| {
            let mut chunk = [0; CHUNK];
            chunk[..part.len()].copy_from_slice(part);
            Arc::new(chunk)
        })
        .collect()
}

/// `Counters::iter`: name and value, in name order.
pub struct Iter<'a> {
    counters: &'a Counters,
    range: std::ops::Range<usize>,
}

impl<'a> Iter<'a> {
    fn at(&self, i: usize) -> (&'a str, &'a u64) {
        (&self.counters.names[i], self.counters.value(i))
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a u64);

    fn next(&mut self) -> Option<Self::Item> {
        self.range.next().map(|i| self.at(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|i| self.at(i))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl PartialEq for Counters {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names && self.values().eq(other.values())
    }
}

impl Eq for Counters {}

impl FromIterator<(String, u64)> for Counters {
    /// The last value of a name given twice is kept, as a map's insert.
    fn from_iter<I: IntoIterator<Item = (String, u64)>>(items: I) -> Self {
        BTreeMap::from_iter(items).into()
    }
}

impl From<BTreeMap<String, u64>> for Counters {
    fn from(map: BTreeMap<String, u64>) -> Self {
        let (names, values): (Vec<Box<str>>, Vec<u64>) = map
            .into_iter()
            .map(|(name, value)| (name.into_boxed_str(), value))
            .unzip();
        Self {
            names: Arc::new(Names::new(names)),
            chunks: chunks(values),
        }
    }
}

impl<const N: usize> From<[(String, u64); N]> for Counters {
    fn from(pairs: [(String, u64); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl Extend<(String, u64)> for Counters {
    fn extend<I: IntoIterator<Item = (String, u64)>>(&mut self, items: I) {
        for (name, value) in items {
            self.insert(name, value);
        }
    }
}

impl<'a> IntoIterator for &'a Counters {
    type Item = (&'a str, &'a u64);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

thread_local! {
    /// The names the last `Counters` read on this thread had: the samples
    /// of a recording repeat them, so a read compares its names with these
    /// and shares the list instead of making its own (400 strings a sample
    /// a replay's jump reads hundreds of times).
    static LAST_NAMES: std::cell::RefCell<Arc<Names>> = Default::default();
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CountersVisitor)
    }
}

struct CountersVisitor;

impl<'de> serde::de::Visitor<'de> for CountersVisitor {
    type Value = Counters;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map of counter names to values")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Counters, A::Error> {
        let last = LAST_NAMES.with_borrow(Arc::clone);
        let mut values = Vec::with_capacity(last.len());
        // The names read, once they part from `last`'s.
        let mut own: Option<Vec<Box<str>>> = None;
        while let Some(Name(name)) = map.next_key()? {
            let k = values.len();
            values.push(map.next_value::<u64>()?);
            match &mut own {
                None if last.get(k).is_some_and(|known| **known == *name) => {}
                None => {
                    let mut names = last[..k].to_vec();
                    names.push(name.into());
                    own = Some(names);
                }
                Some(names) => names.push(name.into()),
            }
        }
        let Some(names) = own else {
            if values.len() == last.len() {
                return Ok(Counters {
                    names: last,
                    chunks: chunks(values),
                });
            }
            let names = last[..values.len()].to_vec();
            return Ok(Counters {
                names: Arc::new(Names::new(names)),
                chunks: chunks(values),
            });
        };
        if !names.is_sorted_by(|a, b| a < b) {
            // Not as `Serialize` writes them: sorted as a map would be,
            // the last value of a name given twice kept.
            let map: BTreeMap<String, u64> =
                names.into_iter().map(String::from).zip(values).collect();
            return Ok(map.into());
        }
        let names = Arc::new(Names::new(names));
        LAST_NAMES.with_borrow_mut(|last| *last = Arc::clone(&names));
        Ok(Counters {
            names,
            chunks: chunks(values),
        })
    }
}

/// A counter's name, borrowed from the input where it can be.
struct Name<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> serde::de::Visitor<'de> for NameVisitor {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a counter name")
            }

            fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(name.into()))
            }

            fn visit_str<E>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(name.to_owned().into()))
            }

            fn visit_string<E>(self, name: String) -> Result<Name<'de>, E> {
                Ok(Name(name.into()))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(pairs: &[(&str, u64)]) -> Counters {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), *value))
            .collect()
    }

    #[test]
    fn reads_and_writes_like_a_map() {
        let mut c = counters(&[("Tcp.OutSegs", 5), ("Ip.InReceives", 9)]);
        assert_eq!(c.get("Tcp.OutSegs"), Some(&5));
        assert_eq!(c.get("Tcp.InSegs"), None);
        assert_eq!(c.insert("Tcp.InSegs".into(), 3), None);
        assert_eq!(c.insert("Tcp.OutSegs".into(), 6), Some(5));
        let all: Vec<(&str, u64)> = c.iter().map(|(n, v)| (n, *v)).collect();
        assert_eq!(
            all,
            [("Ip.InReceives", 9), ("Tcp.InSegs", 3), ("Tcp.OutSegs", 6)]
        );
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn serializes_as_the_map_it_was() {
        let c = counters(&[("Udp.InErrors", 1), ("Tcp.OutSegs", 2)]);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"Tcp.OutSegs":2,"Udp.InErrors":1}"#);
        let map: BTreeMap<String, u64> = serde_json::from_str(&json).unwrap();
        assert_eq!(Counters::from(map), c);
        let back: Counters = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }

    /// A recording's samples repeat their names: each read shares the
    /// list the read before made. Names out of order, or given twice, read
    /// as a map reads them.
    #[test]
    fn reads_of_the_same_names_share_them() {
        let first: Counters = rmp_serde::from_slice(
            &rmp_serde::to_vec(&counters(&[("A.b", 1), ("C.d", 2)])).unwrap(),
        )
        .unwrap();
        let json = r#"{"A.b":5,"C.d":7}"#;
        let second: Counters = serde_json::from_str(json).unwrap();
        assert!(second.shares_names_with(&first));
        assert_eq!(second, counters(&[("A.b", 5), ("C.d", 7)]));
        let fewer: Counters = serde_json::from_str(r#"{"A.b":5}"#).unwrap();
        assert_eq!(fewer, counters(&[("A.b", 5)]));
        let more: Counters = serde_json::from_str(r#"{"A.b":5,"B.a":1,"C.d":7}"#).unwrap();
        assert_eq!(more, counters(&[("A.b", 5), ("B.a", 1), ("C.d", 7)]));
        let shuffled: Counters = serde_json::from_str(r#"{"C.d":7,"A.b":5,"C.d":8}"#).unwrap();
        assert_eq!(shuffled, counters(&[("A.b", 5), ("C.d", 8)]));
        assert_eq!(shuffled.get("C.d"), Some(&8));
        // An escaped name is not borrowed from the input, and still shares.
        let escaped: Counters = serde_json::from_str(r#"{"A.b":1,"B.a":2,"C\u002ed":3}"#).unwrap();
        assert!(escaped.shares_names_with(&more));
        assert!(serde_json::from_str::<Counters>(r#"{"A.b":"x"}"#).is_err());
    }

    #[test]
    fn samples_with_the_same_names_share_them() {
        let first = counters(&[("Tcp.InSegs", 1), ("Tcp.OutSegs", 2)]);
        let mut second = counters(&[("Tcp.InSegs", 5), ("Tcp.OutSegs", 7)]);
        second.share_names(&first);
        assert!(second.shares_names_with(&first));
        assert_eq!(second.get("Tcp.OutSegs"), Some(&7));
        // A change of one sample's names leaves the other's alone.
        second.insert("Udp.InErrors".into(), 1);
        assert!(!second.shares_names_with(&first));
        assert_eq!(first.len(), 2);
        let mut other = counters(&[("Tcp.InSegs", 5)]);
        other.share_names(&first);
        assert!(!other.shares_names_with(&first));
    }

    #[test]
    fn a_sample_shares_the_values_that_did_not_move() {
        // 40 counters: chunks 0..16, 16..32 and 32..40.
        let sample = |moved: u64| -> Counters {
            (0..40)
                .map(|i| (format!("TcpExt.C{i:02}"), if i == 20 { moved } else { i }))
                .collect()
        };
        let first = sample(1);
        let mut second = sample(2);
        second.share(&first);
        assert!(second.shares_names_with(&first));
        assert_eq!(second.chunks_shared_with(&first), 2);
        assert_eq!(second.get("TcpExt.C20"), Some(&2));
        assert_eq!(second.get("TcpExt.C39"), Some(&39));
        // Writing a shared chunk copies it first.
        second.insert("TcpExt.C00".into(), 100);
        assert_eq!(first.get("TcpExt.C00"), Some(&0));
        assert_eq!(second.chunks_shared_with(&first), 1);
        // A name more: everything after it moves, nothing is shared.
        let mut third = sample(1);
        third.insert("TcpExt.A".into(), 7);
        third.share(&first);
        assert_eq!(third.chunks_shared_with(&first), 0);
        assert_eq!(third.len(), 41);
        let values: Vec<u64> = third.iter().map(|(_, v)| *v).collect();
        assert_eq!(values[..3], [7, 0, 1]);
        assert_eq!(third.iter().next_back(), Some(("TcpExt.C39", &39)));
    }
}
