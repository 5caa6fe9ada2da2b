//! Tracing of tool calls: one `tool_call` span per call (every path: agent loops, workflow
//! steps, callbacks, direct invokes) and one event per interceptor decision.
//!
//! | span / event | level | fields |
//! |---|---|---|
//! | span `tool_call` | `INFO` | `tool`, `call_id`, `path` (scopes joined by `/`), `decision` (`allow`, `reply_to_model`, `block`, `interceptor_error`), `outcome` (`ok`, `reply_to_model`, `blocked`, `invalid_input`, `tool_error`, `tool_panic`, `timeout`, `interceptor_error`, `interceptor_timeout`, `invalid_output`, …), `duration_us`, `truncated`, `pii_masked` |
//! | event `before_tool_call` | `DEBUG` | `tool`, `call_id`, `interceptor`, `decision`, `message` (reply) / `reason` (block) |
//! | event `after_tool_call` | `TRACE` | `tool`, `interceptor` |
//! | event `tool call failed` | `DEBUG` | `error` |
//!
//! A tool call's span is a child of the span current where it is called. See them with a `tracing` subscriber, e.g.
//! `tracing_subscriber::fmt().with_env_filter(EnvFilter::from_default_env()).init()` and
//! `RUST_LOG=agboss_core=debug`, or export them with an OpenTelemetry layer.
use std::time::Instant;

use tracing::Span;
use tracing::field::Empty;

use crate::contract::outcome::CallOutcome;
use crate::error::ToolCallError;

/// The span of one tool call; record the rest with [`CallTrace::finish`].
pub(crate) struct CallTrace {
    pub(crate) span: Span,
    /// `None` when no subscriber wants the span: no clock read on the hot path.
    start: Option<Instant>,
}

impl CallTrace {
    pub(crate) fn start(
        tool: &'static str,
        call_id: &crate::di::CallId,
        path: &[&'static str],
    ) -> Self {
        // No subscriber was ever installed: no span. (Without this, `tracing`'s `log`
        // feature, which sqlx turns on, evaluates every field of a disabled span to offer it
        // to `log`: ~800 instructions per call for nothing.)
        if !tracing::dispatcher::has_been_set() {
            return Self {
                span: Span::none(),
                start: None,
            };
        }
        // Field values are only evaluated when a subscriber wants the span.
        let span = tracing::info_span!(
            "tool_call",
            tool,
            call_id = call_id.as_str(),
            path = %path.join("/"),
            decision = Empty,
            outcome = Empty,
            duration_us = Empty,
            truncated = Empty,
            pii_masked = Empty,
        );
        let start = (!span.is_disabled()).then(Instant::now);
        Self { span, start }
    }

    /// Records the outcome and the duration.
    pub(crate) fn finish<O>(&self, result: &CallOutcome<O>) {
        let outcome = match result {
            CallOutcome::Ran(_) => "ok",
            CallOutcome::Replied { .. } => "reply_to_model",
            CallOutcome::Failed(failure) => {
                let _enter = self.span.enter();
                tracing::debug!(error = %failure.error(), "tool call failed");
                outcome_of(failure.error())
            }
        };
        if let Some(start) = self.start {
            self.span.record("outcome", outcome);
            self.span
                .record("duration_us", start.elapsed().as_micros() as u64);
        }
    }
}

/// The `outcome` field of a failed call.
pub fn outcome_of(err: &ToolCallError) -> &'static str {
    match err {
        ToolCallError::InvalidInput { .. } => "invalid_input",
        ToolCallError::Blocked(_) => "blocked",
        ToolCallError::InterceptorFailed { .. } | ToolCallError::InterceptorPanicked { .. } => {
            "interceptor_error"
        }
        ToolCallError::InterceptorTimeout { .. } => "interceptor_timeout",
        ToolCallError::ToolFailed { .. } => "tool_error",
        ToolCallError::ToolPanicked { .. } => "tool_panic",
        ToolCallError::Timeout { .. } => "timeout",
        ToolCallError::InvalidOutput { .. } => "invalid_output",
        ToolCallError::Dependency { .. } => "dependency_error",
        ToolCallError::NotInApp { .. } => "not_in_app",
        ToolCallError::Serialize { .. } => "serialize_error",
        #[allow(unreachable_patterns)]
        _ => "error",
    }
}

/// Records the call's decision on the current `tool_call` span.
pub(crate) fn record_decision(decision: &'static str) {
    // No subscriber was ever installed: there is no span to record on (and looking the
    // current one up costs a thread-local access per decision).
    if tracing::dispatcher::has_been_set() {
        Span::current().record("decision", decision);
    }
}
