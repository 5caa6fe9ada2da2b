//! The spans of runs, agent steps and model turns (see [`crate::telemetry`] for the table of
//! names and attributes). Each constructor returns [`Span::none`] until a dispatcher has been
//! installed, so a run without a subscriber builds none.
use tracing::Span;
use tracing::field::Empty;

use super::{RunError, RunOutput};
use crate::model::{ModelError, ModelRequest, ModelResponse, SharedChatModel};
use crate::telemetry::{active, capture_content};

/// Masks content recorded on a span with the PII policies of a path.
pub(crate) type ContentMask<'a> = &'a (dyn Fn(&str) -> String + Send + Sync);

/// The span of a whole run: `invoke_workflow` for a workflow, else `invoke_agent`.
pub(crate) fn run_span(workflow: bool, target: &str, run_id: &str, thread: Option<&str>) -> Span {
    if !active() {
        return Span::none();
    }
    if workflow {
        tracing::info_span!(
            "invoke_workflow",
            otel.name = %format_args!("invoke_workflow {target}"),
            gen_ai.operation.name = "invoke_workflow",
            agboss.workflow = target,
            gen_ai.conversation.id = thread,
            agboss.run_id = run_id,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            agboss.usage.model_requests = Empty,
            agboss.usage.tool_calls = Empty,
            agboss.outcome = Empty,
            error.type = Empty,
        )
    } else {
        tracing::info_span!(
            "invoke_agent",
            otel.name = %format_args!("invoke_agent {target}"),
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = target,
            gen_ai.conversation.id = thread,
            agboss.run_id = run_id,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            agboss.usage.model_requests = Empty,
            agboss.usage.tool_calls = Empty,
            agboss.outcome = Empty,
            error.type = Empty,
        )
    }
}

/// Records how the run ended on its span.
pub(crate) fn finish_run(span: &Span, result: &Result<RunOutput, RunError>) {
    if span.is_disabled() {
        return;
    }
    if let Ok(out) = result {
        span.record("gen_ai.usage.input_tokens", out.usage.prompt_tokens);
        span.record("gen_ai.usage.output_tokens", out.usage.completion_tokens);
        span.record("agboss.usage.model_requests", out.reserved.model_requests);
        span.record("agboss.usage.tool_calls", out.reserved.tool_calls);
    }
    finish_step(span, result);
}

/// Records how a run or an agent step ended: `agboss.outcome` (`ok`, `paused`, `error`) and
/// the error's `error.type`.
pub(crate) fn finish_step<T>(span: &Span, result: &Result<T, RunError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(_) => {
            span.record("agboss.outcome", "ok");
        }
        Err(err) => {
            let outcome = if err.leaves_run_resumable() {
                "paused"
            } else {
                "error"
            };
            span.record("agboss.outcome", outcome);
            span.record("error.type", run_error_type(err));
        }
    }
}

/// The span of an agent step inside a router's or a workflow's run.
pub(crate) fn agent_span(agent: &str) -> Span {
    if !active() {
        return Span::none();
    }
    tracing::info_span!(
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {agent}"),
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        agboss.outcome = Empty,
        error.type = Empty,
    )
}

/// The span of one model call; `mask` given (an agent's turn) and content opted in, the
/// request's messages are recorded, masked.
pub(crate) fn chat_span(
    step: &str,
    model: &SharedChatModel,
    req: &ModelRequest,
    mask: Option<ContentMask<'_>>,
) -> Span {
    if !active() {
        return Span::none();
    }
    let name = model.dyn_model_name();
    let provider = model.dyn_provider_name();
    let span = tracing::info_span!(
        "chat",
        otel.name = %format_args!("chat {name}"),
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        agboss.step = step,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        error.type = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if !provider.is_empty() {
        span.record("gen_ai.provider.name", provider);
    }
    if !name.is_empty() {
        span.record("gen_ai.request.model", name);
    }
    if let Some(mask) = mask.filter(|_| capture_content())
        && let Ok(json) = serde_json::to_string(&req.messages)
    {
        span.record("gen_ai.input.messages", mask(&json).as_str());
    }
    span
}

/// Records the model call's usage, finish reason (or error) and, with content, its answer.
pub(crate) fn finish_chat(
    span: &Span,
    result: &Result<ModelResponse, ModelError>,
    mask: Option<ContentMask<'_>>,
) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(response) => {
            span.record("gen_ai.usage.input_tokens", response.usage.prompt_tokens);
            span.record(
                "gen_ai.usage.output_tokens",
                response.usage.completion_tokens,
            );
            span.record(
                "gen_ai.response.finish_reasons",
                response.finish_reason.as_str(),
            );
            if let Some(mask) = mask.filter(|_| capture_content())
                && let Ok(json) = serde_json::to_string(&response.message)
            {
                span.record("gen_ai.output.messages", mask(&json).as_str());
            }
        }
        Err(err) => {
            span.record("error.type", model_error_type(err));
        }
    }
}

/// `error.type` of a failed model call.
fn model_error_type(err: &ModelError) -> &'static str {
    match err {
        ModelError::Http { .. } => "http",
        ModelError::RateLimited { .. } => "rate_limited",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Transport { .. } => "transport",
        ModelError::MalformedResponse { .. } => "malformed_response",
        ModelError::TooLarge { .. } => "too_large",
        ModelError::StreamTruncated { .. } => "stream_truncated",
        ModelError::Provider { .. } => "provider",
        ModelError::Config { .. } => "config",
        ModelError::ScriptExhausted { .. } => "script_exhausted",
        ModelError::Other { .. } => "other",
    }
}

/// `error.type` of a failed run.
fn run_error_type(err: &RunError) -> &'static str {
    match err {
        RunError::UnknownTarget { .. } => "unknown_target",
        RunError::NoModel { .. } => "no_model",
        RunError::Model { .. } => "model",
        RunError::MaxTurnsExceeded { .. } => "max_turns_exceeded",
        RunError::MaxHandoffsExceeded { .. } => "max_handoffs_exceeded",
        RunError::InvalidOutput { .. } => "invalid_output",
        RunError::UsageLimit(_) => "usage_limit",
        RunError::Step(s) if s.as_blocked().is_some() => "blocked",
        RunError::Step(_) => "step_failed",
        RunError::Cancelled => "cancelled",
        RunError::Store(_) => "store",
        RunError::InDoubt { .. } => "in_doubt",
        RunError::AwaitingApproval { .. } => "awaiting_approval",
        RunError::Unauthorized { .. } => "unauthorized",
        RunError::InvalidEdit { .. } => "invalid_edit",
        RunError::NotInDoubt { .. } => "not_in_doubt",
        RunError::JournalMismatch { .. } => "journal_mismatch",
    }
}
