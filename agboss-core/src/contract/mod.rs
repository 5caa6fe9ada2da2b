//! Layer 1, contracts and metas: what users implement ([`tool::ToolHandler`],
//! [`interceptor::BeforeToolCall`], [`interceptor::AfterToolCall`]), what the macros generate (the
//! metas of every component kind and their [`registry`] entries), and the data a call runs on
//! ([`chain::Chain`]) and ends with ([`outcome::CallOutcome`]).
//!
//! Nothing here depends on the layers above (pipeline, cascade, callbacks, engine, app); only on
//! the leaves [`crate::dto`], [`crate::di`], [`crate::error`], [`crate::pii`] and [`crate::store`]
//! (the approval ticket a channel reads).
pub mod agent;
pub mod chain;
pub mod channel;
pub mod guardrail;
pub mod handler_error;
pub mod interceptor;
pub mod outcome;
pub mod pii_policy;
pub mod registry;
pub mod scope;
pub mod tool;
pub mod workflow;
