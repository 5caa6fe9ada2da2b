//! Tracing of tool calls: one `execute_tool` span per call (every path: agent loops, workflow
//! steps, callbacks, direct invokes; see [`crate::telemetry`] for its attributes) and one event
//! per interceptor decision.
//!
//! | span / event | level | fields |
//! |---|---|---|
//! | span `execute_tool` | `INFO` | see [`crate::telemetry`] |
//! | event `before_tool_call` | `DEBUG` | `tool`, `call_id`, `interceptor`, `decision`, `reply` / `reason` |
//! | event `after_tool_call` | `TRACE` | `tool`, `interceptor` |
//! | event `tool call failed` | `DEBUG` | `error` |
//!
//! A tool call's span is a child of the span current where it is called. The decision and the
//! deciding interceptor are recorded once, when the call ends.
use std::future::Future;
use std::time::Instant;

use futures::future::Either;
use tracing::Instrument as _;
use tracing::Span;
use tracing::field::Empty;
use tracing::instrument::Instrumented;

use crate::contract::outcome::{CallOutcome, FailureKind};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};

/// The span of one tool call; record the rest with [`CallTrace::finish`].
pub(crate) struct CallTrace {
    pub(crate) span: Span,
    /// `None` when no subscriber wants the span: no clock read on the hot path.
    start: Option<Instant>,
}

impl CallTrace {
    pub(crate) fn start(tool: &str, call_id: &crate::di::CallId, path: &[&'static str]) -> Self {
        // No subscriber was ever installed: no span (see `telemetry::active`).
        if !crate::telemetry::active() {
            return Self {
                span: Span::none(),
                start: None,
            };
        }
        // Field values are only evaluated when a subscriber wants the span.
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format_args!("execute_tool {tool}"),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            gen_ai.tool.call.id = call_id.as_str(),
            gen_ai.tool.type = "function",
            agboss.path = %path.join("/"),
            agboss.decision = Empty,
            agboss.interceptor = Empty,
            agboss.outcome = Empty,
            agboss.duration_us = Empty,
            agboss.truncated = Empty,
            agboss.pii_masked = Empty,
            error.type = Empty,
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
        );
        let start = (!span.is_disabled()).then(Instant::now);
        Self { span, start }
    }

    /// Whether the span records anything (a subscriber wants it).
    #[inline]
    pub(crate) fn recording(&self) -> bool {
        self.start.is_some()
    }

    /// `fut` in the call's span; without a span (no subscriber), in place, not in an
    /// `Instrumented` wrapper that enters a disabled span at every poll. One future type
    /// either way, so a call's future holds `fut` once.
    #[inline]
    pub(crate) fn in_span<F: Future>(&self, fut: F) -> Either<F, Instrumented<F>> {
        if self.span.is_none() {
            Either::Left(fut)
        } else {
            Either::Right(fut.instrument(self.span.clone()))
        }
    }

    /// Records the decision (and who took it), the outcome and the duration.
    pub(crate) fn finish<O>(&self, result: &CallOutcome<O>) {
        if let CallOutcome::Failed(failure) = result {
            let _enter = self.span.enter();
            tracing::debug!(error = %failure.error(), "tool call failed");
        }
        let Some(start) = self.start else {
            return;
        };
        let (decision, interceptor) = decision_of(result);
        self.span.record("agboss.decision", decision);
        if let Some(interceptor) = interceptor {
            self.span.record("agboss.interceptor", interceptor);
        }
        let outcome = match result {
            CallOutcome::Ran(_) => "ok",
            CallOutcome::ReplyToModel { .. } => "reply_to_model",
            CallOutcome::Failed(failure) => {
                let outcome = outcome_of(failure.error());
                self.span.record("error.type", outcome);
                outcome
            }
        };
        self.span.record("agboss.outcome", outcome);
        self.span.record(
            "agboss.duration_us",
            u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        );
    }
}

/// The decision's label and the interceptor that took it, without allocating.
fn decision_of<O>(result: &CallOutcome<O>) -> (&'static str, Option<&'static str>) {
    match result {
        CallOutcome::Ran(_) => ("allowed", None),
        CallOutcome::ReplyToModel { interceptor, .. } => ("replied_to_model", Some(interceptor)),
        CallOutcome::Failed(failure) => match failure.kind() {
            FailureKind::Tool => ("allowed", None),
            FailureKind::Rejected => ("rejected", None),
            FailureKind::Approval => ("awaiting_approval", None),
            FailureKind::Blocked => match failure.error().as_blocked() {
                Some(b) => ("blocked", Some(b.interceptor)),
                None => ("guard_failed", None),
            },
            FailureKind::Guard => ("guard_failed", interceptor_of(failure.error())),
        },
    }
}

/// The interceptor a guard failure names.
fn interceptor_of(err: &ToolCallError) -> Option<&'static str> {
    match err.kind() {
        ToolCallErrorKind::InterceptorFailed { interceptor, .. }
        | ToolCallErrorKind::InterceptorPanicked { interceptor, .. }
        | ToolCallErrorKind::InterceptorTimeout { interceptor, .. } => Some(interceptor),
        ToolCallErrorKind::Dependency { component, .. } => Some(component),
        _ => None,
    }
}

/// The `agboss.outcome` (and `error.type`) of a failed call.
pub fn outcome_of(err: &ToolCallError) -> &'static str {
    match err.kind() {
        ToolCallErrorKind::InvalidInput { .. } => "invalid_input",
        ToolCallErrorKind::Blocked(_) => "blocked",
        ToolCallErrorKind::InterceptorFailed { .. }
        | ToolCallErrorKind::InterceptorPanicked { .. } => "interceptor_error",
        ToolCallErrorKind::InterceptorTimeout { .. } => "interceptor_timeout",
        ToolCallErrorKind::ToolFailed { .. } => "tool_error",
        ToolCallErrorKind::ToolPanicked { .. } => "tool_panic",
        ToolCallErrorKind::Timeout { .. } => "timeout",
        ToolCallErrorKind::InvalidOutput { .. } => "invalid_output",
        ToolCallErrorKind::Dependency { .. } => "dependency_error",
        ToolCallErrorKind::NotInApp => "not_in_app",
        ToolCallErrorKind::Serialize { .. } => "serialize_error",
        ToolCallErrorKind::ApprovalRequired { .. } => "approval_required",
        #[allow(unreachable_patterns)]
        _ => "error",
    }
}
