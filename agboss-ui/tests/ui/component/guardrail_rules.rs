use agboss_core::prelude::*;

// [name.kind-suffix], [name.kebab-case], [description.empty], [input-guardrail.timeout-ms],
// and `parallel` on an output guardrail ([attr.unknown-key]), in one go.
#[input_guardrail(name = "Moderation", description = "", timeout_ms = 0)]
pub struct ModerationInputGuardrail;

impl InputGuardrail for ModerationInputGuardrail {
    async fn check_input(&self, _input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

#[output_guardrail(name = "leak-output-guardrail", description = "Leaks", parallel)]
pub struct Leak;

impl OutputGuardrail for Leak {
    async fn check_output(&self, _output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

fn main() {}
