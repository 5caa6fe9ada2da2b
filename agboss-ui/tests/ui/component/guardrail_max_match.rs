use agboss_core::prelude::*;

// [output-guardrail.max-match]: the longest match is a positive number of characters.
#[output_guardrail(name = "locator-output-guardrail", description = "Finds locators", max_match = 0)]
pub struct LocatorOutputGuardrail;

impl OutputGuardrail for LocatorOutputGuardrail {
    async fn check_output(&self, _output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

// Input guardrails see the whole input: `max_match` is not one of their keys ([attr.unknown-key]).
#[input_guardrail(name = "length-input-guardrail", description = "Checks length", max_match = 40)]
pub struct LengthInputGuardrail;

impl InputGuardrail for LengthInputGuardrail {
    async fn check_input(&self, _input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(GuardrailVerdict::pass())
    }
}

fn main() {}
