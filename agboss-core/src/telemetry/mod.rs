//! Tracing of runs, model turns and tool calls, with the span names and attributes of the
//! [OpenTelemetry GenAI semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/).
//!
//! | span (name; `otel.name`) | level | parent | attributes |
//! |---|---|---|---|
//! | `invoke_agent`; `invoke_agent {target}` — or `invoke_workflow`; `invoke_workflow {target}` | `INFO` | the caller's span | `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.conversation.id` (the thread), `agboss.run_id`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `agboss.usage.model_requests`, `agboss.usage.tool_calls` (what the run reserved, nested runs included), `agboss.outcome` (`ok`, `error`, `paused`), `error.type` |
//! | `invoke_agent`; `invoke_agent {agent}` (an agent step of a router or workflow run) | `INFO` | the run | `gen_ai.operation.name`, `gen_ai.agent.name`, `agboss.outcome`, `error.type` |
//! | `chat`; `chat {model}` (one model call, streamed or not) | `INFO` | the run or agent step | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `agboss.step`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`, `error.type`; with content: `gen_ai.input.messages`, `gen_ai.output.messages` |
//! | `execute_tool`; `execute_tool {tool}` (one guarded tool call) | `INFO` | the agent step, workflow or caller | `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `agboss.path`, `agboss.decision`, `agboss.interceptor`, `agboss.outcome`, `agboss.duration_us`, `agboss.truncated`, `agboss.pii_masked`, `error.type`; with content: `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result` |
//!
//! The calls of one turn run concurrently; each call's span is a child of its agent's span
//! (never of a sibling's). `gen_ai.response.finish_reasons` holds the one reason of the turn as
//! a string (`tracing` has no array values). `agboss.decision` is the guard's decision
//! ([`CallDecision::label`](crate::CallDecision::label): `allowed`, `replied_to_model`,
//! `blocked`, `guard_failed`, `rejected`, `awaiting_approval`) and `agboss.interceptor` the
//! interceptor that took it (empty when every one allowed).
//!
//! **Content** (prompts, answers, tool arguments and results) is recorded only when opted in,
//! with [`set_capture_content`] or the environment variable
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, and always masked by the PII
//! policies of the path: a tool's arguments and result by its chain's policies, an agent
//! turn's messages by those of every tool of the agent. Router turns record no content.
//!
//! **Cost without a subscriber:** none of these spans is built (not even its fields evaluated)
//! until a `tracing` dispatcher has been installed ([`tracing::dispatcher::has_been_set`]), so a
//! process that never installs one pays one relaxed load per span.
//!
//! With the `otel` feature, the `telemetry::otel` module exports the spans to an OTLP collector.
use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(feature = "otel")]
pub mod otel;

/// The environment variable that opts in to recording content.
pub const CAPTURE_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// 0: not decided yet (read the environment), 1: off, 2: on.
static CAPTURE: AtomicU8 = AtomicU8::new(0);

/// Turns the recording of content (prompts, answers, tool arguments and results, PII-masked)
/// on spans on or off for the whole process; it overrides
/// [`CAPTURE_CONTENT_ENV`].
///
/// ```
/// agboss_core::telemetry::set_capture_content(true);
/// assert!(agboss_core::telemetry::capture_content());
/// agboss_core::telemetry::set_capture_content(false);
/// assert!(!agboss_core::telemetry::capture_content());
/// ```
pub fn set_capture_content(on: bool) {
    CAPTURE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether spans record content: [`set_capture_content`], else whether
/// [`CAPTURE_CONTENT_ENV`] is `true` or `1` (read once).
///
/// ```
/// // Off unless opted in.
/// # agboss_core::telemetry::set_capture_content(false);
/// assert!(!agboss_core::telemetry::capture_content());
/// ```
#[must_use]
pub fn capture_content() -> bool {
    match CAPTURE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = std::env::var(CAPTURE_CONTENT_ENV)
                .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"));
            // A concurrent `set_capture_content` wins over the environment.
            let _ = CAPTURE.compare_exchange(
                0,
                if on { 2 } else { 1 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            CAPTURE.load(Ordering::Relaxed) == 2
        }
    }
}

/// Whether spans may be wanted at all: a dispatcher was installed at some point. Without this
/// check, `tracing`'s `log` feature (which sqlx turns on) evaluates every field of a disabled
/// span to offer it to `log`.
#[inline]
pub(crate) fn active() -> bool {
    tracing::dispatcher::has_been_set()
}
