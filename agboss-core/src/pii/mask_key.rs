//! The secret key of `hash` masks: HMAC-SHA-256 (RFC 2104) from RustCrypto's `hmac` crate, keyed
//! once and cloned per token.
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A keyed HMAC-SHA-256 state, ready to authenticate one token per clone.
#[derive(Clone)]
pub(crate) struct HmacKey {
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for HmacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HmacKey(<redacted>)")
    }
}

impl HmacKey {
    /// Keys the state. HMAC takes keys of any length (longer than a block: hashed first).
    pub(crate) fn new(key: &[u8]) -> Self {
        Self {
            keyed: <Hmac<Sha256> as KeyInit>::new_from_slice(key)
                .expect("HMAC accepts keys of any length"),
        }
    }

    /// HMAC-SHA-256 of the concatenation of `parts`.
    pub(crate) fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
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

    #[test]
    fn pii_hmac_rfc4231_case_1() {
        let key = HmacKey::new(&[0x0b; 20]);
        assert_eq!(
            hex(&key.mac(&[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }
}
