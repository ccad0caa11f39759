//! The stack's counters by name ("Tcp.RetransSegs"), as a sample keeps
//! them: about 400 of them, read each sample. Their names change only with
//! the kernel, so a sample shares the names of the one before
//! (`share_names`) and costs 8 bytes a counter instead of a map entry with
//! its own name (about 100 bytes): the history keeps 300 samples.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Counter values by name, names in order; a map to serde.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Sorted, no duplicates.
    names: Arc<Vec<Box<str>>>,
    /// `values[i]` is the value of `names[i]`.
    values: Vec<u64>,
}

impl Counters {
    pub fn get(&self, name: &str) -> Option<&u64> {
        let at = self.position(name).ok()?;
        self.values.get(at)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets `name` to `value`, returning the value it had.
    pub fn insert(&mut self, name: String, value: u64) -> Option<u64> {
        match self.position(&name) {
            Ok(at) => Some(std::mem::replace(&mut self.values[at], value)),
            Err(at) => {
                Arc::make_mut(&mut self.names).insert(at, name.into_boxed_str());
                self.values.insert(at, value);
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Name and value, in name order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&str, &u64)> + ExactSizeIterator {
        self.names.iter().map(|name| &**name).zip(&self.values)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|name| &**name)
    }

    /// Takes `earlier`'s names when they are the same as these, so that
    /// both samples hold one list.
    pub fn share_names(&mut self, earlier: &Counters) {
        if !Arc::ptr_eq(&self.names, &earlier.names) && self.names == earlier.names {
            self.names = Arc::clone(&earlier.names);
        }
    }

    /// Whether `other` holds the very same list of names.
    pub fn shares_names_with(&self, other: &Counters) -> bool {
        Arc::ptr_eq(&self.names, &other.names)
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.names.binary_search_by(|probe| (**probe).cmp(name))
    }
}

impl PartialEq for Counters {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values && self.names == other.names
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
        let (names, values) = map
            .into_iter()
            .map(|(name, value)| (name.into_boxed_str(), value))
            .unzip();
        Self {
            names: Arc::new(names),
            values,
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
    type IntoIter = std::iter::Zip<
        std::iter::Map<std::slice::Iter<'a, Box<str>>, fn(&Box<str>) -> &str>,
        std::slice::Iter<'a, u64>,
    >;

    fn into_iter(self) -> Self::IntoIter {
        let name: fn(&Box<str>) -> &str = |name| name;
        self.names.iter().map(name).zip(self.values.iter())
    }
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, u64>::deserialize(deserializer).map(Counters::from)
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
}
