//! The desk's input and output guardrails.
use agboss_core::prelude::*;

/// Refuses requests that try to override the desk's instructions. `cheap`: a few substring
/// checks, run before any costlier input guardrail.
#[input_guardrail(
    name = "prompt-injection-input-guardrail",
    description = "Refuses requests that try to override the desk's instructions",
    cheap
)]
pub struct PromptInjectionInputGuardrail;

impl InputGuardrail for PromptInjectionInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        const MARKERS: [&str; 4] = [
            "ignore previous instructions",
            "ignore all previous",
            "disregard your instructions",
            "reveal your system prompt",
        ];
        let text = input.text().to_lowercase();
        Ok(if MARKERS.iter().any(|m| text.contains(m)) {
            GuardrailVerdict::block("the request tries to override the desk's instructions")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

/// Keeps the desk's internal notes (`[internal: ...]`) out of what customers read.
#[output_guardrail(
    name = "internal-note-output-guardrail",
    description = "Removes internal notes from answers"
)]
pub struct InternalNoteOutputGuardrail;

impl OutputGuardrail for InternalNoteOutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        let text = output.text();
        if !text.contains("[internal:") {
            return Ok(GuardrailVerdict::pass());
        }
        let mut kept = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("[internal:") {
            kept.push_str(&rest[..start]);
            rest = rest[start..]
                .find(']')
                .map_or("", |end| &rest[start + end + 1..]);
        }
        kept.push_str(rest);
        Ok(GuardrailVerdict::rewrite(kept.trim_end()))
    }
}
