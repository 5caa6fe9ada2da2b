//! Tool interceptors: [`BeforeToolCall`], [`AfterToolCall`], [`ToolCallDecision`] and the call
//! contexts they read.
//!
//! An interceptor is a struct annotated with `#[tool_interceptor(...)]` that implements
//! `BeforeToolCall`, `AfterToolCall`, or both (`[tool-interceptor.missing-handler]` if neither).
//! `before_tool_call` runs after input validation, outer to inner, and decides; the first decision
//! that is not `allow` stops the chain. `after_tool_call` runs after the tool, inner to outer, and
//! returns the (optionally transformed) output.
use std::future::Future;

use crate::contract::handler_error::InterceptorError;
use crate::di::{DiError, Resolver};

mod context;

pub use super::interceptor_meta::{DEFAULT_HOOK_TIMEOUT, InterceptorMeta};
/// The hook's decision lives with the rest of the outcome vocabulary.
pub use crate::contract::outcome::ToolCallDecision;
pub(crate) use context::InputHolder;
pub use context::{ToolCallContext, ToolCallResultContext, ToolOutput};

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
