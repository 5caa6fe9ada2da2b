//! A refund desk whose large refunds wait for a manager of the same tenant: the app the ticket
//! API tests and the console's browser tests share. The model asks for the refund its user
//! message describes (`order cents note`), then answers with the tool's observation.
use std::sync::{Arc, Mutex};

use agboss_core::dto::Dto;
use agboss_core::model::{Message, SharedChatModel};
use agboss_core::prelude::*;
use agboss_core::store::types::random_id;
use agboss_core::store::{PostgresStore, SharedStore, SqliteStore, Ticket};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct IxRefundDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
    #[integer(prompt = "Amount in cents", min = 1)]
    pub amount_cents: i64,
    #[text(prompt = "A note for the customer")]
    pub note: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct IxDoneDto {
    #[text(prompt = "What was done")]
    pub done: String,
}

/// Every refund that ran, outside the app.
#[injectable(provided)]
#[derive(Default)]
pub struct IxLog {
    refunds: Mutex<Vec<(String, i64)>>,
}

impl IxLog {
    pub fn refunds(&self) -> Vec<(String, i64)> {
        self.refunds.lock().unwrap().clone()
    }
}

#[channel(name = "ix-manager-channel", description = "Managers approve refunds")]
pub struct IxManagerChannel;

impl ApprovalChannel for IxManagerChannel {
    async fn notify(&self, _ticket: &Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager") && approver.tenant.as_deref() == Some(&*ticket.tenant))
    }
}

#[pii_policy(name = "ix-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct IxEmailPiiPolicy;

/// Refunds above 1,000,000 cents never reach a manager; the rest are allowed.
#[tool_interceptor(name = "ix-limit-tool-interceptor", description = "Caps refunds")]
pub struct IxLimitToolInterceptor;

impl BeforeToolCall for IxLimitToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["amountCents"].as_i64() {
            Some(cents) if cents > 1_000_000 => ToolCallDecision::block("over the refund cap"),
            _ => ToolCallDecision::allow(),
        })
    }
}

#[tool(name = "ix-refund-tool", description = "Refunds an order", input = IxRefundDto,
       output = IxDoneDto, deps = [IxLog], approval = IxManagerChannel,
       tool_interceptors = [IxLimitToolInterceptor], pii_policies = [IxEmailPiiPolicy])]
pub struct IxRefundTool {
    log: Arc<IxLog>,
}

impl ToolHandler<IxRefundDto, IxDoneDto> for IxRefundTool {
    async fn run(&self, input: IxRefundDto) -> Result<IxDoneDto, ToolError> {
        let mut refunds = self.log.refunds.lock().unwrap();
        refunds.push((input.order_id.clone(), input.amount_cents));
        Ok(IxDoneDto {
            done: format!("refunded {} on {}", input.amount_cents, input.order_id),
        })
    }
}

#[agent(name = "ix-desk-agent", description = "Refunds", instructions = "Help.",
        tools = [IxRefundTool])]
pub struct IxDeskAgent;

/// The model's turn: a refund call for the last user message, or the answer after a tool.
fn desk_turn(request: &agboss_core::model::ModelRequest) -> Turn {
    match request.messages.last() {
        Some(Message::Tool { content, .. }) => Turn::text(format!("Done: {content}")),
        Some(Message::User { content }) => {
            let mut parts = content.splitn(3, ' ');
            let order = parts.next().unwrap_or_default();
            let cents: i64 = parts.next().and_then(|c| c.parse().ok()).unwrap_or(1);
            let note = parts.next().unwrap_or_default();
            Turn::tool_call(
                "ix-refund-tool",
                json!({ "orderId": order, "amountCents": cents, "note": note }),
            )
        }
        _ => Turn::text("?"),
    }
}

/// The desk over `store`, logging to `log`.
pub fn desk(store: SharedStore, log: Arc<IxLog>) -> App {
    let model = ScriptedModel::new((0..200).map(|_| Turn::from_fn(desk_turn)));
    App::builder()
        .agent::<IxDeskAgent>()
        .provide_arc(log)
        .shared_model(Arc::new(model) as SharedChatModel)
        .store(store)
        .build()
        .unwrap()
}

/// A manager of `tenant`.
pub fn manager(tenant: &str) -> Approver {
    Approver::new(format!("{tenant}-manager"))
        .tenant(tenant)
        .role("manager")
}

/// Starts a refund run of `tenant` (`order cents note`): it stops waiting for approval; its
/// ticket.
pub async fn pending_refund(app: &App, tenant: &str, request: &str) -> Ticket {
    pending_refund_in(app, RunContext::new().tenant(tenant), request).await
}

/// [`pending_refund`] with this run context (a thread, say).
pub async fn pending_refund_in(app: &App, ctx: RunContext, request: &str) -> Ticket {
    let err = app
        .execute(Target::agent::<IxDeskAgent>(), request, ctx)
        .await
        .unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &*err else {
        panic!("expected a pending ticket, got {err}")
    };
    tickets[0].clone()
}

/// The SQL stores: SQLite (a temporary file) and PostgreSQL (a schema of its own, named after
/// `what`, on `AGBOSS_TEST_POSTGRES_URL`; in CI a missing server fails the test).
pub async fn sql_stores(what: &str) -> Vec<(&'static str, SharedStore)> {
    let dir = std::env::temp_dir().join(random_id(&format!("agboss-{what}")));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = SqliteStore::open(dir.join(format!("{what}.db")))
        .await
        .unwrap();
    let mut stores = vec![("sqlite", SharedStore::new(sqlite))];
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let schema = format!("agboss_{what}_{}", random_id("s"));
            let pg = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            stores.push(("postgres", SharedStore::new(pg)));
        }
        _ if std::env::var_os("CI").is_some() => panic!("AGBOSS_TEST_POSTGRES_URL is not set"),
        _ => eprintln!("skipped PostgreSQL: AGBOSS_TEST_POSTGRES_URL not set"),
    }
    stores
}
