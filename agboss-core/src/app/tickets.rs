//! [`Tickets`]: one tenant's approval tickets, what an inbox (the console, a chat bot, a script)
//! reads and decides.
use serde_json::Value;

use super::App;
use crate::contract::channel::Approver;
use crate::engine::{Decision, RunError};
use crate::store::{StoreError, Ticket, TicketPage, TicketQuery, TicketStore as _};

/// What an inbox shows in place of an input it cannot mask: the call's policy changed since the
/// ticket was made, so the policies that would mask it are not known (fail closed).
pub const INPUT_HIDDEN: &str =
    "[input hidden: the call's policy changed since the ticket was made]";

/// One tenant's approval tickets ([`App::tickets`]). Every read and decision is scoped by the
/// tenant: another tenant's ticket reads as not found ([`StoreError::TicketNotFound`]) and is
/// never listed; without a store every call fails with [`StoreError::NotConfigured`].
///
/// ```
/// # use agboss_core::dto::Dto;
/// # use agboss_core::store::{MemoryStore, Ticket, TicketQuery};
/// # use agboss_core::{agent, channel, tool, App, ApprovalChannel, Approver, ChannelError,
/// #     RunContext, RunError, Target, ToolError, ToolHandler};
/// # use agboss_testing::scripted::{ScriptedModel, Turn};
/// # #[channel(name = "ops-channel", description = "Ops approves")]
/// # pub struct OpsChannel;
/// # impl ApprovalChannel for OpsChannel {
/// #     async fn notify(&self, _: &Ticket) -> Result<(), ChannelError> { Ok(()) }
/// #     async fn authorize(&self, a: &Approver, _: &Ticket) -> Result<bool, ChannelError> {
/// #         Ok(a.has_role("ops"))
/// #     }
/// # }
/// # #[derive(Dto, Debug, Clone, PartialEq)]
/// # pub struct RestartDto { #[text(prompt = "Service")] pub service: String }
/// # #[tool(name = "restart-tool", description = "Restarts", input = RestartDto, output = RestartDto,
/// #        approval = OpsChannel)]
/// # pub struct RestartTool;
/// # impl ToolHandler<RestartDto, RestartDto> for RestartTool {
/// #     async fn run(&self, input: RestartDto) -> Result<RestartDto, ToolError> { Ok(input) }
/// # }
/// # #[agent(name = "ops-agent", description = "Ops", tools = [RestartTool])]
/// # pub struct OpsAgent;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let app = App::builder()
///     .agent::<OpsAgent>()
///     .store(MemoryStore::new())
///     .model(ScriptedModel::new([
///         Turn::tool_call("restart-tool", serde_json::json!({ "service": "db" })),
///         Turn::text("Restarted."),
///     ]))
///     .build()?;
/// let ctx = || RunContext::new().tenant("acme");
/// let err = app.execute(Target::agent::<OpsAgent>(), "Restart the db", ctx()).await.unwrap_err();
/// assert!(matches!(*err, RunError::AwaitingApproval { .. }));
///
/// // The inbox: acme's pending tickets; globex sees none of them.
/// let inbox = app.tickets("acme").list(&TicketQuery::new().pending()).await?;
/// assert_eq!(inbox.tickets.len(), 1);
/// assert!(app.tickets("globex").list(&TicketQuery::new()).await?.tickets.is_empty());
///
/// // An edit that fails the input DTO is refused, and the ticket stays pending.
/// let ticket = &inbox.tickets[0];
/// let ops = Approver::new("olga").tenant("acme").role("ops");
/// let refused = app.tickets("acme").edit(&ticket.id, ops.clone(), r#"{"service": 7}"#).await;
/// let Err(RunError::InvalidEdit { source, .. }) = refused else { panic!("{refused:?}") };
/// assert_eq!(source.errors[0].path, "$.service");
///
/// app.tickets("acme").approve(&ticket.id, ops).await?;
/// let out = app.resume_ticket(&ticket.id, ctx()).await?;
/// assert_eq!(out.text, "Restarted.");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Tickets<'a> {
    app: &'a App,
    tenant: String,
}

impl<'a> Tickets<'a> {
    pub(super) fn new(app: &'a App, tenant: String) -> Self {
        Self { app, tenant }
    }

    /// The tenant these tickets belong to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// A page of the tenant's tickets passing `query`: pending first (oldest first), then the
    /// others (newest first). See [`TicketStore::list_tickets`](crate::store::TicketStore::list_tickets).
    pub async fn list(&self, query: &TicketQuery) -> Result<TicketPage, StoreError> {
        let store = self.app.store().ok_or(StoreError::NotConfigured)?;
        store.list_tickets(&self.tenant, query).await
    }

    /// One ticket.
    pub async fn get(&self, ticket_id: &str) -> Result<Ticket, StoreError> {
        let store = self.app.store().ok_or(StoreError::NotConfigured)?;
        store.ticket(&self.tenant, ticket_id).await
    }

    /// Approves a ticket ([`App::decide`] with [`Decision::approve`]): the channel must
    /// authorize `approver`.
    pub async fn approve(&self, ticket_id: &str, approver: Approver) -> Result<Ticket, RunError> {
        self.decide(Decision::approve(ticket_id).by(approver)).await
    }

    /// Rejects a ticket; `message` is what the model reads as the call's observation.
    pub async fn reject(
        &self,
        ticket_id: &str,
        approver: Approver,
        message: impl Into<String>,
    ) -> Result<Ticket, RunError> {
        self.decide(Decision::reject(ticket_id, message).by(approver))
            .await
    }

    /// Decides to run the call with `input` (JSON text) instead. An input that fails the tool's
    /// input DTO is refused now ([`RunError::InvalidEdit`], with every failing field) and the
    /// ticket stays pending.
    pub async fn edit(
        &self,
        ticket_id: &str,
        approver: Approver,
        input: impl Into<String>,
    ) -> Result<Ticket, RunError> {
        self.decide(Decision::edit(ticket_id, input).by(approver))
            .await
    }

    /// Records any decision on one of the tenant's tickets ([`App::decide`]).
    pub async fn decide(&self, decision: Decision) -> Result<Ticket, RunError> {
        self.app.decide(&self.tenant, decision).await
    }

    /// The ticket's input as the model saw it: masked by the PII policies of the path the call
    /// was made on (the one whose policy digest the ticket recorded). When no path of this app
    /// has that digest any more, [`INPUT_HIDDEN`]: nothing unmasked is shown. A request to
    /// connect an account ([`Ticket::is_account_request`]) shows its input as it is: the
    /// server and the tenant, never a secret.
    pub fn masked_input(&self, ticket: &Ticket) -> String {
        if ticket.is_account_request() {
            return match serde_json::from_str::<Value>(&ticket.input) {
                Ok(value) => {
                    serde_json::to_string_pretty(&value).unwrap_or_else(|_| INPUT_HIDDEN.into())
                }
                Err(_) => INPUT_HIDDEN.to_string(),
            };
        }
        let Some(bound) = self
            .app
            .inner
            .resolved
            .bound_for(&ticket.tool, &ticket.chain_digest)
        else {
            return INPUT_HIDDEN.to_string();
        };
        let pii = bound.chain().pii();
        let mut report = crate::pii::MaskReport::default();
        match serde_json::from_str::<Value>(&ticket.input) {
            Ok(mut value) => {
                pii.mask_value(&mut value, &mut report);
                serde_json::to_string_pretty(&value).unwrap_or_else(|_| INPUT_HIDDEN.into())
            }
            Err(_) => pii.mask_text(&ticket.input, &mut report).into_owned(),
        }
    }

    /// The interceptors that allowed the call before it reached its approval point: every
    /// `before_tool_call` of the path the call was made on, in order (a ticket is made only
    /// once all of them allowed it). The ticket's policy digest pins that chain, so this is
    /// exactly the chain that ran; `None` when no path of this app has that digest any more
    /// (the app changed since: what ran is not known).
    ///
    /// ```
    /// # use agboss_core::App;
    /// # use agboss_core::store::{MemoryStore, Ticket};
    /// let app = App::builder().store(MemoryStore::new()).build().unwrap();
    /// let foreign = Ticket::pending("tk-1", "no-such-tool", "{}");
    /// assert_eq!(app.tickets("acme").allowed_by(&foreign), None);
    /// ```
    pub fn allowed_by(&self, ticket: &Ticket) -> Option<Vec<&'static str>> {
        self.app
            .inner
            .resolved
            .bound_for(&ticket.tool, &ticket.chain_digest)
            .map(|bound| bound.chain().before_order())
    }

    /// The JSON Schema of the ticket's tool's input (what an edit form is built from), if the
    /// tool is part of this app.
    pub fn input_schema(&self, ticket: &Ticket) -> Option<Value> {
        self.app
            .inner
            .resolved
            .bound_named(&ticket.tool, &ticket.chain_digest)
            .map(|b| (b.meta().input_schema)())
    }
}
