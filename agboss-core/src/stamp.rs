//! Leaf: the stamps a journal step and an approval ticket carry: the one digest (SHA-256,
//! hex) and the wall clock in milliseconds. Imports nothing of the crate.
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, the time every backend stores.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// SHA-256 of `bytes`, lower-case hex: the one digest of the journal (request digests,
/// idempotency keys), the approval tickets (input fingerprints) and the policy digests.
///
/// ```
/// use agboss_core::store::types::sha256_hex;
/// assert_eq!(sha256_hex(b"").len(), 64);
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest as _, Sha256};
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}
