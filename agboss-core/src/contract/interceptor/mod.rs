//! Tool interceptors: [`BeforeToolCall`], [`AfterToolCall`], [`ToolCallDecision`] and the call
//! contexts they read.
//!
//! An interceptor is a struct annotated with `#[tool_interceptor(...)]` that implements
//! `BeforeToolCall`, `AfterToolCall`, or both (`[tool-interceptor.missing-handler]` if neither).
//! `before_tool_call` runs after input validation, outer to inner, and decides; the first decision
//! that is not `allow` stops the chain. `after_tool_call` runs after the tool, inner to outer, and
//! returns the (optionally transformed) output.
use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::contract::handler_error::InterceptorError;
use crate::di::{DepMeta, DiError, Resolver, Services};

mod context;
mod erased;

/// The hook's decision lives with the rest of the outcome vocabulary.
pub use crate::contract::outcome::ToolCallDecision;
pub(crate) use context::InputHolder;
pub use context::{ToolCallContext, ToolCallResultContext, ToolOutput};
#[doc(hidden)]
pub use erased::{
    AfterFuture, AfterHook, BeforeFuture, BeforeHook, ErasedInterceptor, HookError,
    TypedInterceptor, probe,
};

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

/// The time limit of an interceptor's hooks when neither the interceptor
/// (`#[tool_interceptor(timeout_ms = ..)]`) nor the app
/// ([`AppBuilder::interceptor_timeout`](crate::AppBuilder::interceptor_timeout)) sets one.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Registration data of a `#[tool_interceptor]`.
pub struct InterceptorMeta {
    /// Unique kebab-case name ending in `-tool-interceptor`.
    pub name: &'static str,
    /// What it is responsible for.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Its dependencies.
    pub deps: &'static [DepMeta],
    /// Time limit of each of its hooks, in milliseconds (`None`: the app's
    /// [`interceptor_timeout`](crate::AppBuilder::interceptor_timeout), 10 s by default). A hook
    /// that runs past it fails the call closed ([`ToolCallErrorKind::InterceptorTimeout`](crate::error::ToolCallErrorKind::InterceptorTimeout)).
    pub timeout_ms: Option<u64>,
    #[doc(hidden)]
    pub build: fn(&Services) -> Result<Arc<dyn ErasedInterceptor>, DiError>,
}

impl InterceptorMeta {
    /// True for the same interceptor type.
    pub fn same(&self, other: &InterceptorMeta) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

impl fmt::Debug for InterceptorMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
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
