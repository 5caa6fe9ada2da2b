use agboss_core::prelude::*;

#[input_guardrail(name = "moderation-input-guardrail", description = "Moderates")]
pub struct ModerationInputGuardrail;

impl InputGuardrail for ModerationInputGuardrail {
    async fn check_input(&self, _input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

#[output_guardrail(name = "leak-output-guardrail", description = "Leaks")]
pub struct LeakOutputGuardrail;

impl OutputGuardrail for LeakOutputGuardrail {
    async fn check_output(&self, _output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

// [cascade.attach-and-exclude] and [attr.duplicate-entry] for guardrails.
#[agent(
    name = "chat-agent",
    description = "Chats",
    input_guardrails = [ModerationInputGuardrail, ModerationInputGuardrail],
    output_guardrails = [LeakOutputGuardrail],
    exclude_output_guardrails = [LeakOutputGuardrail],
)]
pub struct ChatAgent;

// [cascade.nothing-to-exclude]: the application inherits nothing.
#[application(
    name = "chat-application",
    description = "Chat",
    agents = [ChatAgent],
    exclude_input_guardrails = [ModerationInputGuardrail],
)]
pub struct ChatApplication;

fn main() {}
