use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct VerdictDto {
    #[boolean(prompt = "Granted")]
    pub granted: bool,
}

pub struct Plain;

// [agent.output-retries-without-output]
#[agent(name = "chatty-agent", description = "Free text", output_retries = 3)]
pub struct ChattyAgent;

// [agent.output-retries]
#[agent(name = "verdict-agent", description = "Typed", output = VerdictDto, output_retries = -1)]
pub struct VerdictAgent;

// Not a DTO: the Dto trait's own message.
#[agent(name = "plain-agent", description = "Typed by a plain type", output = Plain)]
pub struct PlainAgent;

fn main() {}
