//! [`StoreError`]: what a store operation can fail with.
use crate::contract::ticket::TicketState;

/// A boxed error: the `source` of a backend failure.
type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a store operation failed. Foreign data is never told apart from missing data: a tenant
/// asking for another tenant's thread or run gets the same `*NotFound` as for one that never
/// existed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The app has no thread store (threads and durable runs need one).
    #[error("no thread store: set one with AppBuilder::store")]
    NotConfigured,
    /// No thread of that id for this tenant.
    #[error("no thread `{thread_id}` for this tenant")]
    ThreadNotFound {
        /// The thread id.
        thread_id: String,
    },
    /// A thread of that id already exists for this tenant.
    #[error("thread `{thread_id}` already exists")]
    ThreadExists {
        /// The thread id.
        thread_id: String,
    },
    /// Another run of the thread has not finished: one run writes a thread at a time.
    #[error("thread `{thread_id}` is busy: run `{run_id}` has not finished (resume it first)")]
    ThreadBusy {
        /// The thread id.
        thread_id: String,
        /// The unfinished run.
        run_id: String,
    },
    /// No run of that id for this tenant.
    #[error("no run `{run_id}` for this tenant")]
    RunNotFound {
        /// The run id.
        run_id: String,
    },
    /// The run has finished; it can be read, not resumed.
    #[error("run `{run_id}` has already finished")]
    RunFinished {
        /// The run id.
        run_id: String,
    },
    /// Another worker holds an unexpired lease on the run.
    #[error(
        "run `{run_id}` is leased by another worker until {expires_at_ms} (ms since the epoch)"
    )]
    LeaseHeld {
        /// The run id.
        run_id: String,
        /// When the lease expires.
        expires_at_ms: i64,
    },
    /// The lease this write carries is no longer the run's: another worker took the run over
    /// (or it finished). Nothing was written.
    #[error("lease {token} on run `{run_id}` was lost: nothing was written")]
    LeaseLost {
        /// The run id.
        run_id: String,
        /// The stale fencing token.
        token: i64,
    },
    /// No ticket of that id for this tenant.
    #[error("no ticket `{ticket_id}` for this tenant")]
    TicketNotFound {
        /// The ticket id.
        ticket_id: String,
    },
    /// A ticket of that id already exists for this tenant.
    #[error("ticket `{ticket_id}` already exists")]
    TicketExists {
        /// The ticket id.
        ticket_id: String,
    },
    /// The ticket expired before it was decided.
    #[error("ticket `{ticket_id}` expired at {expires_at_ms} (ms since the epoch)")]
    TicketExpired {
        /// The ticket id.
        ticket_id: String,
        /// When it expired.
        expires_at_ms: i64,
    },
    /// The ticket is not in the state the operation needs (decided already, consumed by
    /// another resume, superseded): nothing was changed.
    #[error("ticket `{ticket_id}` is {found:?}, not {expected:?}")]
    TicketState {
        /// The ticket id.
        ticket_id: String,
        /// The state the operation needs.
        expected: TicketState,
        /// The state it is in.
        found: TicketState,
    },
    /// A ticket may not move so (tickets move forward only, and are created pending and
    /// undecided): nothing was changed.
    #[error("ticket `{ticket_id}` cannot go from {from:?} to {to:?}")]
    TicketTransition {
        /// The ticket id.
        ticket_id: String,
        /// The state it would leave.
        from: TicketState,
        /// The state it would reach.
        to: TicketState,
    },
    /// A stored row has an encoding version this build does not know. Nothing is overwritten.
    #[error("a stored {what} has format {found}; this build reads format {supported}")]
    UnknownFormat {
        /// What kind of row.
        what: String,
        /// Its version.
        found: i64,
        /// The version this build reads.
        supported: i64,
    },
    /// A stored row could not be read. Nothing is overwritten.
    #[error("a stored {what} is corrupt: {detail}")]
    Corrupt {
        /// What kind of row.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// The database schema could not be brought to this build's version (a migration failed,
    /// or the database was migrated by a newer build).
    #[error("store schema: {detail}")]
    Schema {
        /// What failed.
        detail: String,
        /// The cause.
        #[source]
        source: Option<BoxError>,
    },
    /// The operation cannot be done here (a tool without an approval channel asked for a
    /// ticket): whatever needed it does not happen.
    #[error("this store does not support {operation}")]
    Unsupported {
        /// The operation.
        operation: &'static str,
    },
    /// The backend failed (connection lost, disk full, ...). The operation did not happen.
    #[error("store backend failed during {operation}")]
    Backend {
        /// The operation.
        operation: &'static str,
        /// The cause.
        #[source]
        source: BoxError,
    },
}

impl StoreError {
    /// A backend failure during `operation`.
    pub fn backend(operation: &'static str, source: impl Into<BoxError>) -> Self {
        Self::Backend {
            operation,
            source: source.into(),
        }
    }
    /// Whether retrying the same operation later may succeed (a backend failure, a held lease).
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Backend { .. } | Self::LeaseHeld { .. })
    }
    /// Whether the stored data itself is at fault, so the same operation fails again until
    /// someone repairs it: a corrupt row ([`Self::Corrupt`]), a row of an unknown format
    /// ([`Self::UnknownFormat`]) or a schema this build cannot use ([`Self::Schema`]). A run
    /// refused so at its start is finished as failed, never retried by a takeover.
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            Self::Corrupt { .. } | Self::UnknownFormat { .. } | Self::Schema { .. }
        )
    }
}
