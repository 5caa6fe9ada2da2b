//! Tools behind `dyn`: every `T: Tool` gets a slot callable with JSON text, as a model calls it
//! (decode and validate, the guarded run, serialization, masking, truncation, in one span).
use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use super::Chain;
use super::hooks::Stage;
use super::render::{mask_message, render_result};
use super::run::{ToolSlot, run_guarded};
use super::trace::CallTrace;
use super::{CallEnv, CallFuture, ErasedToolSlot};
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::tool::{DEFAULT_MAX_INPUT_SIZE, ErasedToolType, Tool, ToolMeta};
use crate::contract::{Built, MetaRef};
use crate::di::{DiError, Services};
use crate::dto::{Dto, ValidationError, code};

impl<T: Tool> ErasedToolSlot for ToolSlot<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn model_input_schema(&self) -> Option<serde_json::Value> {
        ToolSlot::model_input_schema(self)
    }
    fn check_input(&self, meta: &ToolMeta, args: &str) -> Result<(), ToolCallError> {
        decode_checked::<T>(meta, args).map(drop)
    }
    fn call_json<'a>(
        &'a self,
        chain: &'a Chain,
        env: CallEnv<'a>,
        args: &'a str,
        max_result_size: Option<usize>,
    ) -> CallFuture<'a> {
        CallFuture::from_or_box(call_json_typed(self, chain, env, args, max_result_size))
    }
}

/// One call of `T` with JSON text arguments, as a model makes it: decode and validate, the
/// chain, `run`, serialization, PII masking and truncation, in one `execute_tool` span. Typed
/// handles call it directly; everything else through [`ErasedToolSlot::call_json`].
///
/// An `async` block holding its arguments once, and awaiting one future (the guarded run):
/// decoding before it and rendering after it are plain code, so the call's future is little
/// more than the walk's.
#[expect(
    clippy::manual_async_fn,
    reason = "an `async fn` keeps its by-value arguments twice in its future (rust-lang/rust#62958)"
)]
pub(crate) fn call_json_typed<'a, T: Tool>(
    slot: &'a ToolSlot<T>,
    chain: &'a Chain,
    env: CallEnv<'a>,
    args: &'a str,
    max_result_size: Option<usize>,
) -> impl Future<Output = CallOutcome<Rendered>> + Send + 'a {
    async move {
        let meta = slot.meta();
        let trace = CallTrace::start(&meta.name, &env.call_id, &chain.path);
        // Content only when opted in, masked by the path's policies (see `crate::telemetry`).
        let capture = trace.recording() && crate::telemetry::capture_content();
        if capture {
            let mut report = crate::pii::MaskReport::default();
            trace.span.record(
                "gen_ai.tool.call.arguments",
                &*chain.pii.mask_text(args, &mut report),
            );
        }
        let outcome = match decode::<T>(meta, args) {
            Ok(input) => {
                let stage = Stage::new();
                let running = run_guarded(slot, chain, env, input, &stage);
                // A panic caught around the call is its failure, classified by its error.
                let ran = trace
                    .in_span(running)
                    .await
                    .unwrap_or_else(CallOutcome::from_error);
                rendered(&trace, capture, meta, chain, ran, max_result_size)
            }
            Err(rejected) => rejected,
        };
        trace.finish(&outcome);
        outcome
    }
}

/// The input of a call from its JSON text, bounded before anything reads it.
fn decode<T: Tool>(meta: &ToolMeta, args: &str) -> Result<T::Input, CallOutcome<Rendered>> {
    decode_checked::<T>(meta, args).map_err(|e| CallOutcome::failed(FailureKind::Rejected, e))
}

/// [`decode`]'s check, its failure as the call's error.
fn decode_checked<T: Tool>(meta: &ToolMeta, args: &str) -> Result<T::Input, ToolCallError> {
    let limit = meta.max_input_size.unwrap_or(DEFAULT_MAX_INPUT_SIZE);
    let source = if args.len() > limit {
        ValidationError::single(
            <T::Input as Dto>::DTO_NAME,
            "$",
            code::MAX_LENGTH,
            &format!(
                "the arguments are {} bytes, over this tool's limit of {limit} bytes; send less",
                args.len()
            ),
        )
    } else {
        // Text that is not JSON at all is one `json` error at `$` of the DTO's report.
        match <T::Input as Dto>::from_json_str(args) {
            Ok(input) => return Ok(input),
            Err(source) => source,
        }
    };
    Err(ToolCallError::new(
        meta.name.to_string(),
        ToolCallErrorKind::InvalidInput { source },
    ))
}

/// What a model reads of an outcome: the output serialized, masked and truncated; a reply
/// masked.
fn rendered<O: Dto>(
    trace: &CallTrace,
    capture: bool,
    meta: &ToolMeta,
    chain: &Chain,
    outcome: CallOutcome<O>,
    max_result_size: Option<usize>,
) -> CallOutcome<Rendered> {
    let recording = trace.recording();
    let span = &trace.span;
    match outcome {
        CallOutcome::Ran(output) => match render_result(&output, &chain.pii, max_result_size) {
            Ok(r) => {
                if recording {
                    span.record("agboss.truncated", r.truncated);
                    span.record("agboss.pii_masked", r.masked as u64);
                    if capture {
                        span.record("gen_ai.tool.call.result", r.text.as_str());
                    }
                }
                CallOutcome::Ran(Rendered {
                    text: r.text,
                    truncated: r.truncated,
                })
            }
            Err(e) => CallOutcome::failed(
                FailureKind::Tool,
                ToolCallError::new(
                    meta.name.to_string(),
                    ToolCallErrorKind::Serialize {
                        message: e.to_string(),
                    },
                ),
            ),
        },
        CallOutcome::ReplyToModel {
            message,
            interceptor,
        } => {
            let (message, masked) = mask_message(message, &chain.pii);
            if recording {
                span.record("agboss.pii_masked", masked as u64);
                if capture {
                    span.record("gen_ai.tool.call.result", message.as_str());
                }
            }
            CallOutcome::ReplyToModel {
                message,
                interceptor,
            }
        }
        CallOutcome::Failed(failure) => CallOutcome::Failed(failure),
    }
}

#[doc(hidden)]
pub struct ToolType<T>(PhantomData<fn() -> T>);

impl<T: Tool> ErasedToolType for ToolType<T> {
    fn build_slot(&self, _meta: &MetaRef<ToolMeta>, services: &Services) -> Result<Built, DiError> {
        let slot: Arc<dyn ErasedToolSlot> = Arc::new(ToolSlot::<T>::build(services)?);
        Ok(Built::new(slot))
    }
}

/// The erased builder of a tool type (referenced from `ToolMeta::erased`).
#[doc(hidden)]
pub fn erased_tool<T: Tool>() -> &'static dyn ErasedToolType {
    const { &ToolType::<T>(PhantomData) }
}
