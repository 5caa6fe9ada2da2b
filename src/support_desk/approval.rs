//! Manager approval of large refunds.
use std::sync::Arc;

use agboss_core::prelude::*;

use super::{ManagerInbox, REFUND_APPROVAL_LIMIT_CENTS, RefundInputDto};

/// Billing managers approve large refunds: told of a ticket, it puts it in the
/// [`ManagerInbox`]; only an approver with role `manager` of the ticket's own tenant may decide
/// one.
#[channel(name = "manager-channel", description = "Billing managers approve refunds above 100.00",
          deps = [ManagerInbox])]
pub struct ManagerChannel {
    inbox: Arc<ManagerInbox>,
}

impl ApprovalChannel for ManagerChannel {
    async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {
        self.inbox.push(ticket);
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager") && approver.tenant.as_deref() == Some(&*ticket.tenant))
    }
}

/// When a refund needs a manager: above [`REFUND_APPROVAL_LIMIT_CENTS`].
pub fn needs_manager_approval(refund: &RefundInputDto) -> bool {
    refund.amount_cents > REFUND_APPROVAL_LIMIT_CENTS
}
