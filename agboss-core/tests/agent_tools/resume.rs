//! A journaled outer run: an agent tool's call that completed is read back on resume, never
//! run again; one that started and has no recorded end is in doubt, never rerun; a nested
//! call that needs approval fails the agent tool's call and leaves no ticket behind; an asked
//! agent with `ask_approval` makes the call itself wait for a human, then run on resume.
use std::time::Duration;

use agboss_core::store::{MemoryStore, SharedStore, TicketQuery};
use agboss_testing::approval::{RecordingChannel, approve_all};

use super::*;

fn journaled(
    store: &SharedStore,
    model: &Arc<ScriptedModel>,
    rec: &Arc<Recorder>,
    worker: &str,
) -> App {
    builder(model, rec)
        .agent::<GateAgent>()
        .agent::<CounterAgent>()
        .agent::<AuditAgent>()
        .agent::<ClerkAgent>()
        .store(store.clone())
        .worker_id(worker)
        .lease_ttl(Duration::from_millis(150))
        .build()
        .unwrap()
}

/// Runs `run_id` on worker A until its model stalls, then lets A's lease lapse.
async fn stall(app: &App, run_id: &str) {
    let ctx = RunContext::new().tenant("acme").run_id(run_id);
    let stalled = app.execute("desk-agent", "Where is my parcel?", ctx);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stalled)
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_completed_agent_tool_call_is_read_back_on_resume_not_rerun() {
    let store = SharedStore::new(MemoryStore::new());
    let rec = Recorder::new();
    // Worker A: the whole agent-tool call completes; the outer model then stalls.
    let first = Arc::new(
        ScriptedModel::new([
            ask("shipping_agent", "Where is parcel P-1?"),
            Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
            Turn::text("P-1 is in Lyon."),
        ])
        .hang_when_exhausted(),
    );
    stall(&journaled(&store, &first, &rec, "worker-a"), "ask-1").await;
    assert_eq!(rec.count("track:"), 1);
    // Worker B: the outer turn and the agent tool's call are read back.
    let second = Arc::new(ScriptedModel::new([Turn::text("Your parcel is in Lyon.")]));
    let b = journaled(&store, &second, &rec, "worker-b");
    let out = b
        .resume_run("ask-1", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Your parcel is in Lyon.");
    assert_eq!(rec.count("track:"), 1, "the inner tool did not run again");
    assert_eq!(second.request_count(), 1, "only the outer model is asked");
    let observed: Value = serde_json::from_str(&last_observation(&second.requests()[0])).unwrap();
    assert_eq!(observed, json!({"answer": "P-1 is in Lyon."}));
}

#[tokio::test]
async fn an_agent_tool_call_cut_short_is_in_doubt_and_never_rerun() {
    let store = SharedStore::new(MemoryStore::new());
    let rec = Recorder::new();
    // Worker A: the inner run's model stalls inside the agent tool's call.
    let first = Arc::new(
        ScriptedModel::new([ask("shipping_agent", "Where is parcel P-1?")]).hang_when_exhausted(),
    );
    stall(&journaled(&store, &first, &rec, "worker-a"), "ask-2").await;
    let second = Arc::new(ScriptedModel::new([Turn::text("never asked")]));
    let b = journaled(&store, &second, &rec, "worker-b");
    let err = b
        .resume_run("ask-2", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.error(), RunError::InDoubt { tool, .. } if tool == "ask_shipping_agent"),
        "{err:?}"
    );
    assert_eq!(second.request_count(), 0, "neither model is asked again");
}

#[tool(name = "refund-tool", description = "Refunds a parcel", input = ParcelDto, output = ParcelDto, deps = [Recorder], approval = RecordingChannel)]
pub struct RefundTool {
    rec: Arc<Recorder>,
}
impl ToolHandler<ParcelDto, ParcelDto> for RefundTool {
    async fn run(&self, input: ParcelDto) -> Result<ParcelDto, ToolError> {
        self.rec.push(format!("refund:{}", input.parcel));
        Ok(input)
    }
}

#[agent(name = "gate-agent", description = "Refunds parcels", tools = [RefundTool])]
pub struct GateAgent;

#[agent(name = "counter-agent", description = "Asks for refunds", agent_tools = [GateAgent])]
pub struct CounterAgent;

#[tokio::test]
async fn a_nested_call_that_needs_approval_fails_the_agent_tools_call() {
    let store = SharedStore::new(MemoryStore::new());
    let rec = Recorder::new();
    let model = Arc::new(ScriptedModel::new([
        ask("gate_agent", "Refund P-1"),
        Turn::tool_call("refund-tool", json!({"parcel": "P-1"})),
        Turn::text("The refund needs a human."),
    ]));
    let app = journaled(&store, &model, &rec, "worker-a");
    let (events, result) = app
        .stream(
            Target::agent::<CounterAgent>(),
            "Refund my parcel",
            RunContext::new().tenant("acme"),
        )
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "The refund needs a human.");
    let error = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolError { tool, error, .. } if tool == "ask_gate_agent" => {
                Some(error.clone())
            }
            _ => None,
        })
        .expect("the agent tool's error");
    assert!(
        error.contains("needs approval for `refund-tool`"),
        "{error}"
    );
    assert_eq!(rec.count("refund:"), 0, "the gated call did not run");
    let tickets = app.tickets("acme").list(&TicketQuery::new()).await.unwrap();
    assert!(tickets.tickets.is_empty(), "no ticket is left waiting");
}

#[agent(name = "audit-agent", description = "Audits parcels", tools = [TrackTool], ask_approval = RecordingChannel)]
pub struct AuditAgent;

#[agent(name = "clerk-agent", description = "Asks the auditor", tool_interceptors = [DeskToolInterceptor], agent_tools = [AuditAgent])]
pub struct ClerkAgent;

#[tokio::test]
async fn an_agent_asked_with_ask_approval_waits_for_a_human_then_runs_on_resume() {
    let store = SharedStore::new(MemoryStore::new());
    let rec = Recorder::new();
    let model = Arc::new(ScriptedModel::new([
        ask("audit_agent", "Audit parcel P-1"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("P-1 audited."),
        Turn::text("Your parcel was audited."),
    ]));
    let app = journaled(&store, &model, &rec, "worker-a");
    let ctx = RunContext::new().tenant("acme").run_id("audit-1");
    let err = app
        .execute("clerk-agent", "Audit my parcel", ctx)
        .await
        .unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = err.error() else {
        panic!("{err:?}")
    };
    assert_eq!(tickets.len(), 1);
    assert_eq!(tickets[0].tool, "ask_audit_agent");
    // The caller's chain allowed the call before anyone was asked; the agent did not run.
    assert_eq!(rec.take(), ["desk:ask_audit_agent"]);
    assert_eq!(model.request_count(), 1);
    assert_eq!(approve_all(&app, "acme").await.unwrap().len(), 1);
    let out = app
        .resume_run("audit-1", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Your parcel was audited.");
    assert_eq!(rec.take(), ["desk:ask_audit_agent", "track:acme:P-1"]);
    assert_eq!(model.request_count(), 4);
}
