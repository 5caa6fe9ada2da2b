//! A typed answer (`#[agent(output = SomeDto)]`): the request asks for its schema (the
//! provider's structured-output mode, else a system message), and a final answer is decoded
//! and validated like a tool input before anyone sees it. An invalid answer goes back to the
//! model as a correction, up to the agent's bound, then fails the step with
//! [`RunError::InvalidOutput`], naming every failing path.
use std::sync::Arc;

use super::events::RunEvent;
use super::run_error::RunError;
use super::state::RunState;
use crate::contract::agent::{AgentMeta, AgentOutput, DEFAULT_OUTPUT_RETRIES};
use crate::dto::ValidationError;
use crate::model::{AssistantMessage, Message, ModelRequest, OutputFormat, SharedChatModel};

/// The typed answer of one agent step: its output and the corrections it has left.
pub(crate) struct TypedOutput {
    output: AgentOutput,
    retries: u32,
    rejected: u32,
}

impl TypedOutput {
    /// The typed answer of `meta`, if it has one; `req` then asks for it (in the provider's
    /// mode when `model` has one, in a system message otherwise).
    pub(crate) fn prepare(
        meta: &AgentMeta,
        model: &SharedChatModel,
        req: &mut ModelRequest,
    ) -> Option<Self> {
        let output = meta.output?;
        let format = OutputFormat::new(output.dto, (output.schema)());
        if !model.dyn_structured_output() {
            req.messages.push(Message::system(format.prompt()));
        }
        req.output = Some(Arc::new(format));
        Some(Self {
            output,
            retries: meta.output_retries.unwrap_or(DEFAULT_OUTPUT_RETRIES),
            rejected: 0,
        })
    }

    /// Reads a final answer: `Ok(Some(json))`, the validated answer (the JSON text of the
    /// typed value); `Ok(None)`, it was invalid and `req` now holds the answer and its
    /// correction (ask again); `Err`, it was invalid and no correction is left.
    pub(crate) fn read(
        &mut self,
        run: &RunState,
        step: &str,
        req: &mut ModelRequest,
        message: AssistantMessage,
    ) -> Result<Option<String>, RunError> {
        let text = message.content.as_deref().unwrap_or_default();
        let error = match (self.output.decode)(unfenced(text)) {
            Ok(value) => return Ok(Some(value.to_string())),
            Err(error) => error,
        };
        self.rejected += 1;
        run.emit(|| RunEvent::OutputRejected {
            step: step.to_string(),
            attempt: self.rejected,
            error: error.clone(),
        });
        if self.rejected > self.retries {
            return Err(RunError::InvalidOutput {
                agent: step.to_string(),
                attempts: self.rejected,
                source: error,
            });
        }
        req.messages.push(Message::Assistant(message));
        req.messages.push(Message::user(correction(&error)));
        Ok(None)
    }
}

/// What the model reads after an invalid answer.
fn correction(error: &ValidationError) -> String {
    format!(
        "Your answer is not a valid {}. Fix these and answer again with the whole JSON object \
         only:\n{}",
        error.dto,
        error
            .errors
            .iter()
            .map(|e| format!("- {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// `text` without the Markdown code fence a model may wrap a JSON answer in (a model told the
/// schema in the prompt often does).
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The fence's info string (`json`) ends at the first line break.
    match body.split_once('\n') {
        Some((info, inner)) if !info.contains('{') => inner.trim(),
        _ => body.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::unfenced;

    #[test]
    fn a_code_fence_around_the_answer_is_taken_off() {
        assert_eq!(unfenced("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(unfenced("```\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(unfenced("```{\"a\":1}```"), "{\"a\":1}");
        assert_eq!(unfenced("  {\"a\":1}  "), "{\"a\":1}");
        // An unclosed fence is left alone (and fails to decode).
        assert_eq!(unfenced("```json\n{\"a\":1}"), "```json\n{\"a\":1}");
    }
}
