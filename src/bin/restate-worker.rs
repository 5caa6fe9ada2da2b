//! The worker process of the Restate tests (`tests/restate.rs`): the app of a small support desk
//! served as a Restate deployment (`agboss_restate::serve`), over a store shared by every
//! worker of a test (or PostgreSQL), with tools that append to a counter file (outside every process).
//!
//! `restate-worker serve <store> <counter-file> <mode>` serves on a free port of 127.0.0.1
//! and prints `LISTEN <port>`, then serves until killed. `<mode>`:
//! - `plain`: the model asks for the agent's tool with the user's message as order id, then
//!   answers `<tool> done (<n> messages seen)` (n: the messages of its last request);
//! - `crash`: the model asks for the agent's tool as in `plain`, then hangs; once the refund's observation is
//!   journaled (the model is asked again) the worker prints `STALLED`;
//! - `stall-tool`: the refund tool appends to the counter, prints `STALLED` and never returns.
//!
//! `<store>` is `sqlite:<path>` or a `postgres://` URL (schema `RESTATE_WORKER_PG_SCHEMA`).
//! The payout tool needs a manager's approval: its channel prints `PENDING <ticket-id>` when
//! notified. `restate-worker decide <store> <counter-file> <ingress> <admin> <ticket-id>`
//! approves that ticket of tenant `RESTATE_WORKER_TENANT` (default `acme`) as a manager (`RestateClient::decide`) and prints
//! `DECIDED <state>`. The hasty tool's tickets expire after 1.5 s, undecided. The refund tool sleeps `RESTATE_WORKER_TOOL_MS` (default 0) first.
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::Decision;
use agboss_core::model::{Message, SharedChatModel};
use agboss_core::store::{PostgresStore, SharedStore, SqliteStore, StoreError, Ticket};
use agboss_core::{
    App, ChannelError, ToolError, ToolHandler, agent, channel, contract::channel::ApprovalChannel,
    contract::channel::Approver, injectable, tool,
};
use agboss_restate::RestateClient;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct RwOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

/// The counter file the tools append to, and whether the refund stalls after its work.
#[injectable(provided)]
pub struct RwCounter {
    path: std::path::PathBuf,
    stall: bool,
}

impl RwCounter {
    fn record(&self, kind: &str, order_id: &str) -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        writeln!(file, "{kind} {order_id}")?;
        file.sync_all()
    }
}

/// Refunds an order: not idempotent (a second run would refund twice).
#[tool(name = "rw-refund-tool", description = "Refunds an order", input = RwOrderDto,
       output = RwOrderDto, deps = [RwCounter])]
pub struct RwRefundTool {
    counter: Arc<RwCounter>,
}

impl ToolHandler<RwOrderDto, RwOrderDto> for RwRefundTool {
    async fn run(&self, input: RwOrderDto) -> Result<RwOrderDto, ToolError> {
        let ms = std::env::var("RESTATE_WORKER_TOOL_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.counter.record("refund", &input.order_id)?;
        if self.counter.stall {
            println!("STALLED");
            std::io::stdout().flush().ok();
            std::future::pending::<()>().await;
        }
        Ok(input)
    }
}

#[agent(name = "rw-desk-agent", description = "Refunds orders", instructions = "Help.",
        tools = [RwRefundTool])]
pub struct RwDeskAgent;

/// Managers of the ticket's tenant approve payouts; a notification prints the ticket.
#[channel(name = "rw-manager-channel", description = "Managers approve payouts")]
pub struct RwManagerChannel;

impl ApprovalChannel for RwManagerChannel {
    async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {
        println!("PENDING {}", ticket.id);
        std::io::stdout().flush().ok();
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager") && approver.tenant.as_deref() == Some(&ticket.tenant))
    }
}

/// Pays out, once a manager approved.
#[tool(name = "rw-payout-tool", description = "Pays a customer out", input = RwOrderDto,
       output = RwOrderDto, deps = [RwCounter], approval = RwManagerChannel)]
pub struct RwPayoutTool {
    counter: Arc<RwCounter>,
}

impl ToolHandler<RwOrderDto, RwOrderDto> for RwPayoutTool {
    async fn run(&self, input: RwOrderDto) -> Result<RwOrderDto, ToolError> {
        self.counter.record("payout", &input.order_id)?;
        Ok(input)
    }
}

#[agent(name = "rw-payout-agent", description = "Pays customers out", instructions = "Help.",
        tools = [RwPayoutTool])]
pub struct RwPayoutAgent;

/// A channel whose tickets expire after 1.5 s: nobody decides them.
#[channel(
    name = "rw-hasty-channel",
    description = "Nobody answers in time",
    ttl_ms = 1500
)]
pub struct RwHastyChannel;

impl ApprovalChannel for RwHastyChannel {
    async fn notify(&self, _ticket: &Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, _: &Approver, _: &Ticket) -> Result<bool, ChannelError> {
        Ok(false)
    }
}

/// Pays out, once approved in time (never).
#[tool(name = "rw-hasty-tool", description = "Pays a customer out, if approved in time",
       input = RwOrderDto, output = RwOrderDto, deps = [RwCounter], approval = RwHastyChannel)]
pub struct RwHastyTool {
    counter: Arc<RwCounter>,
}

impl ToolHandler<RwOrderDto, RwOrderDto> for RwHastyTool {
    async fn run(&self, input: RwOrderDto) -> Result<RwOrderDto, ToolError> {
        self.counter.record("payout", &input.order_id)?;
        Ok(input)
    }
}

#[agent(name = "rw-hasty-agent", description = "Pays customers out", instructions = "Help.",
        tools = [RwHastyTool])]
pub struct RwHastyAgent;

/// The plain model: the agent's tool for the user's message, then an answer naming how many
/// messages it was shown.
fn plain_turn() -> Turn {
    Turn::from_fn(|req| match req.messages.last() {
        Some(Message::Tool { .. }) => {
            let tool = req.tools.first().map_or("", |t| t.name.as_str());
            Turn::text(format!(
                "{} done ({} messages seen)",
                tool.trim_start_matches("rw-").trim_end_matches("-tool"),
                req.messages.len()
            ))
        }
        last => {
            let order = match last {
                Some(Message::User { content, .. }) => content.clone(),
                _ => String::new(),
            };
            let tool = req.tools.first().map_or("", |t| t.name.as_str());
            Turn::tool_call(tool, json!({ "orderId": order }))
        }
    })
}

fn app(
    store: SharedStore,
    counter: &str,
    mode: &str,
) -> Result<(App, Arc<ScriptedModel>), Box<dyn std::error::Error>> {
    let model = Arc::new(match mode {
        "crash" => ScriptedModel::new([plain_turn()]).hang_when_exhausted(),
        _ => ScriptedModel::new((0..500).map(|_| plain_turn())),
    });
    let app = App::builder()
        .agent::<RwDeskAgent>()
        .agent::<RwPayoutAgent>()
        .agent::<RwHastyAgent>()
        .provide(RwCounter {
            path: counter.into(),
            stall: mode == "stall-tool",
        })
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .store(store)
        .worker_id(format!("{mode}-{}", std::process::id()))
        .lease_ttl(Duration::from_millis(600))
        .build()?;
    Ok((app, model))
}

/// The store every worker of a test shares: `sqlite:<path>`, or a `postgres://` URL (schema
/// `RESTATE_WORKER_PG_SCHEMA`, default `agboss`).
async fn open(store: &str) -> Result<SharedStore, StoreError> {
    Ok(match store.strip_prefix("sqlite:") {
        Some(path) => SharedStore::new(SqliteStore::open(path).await?),
        None => {
            let schema =
                std::env::var("RESTATE_WORKER_PG_SCHEMA").unwrap_or_else(|_| "agboss".into());
            SharedStore::new(PostgresStore::connect_with_schema(store, &schema).await?)
        }
    })
}

async fn serve(path: &str, counter: &str, mode: &str) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(path).await?;
    let (app, model) = app(store, counter, mode)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("LISTEN {}", listener.local_addr()?.port());
    std::io::stdout().flush().ok();
    if mode == "crash" {
        tokio::spawn(async move {
            // The model is asked for its second turn only once the first turn, the call's
            // start and its observation are journaled.
            while model.request_count() < 2 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            println!("STALLED");
            std::io::stdout().flush().ok();
        });
    }
    agboss_restate::serve(Arc::new(app), listener, std::future::pending::<()>()).await;
    Ok(())
}

async fn decide(
    path: &str,
    counter: &str,
    ingress: &str,
    admin: &str,
    ticket: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(path).await?;
    let (app, _) = app(store, counter, "plain")?;
    let tenant = std::env::var("RESTATE_WORKER_TENANT").unwrap_or_else(|_| "acme".into());
    let manager = Approver::new("maria")
        .tenant(tenant.as_str())
        .role("manager");
    let decided = RestateClient::new(ingress, admin)
        .decide(&app, &tenant, Decision::approve(ticket).by(manager))
        .await?;
    println!("DECIDED {}", decided.state.as_str());
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [cmd, path, counter, mode] if cmd == "serve" => serve(path, counter, mode).await,
        [cmd, path, counter, ingress, admin, ticket] if cmd == "decide" => {
            decide(path, counter, ingress, admin, ticket).await
        }
        _ => {
            eprintln!(
                "usage: restate-worker serve <store> <counter-file> <plain|crash|stall-tool>\n       restate-worker decide <store> <counter-file> <ingress> <admin> <ticket-id>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("restate-worker: {err}");
            ExitCode::FAILURE
        }
    }
}
