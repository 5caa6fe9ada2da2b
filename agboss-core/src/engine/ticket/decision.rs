//! The human's side of the lifecycle: a [`Decision`] on a pending ticket, authorized by the
//! ticket's channel and recorded once ([`decide`]), and telling a channel of a new ticket
//! ([`tell_channel`]).
use futures::FutureExt as _;

use super::lifecycle::decide_ticket;
use crate::contract::channel::Approver;
use crate::contract::outcome::ToolCallErrorKind;
use crate::dto::{ValidationError, code};
use crate::engine::Runtime;
use crate::engine::run_error::RunError;
use crate::store::{Ticket, TicketDecision, TicketStore as _};

/// Tells a stored ticket's channel (errors and panics caught: the ticket stays pending either
/// way, the failure is logged and returned).
pub(crate) async fn tell_channel(rt: &Runtime, ticket: &Ticket) -> Result<(), String> {
    let told = match rt.channels.get(ticket.channel.as_str()) {
        None => Err(format!(
            "channel `{}` is not part of this app",
            ticket.channel
        )),
        Some(channel) => match std::panic::AssertUnwindSafe(channel.notify(ticket))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the channel panicked".to_string()),
        },
    };
    if let Err(error) = &told {
        tracing::error!(ticket = %ticket.id, channel = %ticket.channel, %error, "approval channel was not told of a ticket; it stays pending");
    }
    told
}

/// A human decision on a ticket, for [`App::decide`](crate::App::decide) and
/// [`App::resume`](crate::App::resume).
///
/// ```
/// use agboss_core::contract::channel::Approver;
/// use agboss_core::engine::Decision;
/// let d = Decision::approve("ticket_1").by(Approver::new("maria").role("manager"));
/// assert_eq!(d.ticket_id(), "ticket_1");
/// let r = Decision::reject("ticket_2", "Refunds above 100 need a receipt.").by(Approver::new("maria"));
/// let e = Decision::edit("ticket_3", r#"{"orderId":"ACME-42","amountCents":9000}"#).by(Approver::new("maria"));
/// # let _ = (r, e);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a Decision does nothing until given to App::decide or App::resume"]
pub struct Decision {
    ticket_id: String,
    kind: DecisionKind,
    approver: Option<Approver>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum DecisionKind {
    Approve,
    Reject(String),
    Edit(String),
}

impl Decision {
    /// Run the call as requested.
    pub fn approve(ticket_id: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Approve)
    }
    /// Do not run it; `message` becomes the call's observation and the run goes on.
    pub fn reject(ticket_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Reject(message.into()))
    }
    /// Run it with `new_input` (JSON text) instead: it passes the tool's input DTO and its
    /// before chain again.
    pub fn edit(ticket_id: impl Into<String>, new_input: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Edit(new_input.into()))
    }
    /// Who decides (required: the channel authorizes them).
    pub fn by(mut self, approver: Approver) -> Self {
        self.approver = Some(approver);
        self
    }
    /// The ticket decided.
    pub fn ticket_id(&self) -> &str {
        &self.ticket_id
    }
    /// The approver's new input (JSON text) of an edit; `None` for an approval or a rejection.
    pub fn edited_input(&self) -> Option<&str> {
        match &self.kind {
            DecisionKind::Edit(input) => Some(input),
            _ => None,
        }
    }
    /// Who decides, once [`Decision::by`] named them.
    pub fn approver(&self) -> Option<&Approver> {
        self.approver.as_ref()
    }
    fn new(ticket_id: impl Into<String>, kind: DecisionKind) -> Self {
        Self {
            ticket_id: ticket_id.into(),
            kind,
            approver: None,
        }
    }
}

/// Records a decision: the ticket must be `tenant`'s, the approver authorized by its channel,
/// the ticket pending and not expired. Decided exactly once.
pub(crate) async fn decide(
    rt: &Runtime,
    tenant: &str,
    decision: Decision,
) -> Result<Ticket, RunError> {
    let store = &rt
        .store
        .as_ref()
        .ok_or(crate::store::StoreError::NotConfigured)?
        .store;
    let ticket = store.ticket(tenant, &decision.ticket_id).await?;
    let refuse = |approver: &str, reason: String| RunError::Unauthorized {
        approver: approver.to_string(),
        ticket_id: ticket.id.clone(),
        reason,
    };
    let Some(approver) = &decision.approver else {
        return Err(refuse(
            "",
            "the decision names no approver (`.by(..)`)".into(),
        ));
    };
    if approver
        .tenant
        .as_deref()
        .is_some_and(|t| t != ticket.tenant)
    {
        return Err(refuse(
            &approver.id,
            "the approver belongs to another tenant".into(),
        ));
    }
    let Some(channel) = rt.channels.get(ticket.channel.as_str()) else {
        return Err(refuse(
            &approver.id,
            format!("channel `{}` is not part of this app", ticket.channel),
        ));
    };
    let allowed = std::panic::AssertUnwindSafe(channel.authorize(approver, &ticket))
        .catch_unwind()
        .await;
    match allowed {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => return Err(refuse(&approver.id, "the channel refused them".into())),
        Ok(Err(e)) => return Err(refuse(&approver.id, format!("the channel failed: {e}"))),
        Err(_) => return Err(refuse(&approver.id, "the channel panicked".into())),
    }
    // An edit's input must pass the tool's input DTO before anything is recorded (the ticket
    // stays pending, the approver gets the field errors).
    if let DecisionKind::Edit(input) = &decision.kind {
        let bound = rt.resolved.bound_named(&ticket.tool, &ticket.chain_digest);
        if let Some(Err(e)) = bound.map(|b| b.check_input(input)) {
            let message = e.to_string();
            let source = match e.into_kind() {
                ToolCallErrorKind::InvalidInput { source } => source,
                _ => ValidationError::single("edit", "$", code::JSON, &message),
            };
            return Err(RunError::InvalidEdit {
                ticket_id: ticket.id.clone(),
                tool: ticket.tool.clone(),
                source,
            });
        }
    }
    let by = approver.id.clone();
    let recorded = match decision.kind {
        DecisionKind::Approve => TicketDecision::Approved { by },
        DecisionKind::Reject(message) => TicketDecision::Rejected { by, message },
        DecisionKind::Edit(input) => TicketDecision::Edited { by, input },
    };
    Ok(decide_ticket(store, tenant, &ticket.id, &recorded).await?)
}
