//! The byte-level pieces the recording's own encodings (the socket columns,
//! the packets records) share: LEB128 varints, and a bounds-checked reader
//! whose errors name what it was reading.

use anyhow::{Result, bail};

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads from `bytes`; `what` ("the socket table", "a packets record") names
/// the record in errors, since damage is reported to the user.
pub struct Input<'a> {
    pub bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Input<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Self { bytes, what }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.bytes.len() {
            bail!("{} is cut short", self.what);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        bail!("a number in {} is too long", self.what)
    }

    /// A count or length that cannot exceed the bytes left (each item takes
    /// at least one), so damage cannot ask for a huge allocation.
    pub fn count(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > self.bytes.len() as u64 {
            bail!(
                "{} claims {n} items in {} bytes",
                self.what,
                self.bytes.len()
            );
        }
        Ok(n as usize)
    }
}
