//! Tools behind `dyn`: every `T: Tool` gets a slot callable with JSON text, as a model calls it
//! (decode and validate, the guarded run, serialization, masking, truncation, in one span).
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use tracing::Instrument as _;

use super::render::{mask_message, render_result};
use super::run::{ToolSlot, run_guarded};
use super::trace::CallTrace;
use crate::contract::chain::Chain;
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered};
use crate::contract::tool::{
    CallEnv, DEFAULT_MAX_INPUT_SIZE, ErasedToolSlot, ErasedToolType, Tool, ToolMeta,
};
use crate::di::{DiError, Services};
use crate::dto::{Dto, ValidationError, code};
use crate::error::ToolCallError;

impl<T: Tool> ErasedToolSlot for ToolSlot<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn model_input_schema(&self) -> Option<serde_json::Value> {
        ToolSlot::model_input_schema(self)
    }
    fn call_json<'a>(
        &'a self,
        chain: &'a Chain,
        env: CallEnv<'a>,
        args: &'a str,
        max_result_size: Option<usize>,
    ) -> BoxFuture<'a, CallOutcome<Rendered>> {
        Box::pin(call_json_typed(self, chain, env, args, max_result_size))
    }
}

/// One call of `T` with JSON text arguments, as a model makes it: decode and validate, the
/// chain, `run`, serialization, PII masking and truncation, in one `execute_tool` span. Typed
/// handles call it directly; everything else through [`ErasedToolSlot::call_json`].
pub(crate) async fn call_json_typed<T: Tool>(
    slot: &ToolSlot<T>,
    chain: &Chain,
    env: CallEnv<'_>,
    args: &str,
    max_result_size: Option<usize>,
) -> CallOutcome<Rendered> {
    let meta = slot.meta();
    let trace = CallTrace::start(meta.name, &env.call_id, &chain.path);
    let span = &trace.span;
    // Content only when opted in, masked by the path's policies (see `crate::telemetry`).
    let capture = trace.recording() && crate::telemetry::capture_content();
    if capture {
        let mut report = crate::pii::MaskReport::default();
        span.record(
            "gen_ai.tool.call.arguments",
            &*chain.pii.mask_text(args, &mut report),
        );
    }
    let outcome = async {
        // Bounded before anything reads it.
        let limit = meta.max_input_size.unwrap_or(DEFAULT_MAX_INPUT_SIZE);
        if args.len() > limit {
            return CallOutcome::failed(
                FailureKind::Rejected,
                ToolCallError::InvalidInput {
                    tool_name: meta.name.to_string(),
                    source: ValidationError::single(
                        <T::Input as Dto>::DTO_NAME,
                        "$",
                        code::MAX_LENGTH,
                        &format!(
                            "the arguments are {} bytes, over this tool's limit of {limit} bytes; send less",
                            args.len()
                        ),
                    ),
                },
            );
        }
        // Text that is not JSON at all is one `json` error at `$` of the DTO's report.
        let input = match <T::Input as Dto>::from_json_str(args) {
            Ok(input) => input,
            Err(source) => {
                return CallOutcome::failed(
                    FailureKind::Rejected,
                    ToolCallError::InvalidInput {
                        tool_name: meta.name.to_string(),
                        source,
                    },
                );
            }
        };
        match run_guarded(slot, chain, env, input).await {
            CallOutcome::Ran(output) => match render_result(&output, &chain.pii, max_result_size) {
                Ok(r) => {
                    span.record("agboss.truncated", r.truncated);
                    span.record("agboss.pii_masked", r.masked as u64);
                    if capture {
                        span.record("gen_ai.tool.call.result", r.text.as_str());
                    }
                    CallOutcome::Ran(Rendered {
                        text: r.text,
                        truncated: r.truncated,
                    })
                }
                Err(e) => CallOutcome::failed(
                    FailureKind::Tool,
                    ToolCallError::Serialize {
                        tool_name: meta.name.to_string(),
                        message: e.to_string(),
                    },
                ),
            },
            CallOutcome::Replied {
                message,
                interceptor,
            } => {
                let (message, masked) = mask_message(message, &chain.pii);
                span.record("agboss.pii_masked", masked as u64);
                if capture {
                    span.record("gen_ai.tool.call.result", message.as_str());
                }
                CallOutcome::Replied {
                    message,
                    interceptor,
                }
            }
            CallOutcome::Failed(failure) => CallOutcome::Failed(failure),
        }
    };
    // No span (no subscriber): the call's future is awaited in place, not moved into an
    // `Instrumented` wrapper that enters a disabled span at every poll.
    let outcome = if span.is_none() {
        outcome.await
    } else {
        outcome.instrument(span.clone()).await
    };
    trace.finish(&outcome);
    outcome
}

#[doc(hidden)]
pub struct ToolType<T>(PhantomData<fn() -> T>);

impl<T: Tool> ErasedToolType for ToolType<T> {
    fn build_slot(
        &self,
        _meta: &'static ToolMeta,
        services: &Services,
    ) -> Result<Arc<dyn ErasedToolSlot>, DiError> {
        Ok(Arc::new(ToolSlot::<T>::build(services)?))
    }
}

/// The erased builder of a tool type (referenced from `ToolMeta::erased`).
#[doc(hidden)]
pub fn erased_tool<T: Tool>() -> &'static dyn ErasedToolType {
    const { &ToolType::<T>(PhantomData) }
}
