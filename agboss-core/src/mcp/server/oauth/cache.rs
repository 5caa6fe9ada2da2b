//! The tokens already validated: a bounded map from a token's SHA-256 digest to its identity,
//! each entry kept until the token expires (`exp` plus the leeway) and no longer than the
//! JWKS's maximum age, so that a client's next request with the same token costs a digest and
//! a lookup instead of a signature check. Only tokens that passed every check are kept; a
//! full map is emptied of expired entries first, and cleared when that is not enough.
use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use super::OAuthIdentity;

pub(crate) struct TokenCache {
    capacity: usize,
    by_digest: Mutex<HashMap<[u8; 32], (OAuthIdentity, u64)>>,
}

impl TokenCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            by_digest: Mutex::default(),
        }
    }

    pub(crate) fn digest(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The identity of a token validated before and still valid at `now` (seconds).
    pub(crate) fn get(&self, digest: &[u8; 32], now: u64) -> Option<OAuthIdentity> {
        if self.capacity == 0 {
            return None;
        }
        let map = self.lock();
        match map.get(digest) {
            Some((identity, until)) if now < *until => Some(identity.clone()),
            _ => None,
        }
    }

    /// Keeps a validated token's identity until `until` (seconds).
    pub(crate) fn insert(&self, digest: [u8; 32], identity: OAuthIdentity, until: u64, now: u64) {
        if self.capacity == 0 || until <= now {
            return;
        }
        let mut map = self.lock();
        if map.len() >= self.capacity {
            map.retain(|_, (_, until)| now < *until);
            if map.len() >= self.capacity {
                map.clear();
            }
        }
        map.insert(digest, (identity, until));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (OAuthIdentity, u64)>> {
        self.by_digest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_map_stays_bounded() {
        let cache = TokenCache::new(2);
        let who = OAuthIdentity::new("acme", "p", ["s"]);
        cache.insert([1; 32], who.clone(), 100, 10);
        assert!(cache.get(&[1; 32], 99).is_some());
        assert!(cache.get(&[1; 32], 100).is_none(), "expired");
        cache.insert([2; 32], who.clone(), 50, 10);
        cache.insert([3; 32], who.clone(), 200, 60); // [2] expired: purged
        assert!(cache.get(&[1; 32], 61).is_some() && cache.get(&[3; 32], 61).is_some());
        cache.insert([4; 32], who.clone(), 200, 61); // full of live ones: cleared
        assert!(cache.get(&[1; 32], 62).is_none() && cache.get(&[4; 32], 62).is_some());
        let off = TokenCache::new(0);
        off.insert([1; 32], who, 100, 10);
        assert!(off.get(&[1; 32], 11).is_none());
    }
}
