//! One guarded call of a typed tool on its resolved chain: `before_tool_call`s outer to inner →
//! the approval point → `run` → `after_tool_call`s inner to outer → output re-validation. The
//! pipeline itself names how the call ended ([`CallOutcome`]), at the place it ended.
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt as _;
use tracing::Instrument as _;

use super::approval::approval_point;
use super::hooks::{after_one, before_one, bounded, panic_message};
use super::trace::CallTrace;
use crate::contract::chain::Chain;
use crate::contract::interceptor::{
    InputHolder, ToolCallContext, ToolCallDecision, ToolCallResultContext, ToolOutput,
};
use crate::contract::outcome::{CallOutcome, FailureKind};
use crate::contract::tool::{CallEnv, CallProgress, Tool, ToolMeta};
use crate::di::{DiError, ExecutionContext, Resolver, Services};
use crate::dto::Dto;
use crate::error::{BlockKind, ToolBlockedError, ToolCallError};

/// A tool instance holder: shared when the tool has no per-invocation deps, with the
/// registration data its calls run under (`T::META` for a `#[tool]`; one tool type may serve
/// several tools, e.g. every tool of an MCP server).
pub(crate) struct ToolSlot<T> {
    shared: Option<T>,
    meta: &'static ToolMeta,
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
            meta: T::META,
        })
    }

    /// A slot of an instance built elsewhere, calls running under `meta`.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn of_instance(tool: T, meta: &'static ToolMeta) -> Self {
        Self {
            shared: Some(tool),
            meta,
        }
    }

    /// The registration data the slot's calls run under (a constant unless the type serves
    /// several tools).
    #[inline]
    pub(crate) fn meta(&self) -> &'static ToolMeta {
        if T::META_PER_SLOT { self.meta } else { T::META }
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
    let trace = CallTrace::start(slot.meta().name, &env.call_id, &chain.path);
    let running = run_guarded(slot, chain, env, input);
    let outcome = if trace.span.is_none() {
        running.await
    } else {
        running.instrument(trace.span.clone()).await
    };
    trace.finish(&outcome);
    outcome
}

/// [`run_typed`] inside the caller's span.
pub(crate) async fn run_guarded<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    input: T::Input,
) -> CallOutcome<T::Output> {
    let meta: &'static ToolMeta = slot.meta();
    let execution = ExecutionContext::new(env.call_id, meta.name, chain.path.clone())
        .with_idempotency_key(env.idempotency_key);
    let resolver = Resolver::for_call(env.services, env.tenant, &execution);
    let run_timeout = run_limit(meta, env.run_timeout);
    let progress = env.progress;
    let guard = |error| CallOutcome::failed(FailureKind::Guard, error);
    // What the tool checks beyond the DTO (a remote schema), before any hook reads the input.
    if let Some(tool) = &slot.shared
        && let Err(source) = tool.check_input(&input)
    {
        return CallOutcome::failed(
            FailureKind::Rejected,
            ToolCallError::InvalidInput {
                tool_name: meta.name.to_string(),
                source,
            },
        );
    }

    // Fast path: no interceptor at all.
    if chain.before.is_empty() && chain.after.is_empty() {
        if let Err(error) = approval_point::<T>(meta, &input, env.approval) {
            return CallOutcome::failed(FailureKind::Approval, error);
        }
        return finish::<T>(
            meta,
            ran(
                run_tool(slot, &resolver, meta, input, run_timeout).await,
                progress,
            ),
        );
    }

    let holder = InputHolder::new(&input);
    let call = ToolCallContext {
        tool: meta,
        input: &holder,
        execution: &execution,
    };

    for link in chain.before.iter() {
        match before_one(link, &resolver, &call).await {
            Ok(ToolCallDecision::Allow) => {}
            Ok(ToolCallDecision::ReplyToModel { message }) => {
                return CallOutcome::Replied {
                    message,
                    interceptor: link.interceptor.meta().name,
                };
            }
            Ok(ToolCallDecision::Block { reason }) => {
                let blocked = ToolBlockedError {
                    tool_name: meta.name.to_string(),
                    call_id: execution.call_id().to_string(),
                    interceptor: link.interceptor.meta().name,
                    kind: BlockKind::Block { reason },
                };
                return CallOutcome::failed(FailureKind::Blocked, blocked.into());
            }
            Err(error) => return guard(*error),
        }
    }

    // After every before_tool_call allowed, before run (see `super::approval`).
    if let Err(error) = approval_point::<T>(meta, &input, env.approval) {
        return CallOutcome::failed(FailureKind::Approval, error);
    }

    // The after-hooks still read the input, so the tool gets a clone only when there are some.
    if chain.after.is_empty() {
        // `call` and `holder` borrow `input`; they are not used past this point, so it can move.
        return finish::<T>(
            meta,
            ran(
                run_tool(slot, &resolver, meta, input, run_timeout).await,
                progress,
            ),
        );
    }
    let output = match ran(
        run_tool(slot, &resolver, meta, input.clone(), run_timeout).await,
        progress,
    ) {
        CallOutcome::Ran(output) => output,
        failed => return failed,
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
        output = match after_one(link, &resolver, result_call).await {
            Ok(output) => output,
            Err(error) => return guard(*error),
        };
    }
    match output.into_typed::<T::Output>() {
        Ok(typed) => finish::<T>(meta, CallOutcome::Ran(typed)),
        Err(source) => CallOutcome::failed(
            FailureKind::Tool,
            ToolCallError::InvalidOutput {
                tool_name: meta.name.to_string(),
                source,
            },
        ),
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
            ToolCallError::InvalidOutput {
                tool_name: meta.name.to_string(),
                source,
            },
        ),
    }
}

/// Builds (when it has per-invocation deps) and runs the tool, within its time limit:
/// `Ran(output)` (not re-validated yet), or the failure.
async fn run_tool<T: Tool>(
    slot: &ToolSlot<T>,
    resolver: &Resolver<'_>,
    meta: &'static ToolMeta,
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
            Err(source) => {
                return CallOutcome::failed(
                    FailureKind::Guard,
                    ToolCallError::Dependency {
                        tool_name: meta.name.to_string(),
                        component: meta.type_name,
                        source,
                    },
                );
            }
        },
    };
    let running = AssertUnwindSafe(tool.run(input)).catch_unwind();
    let result = match limit {
        None => Some(running.await),
        Some(limit) => bounded(running, limit).await,
    };
    let tool_failed = |error| CallOutcome::failed(FailureKind::Tool, error);
    match result {
        Some(Ok(Ok(out))) => CallOutcome::Ran(out),
        Some(Ok(Err(error))) => tool_failed(ToolCallError::ToolFailed {
            tool_name: meta.name.to_string(),
            error,
        }),
        Some(Err(payload)) => tool_failed(ToolCallError::ToolPanicked {
            tool_name: meta.name.to_string(),
            message: panic_message(&*payload),
        }),
        None => tool_failed(ToolCallError::Timeout {
            tool_name: meta.name.to_string(),
            timeout_ms: limit.map_or(0, |l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX)),
        }),
    }
}

/// Decodes a DTO for a tool's input from JSON, as the pipeline does (used by test helpers).
#[doc(hidden)]
pub fn decode_input<T: Tool>(args: &serde_json::Value) -> Result<T::Input, ToolCallError> {
    <T::Input as Dto>::from_json_value(args).map_err(|source| ToolCallError::InvalidInput {
        tool_name: T::META.name.to_string(),
        source,
    })
}
