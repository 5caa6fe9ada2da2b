use agboss_core::dto::Dto;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct InDto {
    #[text(prompt = "Text")]
    pub text: String,
}

// [name.kind-suffix], [name.kebab-case], [description.empty], [channel.ttl_ms], in one go.
#[channel(name = "Manager", description = "", ttl_ms = 0)]
pub struct ManagerChannel;

impl ApprovalChannel for ManagerChannel {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, _approver: &Approver, _ticket: &store::Ticket) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

#[channel(name = "boss-channel", description = "Bosses")]
pub struct Boss;

impl ApprovalChannel for Boss {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, _approver: &Approver, _ticket: &store::Ticket) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

fn main() {}
