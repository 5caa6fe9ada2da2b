//! Every error of the runtime, in one place. Each is defined by the layer that raises it and
//! re-exported here:
//!
//! | error | raised by | defined in |
//! |---|---|---|
//! | [`ToolError`], [`InterceptorError`], [`GuardrailError`], [`ChannelError`], [`AuthError`] | your components' handlers and authenticators | [`contract::handler_error`](crate::contract::handler_error) |
//! | [`ToolCallError`] (its [`ToolCallErrorKind`]), [`ToolBlockedError`] | one tool call (the pipeline) | [`contract::outcome`](crate::contract::outcome) |
//! | [`GuardrailBlockedError`] (its [`GuardrailBlockKind`]) | one guardrail check | [`pipeline::guard`](crate::pipeline::guard) |
//! | [`StepFailedError`], [`RunError`] | a run (the engine) | [`engine`](crate::engine) |
//! | [`DiError`], [`BuildError`] | dependency injection, building an app | [`di`](crate::di) |
//! | [`StoreError`] | a store | [`store`](crate::store) |
//!
//! The errors of a run form one hierarchy, so that code which handles a failed step also
//! catches a blocked tool and can tell which it was; each error's
//! [`source()`](std::error::Error::source) leads to the one below it:
//!
//! ```
//! use agboss_core::{StepFailedError, ToolCallDecision};
//! use agboss_core::error::ToolBlockedError;
//!
//! fn describe(err: &StepFailedError) -> String {
//!     match err {
//!         StepFailedError::ToolBlocked(blocked) => format!("blocked by {}", blocked.interceptor),
//!         other => format!("failed: {other}"),
//!     }
//! }
//! let blocked = ToolBlockedError {
//!     tool_name: "get-order-tool".into(),
//!     call_id: "call_1".into(),
//!     interceptor: "tenant-order-tool-interceptor",
//!     kind: ToolCallDecision::block("tenant mismatch"),
//! };
//! let step: StepFailedError = blocked.into();
//! assert_eq!(describe(&step), "blocked by tenant-order-tool-interceptor");
//! assert!(step.as_blocked().is_some());
//! ```
//!
//! Nothing in the crate imports from this module: it only gathers.

pub use crate::contract::guardrail::Boundary;
pub use crate::contract::handler_error::{
    AuthError, BoxError, ChannelError, GuardrailError, InterceptorError, ToolError,
};
pub use crate::contract::outcome::{ToolBlockedError, ToolCallError, ToolCallErrorKind};
pub use crate::di::{BuildError, DiError};
pub use crate::engine::{RunError, RunFailed, StepFailedError};
pub use crate::pipeline::guard::{GuardrailBlockKind, GuardrailBlockedError};
pub use crate::store::StoreError;

#[doc(hidden)]
#[allow(deprecated)]
pub use crate::compat::root::BlockKind;
