//! Tickets nobody decides in time, runs waiting for a decision, and leases still held, on the
//! SQLite and PostgreSQL stores: an expired ticket moves to `expired`, its call gets the
//! channel's expiry outcome and the run goes on or ends (its thread freed); a takeover skips
//! paused runs and reaches the crashed one; `resume_run_when_free` waits for a held lease.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agboss_core::dto::Dto;
use agboss_core::engine;
use agboss_core::engine::{Decision, RunContext, RunError, Target};
use agboss_core::error::ToolCallErrorKind;
use agboss_core::model::SharedChatModel;
use agboss_core::prelude::*;
use agboss_core::store;
use agboss_core::store::{
    NewRun, NewThread, PostgresStore, RunStatus, RunStore as _, SharedStore, SqliteStore,
    StoreError, TicketState, TicketStore as _,
};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ExOrderDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
}

/// How many times each tool ran.
#[injectable(provided)]
#[derive(Default)]
pub struct ExLog {
    runs: AtomicUsize,
}

#[channel(
    name = "ex-quick-channel",
    description = "Decide within 200 ms",
    ttl_ms = 200
)]
pub struct ExQuickChannel;

#[channel(
    name = "ex-slow-channel",
    description = "Decide within the default ttl"
)]
pub struct ExSlowChannel;

impl ApprovalChannel for ExQuickChannel {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, _: &Approver, _: &store::Ticket) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

impl ApprovalChannel for ExSlowChannel {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(&self, _: &Approver, _: &store::Ticket) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

#[tool(name = "ex-quick-tool", description = "Needs a quick decision", input = ExOrderDto,
       output = ExOrderDto, deps = [ExLog], approval = ExQuickChannel)]
pub struct ExQuickTool {
    log: Arc<ExLog>,
}

impl ToolHandler<ExOrderDto, ExOrderDto> for ExQuickTool {
    async fn run(&self, input: ExOrderDto) -> Result<ExOrderDto, ToolError> {
        self.log.runs.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[tool(name = "ex-slow-tool", description = "Needs a decision", input = ExOrderDto,
       output = ExOrderDto, deps = [ExLog], approval = ExSlowChannel)]
pub struct ExSlowTool {
    log: Arc<ExLog>,
}

impl ToolHandler<ExOrderDto, ExOrderDto> for ExSlowTool {
    async fn run(&self, input: ExOrderDto) -> Result<ExOrderDto, ToolError> {
        self.log.runs.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[agent(name = "ex-desk-agent", description = "Orders", instructions = "Help.",
        tools = [ExQuickTool, ExSlowTool])]
pub struct ExDeskAgent;

/// A fresh SQLite file and, when `AGBOSS_TEST_POSTGRES_URL` is set, a fresh PostgreSQL schema
/// (in CI the variable must be set).
async fn stores(dir: &std::path::Path) -> Vec<(&'static str, SharedStore)> {
    let file = dir.join(format!("s{}.db", agboss_core::store::types::now_ms()));
    let mut all = vec![(
        "sqlite",
        SharedStore::new(SqliteStore::open(file).await.unwrap()),
    )];
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let schema = format!(
                "agboss_expiry_{}_{}",
                std::process::id(),
                agboss_core::store::types::random_id("s")
            );
            let pg = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            all.push(("postgres", SharedStore::new(pg)));
        }
        _ if std::env::var_os("CI").is_some() => panic!("AGBOSS_TEST_POSTGRES_URL is not set"),
        _ => eprintln!("skipped PostgreSQL: AGBOSS_TEST_POSTGRES_URL not set"),
    }
    all
}

fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(agboss_core::store::types::random_id("agboss-expiry"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn app(store: &SharedStore, log: &Arc<ExLog>, model: &Arc<ScriptedModel>) -> App {
    App::builder()
        .agent::<ExDeskAgent>()
        .provide_arc(Arc::clone(log))
        .shared_model(Arc::clone(model) as SharedChatModel)
        .store(store.clone())
        .worker_id("w1")
        .build()
        .unwrap()
}

fn acme() -> RunContext {
    RunContext::new().tenant("acme")
}

fn approver() -> Approver {
    Approver::new("maria").tenant("acme")
}

fn call(tool: &str, order: &str) -> Turn {
    Turn::tool_call(tool, json!({ "orderId": order }))
}

#[tokio::test]
async fn an_expired_ticket_ends_its_wait_and_frees_the_thread() {
    let dir = temp_dir();
    for (backend, store) in stores(&dir).await {
        let log = Arc::new(ExLog::default());
        let model = Arc::new(ScriptedModel::new([
            call("ex-quick-tool", "A-1"),
            Turn::text("The approval expired; nothing was done."),
            Turn::text("A new run on the thread."),
        ]));
        let app = app(&store, &log, &model);
        app.threads("acme")
            .create(NewThread::new().id("t1"))
            .await
            .unwrap();
        let ctx = || acme().thread("t1");
        let tickets = match app
            .execute(Target::agent::<ExDeskAgent>(), "go", ctx())
            .await
            .map_err(RunError::from)
        {
            Err(RunError::AwaitingApproval { tickets, .. }) => tickets,
            other => panic!("{backend}: expected a pause, got {other:?}"),
        };
        let ticket = &tickets[0];
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Past its expiry, a decision is refused...
        let late = app
            .decide("acme", Decision::approve(&ticket.id).by(approver()))
            .await;
        assert!(
            matches!(late, Err(RunError::Store(StoreError::TicketExpired { .. }))),
            "{backend}: {late:?}"
        );
        // ...and resuming reads the ticket expired: the model reads why, and the run goes on.
        let out = app
            .resume_run(&ticket.run_id, acme())
            .await
            .unwrap_or_else(|e| panic!("{backend}: resume: {e}"));
        assert_eq!(
            out.text, "The approval expired; nothing was done.",
            "{backend}"
        );
        let seen = model.last_request().unwrap();
        let observation = format!("{:?}", seen.messages.last().unwrap());
        assert!(observation.contains("expired"), "{backend}: {observation}");
        assert_eq!(log.runs.load(Ordering::SeqCst), 0, "{backend}: never run");
        let stored = store.ticket("acme", &ticket.id).await.unwrap();
        assert_eq!(stored.state, TicketState::Expired, "{backend}");
        let again = app
            .decide("acme", Decision::reject(&ticket.id, "no").by(approver()))
            .await;
        assert!(
            matches!(
                again,
                Err(RunError::Store(StoreError::TicketExpired { .. }))
            ),
            "{backend}: {again:?}"
        );
        // The thread is free: a new run, then deleting it.
        app.execute(Target::agent::<ExDeskAgent>(), "again", ctx())
            .await
            .unwrap_or_else(|e| panic!("{backend}: new run: {e}"));
        app.threads("acme").delete("t1").await.unwrap();
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_takeover_sweeps_an_expired_direct_call_and_agent_run() {
    let dir = temp_dir();
    for (backend, store) in stores(&dir).await {
        let log = Arc::new(ExLog::default());
        let model = Arc::new(ScriptedModel::new([
            call("ex-quick-tool", "A-1"),
            Turn::text("Expired."),
        ]));
        let app = app(&store, &log, &model);
        let paused = app
            .execute(Target::agent::<ExDeskAgent>(), "go", acme())
            .await
            .map_err(RunError::from);
        let Err(RunError::AwaitingApproval { run_id, .. }) = paused else {
            panic!("{backend}: {paused:?}")
        };
        let direct = app
            .tool::<ExQuickTool>()
            .tenant("acme")
            .invoke(ExOrderDto {
                order_id: "D-1".into(),
            })
            .await;
        let Some(ToolCallErrorKind::ApprovalRequired {
            ticket_id: Some(direct_ticket),
            ..
        }) = direct.as_ref().err().map(ToolCallError::kind)
        else {
            panic!("{backend}: {direct:?}")
        };
        assert!(
            app.take_over_runs(10).await.unwrap().is_empty(),
            "{backend}: nothing to take over while the tickets wait"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let swept = app.take_over_runs(10).await.unwrap();
        assert_eq!(swept.len(), 2, "{backend}: {swept:?}");
        let agent = swept.iter().find(|(id, _)| *id == run_id).unwrap();
        assert_eq!(agent.1.as_ref().unwrap().text, "Expired.", "{backend}");
        let (direct_run, result) = swept.iter().find(|(id, _)| *id != run_id).unwrap();
        let err = result.as_ref().unwrap_err();
        let blocked = err.as_blocked().expect("an expired direct call is blocked");
        assert_eq!(blocked.interceptor, "ex-quick-channel", "{backend}");
        assert!(blocked.text().contains("expired"), "{backend}: {blocked}");
        let record = store.run("acme", direct_run).await.unwrap();
        assert_eq!(record.status, RunStatus::Failed, "{backend}");
        let stored = store.ticket("acme", direct_ticket).await.unwrap();
        assert_eq!(stored.state, TicketState::Expired, "{backend}");
        assert_eq!(log.runs.load(Ordering::SeqCst), 0, "{backend}: never run");
        assert!(
            app.take_over_runs(10).await.unwrap().is_empty(),
            "{backend}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn paused_runs_do_not_starve_a_takeover() {
    let dir = temp_dir();
    for (backend, store) in stores(&dir).await {
        let log = Arc::new(ExLog::default());
        let limit = 3;
        let model = Arc::new(ScriptedModel::new(
            (0..limit)
                .map(|i| call("ex-slow-tool", &format!("P-{i}")))
                .chain([Turn::text("Taken over.")]),
        ));
        let app = app(&store, &log, &model);
        for i in 0..limit {
            let paused = app
                .execute(Target::agent::<ExDeskAgent>(), "go", acme())
                .await
                .map_err(RunError::from);
            assert!(
                matches!(paused, Err(RunError::AwaitingApproval { .. })),
                "{backend} run {i}: {paused:?}"
            );
        }
        // A run whose worker died: its lease expired at once.
        let crashed = NewRun::new("acme", "crashed", "ex-desk-agent", "hello");
        store
            .begin_run(crashed, "dead-worker", Duration::ZERO)
            .await
            .unwrap();
        let taken = app.take_over_runs(limit).await.unwrap();
        let ids: Vec<_> = taken.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["crashed"], "{backend}");
        assert_eq!(
            taken[0].1.as_ref().unwrap().text,
            "Taken over.",
            "{backend}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn resume_run_when_free_waits_for_a_held_lease() {
    let dir = temp_dir();
    for (backend, store) in stores(&dir).await {
        let log = Arc::new(ExLog::default());
        let model = Arc::new(ScriptedModel::new([Turn::text("Resumed.")]));
        let app = app(&store, &log, &model);
        let crashed = NewRun::new("acme", "r1", "ex-desk-agent", "hello");
        store
            .begin_run(crashed, "dead-worker", Duration::from_millis(600))
            .await
            .unwrap();
        let expires_at = match app.resume_run("r1", acme()).await.map_err(RunError::from) {
            Err(RunError::Store(StoreError::LeaseHeld { expires_at_ms, .. })) => expires_at_ms,
            other => panic!("{backend}: expected LeaseHeld, got {other:?}"),
        };
        // A deadline before the lease's expiry: refused at once, saying when it expires.
        let started = Instant::now();
        let early = app
            .resume_run_when_free("r1", acme(), started + Duration::from_millis(50))
            .await
            .map_err(RunError::from);
        match early {
            Err(RunError::Store(StoreError::LeaseHeld { expires_at_ms, .. })) => {
                assert_eq!(expires_at_ms, expires_at, "{backend}")
            }
            other => panic!("{backend}: expected LeaseHeld, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_millis(300), "{backend}");
        // A later deadline: it sleeps until the lease expires, then resumes.
        let out = app
            .resume_run_when_free("r1", acme(), Instant::now() + Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("{backend}: {e}"));
        assert_eq!(out.text, "Resumed.", "{backend}");
        // (A PostgreSQL clock may run slightly ahead of ours.)
        assert!(
            agboss_core::store::types::now_ms() >= expires_at - 50,
            "{backend}: resumed before the lease expired"
        );
        assert_eq!(model.requests().len(), 1, "{backend}: one model call");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[workflow(name = "ex-quick-workflow", description = "One gated step", tools = [ExQuickTool])]
pub struct ExQuickWorkflow;

#[tokio::test]
async fn an_expired_ticket_fails_its_workflow_step() {
    let dir = temp_dir();
    for (backend, store) in stores(&dir).await {
        let log = Arc::new(ExLog::default());
        let app = App::builder()
            .workflow::<ExQuickWorkflow>()
            .provide_arc(Arc::clone(&log))
            .store(store.clone())
            .build()
            .unwrap();
        let target = || {
            Target::workflow_with::<ExQuickWorkflow>(
                engine::workflow::Flow::new().tool::<ExQuickTool>(),
            )
        };
        let ctx = || acme().run_id("wf-1");
        let input = r#"{"orderId":"W-1"}"#;
        let err = app.execute(target(), input, ctx()).await.unwrap_err();
        let RunError::AwaitingApproval { tickets, .. } = &*err else {
            panic!("{backend}: {err}")
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        // As a rejection: the step fails as a block naming the channel, and the run ends.
        let err = app.execute(target(), input, ctx()).await.unwrap_err();
        let blocked = err.as_blocked().expect("an expired step is blocked");
        assert_eq!(blocked.interceptor, "ex-quick-channel", "{backend}");
        assert!(blocked.text().contains("expired"), "{backend}: {blocked}");
        let stored = store.ticket("acme", &tickets[0].id).await.unwrap();
        assert_eq!(stored.state, TicketState::Expired, "{backend}");
        let record = store.run("acme", "wf-1").await.unwrap();
        assert_eq!(record.status, RunStatus::Failed, "{backend}");
        assert_eq!(log.runs.load(Ordering::SeqCst), 0, "{backend}: never run");
    }
    let _ = std::fs::remove_dir_all(dir);
}
