use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

// [channel.missing-handler]: a channel must implement ApprovalChannel.
#[channel(name = "manager-channel", description = "Managers approve")]
pub struct ManagerChannel;

fn main() {}
