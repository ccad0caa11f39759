//! The SNI of a QUIC v1 client Initial (RFC 9000 17.2.2, RFC 9001 5):
//! the Initial keys come from the Destination Connection ID alone, so a
//! passive observer can read the ClientHello in its CRYPTO frames.
//!
//! initial_secret = HKDF-Extract(v1 salt, DCID); the client's key, IV and
//! header-protection key by HKDF-Expand-Label; header protection is removed
//! with AES-128-ECB over a 16-byte sample; the payload is AES-128-GCM. A
//! whole packet is decrypted and its tag checked; a packet the capture cut
//! short (the default snap length keeps 384 bytes of a 1200-byte Initial)
//! cannot be authenticated, so its prefix is decrypted as the GCM keystream
//! (AES-CTR from counter 2) and parsed like any untrusted input.

use super::server_name::{Reader, client_hello_sni};
use aes::Aes128;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Nonce, Tag};
use hkdf::Hkdf;
use sha2::Sha256;

const V1: u32 = 1;
const V1_SALT: [u8; 20] = [
    0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad,
    0xcc, 0xbb, 0x7f, 0x0a,
];
/// The CRYPTO stream prefix gathered from one packet at most.
const MAX_CRYPTO: usize = 4096;
const TAG_LEN: usize = 16;

/// The client's Initial keys for a DCID.
struct Keys {
    key: [u8; 16],
    iv: [u8; 12],
    hp: [u8; 16],
}

/// HKDF-Expand-Label (RFC 8446 7.1) with an empty context.
fn expand_label(secret: &Hkdf<Sha256>, label: &str, out: &mut [u8]) -> Option<()> {
    let full = format!("tls13 {label}");
    let mut info = Vec::with_capacity(4 + full.len());
    info.extend_from_slice(&u16::try_from(out.len()).ok()?.to_be_bytes());
    info.push(u8::try_from(full.len()).ok()?);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    secret.expand(&info, out).ok()
}

fn client_keys(dcid: &[u8]) -> Option<Keys> {
    let (_, initial) = Hkdf::<Sha256>::extract(Some(&V1_SALT), dcid);
    let mut client = [0u8; 32];
    expand_label(&initial, "client in", &mut client)?;
    let client = Hkdf::<Sha256>::from_prk(&client).ok()?;
    let mut keys = Keys {
        key: [0; 16],
        iv: [0; 12],
        hp: [0; 16],
    };
    expand_label(&client, "quic key", &mut keys.key)?;
    expand_label(&client, "quic iv", &mut keys.iv)?;
    expand_label(&client, "quic hp", &mut keys.hp)?;
    Some(keys)
}

/// The SNI of the ClientHello in a QUIC v1 Initial (a UDP payload, whole
/// or cut short), or None.
pub fn initial_sni(datagram: &[u8]) -> Option<String> {
    let mut r = Reader::new(datagram);
    let first = r.u8()?;
    // Long header, fixed bit, type Initial (0).
    if first & 0xf0 != 0xc0 {
        return None;
    }
    let version = u32::from_be_bytes(r.take(4)?.try_into().ok()?);
    if version != V1 {
        return None;
    }
    let dcid_len = usize::from(r.u8()?);
    // RFC 9000 7.2: a client's first DCID is at least 8 bytes; at most 20.
    if !(8..=20).contains(&dcid_len) {
        return None;
    }
    let dcid = r.take(dcid_len)?;
    let scid_len = usize::from(r.u8()?);
    if scid_len > 20 {
        return None;
    }
    r.take(scid_len)?;
    let token = usize::try_from(r.varint()?).ok()?;
    r.take(token)?;
    let length = usize::try_from(r.varint()?).ok()?;
    let pn_at = r.position();
    // The packet as far as its Length says and the capture holds.
    let end = pn_at.checked_add(length)?;
    let whole = end <= datagram.len();
    let packet = &datagram[..end.min(datagram.len())];
    let keys = client_keys(dcid)?;

    // Header protection: the sample starts 4 bytes after the packet number.
    let sample = packet.get(pn_at + 4..pn_at + 20)?;
    let mut mask = GenericArray::clone_from_slice(sample);
    Aes128::new(GenericArray::from_slice(&keys.hp)).encrypt_block(&mut mask);
    let first = first ^ (mask[0] & 0x0f);
    let pn_len = usize::from(first & 0x03) + 1;
    let mut header = packet.get(..pn_at + pn_len)?.to_vec();
    header[0] = first;
    let mut pn = 0u64;
    for i in 0..pn_len {
        header[pn_at + i] ^= mask[1 + i];
        pn = pn << 8 | u64::from(header[pn_at + i]);
    }
    let mut nonce = keys.iv;
    for (i, b) in pn.to_be_bytes().iter().enumerate() {
        nonce[4 + i] ^= b;
    }
    let body = &packet[pn_at + pn_len..];
    let plain = if whole {
        let (cipher, tag) = body.split_at(body.len().checked_sub(TAG_LEN)?);
        let mut plain = cipher.to_vec();
        Aes128Gcm::new(GenericArray::from_slice(&keys.key))
            .decrypt_in_place_detached(
                Nonce::from_slice(&nonce),
                &header,
                &mut plain,
                Tag::from_slice(tag),
            )
            .ok()?;
        plain
    } else {
        keystream_prefix(&keys.key, &nonce, body)
    };
    client_hello_sni(&crypto_prefix(&plain)?)
}

/// GCM's encryption without its tag: AES-CTR from the counter block
/// nonce||2 (RFC 5116, NIST SP 800-38D; block 1 encrypts the tag).
fn keystream_prefix(key: &[u8; 16], nonce: &[u8; 12], cipher: &[u8]) -> Vec<u8> {
    let aes = Aes128::new(GenericArray::from_slice(key));
    let mut out = Vec::with_capacity(cipher.len());
    for (i, chunk) in cipher.chunks(16).enumerate() {
        let mut block = [0u8; 16];
        block[..12].copy_from_slice(nonce);
        let counter = u32::try_from(i + 2).unwrap_or(u32::MAX);
        block[12..].copy_from_slice(&counter.to_be_bytes());
        let mut block = GenericArray::from(block);
        aes.encrypt_block(&mut block);
        out.extend(chunk.iter().zip(block.iter()).map(|(c, k)| c ^ k));
    }
    out
}

/// The CRYPTO stream's bytes from offset 0 on, as far as they run without
/// a gap, gathered from the frames of one packet (PADDING, PING and ACK
/// are skipped; any other frame ends the walk).
fn crypto_prefix(plain: &[u8]) -> Option<Vec<u8>> {
    let mut pieces: Vec<(usize, &[u8])> = Vec::new();
    let mut r = Reader::new(plain);
    while let Some(kind) = r.varint() {
        match kind {
            0x00 | 0x01 => {}
            0x02 | 0x03 => {
                // ACK: largest, delay, range count, first range, ranges.
                r.varint()?;
                r.varint()?;
                let ranges = r.varint()?;
                r.varint()?;
                for _ in 0..ranges.min(256) {
                    r.varint()?;
                    r.varint()?;
                }
                if kind == 0x03 {
                    for _ in 0..3 {
                        r.varint()?;
                    }
                }
            }
            0x06 => {
                let offset = usize::try_from(r.varint()?).ok()?;
                let len = usize::try_from(r.varint()?).ok()?;
                // A frame cut by the capture keeps what is there.
                let data = r.rest();
                let data = &data[..len.min(data.len())];
                r.take(data.len())?;
                if offset < MAX_CRYPTO {
                    pieces.push((offset, data));
                }
            }
            _ => break,
        }
    }
    pieces.sort_by_key(|p| p.0);
    let mut stream = Vec::new();
    for (offset, data) in pieces {
        if offset > stream.len() {
            break;
        }
        let skip = stream.len() - offset;
        let room = MAX_CRYPTO - stream.len();
        stream.extend(data.iter().skip(skip).take(room));
    }
    (!stream.is_empty()).then_some(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn rfc9001_client_initial() -> Vec<u8> {
        let hex = include_str!("../../tests/data/quic/rfc9001-a2-client-initial.hex").trim();
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn keys_match_rfc9001_appendix_a1() {
        let dcid = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
        let keys = client_keys(&dcid).unwrap();
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(hex(&keys.key), "1f369613dd76d5467730efcbe3b1a22d");
        assert_eq!(hex(&keys.iv), "fa044b2f42a3fd3b46fb255c");
        assert_eq!(hex(&keys.hp), "9f50449e04a0e810283a1e9933adedd2");
    }

    #[test]
    fn sni_of_the_rfc9001_client_initial_whole_and_cut() {
        let packet = rfc9001_client_initial();
        assert_eq!(packet.len(), 1200);
        assert_eq!(initial_sni(&packet), Some("example.com".into()));
        // Cut as the default snap length cuts it (384 bytes of frame: 342
        // of UDP payload): read from the keystream, unauthenticated.
        assert_eq!(initial_sni(&packet[..342]), Some("example.com".into()));
        // A whole packet that fails its tag is not read.
        let mut forged = packet.clone();
        forged[1100] ^= 1;
        assert_eq!(initial_sni(&forged), None);
        // Another version, a short header.
        let mut v2 = packet.clone();
        v2[4] = 2;
        assert_eq!(initial_sni(&v2), None);
        assert_eq!(initial_sni(&[0x40, 1, 2, 3]), None);
    }

    #[test]
    fn truncated_and_garbled_initials_never_panic() {
        let packet = rfc9001_client_initial();
        for end in 0..packet.len() {
            let found = initial_sni(&packet[..end]);
            assert!(found.is_none() || found.as_deref() == Some("example.com"));
        }
        let mut seed = 0x2545_f491_u32;
        for _ in 0..3000 {
            let mut garbled = packet[..400].to_vec();
            for _ in 0..3 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                // The header bytes mostly, where lengths live.
                let at = seed as usize % 64;
                garbled[at] = (seed >> 8) as u8;
            }
            let _ = initial_sni(&garbled);
        }
        let _ = crypto_prefix(&[0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x40]);
        let _ = crypto_prefix(&[0x02, 0x40]);
    }
}
