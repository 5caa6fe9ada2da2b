//! Tool interceptors: [`BeforeToolCall`], [`AfterToolCall`], [`ToolCallDecision`] and the call
//! contexts they read.
//!
//! An interceptor is a struct annotated with `#[tool_interceptor(...)]` that implements
//! `BeforeToolCall`, `AfterToolCall`, or both (`[tool-interceptor.missing-handler]` if neither).
//! `before_tool_call` runs after input validation, outer to inner, and decides; the first decision
//! that is not `allow` stops the chain. `after_tool_call` runs after the tool, inner to outer, and
//! returns the (optionally transformed) output.
use std::future::Future;

use crate::di::{DiError, Resolver};
use crate::error::InterceptorError;

mod context;

pub use super::interceptor_meta::{DEFAULT_HOOK_TIMEOUT, InterceptorMeta};
pub(crate) use context::InputHolder;
pub use context::{ToolCallContext, ToolCallResultContext, ToolOutput};

/// What a `before_tool_call` hook decides.
///
/// ```
/// use agboss_core::ToolCallDecision;
/// assert_eq!(ToolCallDecision::allow(), ToolCallDecision::Allow);
/// assert_eq!(
///     ToolCallDecision::reply_to_model("fix the order id"),
///     ToolCallDecision::ReplyToModel { message: "fix the order id".into() },
/// );
/// assert!(ToolCallDecision::block("no").is_block());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[must_use = "a decision does nothing unless the hook returns it"]
pub enum ToolCallDecision {
    /// Go on to the next `before_tool_call` (or run the tool once all allowed).
    Allow,
    /// Self-correcting feedback: the tool does not run; in an agent loop the message is the
    /// call's observation; on a direct invoke it is a [`ToolBlockedError`](crate::ToolBlockedError).
    ReplyToModel {
        /// What the model reads.
        message: String,
    },
    /// Hard abort: the tool does not run and the step fails with `ToolBlockedError`.
    Block {
        /// Why (for logs and the error).
        reason: String,
    },
}

impl ToolCallDecision {
    /// Proceed.
    pub fn allow() -> Self {
        Self::Allow
    }
    /// Tell the model what to fix; the tool does not run.
    pub fn reply_to_model(message: impl Into<String>) -> Self {
        Self::ReplyToModel {
            message: message.into(),
        }
    }
    /// Abort the step; the tool does not run.
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block {
            reason: reason.into(),
        }
    }
    /// True for `allow()`.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow)
    }
    /// True for `block(..)`.
    pub fn is_block(&self) -> bool {
        matches!(self, Self::Block { .. })
    }
    /// True for `reply_to_model(..)`.
    pub fn is_reply_to_model(&self) -> bool {
        matches!(self, Self::ReplyToModel { .. })
    }
}

/// A pre-call hook. Runs outer to inner after input validation; the first non-`allow` decision
/// stops the chain. Returning `Err` fails the call closed: the tool does not run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `BeforeToolCall`",
    note = "implement `BeforeToolCall` for `{Self}`: `async fn before_tool_call(&self, call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError>`"
)]
pub trait BeforeToolCall: Send + Sync {
    /// Inspects the call and decides.
    fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> impl Future<Output = Result<ToolCallDecision, InterceptorError>> + Send;
}

/// A post-call hook. Runs inner to outer after the tool succeeded, each given the previous one's
/// output; what it returns is re-validated against the tool's output DTO. Returning `Err` fails
/// the call closed: the output is discarded.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `AfterToolCall`",
    note = "implement `AfterToolCall` for `{Self}`: `async fn after_tool_call(&self, call: ToolCallResultContext<'_>) -> Result<ToolOutput, InterceptorError>`"
)]
pub trait AfterToolCall: Send + Sync {
    /// Inspects (and optionally transforms) the output.
    fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> impl Future<Output = Result<ToolOutput, InterceptorError>> + Send;
}

/// Implemented by `#[tool_interceptor]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool interceptor [tool-interceptor.not-an-interceptor]",
    label = "expected a `#[tool_interceptor]` struct",
    note = "only structs annotated with `#[tool_interceptor(...)]` can be listed in `tool_interceptors` / `exclude_tool_interceptors`"
)]
pub trait ToolInterceptor: Send + Sync + Sized + 'static {
    /// Registration data.
    const META: &'static InterceptorMeta;
    /// Builds the interceptor from its dependencies.
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;
}
