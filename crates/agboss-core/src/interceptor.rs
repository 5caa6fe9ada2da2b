//! Tool interceptors: [`BeforeToolCall`], [`AfterToolCall`], [`ToolCallDecision`] and the call
//! contexts they read.
//!
//! An interceptor is a struct annotated with `#[tool_interceptor(...)]` that implements
//! `BeforeToolCall`, `AfterToolCall`, or both (`[tool-interceptor.missing-handler]` if neither).
//! `before_tool_call` runs after input validation, outer to inner, and decides; the first decision
//! that is not `allow` stops the chain. `after_tool_call` runs after the tool, inner to outer, and
//! returns the (optionally transformed) output.
use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::di::{DepMeta, ExecutionContext, Resolver, Services};
use crate::dto::{Dto, ValidationError};
use crate::error::InterceptorError;
use crate::tool::{Tool, ToolMeta};

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

/// The input of a call, typed and (lazily) as JSON.
pub(crate) trait ErasedInput: Send + Sync {
    fn json(&self) -> &Value;
    fn typed(&self) -> &dyn Any;
}

/// The validated input: typed, and as JSON built from the typed value on first use. Hooks see
/// exactly what the tool receives (the DTO's fields, unknown members the model sent dropped),
/// never a second reading of the raw text.
pub(crate) struct InputHolder<'a, I> {
    typed: &'a I,
    json: OnceLock<Value>,
}

impl<'a, I: Dto> InputHolder<'a, I> {
    pub(crate) fn new(typed: &'a I) -> Self {
        Self {
            typed,
            json: OnceLock::new(),
        }
    }
}

impl<I: Dto> ErasedInput for InputHolder<'_, I> {
    fn json(&self) -> &Value {
        self.json
            .get_or_init(|| serde_json::to_value(self.typed).unwrap_or(Value::Null))
    }
    fn typed(&self) -> &dyn Any {
        self.typed
    }
}

/// What a `before_tool_call` hook sees: `{ tool, tool_name, call_id, input }`, after the input
/// passed its DTO.
pub struct ToolCallContext<'a> {
    pub(crate) tool: &'static ToolMeta,
    pub(crate) input: &'a dyn ErasedInput,
    pub(crate) execution: &'a ExecutionContext,
}

impl<'a> ToolCallContext<'a> {
    /// The tool's registration data (name, description, schemas).
    pub fn tool(&self) -> &'static ToolMeta {
        self.tool
    }
    /// The tool's registered name, e.g. `get-order-tool`.
    pub fn tool_name(&self) -> &'static str {
        self.tool.name
    }
    /// True when the call is for tool `T`.
    pub fn is_tool<T: Tool>(&self) -> bool {
        (self.tool.type_id)() == TypeId::of::<T>()
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        self.execution.call_id()
    }
    /// The validated input as JSON, with its wire (camelCase) names.
    pub fn input(&self) -> &Value {
        self.input.json()
    }
    /// The validated input as `T`: the tool's own input type (cloned), or any other DTO decoded
    /// from the JSON input.
    pub fn input_as<T: Dto + Clone>(&self) -> Result<T, ValidationError> {
        match self.input.typed().downcast_ref::<T>() {
            Some(t) => Ok(t.clone()),
            None => T::from_json_value(self.input.json()),
        }
    }
    /// The input by reference, when `T` is the tool's input type.
    pub fn input_ref<T: 'static>(&self) -> Option<&T> {
        self.input.typed().downcast_ref::<T>()
    }
    /// The execution context of the call.
    pub fn execution(&self) -> &ExecutionContext {
        self.execution
    }
}

impl fmt::Debug for ToolCallContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallContext")
            .field("tool_name", &self.tool.name)
            .field("call_id", &self.call_id())
            .field("input", self.input())
            .finish()
    }
}

/// An erased DTO value.
trait ErasedDto: Any + Send + Sync {
    fn to_json(&self) -> Result<Value, serde_json::Error>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn dto_name(&self) -> &'static str;
}

impl<T: Dto> ErasedDto for T {
    fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn dto_name(&self) -> &'static str {
        T::DTO_NAME
    }
}

/// A tool's output on its way through the after-hooks: a typed DTO or JSON.
///
/// Any DTO converts into it (`record.into()`), and so does a `serde_json::Value`. Whatever an
/// after-hook returns is re-validated against the tool's output DTO.
pub struct ToolOutput(OutputRepr);

enum OutputRepr {
    Typed(Box<dyn ErasedDto>),
    Json(Value),
}

impl<T: Dto> From<T> for ToolOutput {
    fn from(value: T) -> Self {
        Self(OutputRepr::Typed(Box::new(value)))
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self(OutputRepr::Json(value))
    }
}

impl fmt::Debug for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            OutputRepr::Typed(t) => write!(f, "ToolOutput<{}>({})", t.dto_name(), self.to_json()),
            OutputRepr::Json(v) => write!(f, "ToolOutput<json>({v})"),
        }
    }
}

impl ToolOutput {
    /// The output as JSON (wire names).
    pub fn to_json(&self) -> Value {
        match &self.0 {
            OutputRepr::Typed(t) => t.to_json().unwrap_or(Value::Null),
            OutputRepr::Json(v) => v.clone(),
        }
    }
    /// A reference to the typed output, when it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        match &self.0 {
            OutputRepr::Typed(t) => t.as_any().downcast_ref::<T>(),
            OutputRepr::Json(_) => None,
        }
    }
    /// The output as `T`: moved out when it is a `T`, otherwise decoded (and validated) from JSON.
    pub fn into_typed<T: Dto>(self) -> Result<T, ValidationError> {
        match self.0 {
            OutputRepr::Typed(t) => {
                if t.as_any().type_id() == TypeId::of::<T>() {
                    match t.into_any().downcast::<T>() {
                        Ok(b) => Ok(*b),
                        Err(_) => Err(ValidationError::single(
                            T::DTO_NAME,
                            "$",
                            "type",
                            "output has an unexpected type",
                        )),
                    }
                } else {
                    let json = t.to_json().map_err(|e| {
                        ValidationError::single(T::DTO_NAME, "$", "json", &e.to_string())
                    })?;
                    T::from_json_value(&json)
                }
            }
            OutputRepr::Json(v) => T::from_json_value(&v),
        }
    }
}

/// What an `after_tool_call` hook sees: `{ tool, tool_name, call_id, input, output }`, after
/// the tool ran (and the inner after-hooks transformed its output).
pub struct ToolCallResultContext<'a> {
    pub(crate) call: ToolCallContext<'a>,
    pub(crate) output: ToolOutput,
}

impl<'a> ToolCallResultContext<'a> {
    /// The tool's registration data.
    pub fn tool(&self) -> &'static ToolMeta {
        self.call.tool
    }
    /// The tool's registered name.
    pub fn tool_name(&self) -> &'static str {
        self.call.tool.name
    }
    /// True when the call is for tool `T`.
    pub fn is_tool<T: Tool>(&self) -> bool {
        self.call.is_tool::<T>()
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        self.call.call_id()
    }
    /// The validated input as JSON.
    pub fn input(&self) -> &Value {
        self.call.input()
    }
    /// The input as `T` (see [`ToolCallContext::input_as`]).
    pub fn input_as<T: Dto + Clone>(&self) -> Result<T, ValidationError> {
        self.call.input_as::<T>()
    }
    /// The execution context.
    pub fn execution(&self) -> &ExecutionContext {
        self.call.execution
    }
    /// The output so far.
    pub fn output(&self) -> &ToolOutput {
        &self.output
    }
    /// The output as JSON.
    pub fn output_json(&self) -> Value {
        self.output.to_json()
    }
    /// Takes the output as `T` (moved when it is a `T`, otherwise decoded from JSON).
    pub fn into_output<T: Dto>(self) -> Result<T, InterceptorError> {
        self.output
            .into_typed::<T>()
            .map_err(InterceptorError::from)
    }
    /// Returns the output unchanged: `Ok(call.keep())` in a hook that only observes.
    pub fn keep(self) -> ToolOutput {
        self.output
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
    #[doc(hidden)]
    pub build: fn(&Services) -> Result<Arc<dyn ErasedInterceptor>, crate::di::DiError>,
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
    fn construct(resolver: &Resolver<'_>) -> Result<Self, crate::di::DiError>;
}

/// Bytes a hook's future may take before it is boxed: typical hooks (a few references and an
/// `await` on a service) fit, so a guarded call allocates nothing per interceptor.
pub(crate) const HOOK_FUTURE_INLINE: usize = 128;

/// A hook's future, stored inline when it fits (see [`HOOK_FUTURE_INLINE`]), boxed otherwise.
#[doc(hidden)]
pub type BeforeFuture<'a> =
    stackfuture::StackFuture<'a, Result<ToolCallDecision, InterceptorError>, HOOK_FUTURE_INLINE>;
#[doc(hidden)]
pub type AfterFuture<'a> =
    stackfuture::StackFuture<'a, Result<ToolOutput, InterceptorError>, HOOK_FUTURE_INLINE>;

/// Why a hook did not produce a value.
#[doc(hidden)]
pub enum HookError {
    Failed(InterceptorError),
    Dependency(crate::di::DiError),
}

/// A resolved interceptor, behind `dyn`. Building the per-invocation instance (when the
/// interceptor has context deps) happens in `before` / `after`; the returned future runs the
/// hook and owns that instance.
#[doc(hidden)]
pub trait ErasedInterceptor: Send + Sync {
    fn meta(&self) -> &'static InterceptorMeta;
    fn has_before(&self) -> bool;
    fn has_after(&self) -> bool;
    fn before<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: &'a ToolCallContext<'a>,
    ) -> Result<BeforeFuture<'a>, crate::di::DiError>;
    fn after<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: ToolCallResultContext<'a>,
    ) -> Result<AfterFuture<'a>, crate::di::DiError>;
}

/// The `before_tool_call` of a concrete interceptor type, on a shared instance and on an owned
/// (per-invocation) one.
#[doc(hidden)]
pub struct BeforeHook<I> {
    by_ref: for<'a> fn(&'a I, &'a ToolCallContext<'a>) -> BeforeFuture<'a>,
    owned: for<'a> fn(I, &'a ToolCallContext<'a>) -> BeforeFuture<'a>,
}

/// The `after_tool_call` of a concrete interceptor type.
#[doc(hidden)]
pub struct AfterHook<I> {
    by_ref: for<'a> fn(&'a I, ToolCallResultContext<'a>) -> AfterFuture<'a>,
    owned: for<'a> fn(I, ToolCallResultContext<'a>) -> AfterFuture<'a>,
}

/// The hooks of a concrete interceptor type, found by the macro.
#[doc(hidden)]
pub struct TypedInterceptor<I> {
    /// `Some` when the interceptor has no per-invocation deps: built once, shared.
    shared: Option<I>,
    before: Option<BeforeHook<I>>,
    after: Option<AfterHook<I>>,
}

impl<I: ToolInterceptor> TypedInterceptor<I> {
    #[doc(hidden)]
    pub fn build(
        services: &Services,
        before: Option<BeforeHook<I>>,
        after: Option<AfterHook<I>>,
    ) -> Result<Arc<dyn ErasedInterceptor>, crate::di::DiError> {
        let shared = if crate::di::any_context(I::META.deps) {
            None
        } else {
            Some(I::construct(&Resolver::for_services(services))?)
        };
        Ok(Arc::new(Self {
            shared,
            before,
            after,
        }))
    }
}

impl<I: ToolInterceptor> ErasedInterceptor for TypedInterceptor<I> {
    fn meta(&self) -> &'static InterceptorMeta {
        I::META
    }
    fn has_before(&self) -> bool {
        self.before.is_some()
    }
    fn has_after(&self) -> bool {
        self.after.is_some()
    }
    fn before<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: &'a ToolCallContext<'a>,
    ) -> Result<BeforeFuture<'a>, crate::di::DiError> {
        let Some(hook) = &self.before else {
            return Ok(BeforeFuture::from_or_box(async {
                Ok(ToolCallDecision::Allow)
            }));
        };
        Ok(match &self.shared {
            Some(instance) => (hook.by_ref)(instance, call),
            None => (hook.owned)(I::construct(resolver)?, call),
        })
    }
    fn after<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: ToolCallResultContext<'a>,
    ) -> Result<AfterFuture<'a>, crate::di::DiError> {
        let Some(hook) = &self.after else {
            return Ok(AfterFuture::from_or_box(async move { Ok(call.output) }));
        };
        Ok(match &self.shared {
            Some(instance) => (hook.by_ref)(instance, call),
            None => (hook.owned)(I::construct(resolver)?, call),
        })
    }
}

/// Autoref probes the macro uses to find which hook traits a type implements.
#[doc(hidden)]
pub mod probe {
    use super::*;
    use std::marker::PhantomData;

    pub struct Probe<T>(PhantomData<T>);
    impl<T> Probe<T> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Self(PhantomData)
        }
    }

    fn before_hook<I: BeforeToolCall + 'static>() -> BeforeHook<I> {
        BeforeHook {
            by_ref: |i, call| BeforeFuture::from_or_box(i.before_tool_call(call)),
            owned: |i, call| {
                BeforeFuture::from_or_box(async move { i.before_tool_call(call).await })
            },
        }
    }
    fn after_hook<I: AfterToolCall + 'static>() -> AfterHook<I> {
        AfterHook {
            by_ref: |i, call| AfterFuture::from_or_box(i.after_tool_call(call)),
            owned: |i, call| AfterFuture::from_or_box(async move { i.after_tool_call(call).await }),
        }
    }

    /// Tag: the type implements `BeforeToolCall`.
    #[derive(Clone, Copy)]
    pub struct HasBefore;
    /// Tag: the type does not implement `BeforeToolCall`.
    #[derive(Clone, Copy)]
    pub struct NoBefore;
    /// Tag: the type implements `AfterToolCall`.
    #[derive(Clone, Copy)]
    pub struct HasAfter;
    /// Tag: the type does not implement `AfterToolCall`.
    #[derive(Clone, Copy)]
    pub struct NoAfter;

    pub trait ViaBefore {
        fn before_tag(&self) -> HasBefore {
            HasBefore
        }
    }
    impl<I: BeforeToolCall> ViaBefore for &Probe<I> {}
    pub trait ViaNoBefore {
        fn before_tag(&self) -> NoBefore {
            NoBefore
        }
    }
    impl<I> ViaNoBefore for Probe<I> {}
    pub trait ViaAfter {
        fn after_tag(&self) -> HasAfter {
            HasAfter
        }
    }
    impl<I: AfterToolCall> ViaAfter for &Probe<I> {}
    pub trait ViaNoAfter {
        fn after_tag(&self) -> NoAfter {
            NoAfter
        }
    }
    impl<I> ViaNoAfter for Probe<I> {}

    impl HasBefore {
        pub fn hook<I: BeforeToolCall + 'static>(self) -> Option<BeforeHook<I>> {
            Some(before_hook::<I>())
        }
    }
    impl NoBefore {
        pub fn hook<I>(self) -> Option<BeforeHook<I>> {
            None
        }
    }
    impl HasAfter {
        pub fn hook<I: AfterToolCall + 'static>(self) -> Option<AfterHook<I>> {
            Some(after_hook::<I>())
        }
    }
    impl NoAfter {
        pub fn hook<I>(self) -> Option<AfterHook<I>> {
            None
        }
    }

    /// `(before, after)` markers of an interceptor `I` that implements at least one hook.
    #[diagnostic::on_unimplemented(
        message = "[tool-interceptor.missing-handler] `{I}` implements neither `BeforeToolCall` nor `AfterToolCall`",
        label = "this interceptor has no handler",
        note = "implement `BeforeToolCall` (`async fn before_tool_call`), `AfterToolCall` (`async fn after_tool_call`), or both, for `{I}`"
    )]
    pub trait HasHandler<I> {}
    impl<I> HasHandler<I> for (HasBefore, NoAfter) {}
    impl<I> HasHandler<I> for (NoBefore, HasAfter) {}
    impl<I> HasHandler<I> for (HasBefore, HasAfter) {}
    /// Never produced: these impls only keep the compiler from inferring the missing half from
    /// the single remaining candidate, so a type with neither hook reads our own message.
    pub enum Unreachable {}
    impl<I> HasHandler<I> for (NoBefore, Unreachable) {}
    impl<I> HasHandler<I> for (Unreachable, NoAfter) {}

    pub fn require_handler<I, B, A>(_before: B, _after: A)
    where
        (B, A): HasHandler<I>,
    {
    }
}
