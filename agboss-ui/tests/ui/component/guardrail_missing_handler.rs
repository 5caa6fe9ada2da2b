use agboss_core::*;

#[input_guardrail(name = "moderation-input-guardrail", description = "Moderates")]
pub struct ModerationInputGuardrail;

fn main() {}
