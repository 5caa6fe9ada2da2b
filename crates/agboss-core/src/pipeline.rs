//! The guarded pipeline every tool call runs through, whatever calls it:
//!
//! input DTO validation → `before_tool_call`s outer→inner → `run` → `after_tool_call`s
//! inner→outer → output DTO re-validation → `max_result_size` truncation (text results).
//!
//! Fail closed: an interceptor that errors or panics stops the call; the tool does not run
//! (or its output is discarded when an after-hook fails).
use std::any::Any;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use tracing::Instrument as _;

use crate::cascade::Chain;
use crate::di::{CallId, DiError, ExecutionContext, Resolver, Services, TenantContext};
use crate::dto::Dto;
use crate::error::{BlockKind, ToolBlockedError, ToolCallError};
use crate::interceptor::{
    ErasedInterceptor, HookError, InputHolder, ToolCallContext, ToolCallDecision,
    ToolCallResultContext, ToolOutput,
};
use crate::telemetry::{CallTrace, record_decision};
use crate::tool::{Tool, ToolMeta};

/// The per-call inputs of the pipeline besides the tool input.
#[doc(hidden)]
pub struct CallEnv<'a> {
    pub services: &'a Services,
    pub tenant: Option<&'a TenantContext>,
    pub call_id: CallId,
}

/// How a call that did not fail ended.
#[derive(Debug)]
pub enum Outcome<O> {
    /// The tool ran; its (transformed, re-validated) output.
    Ran(O),
    /// An interceptor replied to the model; the tool did not run.
    ReplyToModel {
        /// The message for the model.
        message: String,
        /// The interceptor that replied.
        interceptor: &'static str,
    },
}

/// A tool instance holder: shared when the tool has no per-invocation deps.
pub(crate) struct ToolSlot<T> {
    shared: Option<T>,
}

impl<T: Tool> ToolSlot<T> {
    pub(crate) fn build(services: &Services) -> Result<Self, DiError> {
        let shared = if crate::di::any_context(T::META.deps) {
            None
        } else {
            Some(T::construct(&Resolver::for_services(services))?)
        };
        Ok(Self { shared })
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs one call of `T` through its chain, on an already validated input, in a `tool_call`
/// span (see [`crate::telemetry`]).
pub(crate) async fn run_typed<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    input: T::Input,
) -> Result<Outcome<T::Output>, ToolCallError> {
    let trace = CallTrace::start(T::META.name, &env.call_id, &chain.path);
    let result = run_typed_untraced(slot, chain, env, input)
        .instrument(trace.span.clone())
        .await;
    let ok = match &result {
        Ok(Outcome::ReplyToModel { .. }) => "reply_to_model",
        _ => "ok",
    };
    trace.finish(&result, ok);
    result
}

/// [`run_typed`] inside the caller's span.
async fn run_typed_untraced<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    input: T::Input,
) -> Result<Outcome<T::Output>, ToolCallError> {
    let meta = T::META;
    match meta.timeout_ms {
        None => run_inner(slot, chain, env, input).await,
        Some(ms) => {
            match tokio::time::timeout(
                std::time::Duration::from_millis(ms),
                run_inner(slot, chain, env, input),
            )
            .await
            {
                Ok(result) => result,
                Err(_) => Err(ToolCallError::Timeout {
                    tool_name: meta.name.to_string(),
                    timeout_ms: ms,
                }),
            }
        }
    }
}

async fn run_inner<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    input: T::Input,
) -> Result<Outcome<T::Output>, ToolCallError> {
    let meta: &'static ToolMeta = T::META;
    // Until an interceptor decides otherwise (recorded by `before_one`).
    record_decision("allow");
    let execution = ExecutionContext::new(env.call_id, meta.name, chain.path.clone());
    let resolver = Resolver::for_call(env.services, env.tenant, &execution);

    // Fast path: no interceptor at all.
    if chain.before.is_empty() && chain.after.is_empty() {
        crate::approval::approval_point(meta, &execution).await?;
        let output = run_tool(slot, &resolver, meta, input).await?;
        return revalidate::<T>(meta, output).map(Outcome::Ran);
    }

    let holder = InputHolder::new(&input);
    let call = ToolCallContext {
        tool: meta,
        input: &holder,
        execution: &execution,
    };

    for link in chain.before.iter() {
        match before_one(&**link, &resolver, &call).await? {
            ToolCallDecision::Allow => {}
            ToolCallDecision::ReplyToModel { message } => {
                return Ok(Outcome::ReplyToModel {
                    message,
                    interceptor: link.meta().name,
                });
            }
            ToolCallDecision::Block { reason } => {
                return Err(ToolCallError::Blocked(ToolBlockedError {
                    tool_name: meta.name.to_string(),
                    call_id: execution.call_id().to_string(),
                    interceptor: link.meta().name,
                    kind: BlockKind::Block { reason },
                }));
            }
        }
    }

    // Approval hook point: after every before_tool_call allowed, before run (see
    // `crate::approval`).
    crate::approval::approval_point(meta, &execution).await?;

    // The input is still needed by the after-hooks, so the tool gets a clone only when there are
    // after-hooks; otherwise it is moved.
    let output = if chain.after.is_empty() {
        // `call` and `holder` borrow `input`; they are not used past this point, so it can move.
        let output = run_tool(slot, &resolver, meta, input).await?;
        return revalidate::<T>(meta, output).map(Outcome::Ran);
    } else {
        run_tool(slot, &resolver, meta, input.clone()).await?
    };

    let mut output = ToolOutput::from(output);
    for link in chain.after.iter() {
        let result_call = ToolCallResultContext {
            call: ToolCallContext {
                tool: meta,
                input: &holder,
                execution: &execution,
            },
            output,
        };
        output = after_one(&**link, &resolver, result_call).await?;
    }
    let typed =
        output
            .into_typed::<T::Output>()
            .map_err(|source| ToolCallError::InvalidOutput {
                tool_name: meta.name.to_string(),
                source,
            })?;
    revalidate::<T>(meta, typed).map(Outcome::Ran)
}

/// Runs one interceptor's `before_tool_call`, failing closed on an error or a panic.
pub(crate) async fn before_one(
    link: &dyn ErasedInterceptor,
    resolver: &Resolver<'_>,
    call: &ToolCallContext<'_>,
) -> Result<ToolCallDecision, ToolCallError> {
    let name = link.meta().name;
    match guarded_hook(call.tool, name, || link.before(resolver, call)).await {
        Ok(decision) => {
            match &decision {
                ToolCallDecision::Allow => tracing::debug!(
                    tool = call.tool.name,
                    call_id = call.call_id(),
                    interceptor = name,
                    decision = "allow",
                    "before_tool_call"
                ),
                ToolCallDecision::ReplyToModel { message } => {
                    record_decision("reply_to_model");
                    tracing::debug!(
                        tool = call.tool.name,
                        call_id = call.call_id(),
                        interceptor = name,
                        decision = "reply_to_model",
                        reply = message.as_str(),
                        "before_tool_call"
                    )
                }
                ToolCallDecision::Block { reason } => {
                    record_decision("block");
                    tracing::debug!(
                        tool = call.tool.name,
                        call_id = call.call_id(),
                        interceptor = name,
                        decision = "block",
                        reason = reason.as_str(),
                        "before_tool_call"
                    )
                }
            }
            Ok(decision)
        }
        Err(err) => {
            record_decision("interceptor_error");
            Err(err)
        }
    }
}

/// Runs one interceptor's `after_tool_call`, failing closed on an error or a panic.
pub(crate) async fn after_one(
    link: &dyn ErasedInterceptor,
    resolver: &Resolver<'_>,
    call: ToolCallResultContext<'_>,
) -> Result<ToolOutput, ToolCallError> {
    let name = link.meta().name;
    let tool = call.call.tool;
    tracing::trace!(tool = tool.name, interceptor = name, "after_tool_call");
    guarded_hook(tool, name, || link.after(resolver, call)).await
}

/// Starts a hook (building its per-invocation instance) and runs it to completion, failing
/// closed: a dependency that cannot be built, an `Err` and a panic (while building or running)
/// all become the call's error.
async fn guarded_hook<F, T>(
    tool: &ToolMeta,
    interceptor: &'static str,
    start: impl FnOnce() -> Result<F, crate::di::DiError>,
) -> Result<T, ToolCallError>
where
    F: std::future::Future<Output = Result<T, crate::error::InterceptorError>>,
{
    let result = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(Ok(future)) => AssertUnwindSafe(future)
            .catch_unwind()
            .await
            .map(|r| r.map_err(HookError::Failed)),
        Ok(Err(dependency)) => Ok(Err(HookError::Dependency(dependency))),
        Err(payload) => Err(payload),
    };
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(hook_error(tool, interceptor, err)),
        Err(payload) => Err(ToolCallError::InterceptorPanicked {
            tool_name: tool.name.to_string(),
            interceptor,
            message: panic_message(&*payload),
        }),
    }
}

fn hook_error(meta: &ToolMeta, interceptor: &'static str, err: HookError) -> ToolCallError {
    match err {
        HookError::Failed(error) => ToolCallError::InterceptorFailed {
            tool_name: meta.name.to_string(),
            interceptor,
            error,
        },
        HookError::Dependency(source) => ToolCallError::Dependency {
            tool_name: meta.name.to_string(),
            component: interceptor,
            source,
        },
    }
}

async fn run_tool<T: Tool>(
    slot: &ToolSlot<T>,
    resolver: &Resolver<'_>,
    meta: &'static ToolMeta,
    input: T::Input,
) -> Result<T::Output, ToolCallError> {
    let result = match &slot.shared {
        Some(tool) => AssertUnwindSafe(tool.run(input)).catch_unwind().await,
        None => {
            let tool = T::construct(resolver).map_err(|source| ToolCallError::Dependency {
                tool_name: meta.name.to_string(),
                component: meta.type_name,
                source,
            })?;
            AssertUnwindSafe(tool.run(input)).catch_unwind().await
        }
    };
    match result {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(error)) => Err(ToolCallError::ToolFailed {
            tool_name: meta.name.to_string(),
            error,
        }),
        Err(payload) => Err(ToolCallError::ToolPanicked {
            tool_name: meta.name.to_string(),
            message: panic_message(&*payload),
        }),
    }
}

fn revalidate<T: Tool>(meta: &ToolMeta, output: T::Output) -> Result<T::Output, ToolCallError> {
    match output.validate() {
        Ok(()) => Ok(output),
        Err(source) => Err(ToolCallError::InvalidOutput {
            tool_name: meta.name.to_string(),
            source,
        }),
    }
}

/// The marker appended to a truncated result.
pub const TRUNCATION_MARKER: &str = "…[truncated by agboss: result exceeded max_result_size]";

/// Cuts `text` to at most `max` bytes, on a UTF-8 boundary, ending with [`TRUNCATION_MARKER`].
/// Returns whether it cut.
pub fn truncate_result(text: &mut String, max: Option<usize>) -> bool {
    let Some(max) = max else { return false };
    if text.len() <= max {
        return false;
    }
    let keep = max.saturating_sub(TRUNCATION_MARKER.len());
    let mut cut = keep.min(text.len());
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    if max >= TRUNCATION_MARKER.len() {
        text.push_str(TRUNCATION_MARKER);
    }
    true
}

/// A call's result as text, as a model would see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonOutcome {
    /// The tool ran: its serialized output (truncated to `max_result_size`).
    Ran {
        /// The serialized output.
        text: String,
        /// Whether it was truncated.
        truncated: bool,
    },
    /// An interceptor replied to the model; the tool did not run.
    ReplyToModel {
        /// The message for the model.
        message: String,
        /// The interceptor that replied.
        interceptor: &'static str,
    },
}

/// A built tool, behind `dyn`, callable with JSON text.
#[doc(hidden)]
pub trait ErasedToolSlot: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn call_json<'a>(
        &'a self,
        chain: &'a Chain,
        env: CallEnv<'a>,
        args: &'a str,
        max_result_size: Option<usize>,
    ) -> BoxFuture<'a, Result<JsonOutcome, ToolCallError>>;
}

impl<T: Tool> ErasedToolSlot for ToolSlot<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn call_json<'a>(
        &'a self,
        chain: &'a Chain,
        env: CallEnv<'a>,
        args: &'a str,
        max_result_size: Option<usize>,
    ) -> BoxFuture<'a, Result<JsonOutcome, ToolCallError>> {
        Box::pin(call_json_typed(self, chain, env, args, max_result_size))
    }
}

/// One call of `T` with JSON text arguments, as a model makes it: decode and validate, the
/// chain, `run`, serialization, PII masking and truncation, in one `tool_call` span. Typed
/// handles call it directly; everything else through [`ErasedToolSlot::call_json`].
pub(crate) async fn call_json_typed<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    args: &str,
    max_result_size: Option<usize>,
) -> Result<JsonOutcome, ToolCallError> {
    let this = slot;

    let meta = T::META;
    let trace = CallTrace::start(meta.name, &env.call_id, &chain.path);
    let span = trace.span.clone();
    let trace_span = &trace.span;
    let result = async move {
        let input = <T::Input as Dto>::from_json_str(args).map_err(|source| {
            ToolCallError::InvalidInput {
                tool_name: meta.name.to_string(),
                source,
            }
        })?;
        match run_typed_untraced(this, chain, env, input).await? {
            Outcome::Ran(output) => {
                // Serialization, PII masking and truncation (see `crate::pii_policy`).
                let (text, truncated, masked) =
                    crate::pii_policy::render_result(&output, &chain.pii, max_result_size)
                        .map_err(|e| ToolCallError::Serialize {
                            tool_name: meta.name.to_string(),
                            message: e.to_string(),
                        })?;
                let span = &trace_span;
                span.record("truncated", truncated);
                span.record("pii_masked", masked as u64);
                Ok(JsonOutcome::Ran { text, truncated })
            }
            Outcome::ReplyToModel {
                message,
                interceptor,
            } => {
                let mut report = crate::pii::MaskReport::default();
                let message = match chain.pii.mask_text(&message, &mut report) {
                    std::borrow::Cow::Borrowed(_) => message,
                    std::borrow::Cow::Owned(masked) => masked,
                };
                trace_span.record("pii_masked", report.total() as u64);
                Ok(JsonOutcome::ReplyToModel {
                    message,
                    interceptor,
                })
            }
        }
    }
    .instrument(span)
    .await;
    let ok = match &result {
        Ok(JsonOutcome::ReplyToModel { .. }) => "reply_to_model",
        _ => "ok",
    };
    trace.finish(&result, ok);
    result
}

/// Builds tool slots of one tool type.
#[doc(hidden)]
pub trait ErasedToolType: Send + Sync {
    fn build_slot(&self, services: &Services) -> Result<Arc<dyn ErasedToolSlot>, DiError>;
}

#[doc(hidden)]
pub struct ToolType<T>(PhantomData<fn() -> T>);

impl<T: Tool> ErasedToolType for ToolType<T> {
    fn build_slot(&self, services: &Services) -> Result<Arc<dyn ErasedToolSlot>, DiError> {
        Ok(Arc::new(ToolSlot::<T>::build(services)?))
    }
}

/// The erased builder of a tool type (referenced from `ToolMeta::erased`).
#[doc(hidden)]
pub fn erased_tool<T: Tool>() -> &'static dyn ErasedToolType {
    const { &ToolType::<T>(PhantomData) }
}

/// Runs single hooks outside a chain, exactly as the pipeline does: the engine behind
/// `agboss_testing::test_tool_interceptor`.
#[doc(hidden)]
pub mod harness {
    use super::*;

    /// Runs `before_tool_call` of one interceptor for a call of tool `T` on a JSON input (validated
    /// against `T::Input` first, as in the pipeline).
    pub async fn before<T: Tool>(
        link: &dyn ErasedInterceptor,
        services: &Services,
        tenant: Option<&TenantContext>,
        input: &serde_json::Value,
    ) -> Result<ToolCallDecision, ToolCallError> {
        let typed = crate::cascade::decode_input::<T>(input)?;
        let execution = ExecutionContext::new(CallId::generate(), T::META.name, Arc::from([]));
        let resolver = Resolver::for_call(services, tenant, &execution);
        let holder = InputHolder::new(&typed);
        let call = ToolCallContext {
            tool: T::META,
            input: &holder,
            execution: &execution,
        };
        before_one(link, &resolver, &call).await
    }

    /// Runs `after_tool_call` of one interceptor on `output`, then re-validates the result against
    /// `T::Output`, as in the pipeline.
    pub async fn after<T: Tool>(
        link: &dyn ErasedInterceptor,
        services: &Services,
        tenant: Option<&TenantContext>,
        input: &serde_json::Value,
        output: ToolOutput,
    ) -> Result<T::Output, ToolCallError> {
        let typed = crate::cascade::decode_input::<T>(input)?;
        let execution = ExecutionContext::new(CallId::generate(), T::META.name, Arc::from([]));
        let resolver = Resolver::for_call(services, tenant, &execution);
        let holder = InputHolder::new(&typed);
        let call = ToolCallResultContext {
            call: ToolCallContext {
                tool: T::META,
                input: &holder,
                execution: &execution,
            },
            output,
        };
        let out = after_one(link, &resolver, call).await?;
        let typed =
            out.into_typed::<T::Output>()
                .map_err(|source| ToolCallError::InvalidOutput {
                    tool_name: T::META.name.to_string(),
                    source,
                })?;
        revalidate::<T>(T::META, typed)
    }
}

#[doc(hidden)]
pub mod harness_build {
    use super::*;
    use crate::error::BuildError;
    use crate::interceptor::InterceptorMeta;

    /// Builds one interceptor (and the services it needs) as an app would.
    pub fn interceptor(
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        crate::cascade::InterceptorPool::default().get(meta, services)
    }
}
