//! Agents as tools (`#[agent(agent_tools = [..])]`) on the scripted model: the outer model sees
//! one `ask_<name>` tool per agent; a call goes through the outer agent's chain first (a block
//! or a reply keeps the inner model from being called), then runs the inner agent as a nested
//! run under its own cascade, for the same tenant, its usage counted into the outer run; its
//! typed answer is the observation's JSON; the nested moves in the trajectory; `describe()`,
//! the build check and the depth bound.
use std::sync::{Arc, Mutex};

use agboss_core::contract::agent::ToolErrorPolicy;
use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, RunError, RunEvent};
use agboss_core::error::BuildError;
use agboss_core::model::{Message, ModelRequest};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use agboss_testing::trajectory::assert_trajectory;
use serde_json::{Value, json};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ParcelDto {
    #[text(prompt = "Parcel id")]
    pub parcel: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct StatusDto {
    #[text(prompt = "Parcel id")]
    pub parcel: String,
    #[text(prompt = "Where it is")]
    pub city: String,
}

/// What ran, in order: interceptors (`desk:` / `shipping:` and the tool), tool bodies
/// (`track:<tenant>:<parcel>`).
#[injectable(provided)]
pub struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn new() -> Arc<Self> {
        Arc::new(Self(Mutex::new(Vec::new())))
    }
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    fn count(&self, prefix: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }
}

#[tool(name = "track-tool", description = "Where a parcel is", input = ParcelDto, output = ParcelDto, deps = [Recorder, TenantContext])]
pub struct TrackTool {
    rec: Arc<Recorder>,
    tenant: TenantContext,
}
impl ToolHandler<ParcelDto, ParcelDto> for TrackTool {
    async fn run(&self, input: ParcelDto) -> Result<ParcelDto, ToolError> {
        let tenant = self.tenant.tenant_id();
        self.rec.push(format!("track:{tenant}:{}", input.parcel));
        Ok(ParcelDto {
            parcel: format!("{} is in Lyon", input.parcel),
        })
    }
}

macro_rules! interceptor {
    ($ty:ident, $name:literal, $label:literal, $decide:expr) => {
        #[tool_interceptor(name = $name, description = "Records its calls", deps = [Recorder])]
        pub struct $ty {
            rec: Arc<Recorder>,
        }
        impl BeforeToolCall for $ty {
            async fn before_tool_call(
                &self,
                call: &ToolCallContext<'_>,
            ) -> Result<ToolCallDecision, InterceptorError> {
                self.rec.push(format!("{}:{}", $label, call.tool_name()));
                let decide: fn(&str) -> ToolCallDecision = $decide;
                Ok(decide(call.tool_name()))
            }
        }
    };
}

// The submodules use `interceptor!` (declared above them).
mod inner;
mod limits;
mod resume;

interceptor!(DeskToolInterceptor, "desk-tool-interceptor", "desk", |_| {
    ToolCallDecision::allow()
});
interceptor!(
    ShippingToolInterceptor,
    "shipping-tool-interceptor",
    "shipping",
    |_| { ToolCallDecision::allow() }
);
interceptor!(
    NoAskToolInterceptor,
    "no-ask-tool-interceptor",
    "guard",
    |tool| {
        if tool.starts_with("ask_") {
            ToolCallDecision::block("agents are not asked from here")
        } else {
            ToolCallDecision::allow()
        }
    }
);
interceptor!(
    ReplyAskToolInterceptor,
    "reply-ask-tool-interceptor",
    "guard",
    |tool| {
        if tool.starts_with("ask_") {
            ToolCallDecision::reply_to_model("Ask the customer instead.")
        } else {
            ToolCallDecision::allow()
        }
    }
);

#[agent(
    name = "shipping-agent",
    description = "Tracks parcels",
    instructions = "You track parcels.",
    tools = [TrackTool],
    tool_interceptors = [ShippingToolInterceptor],
)]
pub struct ShippingAgent;

#[agent(
    name = "status-agent",
    description = "Gives a parcel's status",
    tools = [TrackTool],
    output = StatusDto,
)]
pub struct StatusAgent;

#[agent(
    name = "desk-agent",
    description = "Answers customers",
    instructions = "Ask the desks you need.",
    tool_interceptors = [DeskToolInterceptor],
    agent_tools = [ShippingAgent, StatusAgent],
)]
pub struct DeskAgent;

#[agent(
    name = "guarded-agent",
    description = "May not ask",
    tool_interceptors = [NoAskToolInterceptor],
    agent_tools = [ShippingAgent],
)]
pub struct GuardedAgent;

#[agent(
    name = "replying-agent",
    description = "Is told to ask the customer",
    tool_interceptors = [ReplyAskToolInterceptor],
    agent_tools = [ShippingAgent],
)]
pub struct ReplyingAgent;

#[agent(name = "ping-agent", description = "Ping", agent_tools = [PongAgent])]
pub struct PingAgent;

#[agent(name = "pong-agent", description = "Pong", agent_tools = [PingAgent])]
pub struct PongAgent;

fn ask(agent: &str, request: &str) -> Turn {
    Turn::tool_call(format!("ask_{agent}"), json!({ "request": request }))
}

fn builder(model: &Arc<ScriptedModel>, rec: &Arc<Recorder>) -> AppBuilder {
    App::builder()
        .agent::<DeskAgent>()
        .agent::<GuardedAgent>()
        .agent::<ReplyingAgent>()
        .agent::<ShippingAgent>()
        .agent::<StatusAgent>()
        .provide_arc(Arc::clone(rec))
        .model(Arc::clone(model))
}

/// The last tool observation of a request (what the model read of the last call).
fn last_observation(req: &ModelRequest) -> String {
    req.messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .expect("a tool observation")
}

#[tokio::test]
async fn a_call_runs_the_inner_agent_under_its_own_cascade_after_the_outer_chain() {
    let model = Arc::new(ScriptedModel::new([
        ask("shipping_agent", "Where is parcel P-1?"),
        Turn::tool_call("track-tool", json!({"parcel": "P-1"})),
        Turn::text("P-1 is in Lyon."),
        Turn::text("Your parcel is in Lyon."),
    ]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let ctx = RunContext::new().tenant("acme");
    let (events, result) = app
        .stream(Target::agent::<DeskAgent>(), "Where is my parcel?", ctx)
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "Your parcel is in Lyon.");
    // The outer chain ran on the agent tool; the inner call ran the inner agent's chain only.
    assert_eq!(
        rec.take(),
        [
            "desk:ask_shipping_agent",
            "shipping:track-tool",
            "track:acme:P-1"
        ]
    );
    let requests = model.requests();
    // The outer model sees one tool per agent, with a `request` string.
    let ask_tool = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "ask_shipping_agent")
        .expect("the agent tool");
    assert_eq!(ask_tool.parameters["required"], json!(["request"]));
    assert_eq!(
        ask_tool.parameters["properties"]["request"]["type"],
        "string"
    );
    assert!(
        requests[0]
            .tools
            .iter()
            .any(|t| t.name == "ask_status_agent")
    );
    // The inner agent gets its own instructions and the request alone.
    assert_eq!(
        requests[1].messages.first().and_then(Message::text),
        Some("You track parcels.")
    );
    assert_eq!(
        requests[1].messages.last().and_then(Message::text),
        Some("Where is parcel P-1?")
    );
    let observed: Value = serde_json::from_str(&last_observation(&requests[3])).unwrap();
    assert_eq!(observed, json!({"answer": "P-1 is in Lyon."}));
    assert_trajectory(
        &events,
        &[
            "desk-agent → ask_shipping_agent",
            "↳ shipping-agent → track-tool",
            "↳ shipping-agent ✎",
            "desk-agent ✎",
        ],
    );
    // The nested events name the call they belong to.
    let nested = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Nested {
                step, tool, event, ..
            } => Some((step.clone(), tool.clone(), event.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (nested.0.as_str(), nested.1.as_str()),
        ("desk-agent", "ask_shipping_agent")
    );
    assert!(
        matches!(*nested.2, RunEvent::RunStarted { ref target, .. } if target == "shipping-agent")
    );
}

#[tokio::test]
async fn a_typed_inner_answer_is_the_observation_json() {
    let status = StatusDto {
        parcel: "P-1".into(),
        city: "Lyon".into(),
    };
    let model = Arc::new(ScriptedModel::new([
        ask("status_agent", "Status of P-1"),
        Turn::output(&status),
        Turn::text("In Lyon."),
    ]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let out = app
        .execute("desk-agent", "Status?", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "In Lyon.");
    let observed: Value = serde_json::from_str(&last_observation(&model.requests()[2])).unwrap();
    assert_eq!(observed, json!({"parcel": "P-1", "city": "Lyon"}));
}

#[tokio::test]
async fn an_outer_block_keeps_the_inner_model_from_being_called() {
    let model = Arc::new(ScriptedModel::new([
        ask("shipping_agent", "Where is parcel P-1?"),
        Turn::text("never asked"),
    ]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let err = app
        .execute("guarded-agent", "Where?", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("the outer interceptor blocked");
    assert_eq!(blocked.tool_name, "ask_shipping_agent");
    assert_eq!(model.request_count(), 1, "the inner model was never called");
    assert_eq!(rec.take(), ["guard:ask_shipping_agent"]);
}

#[tokio::test]
async fn an_outer_reply_to_model_is_the_observation_and_nothing_inner_runs() {
    let model = Arc::new(ScriptedModel::new([
        ask("shipping_agent", "Where is parcel P-1?"),
        Turn::text("I'll ask the customer."),
    ]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let out = app
        .execute("replying-agent", "Where?", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "I'll ask the customer.");
    assert_eq!(model.request_count(), 2);
    assert_eq!(
        last_observation(&model.requests()[1]),
        "Ask the customer instead."
    );
    assert_eq!(rec.take(), ["guard:ask_shipping_agent"]);
}

#[tokio::test]
async fn each_tenants_nested_run_runs_for_that_tenant() {
    let model = Arc::new(ScriptedModel::new([]).hang_when_exhausted());
    // Answers by what each request holds, whichever run asks first.
    let scripted = |req: &ModelRequest| {
        let last = req.messages.last().and_then(Message::text).unwrap_or("");
        let tools: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
        if tools.contains(&"ask_shipping_agent") {
            match req.messages.last() {
                Some(Message::Tool { .. }) => Turn::text("done"),
                _ => ask("shipping_agent", last),
            }
        } else {
            match req.messages.last() {
                Some(Message::Tool { .. }) => Turn::text("tracked"),
                _ => Turn::tool_call("track-tool", json!({ "parcel": last })),
            }
        }
    };
    for _ in 0..8 {
        model.push(Turn::from_fn(scripted));
    }
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let acme = app.execute("desk-agent", "P-acme", RunContext::new().tenant("acme"));
    let globex = app.execute("desk-agent", "P-globex", RunContext::new().tenant("globex"));
    let (a, g) = tokio::join!(acme, globex);
    assert_eq!(
        (a.unwrap().text, g.unwrap().text),
        ("done".into(), "done".into())
    );
    let mut tracked: Vec<String> = rec
        .take()
        .into_iter()
        .filter(|l| l.starts_with("track:"))
        .collect();
    tracked.sort();
    assert_eq!(tracked, ["track:acme:P-acme", "track:globex:P-globex"]);
}

#[tokio::test]
async fn agents_that_ask_each_other_stop_at_the_depth_bound() {
    let model = Arc::new(ScriptedModel::new([
        ask("pong_agent", "ping"),
        ask("ping_agent", "pong"),
        Turn::text("pong done"),
        Turn::text("ping done"),
    ]));
    let app = App::builder()
        .agent::<PingAgent>()
        .agent::<PongAgent>()
        .model(Arc::clone(&model))
        .build()
        .unwrap();
    let ctx = RunContext::new().max_agent_tool_depth(1);
    let (events, result) = app
        .stream(Target::agent::<PingAgent>(), "go", ctx)
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "ping done");
    // The pong agent's call of the ping agent would nest at depth 2: it failed, unrun.
    let refused = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Nested { event, .. } => match &**event {
                RunEvent::ToolError { tool, error, .. } => Some((tool.clone(), error.clone())),
                _ => None,
            },
            _ => None,
        })
        .expect("the refused call's error");
    assert_eq!(refused.0, "ask_ping_agent");
    assert!(
        refused.1.contains("past max_agent_tool_depth (1)"),
        "{}",
        refused.1
    );
    assert_eq!(model.request_count(), 4);
}

#[test]
fn describe_shows_agent_tool_edges_and_the_build_refuses_an_unknown_agent() {
    let model = Arc::new(ScriptedModel::new([]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let text = app.describe();
    assert!(text.contains("asks `shipping-agent` as a tool"), "{text}");
    assert!(text.contains("ask_shipping_agent"), "{text}");
    let err = App::builder()
        .agent::<DeskAgent>()
        .agent::<ShippingAgent>()
        .provide_arc(rec)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            BuildError::UnknownAgentTool {
                agent: "desk-agent",
                target: "status-agent"
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn an_agent_tool_called_outside_a_run_fails_typed() {
    let model = Arc::new(ScriptedModel::new([]));
    let rec = Recorder::new();
    let app = builder(&model, &rec).build().unwrap();
    let err = app
        .tool_by_name("ask_shipping_agent")
        .unwrap()
        .tenant("acme")
        .invoke_json(r#"{"request": "Where is P-1?"}"#)
        .await
        .unwrap_err();
    let typed = std::iter::successors(Some(&err as &(dyn std::error::Error + 'static)), |e| {
        e.source()
    })
    .find_map(|e| e.downcast_ref::<agboss_core::engine::AgentToolError>());
    assert!(
        matches!(
            typed,
            Some(agboss_core::engine::AgentToolError::OutsideRun { tool }) if tool == "ask_shipping_agent"
        ),
        "{err:?}"
    );
    assert_eq!(model.request_count(), 0);
}
