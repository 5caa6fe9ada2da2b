use agboss_core::prelude::*;

#[input_guardrail(name = "moderation-input-guardrail", description = "Moderates")]
pub struct ModerationInputGuardrail;

fn main() {}
