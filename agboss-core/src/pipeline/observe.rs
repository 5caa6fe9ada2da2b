//! The one observation policy: what a call's [`CallOutcome`] becomes for whoever reads it (the
//! model in an agent's tool loop, or a workflow's next step), which decision it reports and
//! whether it fails the step. The agent loop, the workflow tool step and the listeners' view of a
//! call ([`CallOutcome::model_text`]) all go through here.
//!
//! | outcome | model reads | step |
//! |---|---|---|
//! | ran | the rendered output | goes on |
//! | replied (`reply_to_model`) | the message (`is_error`) | goes on (a workflow step fails: no model reads it) |
//! | rejected input | a listener's report, or what was wrong (field paths) | goes on |
//! | tool failed | a listener's report, or a safe text naming the error class (`ToolErrorPolicy::Report`) | goes on, or fails (`FailStep`) |
//! | blocked | — | fails with `ToolBlockedError` |
//! | guard failed (interceptor error, panic, timeout, missing dependency) | — | fails, whatever a listener returned |
use std::borrow::Cow;

use crate::contract::agent::ToolErrorPolicy;
use crate::contract::outcome::{CallDecision, CallOutcome, FailureKind, Rendered, reply_as_block};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};

/// A call's observation, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Observation {
    /// The text.
    pub(crate) content: String,
    /// Whether it reports an error or a refusal rather than a tool output.
    pub(crate) is_error: bool,
    /// Whether `max_result_size` cut it.
    pub(crate) truncated: bool,
}

/// Who reads a call's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A model in an agent's tool loop, with the agent's policy for the tool's own errors.
    Model(ToolErrorPolicy),
    /// The next step of a workflow: only an output goes on; a reply fails the step (no model
    /// reads it).
    Step,
}

/// What the policy made of one outcome.
#[derive(Debug)]
pub(crate) struct Observed {
    /// What the guard decided.
    pub(crate) decision: CallDecision,
    /// The full error of a tool's own failure (the model only reads a safe summary).
    pub(crate) tool_error: Option<String>,
    /// The observation, or the error that fails the step.
    pub(crate) verdict: Result<Observation, ToolCallError>,
}

/// Applies the policy. `mask` masks a text built here for the model (a rejection, a report, an
/// error summary) with the PII policies of the tool's path.
pub(crate) fn observe(
    tool_name: &str,
    call_id: &str,
    outcome: CallOutcome<Rendered>,
    reader: Reader,
    mask: &dyn Fn(&str) -> Cow<'_, str>,
) -> Observed {
    let decision = outcome.decision();
    let observation = |content: String, is_error: bool, truncated: bool| Observation {
        content,
        is_error,
        truncated,
    };
    let (verdict, tool_error) = match (outcome, reader) {
        (CallOutcome::Ran(r), _) => (Ok(observation(r.text, false, r.truncated)), None),
        (
            CallOutcome::ReplyToModel {
                interceptor,
                message,
            },
            Reader::Step,
        ) => (
            Err(reply_as_block(tool_name, call_id, interceptor, message)),
            None,
        ),
        (CallOutcome::ReplyToModel { message, .. }, Reader::Model(_)) => {
            (Ok(observation(message, true, false)), None)
        }
        (CallOutcome::Failed(failure), Reader::Step) => (Err(failure.into_error()), None),
        (CallOutcome::Failed(failure), Reader::Model(policy)) => match failure.kind() {
            FailureKind::Blocked | FailureKind::Guard | FailureKind::Approval => {
                (Err(failure.into_error()), None)
            }
            FailureKind::Rejected => {
                let text = match failure.report() {
                    Some(report) => report.to_string(),
                    None => rejection_text(tool_name, failure.error()),
                };
                let text = mask(&text).into_owned();
                let decision = CallDecision::Rejected {
                    reason: text.clone(),
                };
                return Observed {
                    decision,
                    tool_error: None,
                    verdict: Ok(observation(text, true, false)),
                };
            }
            FailureKind::Tool => {
                let full = failure.error().to_string();
                let verdict = match (failure.report(), policy) {
                    (Some(report), _) => Ok(observation(mask(report).into_owned(), true, false)),
                    (None, ToolErrorPolicy::FailStep) => Err(failure.into_error()),
                    (None, ToolErrorPolicy::Report) => {
                        let text = format!(
                            "The tool `{tool_name}` failed ({}). The details were logged for the operator. Try different arguments or another approach.",
                            error_class(failure.error())
                        );
                        Ok(observation(mask(&text).into_owned(), true, false))
                    }
                };
                (verdict, Some(full))
            }
        },
    };
    Observed {
        decision,
        tool_error,
        verdict,
    }
}

/// The longest rejection text the model reads (the field errors are capped already; this bounds
/// what one long message could add).
const MAX_REJECTION_TEXT: usize = 4096;

/// What the model is told about a rejected input.
fn rejection_text(tool_name: &str, error: &ToolCallError) -> String {
    let mut text = rejection_text_uncapped(tool_name, error);
    crate::pipeline::truncate_result(&mut text, Some(MAX_REJECTION_TEXT));
    text
}

fn rejection_text_uncapped(tool_name: &str, error: &ToolCallError) -> String {
    match error.kind() {
        ToolCallErrorKind::InvalidInput { source, .. } => format!(
            "Invalid arguments for tool `{tool_name}`: {source}\nFix these fields and call the tool again."
        ),
        ToolCallErrorKind::NotInApp => format!("Unknown tool `{tool_name}`."),
        _ => error.to_string(),
    }
}

/// The class of a tool's own failure, as the model reads it (no details: those go to the logs).
fn error_class(error: &ToolCallError) -> &'static str {
    match error.kind() {
        ToolCallErrorKind::ToolFailed { .. } => "tool error",
        ToolCallErrorKind::ToolPanicked { .. } => "tool panic",
        ToolCallErrorKind::Timeout { .. } => "timeout",
        ToolCallErrorKind::InvalidOutput { .. } => "invalid tool output",
        ToolCallErrorKind::Serialize { .. } => "output serialization error",
        _ => "error",
    }
}
