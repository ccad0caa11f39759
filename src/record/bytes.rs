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

    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64> {
        // Most values (a delta of an unchanged column) take one byte.
        if let Some((&byte, rest)) = self.bytes.split_first()
            && byte < 0x80
        {
            self.bytes = rest;
            return Ok(u64::from(byte));
        }
        self.long_varint()
    }

    #[cold]
    fn long_varint(&mut self) -> Result<u64> {
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

    /// Moves past `n` varints, checking each is whole as `varint` would;
    /// returns the bytes they took.
    pub fn skip_varints(&mut self, n: usize) -> Result<&'a [u8]> {
        let start = self.bytes;
        let mut left = n;
        let mut run = 0;
        let mut at = 0;
        while left > 0 {
            // Eight one-byte values at once: a delta column is mostly 0s.
            if left >= 8
                && let Some(word) = self.bytes.get(at..at + 8)
                && u64::from_le_bytes(word.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080
                    == 0
            {
                left -= 8;
                at += 8;
                run = 0;
                continue;
            }
            let Some(&byte) = self.bytes.get(at) else {
                bail!("{} is cut short", self.what);
            };
            at += 1;
            if byte & 0x80 == 0 {
                left -= 1;
                run = 0;
            } else {
                run += 1;
                if run == 10 {
                    bail!("a number in {} is too long", self.what);
                }
            }
        }
        self.bytes = &self.bytes[at..];
        Ok(&start[..at])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Skipping checks what reading would, eight one-byte values at a time
    /// or one byte at a time, and lands where reading them would.
    #[test]
    fn skipping_varints_agrees_with_reading_them() {
        let values = [
            0,
            1,
            127,
            128,
            300,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            5,
            u64::MAX,
            0,
            7,
        ];
        let mut bytes = Vec::new();
        for v in values {
            put_varint(&mut bytes, v);
        }
        bytes.push(0x42);
        for n in 0..=values.len() {
            let mut skipped = Input::new(&bytes, "t");
            let taken = skipped.skip_varints(n).unwrap();
            let mut read = Input::new(&bytes, "t");
            let got: Vec<u64> = (0..n).map(|_| read.varint().unwrap()).collect();
            assert_eq!(got, values[..n]);
            assert_eq!(skipped.bytes, read.bytes, "{n} values");
            assert_eq!(taken.len(), bytes.len() - read.bytes.len());
        }
        let error = Input::new(&bytes, "t").skip_varints(values.len() + 2);
        assert!(error.unwrap_err().to_string().contains("cut short"));
        let long = [0x80; 12];
        let error = Input::new(&long, "t").skip_varints(1).unwrap_err();
        assert!(error.to_string().contains("too long"), "{error}");
        assert!(Input::new(&long, "t").varint().is_err());
        // Nine continuation bytes and an end: the longest a value may be.
        let mut longest = vec![0xff; 9];
        longest.push(0x01);
        assert_eq!(Input::new(&longest, "t").skip_varints(1).unwrap().len(), 10);
        assert_eq!(Input::new(&longest, "t").varint().unwrap(), u64::MAX);
    }
}
