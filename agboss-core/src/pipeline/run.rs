//! One guarded call of a typed tool on its resolved chain: `before_tool_call`s outer to inner →
//! the approval point → `run` → `after_tool_call`s inner to outer → output re-validation. The
//! pipeline itself names how the call ended ([`CallOutcome`]), at the place it ended.
use std::future::Future;
use std::time::Duration;

use super::CallEnv;
use super::Chain;
use super::approval::approval_point;
use super::hooks::{Caught, Stage, Stop, after_chain, before_chain, bounded_by, caught};
use super::trace::CallTrace;
use crate::contract::MetaRef;
use crate::contract::interceptor::ToolCallDecision;
use crate::contract::interceptor::{InputHolder, ToolCallContext, ToolOutput};
use crate::contract::outcome::{CallOutcome, FailureKind};
use crate::contract::outcome::{ToolBlockedError, ToolCallError, ToolCallErrorKind};
use crate::contract::tool::{CallProgress, Tool, ToolMeta};
use crate::di::{DiError, ExecutionContext, Resolver, Services};
use crate::dto::Dto;

/// A tool instance holder: shared when the tool has no per-invocation deps, with the
/// registration data its calls run under (`T::META` for a `#[tool]`; one tool type may serve
/// several tools, e.g. every tool of an MCP server).
pub(crate) struct ToolSlot<T> {
    shared: Option<T>,
    meta: MetaRef<ToolMeta>,
}

impl<T: Tool> ToolSlot<T> {
    pub(crate) fn build(services: &Services) -> Result<Self, DiError> {
        let shared = if crate::di::any_context(T::META.deps) {
            None
        } else {
            Some(T::construct(&Resolver::for_services(services))?)
        };
        Ok(Self {
            shared,
            meta: MetaRef::Static(T::META),
        })
    }

    /// A slot whose tool is built for each call (from the call's context), calls running
    /// under `meta` (an agent tool: it knows its call).
    pub(crate) fn per_call(meta: MetaRef<ToolMeta>) -> Self {
        Self { shared: None, meta }
    }

    /// A slot of an instance built elsewhere, calls running under `meta`.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn of_instance(tool: T, meta: MetaRef<ToolMeta>) -> Self {
        Self {
            shared: Some(tool),
            meta,
        }
    }

    /// The registration data the slot's calls run under (a constant unless the type serves
    /// several tools).
    #[inline]
    pub(crate) fn meta(&self) -> &ToolMeta {
        if T::META_PER_SLOT {
            &self.meta
        } else {
            T::META
        }
    }

    /// The schema a model sees when it is not the DTO's.
    pub(crate) fn model_input_schema(&self) -> Option<serde_json::Value> {
        self.shared.as_ref().and_then(Tool::model_input_schema)
    }
}

/// Runs one call of `T` through its chain, on an already validated input, in an `execute_tool`
/// span (see [`super::trace`]).
pub(crate) async fn run_typed<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    input: T::Input,
) -> CallOutcome<T::Output> {
    let trace = CallTrace::start(&slot.meta().name, &env.call_id, &chain.path);
    let stage = Stage::new();
    let running = run_guarded(slot, chain, env, input, &stage);
    // A panic caught around the call is its failure, classified by its error.
    let outcome = trace
        .in_span(running)
        .await
        .unwrap_or_else(CallOutcome::from_error);
    trace.finish(&outcome);
    outcome
}

/// [`run_typed`] inside the caller's span. One `catch_unwind` around the whole call: a panic
/// in a hook (or building its instance) is `InterceptorPanicked` naming it, anywhere else
/// (the tool, its construction, its checks) `ToolPanicked` (see [`super::hooks::caught`]).
/// `stage` is the caller's, so that the call's future holds the walk once.
pub(crate) fn run_guarded<'a, T: Tool>(
    slot: &'a ToolSlot<T>,
    chain: &'a Chain,
    env: CallEnv<'a>,
    input: T::Input,
    stage: &'a Stage,
) -> Caught<'a, impl Future<Output = CallOutcome<T::Output>> + 'a> {
    let links = (&*chain.before, &*chain.after);
    caught(
        slot.meta(),
        stage,
        links,
        walk(slot, chain, env, input, stage),
    )
}

/// The call itself, the running hook recorded in `stage`. An `async` block rather than an
/// `async fn`, so that its arguments are held once.
#[expect(
    clippy::manual_async_fn,
    reason = "an `async fn` keeps its by-value arguments twice in its future (rust-lang/rust#62958)"
)]
fn walk<'a, T: Tool>(
    slot: &'a ToolSlot<T>,
    chain: &'a Chain,
    env: CallEnv<'a>,
    input: T::Input,
    stage: &'a Stage,
) -> impl Future<Output = CallOutcome<T::Output>> + 'a {
    async move {
        let meta: &ToolMeta = slot.meta();
        let execution = ExecutionContext::new(env.call_id, meta.name.clone(), chain.path.clone())
            .with_idempotency_key(env.idempotency_key);
        let resolver = Resolver::for_call(env.services, env.tenant, &execution);
        let run_timeout = run_limit(meta, env.run_timeout);
        let progress = env.progress;
        // What the tool checks beyond the DTO (a remote schema), before any hook reads the input.
        if let Some(tool) = &slot.shared
            && let Err(source) = tool.check_input(&input)
        {
            return CallOutcome::failed(
                FailureKind::Rejected,
                ToolCallError::new(
                    meta.name.to_string(),
                    ToolCallErrorKind::InvalidInput { source },
                ),
            );
        }

        let holder = InputHolder::new(&input);
        let call = ToolCallContext {
            tool: meta,
            input: &holder,
            execution: &execution,
        };
        if !chain.before.is_empty()
            && let Err(stop) = before_chain(&chain.before, &resolver, &call, stage).await
        {
            return stopped(meta, &execution, stop);
        }

        // After every before_tool_call allowed, before run (see `super::approval`).
        if let Err(error) = approval_point::<T>(meta, &input, env.approval) {
            return CallOutcome::failed(FailureKind::Approval, error);
        }

        // The after-hooks still read the input, so the tool gets a clone only when there are
        // some.
        if chain.after.is_empty() {
            // `call` and `holder` borrow `input`; they are not used past this point, so it can
            // move.
            let ran = ran(
                run_tool(slot, &resolver, meta, input, run_timeout).await,
                progress,
            );
            return finish::<T>(meta, ran);
        }
        let ran = ran(
            run_tool(slot, &resolver, meta, input.clone(), run_timeout).await,
            progress,
        );
        let output = match ran {
            CallOutcome::Ran(output) => ToolOutput::from(output),
            failed => return failed,
        };
        let output = match after_chain(&chain.after, &resolver, &call, output, stage).await {
            Ok(output) => output,
            Err(error) => return CallOutcome::failed(FailureKind::Guard, *error),
        };
        match output.into_typed::<T::Output>() {
            Ok(typed) => finish::<T>(meta, CallOutcome::Ran(typed)),
            Err(source) => CallOutcome::failed(
                FailureKind::Tool,
                ToolCallError::new(
                    meta.name.to_string(),
                    ToolCallErrorKind::InvalidOutput { source },
                ),
            ),
        }
    }
}

/// The outcome of a `before_tool_call` chain that stopped short of the tool.
#[cold]
fn stopped<O>(meta: &ToolMeta, execution: &ExecutionContext, stop: Stop<'_>) -> CallOutcome<O> {
    match stop {
        Stop::ReplyToModel(link, message) => CallOutcome::ReplyToModel {
            message,
            interceptor: link.interceptor.meta().name,
        },
        Stop::Blocked(link, reason) => {
            let blocked = ToolBlockedError {
                tool_name: meta.name.to_string(),
                call_id: execution.call_id().to_string(),
                interceptor: link.interceptor.meta().name,
                kind: ToolCallDecision::Block { reason },
            };
            CallOutcome::failed(FailureKind::Blocked, blocked.into())
        }
        Stop::Failed(error) => CallOutcome::failed(FailureKind::Guard, *error),
    }
}

/// Records that the tool ran (its side effects may have happened) before anything else of the
/// call can be cancelled.
#[inline]
fn ran<O>(outcome: CallOutcome<O>, progress: Option<&CallProgress>) -> CallOutcome<O> {
    if let (CallOutcome::Ran(_), Some(progress)) = (&outcome, progress) {
        progress.mark_tool_ran();
    }
    outcome
}

/// The bound of one `run`: the tool's `timeout_ms` and the caller's limit, whichever is shorter.
fn run_limit(meta: &ToolMeta, caller: Option<Duration>) -> Option<Duration> {
    let own = meta.timeout_ms.map(Duration::from_millis);
    match (own, caller) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Re-validates the output: the last step of a call that ran.
fn finish<T: Tool>(meta: &ToolMeta, ran: CallOutcome<T::Output>) -> CallOutcome<T::Output> {
    let output = match ran {
        CallOutcome::Ran(output) => output,
        failed => return failed,
    };
    match output.validate() {
        Ok(()) => CallOutcome::Ran(output),
        Err(source) => CallOutcome::failed(
            FailureKind::Tool,
            ToolCallError::new(
                meta.name.to_string(),
                ToolCallErrorKind::InvalidOutput { source },
            ),
        ),
    }
}

/// Builds (when it has per-invocation deps) and runs the tool, within its time limit:
/// `Ran(output)` (not re-validated yet), or the failure. Panics propagate (see
/// [`super::hooks::caught`]).
async fn run_tool<T: Tool>(
    slot: &ToolSlot<T>,
    resolver: &Resolver<'_>,
    meta: &ToolMeta,
    input: T::Input,
    limit: Option<Duration>,
) -> CallOutcome<T::Output> {
    let built;
    let tool = match &slot.shared {
        Some(tool) => tool,
        None => match T::construct(resolver) {
            Ok(tool) => {
                built = tool;
                &built
            }
            Err(source) => return tool_dependency(meta, source),
        },
    };
    // An MCP tool resolves its server's per-tenant credentials from the call's tenant.
    #[cfg(feature = "mcp")]
    let run = if meta.mcp.is_some() {
        futures::future::Either::Left(crate::di::with_call_tenant(
            resolver.tenant(),
            tool.run(input),
        ))
    } else {
        futures::future::Either::Right(tool.run(input))
    };
    #[cfg(not(feature = "mcp"))]
    let run = tool.run(input);
    match bounded_by(run, limit).await {
        Some(Ok(out)) => CallOutcome::Ran(out),
        Some(Err(error)) => CallOutcome::failed(
            FailureKind::Tool,
            ToolCallError::new(
                meta.name.to_string(),
                ToolCallErrorKind::ToolFailed { error },
            ),
        ),
        None => tool_timed_out(meta, limit),
    }
}

#[cold]
fn tool_dependency<O>(meta: &ToolMeta, source: DiError) -> CallOutcome<O> {
    CallOutcome::failed(
        FailureKind::Guard,
        ToolCallError::new(
            meta.name.to_string(),
            ToolCallErrorKind::Dependency {
                component: meta.type_name,
                source,
            },
        ),
    )
}

#[cold]
fn tool_timed_out<O>(meta: &ToolMeta, limit: Option<Duration>) -> CallOutcome<O> {
    CallOutcome::failed(
        FailureKind::Tool,
        ToolCallError::new(
            meta.name.to_string(),
            ToolCallErrorKind::Timeout {
                timeout_ms: limit.map_or(0, |l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX)),
            },
        ),
    )
}

/// Decodes a DTO for a tool's input from JSON, as the pipeline does (used by test helpers).
#[doc(hidden)]
pub fn decode_input<T: Tool>(args: &serde_json::Value) -> Result<T::Input, ToolCallError> {
    <T::Input as Dto>::from_json_value(args).map_err(|source| {
        ToolCallError::new(
            T::META.name.to_string(),
            ToolCallErrorKind::InvalidInput { source },
        )
    })
}
