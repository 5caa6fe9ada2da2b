//! HMAC-SHA-256 (RFC 2104) over the `sha2` crate, for keyed, non-reversible mask tokens.

use sha2::{Digest, Sha256};

const BLOCK: usize = 64;

/// A precomputed HMAC-SHA-256 key (inner and outer padded keys).
#[derive(Clone)]
pub(crate) struct HmacKey {
    ipad: [u8; BLOCK],
    opad: [u8; BLOCK],
}

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HmacKey(<redacted>)")
    }
}

impl HmacKey {
    pub(crate) fn new(key: &[u8]) -> Self {
        let mut block = [0u8; BLOCK];
        if key.len() > BLOCK {
            let digest = Sha256::digest(key);
            for (b, d) in block.iter_mut().zip(digest.iter()) {
                *b = *d;
            }
        } else {
            for (b, k) in block.iter_mut().zip(key) {
                *b = *k;
            }
        }
        let mut ipad = [0x36u8; BLOCK];
        let mut opad = [0x5cu8; BLOCK];
        for i in 0..BLOCK {
            ipad[i] ^= block[i];
            opad[i] ^= block[i];
        }
        Self { ipad, opad }
    }

    /// HMAC-SHA-256 of the concatenation of `parts`.
    pub(crate) fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut inner = Sha256::new();
        inner.update(self.ipad);
        for part in parts {
            inner.update(part);
        }
        let inner = inner.finalize();
        let mut outer = Sha256::new();
        outer.update(self.opad);
        outer.update(inner);
        let mut out = [0u8; 32];
        for (o, d) in out.iter_mut().zip(outer.finalize().iter()) {
            *o = *d;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::HmacKey;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn pii_hmac_rfc4231_case_2() {
        let key = HmacKey::new(b"Jefe");
        assert_eq!(
            hex(&key.mac(&[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn pii_hmac_rfc4231_case_6_long_key() {
        let key = HmacKey::new(&[0xaa; 131]);
        assert_eq!(
            hex(&key.mac(&[b"Test Using Larger Than Block-Size Key - Hash Key First"])),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
