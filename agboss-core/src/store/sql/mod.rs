//! The one SQL implementation of the store, [`SqlStore`], generic over a [`Dialect`](dialect::Dialect)
//! (in the style of sqlx-core beside its drivers): the operations are written once here, and
//! `store/sqlite.rs` and `store/postgres.rs` hold only what differs (the clock, row locks, how
//! writers queue, row numbering, connecting and migrating).
//!
//! Files, bottom to top: `db` (what a driver provides, the small conversions), `queries` (the
//! shared statements), `dialect` (what differs, and the statements built from it), `rows` (rows
//! into records), `store` (the type and its read and write primitives), then one file per
//! trait: `threads`, `runs` (with `begin`), `tickets`, `secrets` and `usage`.
mod begin;
pub(crate) mod db;
pub(crate) mod dialect;
mod queries;
mod rows;
mod runs;
mod secrets;
mod store;
mod threads;
mod tickets;
mod usage;

pub use store::SqlStore;
