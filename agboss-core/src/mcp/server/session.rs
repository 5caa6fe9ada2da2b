//! The owners of rmcp's HTTP sessions: each session id is bound to the [`Caller`] (tenant and
//! principal) whose `initialize` opened it, and a request that names a session it does not
//! own is refused as if the session did not exist.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::auth::Caller;

/// The sessions' owners, beside rmcp's session manager (whose map says which are still open).
pub(crate) struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    by_session: HashMap<Arc<str>, Caller>,
    /// How many bindings the last pruning kept: the next prunes at twice as many.
    kept: usize,
}

/// Fewer bindings than this are never pruned.
const PRUNE_FLOOR: usize = 64;

impl SessionOwners {
    pub(crate) fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self {
            manager,
            owners: Mutex::new(Owners::default()),
        }
    }

    /// Whether `caller` opened `session` (false for another caller's session and for a
    /// session this server does not know).
    pub(crate) fn owns(&self, session: &str, caller: &Caller) -> bool {
        self.lock()
            .by_session
            .get(session)
            .is_some_and(|owner| owner.is(caller))
    }

    /// Binds a session just opened to `caller`. Now and then the bindings of sessions rmcp
    /// has closed (idle, ended by the server) are dropped, so the map stays as large as
    /// rmcp's own.
    pub(crate) async fn bind(&self, session: &str, caller: Caller) {
        let prune = {
            let mut owners = self.lock();
            owners.by_session.insert(Arc::from(session), caller);
            owners.by_session.len() >= (owners.kept * 2).max(PRUNE_FLOOR)
        };
        if prune {
            let open = self.manager.sessions.read().await;
            let mut owners = self.lock();
            owners.by_session.retain(|id, _| open.contains_key(id));
            owners.kept = owners.by_session.len();
        }
    }

    /// Forgets a session its owner ended.
    pub(crate) fn unbind(&self, session: &str) {
        self.lock().by_session.remove(session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
