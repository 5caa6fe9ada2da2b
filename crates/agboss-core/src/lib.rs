//! # agboss-core
//!
//! The runtime of agboss-rs: guarded tools, tool interceptors, dependency injection,
//! the interceptor cascade and the agent loop. Every macro is re-exported here, so an
//! application depends on `agboss-core` only (and on `agboss-testing` for its tests).
#![forbid(unsafe_code)]

pub mod dto;
pub mod model;
pub mod pii;

#[doc(hidden)]
pub mod __private;
