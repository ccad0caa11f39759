//! A part of a sample that seldom changes (knobs, processes, routes...),
//! held by every sample while it does not (`Sample::share_unchanged`): a
//! clone is a reference, the first write copies. The history keeps 300
//! samples.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shared<T>(Arc<T>);

impl<T: PartialEq> Shared<T> {
    /// Takes `earlier`'s value when it is the same as this one, so that
    /// both hold one copy.
    pub fn share(&mut self, earlier: &Shared<T>) {
        if !Arc::ptr_eq(&self.0, &earlier.0) && self.0 == earlier.0 {
            self.0 = Arc::clone(&earlier.0);
        }
    }

    /// Whether `other` holds the very same value.
    pub fn is_shared_with(&self, other: &Shared<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Shared<Vec<T>> {
    /// For serde's `skip_serializing_if`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> FromIterator<T> for Shared<Vec<T>> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Self(Arc::new(items.into_iter().collect()))
    }
}

impl<'a, T> IntoIterator for &'a Shared<Vec<T>> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Self(Arc::new(value))
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for Shared<BTreeMap<K, V>> {
    fn from(pairs: [(K, V); N]) -> Self {
        Self(Arc::new(BTreeMap::from(pairs)))
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for Shared<BTreeMap<K, V>> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        Self(Arc::new(items.into_iter().collect()))
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_copy_until_written() {
        let first: Shared<BTreeMap<String, String>> =
            [("net.core.somaxconn".to_string(), "4096".to_string())].into();
        let mut second: Shared<BTreeMap<String, String>> =
            [("net.core.somaxconn".to_string(), "4096".to_string())].into();
        second.share(&first);
        assert!(second.is_shared_with(&first));
        second.insert("net.core.somaxconn".into(), "128".into());
        assert!(!second.is_shared_with(&first));
        assert_eq!(first["net.core.somaxconn"], "4096");
        assert_eq!(second["net.core.somaxconn"], "128");
        assert_eq!(
            serde_json::to_string(&first).unwrap(),
            r#"{"net.core.somaxconn":"4096"}"#
        );
    }
}
