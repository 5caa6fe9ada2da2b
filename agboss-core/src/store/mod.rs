//! Leaf: conversation threads, the durable run journal, approval tickets and tenant usage
//! windows, behind four small traits: [`ThreadStore`] (threads), [`RunStore`] (runs, journals,
//! leases), [`TicketStore`] (tickets) and [`UsageStore`] (each tenant's usage per time window).
//! [`Store`] is all four, what an app holds (as a [`SharedStore`]); a backend may
//! implement one trait alone, and passes the conformance checks of each trait it implements.
//!
//! A **thread** is a conversation owned by one tenant: its messages in order. A **run** (one
//! `execute` / `stream`) may continue a thread: it reads the thread's messages as history and
//! appends its own as it goes. Every step of a run is written to the run's **journal** before
//! the next one starts: a model turn with the digest of its request and the response, a tool
//! call's start (with the idempotency key the tool reads) and its end (the observation). A run
//! resumed in another process replays its journal: completed steps are read back, never done
//! again.
//!
//! One worker writes a run at a time: [`RunStore::begin_run`] grants a [`Lease`] with an
//! expiry and a fencing token, every write carries it, and a write whose token is no longer the
//! run's is refused ([`StoreError::LeaseLost`]): a worker that lost its run cannot corrupt it.
//!
//! Every operation is scoped by tenant: thread and run ids are unique within a tenant, and
//! another tenant's thread or run reads as not found. Besides the three, [`SecretStore`] keeps
//! each tenant's secrets by name (the credentials of its remote MCP servers).
//!
//! Backends: [`MemoryStore`] (tests), `SqliteStore` (the embedded default, feature `sqlite`)
//! and `PostgresStore` (feature `postgres`), both one SQL implementation (`SqlStore`) over a
//! dialect. A durable-execution engine fits the same contract: a
//! journal append is a journaled step (`ctx.run`), a lease is the engine's own invocation
//! ownership.
//!
//! ```
//! use agboss_core::store::{MemoryStore, NewThread, ThreadStore};
//! # futures::executor::block_on(async {
//! let store = MemoryStore::new();
//! let thread = store.create_thread("acme", NewThread::new().id("t1")).await.unwrap();
//! assert_eq!(thread.id, "t1");
//! assert!(store.thread("globex", "t1").await.is_err()); // another tenant's thread
//! # });
//! ```
mod checks;
pub mod error;
mod forward;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod secrets;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
pub mod ticket;
mod ticket_query;
mod traits;
pub mod types;
mod usage;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use secrets::SecretStore;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use ticket::{CONNECT_ACCOUNT_STEP, Ticket, TicketDecision, TicketState};
pub use ticket_query::{MAX_TICKET_PAGE, TicketPage, TicketQuery};
pub use traits::{RunStore, SharedStore, Store, ThreadStore, TicketStore, UsageStore};
pub use types::{
    DEFAULT_LEASE_TTL, FORMAT_VERSION, JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord,
    RunStatus, StepEntry, ThreadInfo, ThreadList, ThreadMessage,
};
pub use usage::UsageKey;
