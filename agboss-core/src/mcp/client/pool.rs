//! The sessions of a connected server: one [`Slot`] (a session, re-opened after a fault) for
//! the whole app, or, with per-tenant credentials, a bounded pool of them keyed by tenant and
//! credential ([`TenantPool`]): a tenant's calls only ever run on a session opened with its
//! own credential, and the least recently used session is closed when the pool is full.
use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use rmcp::service::{Peer, RoleClient, RunningService};

use super::credentials::{PerTenant, SharedCredentialStore};
use crate::di::TenantContext;

/// One session (or none, after a fault, until the next call opens one).
#[derive(Default)]
pub(crate) struct Slot {
    session: StdMutex<Session>,
    /// Held while a new session is being opened, so that one fault opens one.
    pub(crate) connecting: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Session {
    running: Option<RunningService<RoleClient, ()>>,
    /// Bumped at every new connection: a fault resets only the connection it happened on.
    generation: u64,
}

impl Slot {
    /// A slot holding `running`.
    pub(crate) fn open(running: RunningService<RoleClient, ()>) -> Self {
        let slot = Self::default();
        slot.install(running);
        slot
    }

    /// The open session's peer, if it is open.
    pub(crate) fn current(&self) -> Option<(Peer<RoleClient>, u64)> {
        let mut session = lock(&self.session);
        match &session.running {
            Some(running) if !running.is_transport_closed() => {
                Some((running.peer().clone(), session.generation))
            }
            Some(_) => {
                session.running = None;
                None
            }
            None => None,
        }
    }

    /// Installs a newly opened session: its peer and generation.
    pub(crate) fn install(
        &self,
        running: RunningService<RoleClient, ()>,
    ) -> (Peer<RoleClient>, u64) {
        let peer = running.peer().clone();
        let mut session = lock(&self.session);
        session.running = Some(running);
        session.generation += 1;
        (peer, session.generation)
    }

    /// Drops the connection a fault happened on (not a newer one).
    pub(crate) fn reset(&self, generation: u64) {
        let old = {
            let mut session = lock(&self.session);
            if session.generation != generation {
                return;
            }
            session.running.take()
        };
        drop(old);
    }

    /// Takes the session out (to drop it where a runtime is).
    pub(crate) fn take(&self) -> Option<RunningService<RoleClient, ()>> {
        lock(&self.session).running.take()
    }
}

/// The key of a pooled session: the tenant and a digest of the credential it was opened with.
type Key = (String, [u8; 32]);

/// The sessions of a server with per-tenant credentials.
pub(crate) struct TenantPool {
    pub(crate) store: SharedCredentialStore,
    pub(crate) list_as: Option<TenantContext>,
    max: usize,
    slots: StdMutex<Lru>,
}

#[derive(Default)]
struct Lru {
    by_key: HashMap<Key, (Arc<Slot>, u64)>,
    clock: u64,
}

impl TenantPool {
    pub(crate) fn new(per_tenant: &PerTenant) -> Self {
        Self {
            store: Arc::clone(&per_tenant.store),
            list_as: per_tenant.list_as.clone(),
            max: per_tenant.max_connections.max(1),
            slots: StdMutex::default(),
        }
    }

    /// The slot of `tenant` with the credential of digest `digest` (a new, empty one the first
    /// time; the least recently used one is closed when the pool is full).
    pub(crate) fn slot(&self, tenant: &str, digest: [u8; 32]) -> Arc<Slot> {
        let mut evicted = None;
        let slot = {
            let mut lru = lock(&self.slots);
            lru.clock += 1;
            let now = lru.clock;
            let key = (tenant.to_owned(), digest);
            if let Some((slot, used)) = lru.by_key.get_mut(&key) {
                *used = now;
                Arc::clone(slot)
            } else {
                if lru.by_key.len() >= self.max
                    && let Some(oldest) = lru
                        .by_key
                        .iter()
                        .min_by_key(|(_, (_, used))| *used)
                        .map(|(k, _)| k.clone())
                {
                    evicted = lru.by_key.remove(&oldest);
                }
                let slot = Arc::new(Slot::default());
                lru.by_key.insert(key, (Arc::clone(&slot), now));
                slot
            }
        };
        // Closed outside the lock (an in-flight call on it keeps it until it ends).
        drop(evicted);
        slot
    }

    /// How many sessions are pooled.
    pub(crate) fn len(&self) -> usize {
        lock(&self.slots).by_key.len()
    }

    /// Takes every pooled session out (to drop them where a runtime is).
    pub(crate) fn drain(&self) -> Vec<RunningService<RoleClient, ()>> {
        lock(&self.slots)
            .by_key
            .drain()
            .filter_map(|(_, (slot, _))| slot.take())
            .collect()
    }
}

/// A poisoned lock still holds its data.
pub(crate) fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::client::InMemoryCredentials;

    #[test]
    fn the_pool_is_bounded_and_keyed_by_tenant_and_credential() {
        let mut per_tenant = PerTenant::new(InMemoryCredentials::new());
        per_tenant.max_connections = 2;
        let pool = TenantPool::new(&per_tenant);
        let acme = pool.slot("acme", [1; 32]);
        assert!(Arc::ptr_eq(&acme, &pool.slot("acme", [1; 32])), "reused");
        let rotated = pool.slot("acme", [2; 32]);
        assert!(
            !Arc::ptr_eq(&acme, &rotated),
            "a new credential, a new session"
        );
        assert_eq!(pool.len(), 2);
        // Full: the least recently used (acme's first) is closed.
        let _ = pool.slot("acme", [2; 32]);
        let globex = pool.slot("globex", [3; 32]);
        assert_eq!(pool.len(), 2);
        assert!(Arc::ptr_eq(&globex, &pool.slot("globex", [3; 32])));
        assert!(!Arc::ptr_eq(&acme, &pool.slot("acme", [1; 32])), "evicted");
    }
}
