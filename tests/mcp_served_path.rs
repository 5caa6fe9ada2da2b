//! Which chain a served tool runs is an explicit choice (issue 30, item 5), tried as the issue
//! tells it: an app whose emergency stop sits on the agent. Served with the direct chains, the
//! build warns that the served tool lacks the agent path's interceptor (and an MCP client's
//! call does book, as the warning says); served with `.agent(..)`, the MCP client is refused
//! as the agent path refuses, and the tool does not run. `describe()` shows the served path.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agboss_core::callback::ToolInvocation;
use agboss_core::cascade::BuildWarning;
use agboss_core::contract::outcome::CallDecision;
use agboss_core::mcp::server::McpServe;
use agboss_core::prelude::*;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FlightDto {
    #[text(prompt = "Flight number")]
    pub flight: String,
}

/// How often the booking ran.
#[injectable(provided)]
#[derive(Default)]
pub struct Bookings(AtomicUsize);

#[tool(name = "book-flight-tool", description = "Books a flight",
       input = FlightDto, output = FlightDto, deps = [Bookings])]
pub struct BookFlightTool {
    bookings: Arc<Bookings>,
}

impl ToolHandler<FlightDto, FlightDto> for BookFlightTool {
    async fn run(&self, input: FlightDto) -> Result<FlightDto, ToolError> {
        self.bookings.0.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

const STOPPED: &str = "Bookings are stopped: emergency.";

/// The emergency stop, on the agent only.
#[tool_interceptor(
    name = "emergency-stop-tool-interceptor",
    description = "Stops every booking"
)]
pub struct EmergencyStopToolInterceptor;

impl BeforeToolCall for EmergencyStopToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        Ok(ToolCallDecision::block(STOPPED))
    }
}

#[agent(name = "booking-agent", description = "Books flights", instructions = "Book flights.",
        tools = [BookFlightTool], tool_interceptors = [EmergencyStopToolInterceptor])]
pub struct BookingAgent;

fn app(bookings: &Arc<Bookings>) -> App {
    App::builder()
        .name("travel-desk")
        .tool::<BookFlightTool>()
        .agent::<BookingAgent>()
        .provide_arc(Arc::clone(bookings))
        .build()
        .expect("app")
}

/// One `tools/call` of `book-flight-tool` by a real rmcp client of `serve`'s handler: the
/// result's text and whether it is an error.
async fn book(serve: &McpServe) -> (String, bool) {
    let handler = serve.handler().expect("handler");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("the client connects");
    let Value::Object(arguments) = json!({ "flight": "LH 400" }) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("book-flight-tool").with_arguments(arguments))
        .await
        .expect("the call answers");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<String>();
    let _ = client.cancel().await;
    (text, result.is_error == Some(true))
}

#[tokio::test]
async fn direct_chains_warn_that_the_agents_emergency_stop_is_not_served() {
    let bookings = Arc::new(Bookings::default());
    let app = app(&bookings);
    // The app's own build has nothing to say: nothing is served yet.
    assert!(app.warnings().is_empty(), "{:?}", app.warnings());

    let serve = app.serve_mcp().direct_chains().tenant("acme");
    let warnings = serve.warnings().expect("warnings");
    assert_eq!(
        warnings,
        [BuildWarning::ServedPathLacksInterceptors {
            tool: "book-flight-tool".into(),
            served: "direct chains (application → tool)".into(),
            agent: "booking-agent",
            interceptors: vec!["emergency-stop-tool-interceptor"],
        }]
    );
    let text = warnings[0].to_string();
    assert!(text.contains("serve `.agent(\"booking-agent\")`"), "{text}");
    let described = serve.describe().expect("describe");
    assert!(
        described.starts_with("MCP server `travel-desk`: serves the direct chains"),
        "{described}"
    );
    assert!(described.contains("tool `book-flight-tool`"), "{described}");
    assert!(described.contains("(no interceptors)"), "{described}");
    assert!(
        described.contains("warnings\n  - tool `book-flight-tool`"),
        "{described}"
    );

    // What the warning is about: the client books although the agent path is stopped.
    let (text, is_error) = book(&serve).await;
    assert!(!is_error, "{text}");
    assert_eq!(bookings.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_agents_path_refuses_the_mcp_client_as_it_refuses_the_agent() {
    let bookings = Arc::new(Bookings::default());
    let app = app(&bookings);
    let serve = app.serve_mcp().agent("booking-agent").tenant("acme");
    assert_eq!(serve.warnings().expect("warnings"), []);
    let described = serve.describe().expect("describe");
    assert!(
        described.starts_with("MCP server `travel-desk`: serves the path of agent `booking-agent`"),
        "{described}"
    );
    assert!(
        described.contains("1. emergency-stop-tool-interceptor  [agent `booking-agent`]"),
        "{described}"
    );
    assert!(!described.contains("warnings"), "{described}");

    // The agent path refuses a call, with the stop's reason, and the tool does not run...
    let agent = app.agent_by_name("booking-agent").expect("agent");
    let callbacks = app.agent_callbacks(agent);
    let invocation = ToolInvocation::new("call-1", r#"{"flight":"LH 400"}"#);
    let outcome = callbacks[0].call(invocation).await;
    assert_eq!(
        outcome.decision(),
        CallDecision::Blocked {
            interceptor: "emergency-stop-tool-interceptor".into(),
            reason: STOPPED.into(),
        }
    );
    // ...and so does the MCP client's call.
    let (text, is_error) = book(&serve).await;
    assert!(is_error, "{text}");
    assert_eq!(text, STOPPED);
    assert_eq!(bookings.0.load(Ordering::SeqCst), 0);
}

#[test]
fn an_unknown_agent_is_a_typed_error_when_served() {
    let app = app(&Arc::new(Bookings::default()));
    let serve = app.serve_mcp().agent("no-such-agent").tenant("acme");
    for err in [serve.warnings().unwrap_err(), serve.describe().unwrap_err()] {
        assert!(
            matches!(&err, agboss_core::mcp::server::McpServerError::UnknownAgent { name } if name == "no-such-agent"),
            "{err}"
        );
    }
}
