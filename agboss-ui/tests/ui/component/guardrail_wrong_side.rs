use agboss_core::prelude::*;

#[output_guardrail(name = "leak-output-guardrail", description = "Leaks")]
pub struct LeakOutputGuardrail;

impl OutputGuardrail for LeakOutputGuardrail {
    async fn check_output(&self, _output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

// [input-guardrail.not-a-guardrail]: an output guardrail in `input_guardrails`.
#[router(name = "chat-router", description = "Routes", routes = [ChatAgent], input_guardrails = [LeakOutputGuardrail])]
pub struct ChatRouter;

#[agent(name = "chat-agent", description = "Chats")]
pub struct ChatAgent;

fn main() {}
