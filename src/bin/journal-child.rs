//! The child process of the kill test (`tests/kill.rs`): a scripted support conversation over a
//! durable store, killed with SIGKILL by the test in the middle of its run and resumed by a
//! second process.
//!
//! `journal-child crash <store> <schema> <counter-file> <run-id>` starts the run on thread `t1`
//! of tenant `acme`: the model asks for a refund, the refund tool appends a line to
//! `<counter-file>` (outside the process), and the model then stalls; once every step before
//! the stall is journaled the child prints `STALLED` and waits to be killed.
//!
//! `journal-child resume <store> <schema> <counter-file> <run-id>` takes the run over (after the
//! dead worker's lease expires) and prints `ANSWER <text>`, `REPLAYED <steps>` and
//! `MESSAGES <thread length>`.
//!
//! `journal-child approval-wait <store> <schema> <counter-file> <run-id>` runs a payout whose tool
//! needs a manager's approval: the run stops with a pending ticket; the child prints
//! `PENDING <ticket-id>` and waits to be killed. `journal-child approval-decide ... <run-id>
//! <ticket-id>` approves the ticket as a manager from another process and resumes the run,
//! printing `ANSWER <text>` and `TICKET <state>`.
//!
//! `journal-child loop-run <store> <schema> <counter-file> <run-id>` (the kill loop,
//! `tests/kill_loop.rs`) runs one refund on thread `<run-id>` to its end and prints `DONE`: the
//! model asks for a refund whose tool sleeps before and after appending to `<counter-file>`, then
//! answers; the test kills it at a random point. `journal-child loop-resume ...` ends the run
//! after the kill: it resumes it (waiting out the dead worker's lease), settles a call in doubt
//! by looking at the counter file (the refund's own record of its work), and prints what it found
//! (`NORUN`, `FINISHED`, `INDOUBT done|not-done`, `ANSWER <text>`) and then
//! `STATUS <run status>`. `journal-child loop-standby ...` does the same as a standby worker,
//! through `take_over_runs` once the dead worker's lease expired. The lease lasts `JOURNAL_CHILD_LEASE_MS` (default 600 ms).
//!
//! `<store>` is `sqlite:<path>` or a `postgres://` URL (`<schema>` then names the schema).
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::Decision;
use agboss_core::engine::{InDoubtResolution, RunContext, RunError, RunOutput, Target};
use agboss_core::model::{Message, SharedChatModel};
use agboss_core::store::Ticket;
use agboss_core::store::{NewThread, PostgresStore, SharedStore, SqliteStore, StoreError};
use agboss_core::{
    App, ChannelError, ToolError, ToolHandler, agent, channel, contract::channel::ApprovalChannel,
    contract::channel::Approver, injectable, tool,
};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct KcOrderDto {
    #[text(prompt = "The order id")]
    pub order_id: String,
}

/// The file the refund tool appends to: the count of refunds, kept outside the process.
#[injectable(provided)]
pub struct KcCounter(std::path::PathBuf);

impl KcCounter {
    /// Appends `<kind> <order>` to the file and syncs it: the tool's work, done.
    fn record(&self, kind: &str, order_id: &str) -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.0)?;
        writeln!(file, "{kind} {order_id}")?;
        file.sync_all()
    }
}

#[tool(name = "kc-refund-tool", description = "Refunds an order", input = KcOrderDto,
       output = KcOrderDto, deps = [KcCounter])]
pub struct KcRefundTool {
    counter: Arc<KcCounter>,
}

impl ToolHandler<KcOrderDto, KcOrderDto> for KcRefundTool {
    async fn run(&self, input: KcOrderDto) -> Result<KcOrderDto, ToolError> {
        self.counter.record("refund", &input.order_id)?;
        Ok(input)
    }
}

#[agent(name = "kc-desk-agent", description = "Refunds orders", instructions = "Help.",
        tools = [KcRefundTool])]
pub struct KcDeskAgent;

/// The kill loop's refund: sleeps before and after appending to the counter file, so that a
/// random kill often lands inside the call.
#[tool(name = "kc-slow-refund-tool", description = "Refunds an order, slowly",
       input = KcOrderDto, output = KcOrderDto, deps = [KcCounter])]
pub struct KcSlowRefundTool {
    counter: Arc<KcCounter>,
}

impl ToolHandler<KcOrderDto, KcOrderDto> for KcSlowRefundTool {
    async fn run(&self, input: KcOrderDto) -> Result<KcOrderDto, ToolError> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.counter.record("refund", &input.order_id)?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(input)
    }
}

#[agent(name = "kc-loop-agent", description = "Refunds orders", instructions = "Help.",
        tools = [KcSlowRefundTool])]
pub struct KcLoopAgent;

/// Managers of the ticket's tenant approve payouts.
#[channel(name = "kc-manager-channel", description = "Managers approve payouts")]
pub struct KcManagerChannel;

impl ApprovalChannel for KcManagerChannel {
    async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {
        eprintln!("manager-channel: ticket {} for {}", ticket.id, ticket.tool);
        Ok(())
    }
    async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager") && approver.tenant.as_deref() == Some(&ticket.tenant))
    }
}

/// Pays out (appending to the counter file), once a manager approved.
#[tool(name = "kc-payout-tool", description = "Pays a customer out", input = KcOrderDto,
       output = KcOrderDto, deps = [KcCounter], approval = KcManagerChannel)]
pub struct KcPayoutTool {
    counter: Arc<KcCounter>,
}

impl ToolHandler<KcOrderDto, KcOrderDto> for KcPayoutTool {
    async fn run(&self, input: KcOrderDto) -> Result<KcOrderDto, ToolError> {
        self.counter.record("payout", &input.order_id)?;
        Ok(input)
    }
}

#[agent(name = "kc-payout-agent", description = "Pays customers out", instructions = "Help.",
        tools = [KcPayoutTool])]
pub struct KcPayoutAgent;

/// The child's app: its agent, the counter file, the scripted model, the store, and a worker id
/// of this process with a short lease (the next process takes over soon after a kill).
fn child_app(
    builder: agboss_core::AppBuilder,
    mode: &str,
    counter: &str,
    model: &Arc<ScriptedModel>,
    store: SharedStore,
) -> Result<App, agboss_core::error::BuildError> {
    builder
        .provide(KcCounter(counter.into()))
        .shared_model(Arc::clone(model) as SharedChatModel)
        .store(store)
        .worker_id(format!("{mode}-{}", std::process::id()))
        .lease_ttl(Duration::from_millis(
            std::env::var("JOURNAL_CHILD_LEASE_MS")
                .ok()
                .and_then(|ms| ms.parse().ok())
                .unwrap_or(600),
        ))
        .build()
}

async fn open(url: &str, schema: &str) -> Result<SharedStore, StoreError> {
    Ok(match url.strip_prefix("sqlite:") {
        Some(path) => SharedStore::new(SqliteStore::open(path).await?),
        None => SharedStore::new(PostgresStore::connect_with_schema(url, schema).await?),
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, url, schema, counter, run_id, ticket) = match args.as_slice() {
        [mode, url, schema, counter, run_id] => (mode, url, schema, counter, run_id, None),
        [mode, url, schema, counter, run_id, ticket] => {
            (mode, url, schema, counter, run_id, Some(ticket))
        }
        _ => {
            eprintln!(
                "usage: journal-child <crash|resume|approval-wait|approval-decide|loop-run|loop-resume|loop-standby> <store> <schema> <counter-file> <run-id> [ticket-id]"
            );
            return ExitCode::from(2);
        }
    };
    let result = match mode.as_str() {
        "approval-wait" | "approval-decide" => {
            approval(
                mode,
                url,
                schema,
                counter,
                run_id,
                ticket.map(String::as_str),
            )
            .await
        }
        "loop-run" | "loop-resume" | "loop-standby" => {
            looped(mode, url, schema, counter, run_id).await
        }
        _ => run(mode, url, schema, counter, run_id).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("journal-child {mode}: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    mode: &str,
    url: &str,
    schema: &str,
    counter: &str,
    run_id: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(url, schema).await?;
    let model = Arc::new(match mode {
        "crash" => ScriptedModel::new([Turn::tool_call(
            "kc-refund-tool",
            json!({ "orderId": "ACME-7" }),
        )])
        .hang_when_exhausted(),
        _ => ScriptedModel::new([Turn::text("Refund done.")]),
    });
    let app = child_app(
        App::builder().agent::<KcDeskAgent>(),
        mode,
        counter,
        &model,
        store,
    )?;
    let ctx = RunContext::new().tenant("acme");
    if mode == "crash" {
        app.threads("acme")
            .create(NewThread::new().id("t1"))
            .await?;
        let run = app.execute(
            Target::agent::<KcDeskAgent>(),
            "Please refund ACME-7",
            ctx.thread("t1").run_id(run_id),
        );
        let stalled = async {
            // The model is asked for its second turn only once the first turn, the call's start
            // and its observation are journaled.
            while model.request_count() < 2 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            println!("STALLED");
            std::io::stdout().flush().ok();
            std::future::pending::<()>().await;
        };
        tokio::select! {
            out = run => return Err(format!("the run was meant to stall: {out:?}").into()),
            () = stalled => unreachable!(),
        }
    }
    let out = resume_when_free(&app, run_id, &ctx).await?;
    let messages = app.threads("acme").messages("t1").await?;
    println!("ANSWER {}", out.text);
    println!("REPLAYED {}", out.replayed_steps);
    println!("MESSAGES {}", messages.len());
    Ok(())
}

/// Resumes `run_id` once the killed worker's lease expired.
async fn resume_when_free(
    app: &App,
    run_id: &str,
    ctx: &RunContext,
) -> Result<RunOutput, RunError> {
    loop {
        match app
            .resume_run(run_id, ctx.clone())
            .await
            .map_err(RunError::from)
        {
            Err(RunError::Store(StoreError::LeaseHeld { .. })) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

/// Takes `run_id` over as a standby worker does, once its lease expired: the result of
/// `take_over_runs` for it, or why there is nothing to take over (it is not stored, or finished).
async fn take_over(app: &App, run_id: &str) -> Result<Result<RunOutput, RunError>, RunError> {
    let store = app.store().ok_or(StoreError::NotConfigured)?;
    loop {
        let record = match agboss_core::store::RunStore::run(store, "acme", run_id).await {
            Err(err @ StoreError::RunNotFound { .. }) => return Ok(Err(err.into())),
            other => other?,
        };
        if record.status != agboss_core::store::RunStatus::Running {
            let run_id = run_id.to_string();
            return Ok(Err(StoreError::RunFinished { run_id }.into()));
        }
        for (id, result) in app.take_over_runs(10).await? {
            if id == run_id && !matches!(result, Err(RunError::Store(StoreError::LeaseHeld { .. })))
            {
                println!("TAKEN OVER");
                return Ok(result);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn approval(
    mode: &str,
    url: &str,
    schema: &str,
    counter: &str,
    run_id: &str,
    ticket: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(url, schema).await?;
    let model = Arc::new(match mode {
        "approval-wait" => ScriptedModel::new([Turn::tool_call(
            "kc-payout-tool",
            json!({ "orderId": "ACME-9" }),
        )]),
        _ => ScriptedModel::new([Turn::text("Payout done.")]),
    });
    let app = child_app(
        App::builder().agent::<KcPayoutAgent>(),
        mode,
        counter,
        &model,
        store,
    )?;
    let ctx = RunContext::new().tenant("acme");
    if mode == "approval-wait" {
        app.threads("acme")
            .create(NewThread::new().id("t2"))
            .await?;
        let err = app
            .execute(
                Target::agent::<KcPayoutAgent>(),
                "Please pay ACME-9 out",
                ctx.clone().thread("t2").run_id(run_id),
            )
            .await
            .expect_err("the payout waits for a manager");
        let RunError::AwaitingApproval { tickets, .. } = &*err else {
            return Err(err.into());
        };
        println!("PENDING {}", tickets[0].id);
        std::io::stdout().flush().ok();
        std::future::pending::<()>().await;
    }
    let ticket = ticket.ok_or("approval-decide needs the ticket id")?;
    let manager = Approver::new("maria").tenant("acme").role("manager");
    let out = app
        .resume("t2", Decision::approve(ticket).by(manager), ctx.clone())
        .await?;
    let state = agboss_core::store::TicketStore::ticket(app.store().unwrap(), "acme", ticket)
        .await?
        .state;
    println!("ANSWER {}", out.text);
    println!("TICKET {}", state.as_str());
    Ok(())
}

/// The kill loop's model: a refund first, the answer once the refund's observation is in the
/// conversation (a resumed run may ask for either turn first).
fn loop_model() -> ScriptedModel {
    let turn = || {
        Turn::from_fn(|req| {
            if req
                .messages
                .iter()
                .any(|m| matches!(m, Message::Tool { .. }))
            {
                Turn::text("Refund done.")
            } else {
                Turn::tool_call("kc-slow-refund-tool", json!({ "orderId": "ACME-7" }))
            }
        })
    };
    ScriptedModel::new([turn(), turn(), turn(), turn()])
}

async fn looped(
    mode: &str,
    url: &str,
    schema: &str,
    counter: &str,
    run_id: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(url, schema).await?;
    let model = Arc::new(loop_model());
    let app = child_app(
        App::builder().agent::<KcLoopAgent>(),
        mode,
        counter,
        &model,
        store,
    )?;
    let ctx = RunContext::new().tenant("acme");
    if mode == "loop-run" {
        app.threads("acme")
            .create(NewThread::new().id(run_id))
            .await?;
        let out = app
            .execute(
                Target::agent::<KcLoopAgent>(),
                "Please refund ACME-7",
                ctx.thread(run_id).run_id(run_id),
            )
            .await?;
        println!("DONE {}", out.text);
        return Ok(());
    }
    loop {
        let result = if mode == "loop-standby" {
            take_over(&app, run_id).await?
        } else {
            resume_when_free(&app, run_id, &ctx).await
        };
        match result {
            // Killed before its run was stored: nothing of it was done.
            Err(RunError::Store(StoreError::RunNotFound { .. })) => {
                println!("NORUN");
                return Ok(());
            }
            Err(RunError::Store(StoreError::RunFinished { .. })) => {
                println!("FINISHED");
                break;
            }
            // The refund started and its end was never recorded: its own record (the counter
            // file) says whether it was done.
            Err(RunError::InDoubt { call_id, .. }) => {
                let done = std::fs::read_to_string(counter).is_ok_and(|s| !s.is_empty());
                let resolution = if done {
                    InDoubtResolution::Completed {
                        observation: r#"{"orderId":"ACME-7"}"#.to_string(),
                        is_error: false,
                    }
                } else {
                    InDoubtResolution::NotDone
                };
                println!("INDOUBT {}", if done { "done" } else { "not-done" });
                app.resolve_in_doubt("acme", run_id, &call_id, resolution)
                    .await?;
            }
            Err(err) => {
                println!("ERROR {err}");
                break;
            }
            Ok(out) => {
                println!("ANSWER {}", out.text);
                break;
            }
        }
    }
    let record = agboss_core::store::RunStore::run(app.store().unwrap(), "acme", run_id).await?;
    println!("STATUS {}", record.status.as_str());
    Ok(())
}
