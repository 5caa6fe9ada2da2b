//! Layer 1, contracts and metas: what users implement ([`tool::ToolHandler`],
//! [`interceptor::BeforeToolCall`], [`interceptor::AfterToolCall`]), what the macros generate (the
//! metas of every component kind and their [`registry`] entries), the small data they exchange
//! (an approval ticket, [`ticket::Ticket`]) and how a call ends ([`outcome::CallOutcome`]).
//!
//! Nothing here depends on the layers above (pipeline, cascade, callbacks, engine, app) nor on
//! the store; only on the leaves [`crate::dto`], [`crate::di`] and the digest, and on the data
//! of [`crate::pii`] a PII policy is written in (its detectors and strategy: see
//! [`pii_policy`]). The runtime forms of the components (the resolved chain, a tool's call
//! slot, an interceptor behind `dyn` and its hook futures, a guardrail or an approval channel
//! behind `dyn`, a policy's masker) are the pipeline's: a meta's build function returns them as
//! an opaque `Built`. Registration data made at run time (a whole MCP server's tools) is owned
//! by the app that made it, through a [`MetaRef`], never leaked to look `'static`.
pub mod agent;
mod built;
pub mod channel;
pub mod guardrail;
pub mod handler_error;
pub mod interceptor;
mod interceptor_meta;
mod meta_ref;
pub mod outcome;
pub mod pii_policy;
pub mod registry;
pub mod scope;
pub mod ticket;
pub mod tool;
pub mod usage_limits;
pub mod workflow;

#[doc(hidden)]
pub use built::Built;
pub use meta_ref::MetaRef;
