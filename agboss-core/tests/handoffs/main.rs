//! Handoffs (`#[agent(handoffs = [..])]`) on the scripted model: the model sees one
//! `transfer_to_<name>` tool per target; a handoff moves the rest of the run to the target,
//! under the target's own cascade (its tool interceptors, its input guardrails) and in the
//! same thread; the event, the trajectory, the cycle bound, `describe()`, the build check, and
//! a resumed run that goes on with the target.
use std::sync::{Arc, Mutex};

use agboss_core::contract::guardrail::Boundary;
use agboss_core::dto::Dto;
use agboss_core::engine::{DEFAULT_MAX_HANDOFFS, RunContext, RunError, RunEvent};
use agboss_core::error::BuildError;
use agboss_core::model::{Message, ModelRequest};
use agboss_core::prelude::*;
use agboss_core::store::{MemoryStore, NewThread};
use agboss_testing::scripted::{ScriptedModel, Turn};
use agboss_testing::trajectory::assert_trajectory;
use serde_json::json;

mod resume;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ParcelDto {
    #[text(prompt = "Parcel id")]
    pub parcel: String,
}

#[tool(name = "track-tool", description = "Where a parcel is", input = ParcelDto, output = ParcelDto)]
pub struct TrackTool;
impl ToolHandler<ParcelDto, ParcelDto> for TrackTool {
    async fn run(&self, input: ParcelDto) -> Result<ParcelDto, ToolError> {
        Ok(ParcelDto {
            parcel: format!("{} is in Lyon", input.parcel),
        })
    }
}

#[injectable(provided)]
pub struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

macro_rules! recording_interceptor {
    ($ty:ident, $name:literal, $label:literal) => {
        #[tool_interceptor(name = $name, description = "Records its calls", deps = [Recorder])]
        pub struct $ty {
            rec: Arc<Recorder>,
        }
        impl BeforeToolCall for $ty {
            async fn before_tool_call(
                &self,
                call: &ToolCallContext<'_>,
            ) -> Result<ToolCallDecision, InterceptorError> {
                let line = format!("{}:{}", $label, call.tool_name());
                self.rec.0.lock().unwrap().push(line);
                Ok(ToolCallDecision::allow())
            }
        }
    };
}

recording_interceptor!(TriageToolInterceptor, "triage-tool-interceptor", "triage");
recording_interceptor!(
    ShippingToolInterceptor,
    "shipping-tool-interceptor",
    "shipping"
);

/// Refuses requests that mention fraud (the shipping desk does not handle them).
#[input_guardrail(name = "no-fraud-input-guardrail", description = "No fraud cases")]
pub struct NoFraudInputGuardrail;
impl InputGuardrail for NoFraudInputGuardrail {
    async fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        Ok(if input.text().contains("fraud") {
            GuardrailVerdict::block("fraud cases go to the fraud desk")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

#[agent(
    name = "shipping-agent",
    description = "Tracks parcels",
    instructions = "You track parcels.",
    tools = [TrackTool],
    tool_interceptors = [ShippingToolInterceptor],
    input_guardrails = [NoFraudInputGuardrail],
)]
pub struct ShippingAgent;

#[agent(
    name = "triage-agent",
    description = "Sends each request to the right desk",
    instructions = "Hand the request to the right desk.",
    tools = [TrackTool],
    tool_interceptors = [TriageToolInterceptor],
    handoffs = [ShippingAgent],
)]
pub struct TriageAgent;

#[agent(name = "ping-agent", description = "Ping", handoffs = [PongAgent])]
pub struct PingAgent;

#[agent(name = "pong-agent", description = "Pong", handoffs = [PingAgent])]
pub struct PongAgent;

fn transfer(reason: &str) -> Turn {
    Turn::tool_call("transfer_to_shipping_agent", json!({ "reason": reason }))
}

fn builder(model: &Arc<ScriptedModel>) -> (AppBuilder, Arc<Recorder>) {
    let rec = Arc::new(Recorder(Mutex::new(Vec::new())));
    let builder = App::builder()
        .agent::<TriageAgent>()
        .agent::<ShippingAgent>()
        .provide_arc(Arc::clone(&rec))
        .model(Arc::clone(model));
    (builder, rec)
}

fn tool_names(req: &ModelRequest) -> Vec<String> {
    req.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_handoff_runs_the_rest_of_the_run_on_the_target_under_its_own_cascade() {
    let model = Arc::new(ScriptedModel::new([
        transfer("a parcel question"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("P-1 is in Lyon."),
    ]));
    let (builder, rec) = builder(&model);
    let app = builder.build().unwrap();
    let (events, result) = app
        .stream("triage-agent", "Where is parcel P-1?", RunContext::new())
        .collect_all()
        .await;
    let out = result.unwrap();
    assert_eq!(out.text, "P-1 is in Lyon.");
    // The shipping agent's tool ran under the shipping agent's chain, not the triage agent's.
    assert_eq!(rec.take(), ["shipping:track-tool"]);
    assert_trajectory(
        &events,
        &[
            "triage-agent ⇉ shipping-agent",
            "shipping-agent → track-tool",
            "shipping-agent ✎",
        ],
    );
    let handoff = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Handoff { from, to, reason } => Some((from, to, reason)),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        handoff,
        (
            &"triage-agent".to_string(),
            &"shipping-agent".to_string(),
            &Some("a parcel question".to_string())
        )
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    // The triage model sees its tool and the handoff tool; the shipping model only its own.
    assert_eq!(
        tool_names(&requests[0]),
        ["track-tool", "transfer_to_shipping_agent"]
    );
    assert_eq!(tool_names(&requests[1]), ["track-tool"]);
    // The shipping model gets its own instructions and the handed-over request.
    assert_eq!(
        requests[1].messages.first().and_then(Message::text),
        Some("You track parcels.")
    );
    assert_eq!(
        requests[1].messages.last().and_then(Message::text),
        Some("Where is parcel P-1?")
    );
}

#[tokio::test]
async fn the_targets_input_guardrail_refusing_the_handed_over_request_stops_the_run() {
    let model = Arc::new(ScriptedModel::new([
        transfer("parcel"),
        Turn::text("never asked"),
    ]));
    let (builder, rec) = builder(&model);
    let app = builder.build().unwrap();
    let (events, result) = app
        .stream(
            "triage-agent",
            "My parcel P-1 was stolen, it is fraud",
            RunContext::new(),
        )
        .collect_all()
        .await;
    let err = result.unwrap_err();
    let blocked = err
        .as_step_failed()
        .and_then(|s| s.as_guardrail_blocked())
        .unwrap_or_else(|| panic!("not a guardrail block: {err:?}"));
    assert_eq!(blocked.guardrail, "no-fraud-input-guardrail");
    assert_eq!(blocked.boundary, Boundary::Input);
    assert_eq!(model.request_count(), 1, "the shipping model was called");
    assert!(rec.take().is_empty());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::Handoff { to, .. } if to == "shipping-agent"))
    );
}

#[tokio::test]
async fn the_thread_holds_the_messages_of_both_agents() {
    let model = Arc::new(ScriptedModel::new([
        transfer("parcel"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("P-1 is in Lyon."),
    ]));
    let (builder, _) = builder(&model);
    let app = builder.store(MemoryStore::new()).build().unwrap();
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = RunContext::new().tenant("acme").thread(thread.id.clone());
    let out = app
        .execute("triage-agent", "Where is parcel P-1?", ctx)
        .await
        .unwrap();
    let messages: Vec<Message> = app
        .threads("acme")
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message)
        .collect();
    let calls: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.tool_calls.iter().map(|c| c.name.clone())),
            _ => None,
        })
        .flatten()
        .collect();
    // The triage agent's handoff, then the shipping agent's call.
    assert_eq!(calls, ["transfer_to_shipping_agent", "track-tool"]);
    // Every call is answered in the thread (what a provider needs when the thread goes on).
    let observations: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(observations.len(), 2, "{observations:?}");
    assert_eq!(observations[0], "Handed over to shipping-agent.");
    assert_eq!(
        messages.first().and_then(Message::text),
        Some("Where is parcel P-1?")
    );
    assert_eq!(
        messages.last().and_then(Message::text),
        Some(out.text.as_str())
    );
}

fn ping_pong(turns: usize) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new((0..turns).map(|i| {
        let to = if i % 2 == 0 {
            "pong_agent"
        } else {
            "ping_agent"
        };
        Turn::tool_call(format!("transfer_to_{to}"), json!({}))
    })))
}

#[tokio::test]
async fn a_handoff_cycle_stops_at_the_runs_bound() {
    let model = ping_pong(10);
    let app = App::builder()
        .agent::<PingAgent>()
        .agent::<PongAgent>()
        .model(Arc::clone(&model))
        .build()
        .unwrap();
    let err = app
        .execute("ping-agent", "hi", RunContext::new().max_handoffs(2))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.error(),
            RunError::MaxHandoffsExceeded { agent, max_handoffs: 2 } if agent == "ping-agent"
        ),
        "{err:?}"
    );
    assert_eq!(model.request_count(), 3);
    // The default bound.
    let model = ping_pong(10);
    let app = App::builder()
        .agent::<PingAgent>()
        .agent::<PongAgent>()
        .model(Arc::clone(&model))
        .build()
        .unwrap();
    let err = app
        .execute("ping-agent", "hi", RunContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err.error(), RunError::MaxHandoffsExceeded { max_handoffs, .. } if *max_handoffs == DEFAULT_MAX_HANDOFFS),
        "{err:?}"
    );
    assert_eq!(model.request_count(), DEFAULT_MAX_HANDOFFS as usize + 1);
}

#[test]
fn describe_shows_the_handoff_edges() {
    let model = Arc::new(ScriptedModel::new([]));
    let (builder, _) = builder(&model);
    let text = builder.build().unwrap().describe();
    let triage = text.find("agent `triage-agent`").expect(&text);
    let edge = text.find("hands off to `shipping-agent`").expect(&text);
    assert!(edge > triage, "{text}");
    assert_eq!(text.matches("hands off to").count(), 1, "{text}");
}

#[test]
fn a_handoff_to_an_agent_the_app_does_not_hold_fails_the_build() {
    let err = App::builder()
        .agent::<TriageAgent>()
        .model(ScriptedModel::new([]))
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            BuildError::UnknownHandoff {
                agent: "triage-agent",
                target: "shipping-agent"
            }
        ),
        "{err:?}"
    );
}
