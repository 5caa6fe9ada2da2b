//! Approval in tests: [`RecordingChannel`], a `#[channel]` that records every ticket it is told
//! of in the app's [`ApprovalInbox`], and helpers to decide them.
//!
//! ```
//! use agboss_core::prelude::*;
//! use agboss_core::error::ToolCallErrorKind;
//! use agboss_core::dto::Dto;
//! use agboss_core::store::MemoryStore;
//! use agboss_testing::approval::{ApprovalInbox, RecordingChannel, approve_all};
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct PayDto { #[integer(prompt = "Cents", min = 1)] pub cents: i64 }
//! #[tool(name = "pay-tool", description = "Pays", input = PayDto, output = PayDto,
//!        approval = RecordingChannel)]
//! pub struct PayTool;
//! impl ToolHandler<PayDto, PayDto> for PayTool {
//!     async fn run(&self, input: PayDto) -> Result<PayDto, ToolError> { Ok(input) }
//! }
//! # futures::executor::block_on(async {
//! let app = App::builder().tool::<PayTool>().store(MemoryStore::new()).build().unwrap();
//! let err = app.tool::<PayTool>().tenant("acme").invoke(PayDto { cents: 7 }).await.unwrap_err();
//! assert!(matches!(err.kind(), ToolCallErrorKind::ApprovalRequired { .. }));
//! let inbox = ApprovalInbox::of(&app);
//! assert_eq!(inbox.tickets().len(), 1);
//! let decided = approve_all(&app, "acme").await.unwrap();
//! assert_eq!(decided.len(), 1);
//! # });
//! ```
use std::sync::{Arc, Mutex};

use agboss_core::engine::{Decision, RunError};
use agboss_core::store::{Ticket, TicketState};
use agboss_core::{
    App, ChannelError, channel, contract::channel::ApprovalChannel, contract::channel::Approver,
    injectable,
};

/// The tickets a [`RecordingChannel`] was told of, per app (a service of the app).
#[injectable(default)]
#[derive(Debug, Default)]
pub struct ApprovalInbox {
    tickets: Mutex<Vec<Ticket>>,
    refuse: Mutex<Vec<String>>,
}

impl ApprovalInbox {
    /// The inbox of `app` (empty if no tool of the app uses a [`RecordingChannel`]).
    pub fn of(app: &App) -> Arc<Self> {
        app.services().get::<Self>().unwrap_or_default()
    }
    /// Every ticket the channel was told of, in order.
    pub fn tickets(&self) -> Vec<Ticket> {
        self.lock().clone()
    }
    /// The ids of the tickets told of.
    pub fn ids(&self) -> Vec<String> {
        self.lock().iter().map(|t| t.id.clone()).collect()
    }
    /// Makes the channel refuse this approver from now on.
    pub fn refuse(&self, approver_id: impl Into<String>) {
        self.refuse
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(approver_id.into());
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Ticket>> {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A channel for tests: records each ticket in the app's [`ApprovalInbox`] and authorizes any
/// approver of the ticket's tenant (or of none) that the inbox does not refuse.
#[channel(name = "recording-channel", description = "Records tickets for tests",
          deps = [ApprovalInbox])]
pub struct RecordingChannel {
    inbox: Arc<ApprovalInbox>,
}

impl ApprovalChannel for RecordingChannel {
    async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {
        self.inbox.lock().push(ticket.clone());
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        let refused = self
            .inbox
            .refuse
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&approver.id);
        let tenant_ok = approver
            .tenant
            .as_deref()
            .is_none_or(|t| t == ticket.tenant);
        Ok(!refused && tenant_ok)
    }
}

/// The approver the helpers decide as: `test-approver` of `tenant`.
pub fn test_approver(tenant: &str) -> Approver {
    Approver::new("test-approver").tenant(tenant)
}

/// Approves every pending ticket of `tenant` the app's [`RecordingChannel`] was told of;
/// returns them decided.
pub async fn approve_all(app: &App, tenant: &str) -> Result<Vec<Ticket>, RunError> {
    decide_all(app, tenant, |t| Decision::approve(&t.id)).await
}

/// Rejects every pending ticket of `tenant` with `message`; returns them decided.
pub async fn reject_all(app: &App, tenant: &str, message: &str) -> Result<Vec<Ticket>, RunError> {
    decide_all(app, tenant, |t| Decision::reject(&t.id, message)).await
}

async fn decide_all(
    app: &App,
    tenant: &str,
    decision: impl Fn(&Ticket) -> Decision,
) -> Result<Vec<Ticket>, RunError> {
    let mut decided = Vec::new();
    for ticket in ApprovalInbox::of(app).tickets() {
        if ticket.tenant != tenant {
            continue;
        }
        let Some(store) = app.store() else { break };
        let current = agboss_core::store::TicketStore::ticket(store, tenant, &ticket.id).await?;
        if current.state != TicketState::Pending {
            continue;
        }
        let d = decision(&ticket).by(test_approver(tenant));
        decided.push(app.decide(tenant, d).await?);
    }
    Ok(decided)
}
