//! Human approval channels: a gated call waits for a ticket that is written before its channel
//! is told, only after every `before_tool_call` allowed; decisions are bound to the exact call
//! and consumed once; parallel siblings run once; a changed policy asks again.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::engine::{Decision, RunContext, RunError, RunEvent, Target};
use agboss_core::model::SharedChatModel;
use agboss_core::store::{
    MemoryStore, NewThread, SharedStore, StoreError, Ticket, TicketState, TicketStore as _,
};
use agboss_core::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApRefundDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
    #[integer(prompt = "Amount in cents", min = 1)]
    pub amount_cents: i64,
    #[text(prompt = "Reason")]
    pub reason: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApDoneDto {
    #[text(prompt = "What was done")]
    pub done: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ApOrderDto {
    #[text(prompt = "Order id")]
    pub order_id: String,
}

/// What happened, outside the app.
#[injectable(provided)]
#[derive(Default)]
pub struct ApLog {
    notified: Mutex<Vec<Ticket>>,
    refunds: Mutex<Vec<i64>>,
    lookups: AtomicUsize,
}

impl ApLog {
    fn notified(&self) -> Vec<Ticket> {
        self.notified.lock().unwrap().clone()
    }
    fn refunds(&self) -> Vec<i64> {
        self.refunds.lock().unwrap().clone()
    }
}

#[channel(name = "ap-manager-channel", description = "Managers approve large refunds",
          deps = [ApLog])]
pub struct ApManagerChannel {
    log: Arc<ApLog>,
}

impl ApprovalChannel for ApManagerChannel {
    async fn notify(&self, ticket: &store::Ticket) -> Result<(), ChannelError> {
        self.log.notified.lock().unwrap().push(ticket.clone());
        Ok(())
    }
    async fn authorize(
        &self,
        approver: &Approver,
        _ticket: &store::Ticket,
    ) -> Result<bool, ChannelError> {
        Ok(approver.has_role("manager"))
    }
}

#[channel(
    name = "ap-hasty-channel",
    description = "Tickets expire at once",
    ttl_ms = 1
)]
pub struct ApHastyChannel;

impl ApprovalChannel for ApHastyChannel {
    async fn notify(&self, _ticket: &store::Ticket) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn authorize(
        &self,
        _approver: &Approver,
        _ticket: &store::Ticket,
    ) -> Result<bool, ChannelError> {
        Ok(true)
    }
}

fn over_limit(input: &ApRefundDto) -> bool {
    input.amount_cents > 10_000
}

/// Replies, blocks or fails on demand (by the refund's reason); allows the rest.
#[tool_interceptor(name = "ap-guard-tool-interceptor", description = "Checks refunds")]
pub struct ApGuardToolInterceptor;

impl BeforeToolCall for ApGuardToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(match call.input()["reason"].as_str() {
            Some("reply") => ToolCallDecision::reply_to_model("give a reason"),
            Some("block") => ToolCallDecision::block("refunds are frozen"),
            Some("fail") => return Err(InterceptorError::msg("acl down")),
            _ => ToolCallDecision::allow(),
        })
    }
}

#[tool(name = "ap-refund-tool", description = "Refunds an order", input = ApRefundDto,
       output = ApDoneDto, deps = [ApLog], tool_interceptors = [ApGuardToolInterceptor],
       approval = ApManagerChannel, approval_when = over_limit)]
pub struct ApRefundTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApRefundDto, ApDoneDto> for ApRefundTool {
    async fn run(&self, input: ApRefundDto) -> Result<ApDoneDto, ToolError> {
        self.log.refunds.lock().unwrap().push(input.amount_cents);
        Ok(ApDoneDto {
            done: format!("refunded {} on {}", input.amount_cents, input.order_id),
        })
    }
}

#[tool(name = "ap-lookup-tool", description = "Looks an order up", input = ApOrderDto,
       output = ApOrderDto, deps = [ApLog])]
pub struct ApLookupTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApOrderDto, ApOrderDto> for ApLookupTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        self.log.lookups.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[tool(name = "ap-quick-tool", description = "Needs a fast decision", input = ApOrderDto,
       output = ApOrderDto, approval = ApHastyChannel)]
pub struct ApQuickTool;

impl ToolHandler<ApOrderDto, ApOrderDto> for ApQuickTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        Ok(input)
    }
}

#[agent(name = "ap-desk-agent", description = "Refunds", instructions = "Help.",
        tools = [ApRefundTool, ApLookupTool, ApQuickTool])]
pub struct ApDeskAgent;

#[tool_interceptor(
    name = "ap-audit-tool-interceptor",
    description = "A policy added later"
)]
pub struct ApAuditToolInterceptor;

impl BeforeToolCall for ApAuditToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::allow())
    }
}

struct Fixture {
    store: SharedStore,
    log: Arc<ApLog>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            store: SharedStore::new(MemoryStore::new()),
            log: Arc::new(ApLog::default()),
        }
    }
    fn app(&self, model: &Arc<ScriptedModel>, worker: &str) -> App {
        self.builder(model, worker).build().unwrap()
    }
    fn builder(&self, model: &Arc<ScriptedModel>, worker: &str) -> AppBuilder {
        App::builder()
            .agent::<ApDeskAgent>()
            .provide_arc(Arc::clone(&self.log))
            .shared_model(Arc::clone(model) as SharedChatModel)
            .store(self.store.clone())
            .worker_id(worker)
    }
}

fn refund(amount: i64, reason: &str) -> Turn {
    Turn::tool_call(
        "ap-refund-tool",
        json!({ "orderId": "ACME-42", "amountCents": amount, "reason": reason }),
    )
}

fn manager() -> Approver {
    Approver::new("maria").tenant("acme").role("manager")
}

fn target() -> Target {
    Target::agent::<ApDeskAgent>()
}

async fn paused(app: &App, ctx: RunContext) -> Vec<Ticket> {
    match app.execute(target(), "refund ACME-42", ctx).await {
        Err(RunError::AwaitingApproval { tickets, .. }) => tickets,
        other => panic!("expected the run to wait for approval, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reply_a_block_or_a_failing_guard_never_creates_a_ticket() {
    for reason in ["reply", "block", "fail"] {
        let fx = Fixture::new();
        let model = Arc::new(ScriptedModel::new([
            refund(50_000, reason),
            Turn::text("ok"),
        ]));
        let app = fx.app(&model, "w");
        let result = app
            .execute(
                target(),
                "refund",
                RunContext::new().tenant("acme").run_id("r"),
            )
            .await;
        match reason {
            "reply" => assert_eq!(result.unwrap().text, "ok"),
            _ => assert!(result.unwrap_err().as_step_failed().is_some(), "{reason}"),
        }
        assert!(
            fx.store.run_tickets("acme", "r").await.unwrap().is_empty(),
            "{reason}"
        );
        assert!(fx.log.notified().is_empty(), "{reason}: a human was woken");
        assert!(fx.log.refunds().is_empty());
    }
}

#[tokio::test]
async fn an_approved_call_runs_once_bound_to_its_input() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(12_500, "broken"),
        Turn::text("Refunded."),
    ]));
    let app = fx.app(&model, "w");
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let (events, out) = app
        .stream(target(), "refund ACME-42", ctx())
        .collect_all()
        .await;
    let Err(RunError::AwaitingApproval { run_id, tickets }) = out else {
        panic!("{out:?}");
    };
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ApprovalRequested {
            notified: Ok(()),
            ..
        }
    )));
    let [ticket] = tickets.as_slice() else {
        panic!("{tickets:?}")
    };
    assert_eq!(ticket.tool, "ap-refund-tool");
    assert_eq!(ticket.channel, "ap-manager-channel");
    assert_eq!(ticket.state, TicketState::Pending);
    assert_eq!(ticket.run_id, run_id);
    assert_eq!(ticket.thread_id.as_deref(), Some(thread.id.as_str()));
    assert_eq!(
        ticket.input,
        r#"{"orderId":"ACME-42","amountCents":12500,"reason":"broken"}"#
    );
    assert_eq!(ticket.fingerprint.len(), 64);
    // Stored before the channel was told; the tool did not run.
    assert_eq!(
        fx.log.notified(),
        vec![fx.store.ticket("acme", &ticket.id).await.unwrap()]
    );
    assert!(fx.log.refunds().is_empty());

    // Who may decide: the channel's managers of this tenant, nobody else.
    let clerk = Decision::approve(&ticket.id).by(Approver::new("tom").tenant("acme"));
    assert!(matches!(
        app.decide("acme", clerk).await,
        Err(RunError::Unauthorized { .. })
    ));
    let nobody = Decision::approve(&ticket.id);
    assert!(matches!(
        app.decide("acme", nobody).await,
        Err(RunError::Unauthorized { .. })
    ));
    let foreign = Decision::approve(&ticket.id).by(manager());
    assert!(matches!(
        app.decide("globex", foreign).await,
        Err(RunError::Store(StoreError::TicketNotFound { .. }))
    ));
    let outsider =
        Decision::approve(&ticket.id).by(Approver::new("x").tenant("globex").role("manager"));
    assert!(matches!(
        app.decide("acme", outsider).await,
        Err(RunError::Unauthorized { .. })
    ));

    let out = app
        .resume(
            &thread.id,
            Decision::approve(&ticket.id).by(manager()),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded.");
    assert_eq!(fx.log.refunds(), vec![12_500], "ran exactly once");
    let done = fx.store.ticket("acme", &ticket.id).await.unwrap();
    assert_eq!(done.state, TicketState::Completed);
    // Decided once; the finished run is not resumed again.
    let again = app
        .resume(
            &thread.id,
            Decision::approve(&ticket.id).by(manager()),
            ctx(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(again, RunError::Store(StoreError::TicketState { .. })),
        "{again}"
    );
    let rerun = app.resume_run(&run_id, ctx()).await.unwrap_err();
    assert!(
        matches!(rerun, RunError::Store(StoreError::RunFinished { .. })),
        "{rerun}"
    );
    assert_eq!(fx.log.refunds(), vec![12_500]);
}

#[tokio::test]
async fn a_call_under_the_condition_needs_no_ticket() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(4_000, "broken"),
        Turn::text("Done."),
    ]));
    let app = fx.app(&model, "w");
    let out = app
        .execute(target(), "refund", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Done.");
    assert_eq!(fx.log.refunds(), vec![4_000]);
    assert!(fx.log.notified().is_empty());
}

#[tokio::test]
async fn a_rejection_becomes_the_observation_and_the_loop_goes_on() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Sorry."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-r");
    let tickets = paused(&app, ctx()).await;
    let reject =
        Decision::reject(&tickets[0].id, "Refunds above 100.00 need a receipt.").by(manager());
    app.decide("acme", reject).await.unwrap();
    let out = app.resume_run("run-r", ctx()).await.unwrap();
    assert_eq!(out.text, "Sorry.");
    assert!(fx.log.refunds().is_empty());
    let req = model.last_request().unwrap();
    assert!(
        req.messages
            .iter()
            .any(|m| m.text() == Some("Refunds above 100.00 need a receipt."))
    );
}

#[tokio::test]
async fn an_edited_input_passes_the_before_chain_again_and_runs_instead() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Refunded 90.00."),
        refund(60_000, "broken"),
    ]));
    let app = fx.app(&model, "w");
    let tickets = paused(&app, RunContext::new().tenant("acme").run_id("run-e")).await;
    let edited = r#"{"orderId":"ACME-42","amountCents":9000,"reason":"partial"}"#;
    app.decide("acme", Decision::edit(&tickets[0].id, edited).by(manager()))
        .await
        .unwrap();
    let out = app
        .resume_run("run-e", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded 90.00.");
    assert_eq!(
        fx.log.refunds(),
        vec![9_000],
        "the edited input ran, not the requested one"
    );

    // An edit the guard refuses is refused like any call: the before chain ran on it.
    let tickets = paused(&app, RunContext::new().tenant("acme").run_id("run-b")).await;
    let blocked = r#"{"orderId":"ACME-42","amountCents":500,"reason":"block"}"#;
    app.decide(
        "acme",
        Decision::edit(&tickets[0].id, blocked).by(manager()),
    )
    .await
    .unwrap();
    let err = app
        .resume_run("run-b", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(err.as_blocked().is_some(), "{err}");
    assert_eq!(fx.log.refunds(), vec![9_000]);
}

#[tokio::test]
async fn siblings_of_a_gated_call_run_once_and_are_not_rerun_on_resume() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([
            ("ap-lookup-tool", json!({ "orderId": "ACME-42" })),
            (
                "ap-refund-tool",
                json!({ "orderId": "ACME-42", "amountCents": 20_000, "reason": "a" }),
            ),
            (
                "ap-refund-tool",
                json!({ "orderId": "ACME-43", "amountCents": 30_000, "reason": "b" }),
            ),
        ]),
        Turn::text("All done."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-p");
    let tickets = paused(&app, ctx()).await;
    assert_eq!(tickets.len(), 2, "each gated call gets its own ticket");
    assert_ne!(tickets[0].fingerprint, tickets[1].fingerprint);
    assert_eq!(fx.log.lookups.load(Ordering::SeqCst), 1);
    // One decided: the turn still waits for the other.
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    let err = app.resume_run("run-p", ctx()).await.unwrap_err();
    let RunError::AwaitingApproval { tickets: left, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, tickets[1].id);
    assert_eq!(fx.log.refunds(), vec![20_000]);
    app.decide("acme", Decision::approve(&tickets[1].id).by(manager()))
        .await
        .unwrap();
    let out = app.resume_run("run-p", ctx()).await.unwrap();
    assert_eq!(out.text, "All done.");
    assert_eq!(fx.log.refunds(), vec![20_000, 30_000]);
    assert_eq!(
        fx.log.lookups.load(Ordering::SeqCst),
        1,
        "the sibling was not rerun"
    );
}

#[tokio::test]
async fn a_decision_made_under_another_policy_is_requested_again() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Done."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-c");
    let tickets = paused(&app, ctx()).await;
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    // The app is redeployed with one more interceptor on the tool's path.
    let changed = fx
        .builder(&model, "w2")
        .tool_interceptor::<ApAuditToolInterceptor>()
        .build()
        .unwrap();
    let err = changed.resume_run("run-c", ctx()).await.unwrap_err();
    let RunError::AwaitingApproval { tickets: again, .. } = &err else {
        panic!("{err}")
    };
    assert_ne!(again[0].id, tickets[0].id);
    assert_eq!(again[0].fingerprint, tickets[0].fingerprint);
    let old = fx.store.ticket("acme", &tickets[0].id).await.unwrap();
    assert_eq!(old.state, TicketState::Superseded);
    assert!(fx.log.refunds().is_empty(), "not silently applied");
    changed
        .decide("acme", Decision::approve(&again[0].id).by(manager()))
        .await
        .unwrap();
    assert_eq!(
        changed.resume_run("run-c", ctx()).await.unwrap().text,
        "Done."
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

#[tokio::test]
async fn an_expired_ticket_cannot_be_decided() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([Turn::tool_call(
        "ap-quick-tool",
        json!({ "orderId": "ACME-1" }),
    )]));
    let app = fx.app(&model, "w");
    let tickets = paused(&app, RunContext::new().tenant("acme")).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = app
        .decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunError::Store(StoreError::TicketExpired { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn two_instances_racing_to_resume_one_ticket_have_one_winner() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Done."),
    ]));
    let a = fx.app(&model, "a");
    let b = fx.app(&model, "b");
    let thread = a.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let tickets = paused(&a, ctx()).await;
    let id = tickets[0].id.clone();
    let (ra, rb) = tokio::join!(
        a.resume(&thread.id, Decision::approve(&id).by(manager()), ctx()),
        b.resume(&thread.id, Decision::approve(&id).by(manager()), ctx()),
    );
    let results = [ra, rb];
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    let loser = results.into_iter().find_map(Result::err).unwrap();
    assert!(
        matches!(
            loser,
            RunError::Store(StoreError::TicketState { .. } | StoreError::LeaseHeld { .. })
        ),
        "{loser}"
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

#[tokio::test]
async fn without_a_store_a_gated_call_fails_its_step_and_never_runs() {
    let log = Arc::new(ApLog::default());
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("?"),
    ]));
    let app = App::builder()
        .agent::<ApDeskAgent>()
        .provide_arc(Arc::clone(&log))
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .build()
        .unwrap();
    let err = app
        .execute(target(), "refund", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    let step = err.as_step_failed().expect("the step fails");
    assert!(step.to_string().contains("needs approval"), "{step}");
    assert!(log.refunds().is_empty());
    assert!(log.notified().is_empty());
}

#[tokio::test]
async fn a_direct_call_of_a_gated_tool_gets_a_ticket_and_runs_once_decided() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([]));
    let app = fx.app(&model, "w");
    let handle = || app.tool::<ApRefundTool>().tenant("acme");
    let input = || ApRefundDto {
        order_id: "ACME-42".into(),
        amount_cents: 25_000,
        reason: "broken".into(),
    };
    let err = handle().invoke(input()).await.unwrap_err();
    let ToolCallError::ApprovalRequired {
        ticket_id: Some(ticket_id),
        fingerprint,
        ..
    } = err
    else {
        panic!("{err}");
    };
    assert!(fx.log.refunds().is_empty());
    assert_eq!(fx.log.notified().len(), 1);
    assert_eq!(fx.log.notified()[0].fingerprint, fingerprint);
    // Not another tenant's to decide, nor a clerk's.
    let foreign = app.tool::<ApRefundTool>().tenant("globex");
    assert!(
        foreign
            .resume(Decision::approve(&ticket_id).by(manager()))
            .await
            .is_err()
    );
    let clerk = Decision::approve(&ticket_id).by(Approver::new("tom").tenant("acme"));
    assert!(matches!(
        handle().resume(clerk).await,
        Err(RunError::Unauthorized { .. })
    ));
    assert!(fx.log.refunds().is_empty());

    let done = handle()
        .resume(Decision::approve(&ticket_id).by(manager()))
        .await
        .unwrap();
    assert_eq!(done.done, "refunded 25000 on ACME-42");
    assert_eq!(fx.log.refunds(), vec![25_000]);
    let again = handle()
        .resume(Decision::approve(&ticket_id).by(manager()))
        .await;
    assert!(
        matches!(again, Err(RunError::Store(StoreError::TicketState { .. }))),
        "{again:?}"
    );
    assert_eq!(fx.log.refunds(), vec![25_000], "exactly once");
    assert_eq!(
        fx.store.ticket("acme", &ticket_id).await.unwrap().state,
        TicketState::Completed
    );

    // A rejection is a block naming the channel; nothing runs.
    let ToolCallError::ApprovalRequired {
        ticket_id: Some(second),
        ..
    } = handle().invoke(input()).await.unwrap_err()
    else {
        panic!()
    };
    let err = handle()
        .resume(Decision::reject(&second, "no receipt").by(manager()))
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a rejection blocks");
    assert_eq!(blocked.interceptor, "ap-manager-channel");
    assert!(blocked.text().contains("no receipt"));
    assert_eq!(fx.log.refunds(), vec![25_000]);
}

#[test]
fn describe_shows_the_channel_of_each_gated_tool() {
    let fx = Fixture::new();
    let app = fx.app(&Arc::new(ScriptedModel::new([])), "w");
    let text = app.describe();
    assert!(
        text.contains("approval: `ap-manager-channel` after every before hook allowed, when its condition holds"),
        "{text}"
    );
    assert!(
        text.contains("approval: `ap-hasty-channel` after every before hook allowed\n"),
        "{text}"
    );
    let lookup = text.split("tool `ap-lookup-tool`").nth(1).unwrap();
    assert!(
        !lookup.split("tool `").next().unwrap().contains("approval:"),
        "{text}"
    );
}

#[tokio::test]
async fn a_paused_agent_step_is_reported_as_paused_with_its_decision() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([refund(50_000, "broken")]));
    let app = fx.app(&model, "w");
    let (events, out) = app
        .stream(target(), "refund", RunContext::new().tenant("acme"))
        .collect_all()
        .await;
    assert!(matches!(out, Err(RunError::AwaitingApproval { .. })));
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallDecision { decision: CallDecision::AwaitingApproval { channel }, .. }
            if channel == "ap-manager-channel"
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::StepFinished {
            outcome: agboss_core::engine::StepOutcome::Paused { .. },
            ..
        }
    )));
}

#[tokio::test]
async fn an_approval_binds_the_input_it_was_given_for() {
    // The approval point lets a gated call through only for the fingerprint that was approved:
    // a grant for one input does not run another.
    use agboss_core::callback::ToolInvocation;
    use agboss_core::contract::channel::ApprovalGrant;
    let fx = Fixture::new();
    let app = fx.app(&Arc::new(ScriptedModel::new([])), "w");
    let callback = app
        .callbacks()
        .into_iter()
        .find(|c| c.definition().name == "ap-refund-tool")
        .unwrap();
    let approved = r#"{"orderId":"ACME-42","amountCents":50000,"reason":"broken"}"#;
    let other = r#"{"orderId":"ACME-42","amountCents":90000,"reason":"broken"}"#;
    let needs = |args: &'static str, grant: Option<ApprovalGrant>| {
        let callback = Arc::clone(&callback);
        async move {
            let tenant = TenantContext::new("acme");
            let invocation = ToolInvocation::new("c1", args)
                .with_tenant(Some(&tenant))
                .with_approval(grant.as_ref());
            match callback.call(invocation).await {
                CallOutcome::Failed(f) if f.kind() == FailureKind::Approval => match f.into_error()
                {
                    ToolCallError::ApprovalRequired { fingerprint, .. } => Some(fingerprint),
                    other => panic!("{other}"),
                },
                CallOutcome::Ran(_) => None,
                other => panic!("{other:?}"),
            }
        }
    };
    let fingerprint = needs(approved, None).await.expect("gated");
    let grant = ApprovalGrant::Approved { fingerprint };
    assert!(
        needs(other, Some(grant.clone())).await.is_some(),
        "another input is not approved"
    );
    assert!(fx.log.refunds().is_empty());
    assert_eq!(
        needs(approved, Some(grant)).await,
        None,
        "the approved input runs"
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

/// Pays out once a manager approved (every call is gated).
#[tool(name = "ap-payout-tool", description = "Pays a customer out", input = ApOrderDto,
       output = ApOrderDto, deps = [ApLog], approval = ApManagerChannel)]
pub struct ApPayoutTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApOrderDto, ApOrderDto> for ApPayoutTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        self.log.refunds.lock().unwrap().push(1);
        Ok(input)
    }
}

#[workflow(name = "ap-payout-workflow", description = "Pays out", tools = [ApPayoutTool])]
pub struct ApPayoutWorkflow;

#[tokio::test]
async fn a_workflow_tool_step_of_a_gated_tool_waits_for_its_ticket() {
    let fx = Fixture::new();
    let app = App::builder()
        .workflow::<ApPayoutWorkflow>()
        .provide_arc(Arc::clone(&fx.log))
        .store(fx.store.clone())
        .build()
        .unwrap();
    let flow = || engine::workflow::Flow::new().tool::<ApPayoutTool>();
    let target = || Target::workflow_with::<ApPayoutWorkflow>(flow());
    let ctx = |run: &str| RunContext::new().tenant("acme").run_id(run);
    let input = r#"{"orderId":"ACME-7"}"#;
    let err = app.execute(target(), input, ctx("wf-1")).await.unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(tickets[0].tool, "ap-payout-tool");
    assert_eq!(fx.log.notified().len(), 1);
    assert!(fx.log.refunds().is_empty());
    // Still pending: resuming waits again, nothing runs.
    let again = app.execute(target(), input, ctx("wf-1")).await.unwrap_err();
    assert!(
        matches!(again, RunError::AwaitingApproval { .. }),
        "{again}"
    );
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    let out = app.execute(target(), input, ctx("wf-1")).await.unwrap();
    assert_eq!(out.text, r#"{"orderId":"ACME-7"}"#);
    assert_eq!(fx.log.refunds(), vec![1], "ran once");
    assert_eq!(
        fx.store.ticket("acme", &tickets[0].id).await.unwrap().state,
        TicketState::Completed
    );

    // A rejection fails the step as a block naming the channel.
    let err = app.execute(target(), input, ctx("wf-2")).await.unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &err else {
        panic!("{err}")
    };
    app.decide(
        "acme",
        Decision::reject(&tickets[0].id, "not today").by(manager()),
    )
    .await
    .unwrap();
    let err = app.execute(target(), input, ctx("wf-2")).await.unwrap_err();
    let blocked = err.as_blocked().expect("a rejected step is blocked");
    assert_eq!(blocked.interceptor, "ap-manager-channel");
    assert_eq!(fx.log.refunds(), vec![1]);
}
