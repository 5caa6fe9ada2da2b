//! MCP servers as tools of the app, against real peers: npm
//! `@modelcontextprotocol/server-everything` over stdio (installed at a pinned version by
//! `scripts/mcp-peers.sh`; `AGBOSS_TEST_MCP_EVERYTHING` names its entry script). The faults
//! of a misbehaving server are in `mcp_faults.rs`. With `CI` set and the peers missing, these
//! tests fail instead of skipping.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::dto::Dto;
use agboss_core::mcp::client::{McpError, McpResult, McpServer, McpServerConfig};
use agboss_core::*;
use agboss_testing::ScriptedModel;
use agboss_testing::scripted::{ScriptedToolCall, Turn};
use serde_json::json;

#[path = "mcp/env.rs"]
mod env;

// ---- the app's components ------------------------------------------------------------------

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumDto {
    #[number(prompt = "First number")]
    pub a: f64,
    #[number(prompt = "Second number")]
    pub b: f64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct SumTextDto {
    #[text(prompt = "The sentence")]
    pub text: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct WeatherDto {
    #[number(prompt = "Degrees")]
    pub temperature: f64,
    #[text(prompt = "Conditions")]
    pub conditions: String,
    #[number(prompt = "Percent")]
    pub humidity: f64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CityDto {
    #[text(prompt = "City")]
    pub location: String,
}

/// Counts every before-hook it runs.
#[injectable(provided)]
#[derive(Default)]
pub struct Hooks(AtomicUsize);

/// Tenant ACL: `evil` is blocked from every remote tool; sums over 1000 are sent back to the
/// model to repair.
#[tool_interceptor(name = "mcp-acl-tool-interceptor", description = "Tenant ACL",
                   deps = [TenantContext, Hooks])]
pub struct McpAclToolInterceptor {
    tenant: TenantContext,
    hooks: Arc<Hooks>,
}

impl BeforeToolCall for McpAclToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.hooks.0.fetch_add(1, Ordering::SeqCst);
        if self.tenant.tenant_id() == "evil" {
            return Ok(ToolCallDecision::block(
                "tenant evil may not call remote tools",
            ));
        }
        if let Some(a) = call.input()["a"].as_f64()
            && a > 1000.0
        {
            return Ok(ToolCallDecision::reply_to_model(
                "`a` must be at most 1000; ask for a smaller number",
            ));
        }
        Ok(ToolCallDecision::allow())
    }
}

/// Upper-cases the remote text on the way back.
#[tool_interceptor(
    name = "shout-tool-interceptor",
    description = "Upper-cases echo results"
)]
pub struct ShoutToolInterceptor;

impl AfterToolCall for ShoutToolInterceptor {
    async fn after_tool_call(
        &self,
        call: ToolCallResultContext<'_>,
    ) -> Result<ToolOutput, InterceptorError> {
        let mut out: McpResult = call.into_output()?;
        out.text = out.text.to_uppercase();
        Ok(out.into())
    }
}

#[mcp_tool(name = "get-sum-tool", description = "Adds two numbers", server = "everything",
           remote = "get-sum", input = SumDto, output = SumTextDto,
           tool_interceptors = [McpAclToolInterceptor])]
pub struct GetSumTool;

#[mcp_tool(name = "echo-tool", description = "Echoes a message", server = "everything",
           remote = "echo", tool_interceptors = [McpAclToolInterceptor, ShoutToolInterceptor])]
pub struct EchoTool;

#[mcp_tool(name = "weather-tool", description = "Weather of a city", server = "everything",
           remote = "get-structured-content", input = CityDto, output = WeatherDto)]
pub struct WeatherTool;

#[mcp_tool(
    name = "raw-weather-tool",
    description = "Weather of a city, remote schemas",
    server = "everything",
    remote = "get-structured-content"
)]
pub struct RawWeatherTool;

#[mcp_tool(
    name = "slow-tool",
    description = "A long operation",
    server = "everything",
    remote = "trigger-long-running-operation",
    timeout_ms = 5000
)]
pub struct SlowTool;

#[agent(name = "mcp-agent", description = "Uses remote tools", instructions = "Use the tools.",
        tools = [GetSumTool], mcp_servers = ["everything"],
        tool_interceptors = [McpAclToolInterceptor])]
pub struct McpAgent;

fn app(server: &McpServer, hooks: &Arc<Hooks>) -> App {
    App::builder()
        .mcp_server(server.clone())
        .provide_arc(Arc::clone(hooks))
        .tool::<GetSumTool>()
        .tool::<EchoTool>()
        .tool::<WeatherTool>()
        .tool::<RawWeatherTool>()
        .tool::<SlowTool>()
        .build()
        .expect("the app builds")
}

// ---- tests -----------------------------------------------------------------------------------

#[tokio::test]
async fn a_connected_server_lists_its_tools_once() {
    let Some(server) = env::everything().await else {
        return;
    };
    let names: Vec<&str> = server.tools().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-structured-content",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let sum = server.tool("get-sum").unwrap();
    assert_eq!(sum.input_schema["required"], json!(["a", "b"]));
    assert!(
        server
            .tool("get-structured-content")
            .unwrap()
            .output_schema
            .is_some()
    );
}

#[tokio::test]
async fn a_declared_remote_tool_runs_its_whole_pipeline_on_direct_invokes() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);

    let out = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .invoke(SumDto { a: 2.0, b: 3.0 })
        .await
        .unwrap();
    assert_eq!(out.text, "The sum of 2 and 3 is 5.");
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1);

    // The interceptor sends a bad argument back to the model: nothing reaches the server.
    let replied = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .call_typed(SumDto { a: 5000.0, b: 1.0 })
        .await;
    assert!(
        matches!(&replied, CallOutcome::Replied { message, interceptor: "mcp-acl-tool-interceptor" }
            if message.contains("at most 1000")),
        "{replied:?}"
    );
    // A blocked tenant gets a typed block.
    let blocked = app
        .tool::<GetSumTool>()
        .tenant("evil")
        .invoke(SumDto { a: 1.0, b: 1.0 })
        .await
        .unwrap_err();
    assert_eq!(
        blocked.as_blocked().unwrap().interceptor,
        "mcp-acl-tool-interceptor"
    );
    // No tenant: the interceptor cannot be built for the call, the call fails closed.
    assert!(
        app.tool::<GetSumTool>()
            .invoke(SumDto { a: 1.0, b: 1.0 })
            .await
            .is_err()
    );

    // By name, with the JSON a model sends.
    let text = app
        .tool_by_name("get-sum-tool")
        .unwrap()
        .tenant("acme")
        .invoke_json(r#"{"a": 40, "b": 2}"#)
        .await
        .unwrap();
    assert_eq!(text, r#"{"text":"The sum of 40 and 2 is 42."}"#);
}

#[tokio::test]
async fn without_dtos_the_remote_schemas_check_arguments_before_any_hook_and_results_after() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);
    let echo = || app.tool_by_name("echo-tool").unwrap().tenant("acme");

    // The model sees the remote schema.
    let definition = app
        .bound_tools()
        .find(|t| t.meta().name == "echo-tool")
        .unwrap()
        .definition();
    assert_eq!(definition.parameters["required"], json!(["message"]));

    // A wrong type and a missing argument are rejected before the interceptor runs.
    for bad in [
        r#"{"message": 5}"#,
        r#"{}"#,
        r#"[1]"#,
        r#"{"message": "a", "message": "b"}"#,
    ] {
        let err = echo().invoke_json(bad).await.unwrap_err();
        assert!(
            matches!(err, ToolCallError::InvalidInput { .. }),
            "{bad}: {err:?}"
        );
    }
    assert_eq!(
        hooks.0.load(Ordering::SeqCst),
        0,
        "no hook ran on invalid arguments"
    );

    // A valid call goes through both hooks (the after-hook upper-cases the text).
    let text = echo().invoke_json(r#"{"message": "hello"}"#).await.unwrap();
    assert_eq!(text, r#"{"text":"ECHO: HELLO"}"#);
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1);

    // Structured content, checked against the remote output schema, and into an output DTO.
    let raw = app
        .tool_by_name("raw-weather-tool")
        .unwrap()
        .invoke_json(r#"{"location": "Chicago"}"#)
        .await
        .unwrap();
    let raw: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert!(raw["structured"]["temperature"].is_number(), "{raw}");
    let weather = app
        .tool::<WeatherTool>()
        .invoke(CityDto {
            location: "New York".into(),
        })
        .await
        .unwrap();
    assert!(!weather.conditions.is_empty());
    // An enum value the remote schema does not have.
    let err = app
        .tool_by_name("raw-weather-tool")
        .unwrap()
        .invoke_json(r#"{"location": "Paris"}"#)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolCallError::InvalidInput { .. }), "{err:?}");
}

#[tokio::test]
async fn a_long_operation_past_the_time_limit_is_a_typed_error_and_the_next_call_works() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);
    let err = app
        .tool_by_name("slow-tool")
        .unwrap()
        .invoke_json(r#"{"duration": 12, "steps": 2}"#)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ToolCallError::Timeout { .. } | ToolCallError::ToolFailed { .. }
        ),
        "{err:?}"
    );
    let quick = app
        .tool_by_name("slow-tool")
        .unwrap()
        .invoke_json(r#"{"duration": 0.1, "steps": 1}"#)
        .await
        .unwrap();
    assert!(
        quick.contains("Long running operation completed"),
        "{quick}"
    );
}

#[tokio::test]
async fn an_agent_calls_declared_and_whole_server_tools_through_its_chain() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([
            ScriptedToolCall::new("everything__echo", json!({"message": "hi"})).with_id("c1"),
            ScriptedToolCall::new("get-sum-tool", json!({"a": 4000, "b": 1})).with_id("c2"),
            ScriptedToolCall::new("everything__get-sum", json!({"a": 1, "b": 2})).with_id("c3"),
        ]),
        Turn::text("done"),
    ]));
    let app = App::builder()
        .mcp_server(server.clone())
        .provide_arc(Arc::clone(&hooks))
        .agent::<McpAgent>()
        .shared_model(model.clone())
        .build()
        .unwrap();
    let agent = app.agent::<McpAgent>().unwrap();
    assert!(agent.tool("everything__echo").is_some());
    assert!(
        app.describe().contains("everything__get-sum"),
        "{}",
        app.describe()
    );

    let (events, out) = app
        .stream(
            Target::agent::<McpAgent>(),
            "go",
            RunContext::new().tenant("acme"),
        )
        .collect_all()
        .await;
    assert_eq!(out.unwrap().text, "done");
    let results: Vec<(String, String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect();
    let of = |id: &str| results.iter().find(|r| r.0 == id).unwrap().clone();
    assert!(of("c1").1.contains("Echo: hi"), "{results:?}");
    assert!(of("c2").1.contains("at most 1000"), "{results:?}");
    assert!(
        of("c3").1.contains("The sum of 1 and 2 is 3."),
        "{results:?}"
    );
    // Every call went through the agent's interceptor (the declared tool's own one is the
    // same interceptor: it runs once per call).
    assert_eq!(hooks.0.load(Ordering::SeqCst), 3);
    // The model read the whole server's tools with their remote schemas.
    let request = &model.requests()[0];
    let echo = request
        .tools
        .iter()
        .find(|t| t.name == "everything__echo")
        .unwrap();
    assert_eq!(echo.parameters["required"], json!(["message"]));

    // A blocked tenant: the block stops the step, nothing is sent to the server.
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([
            ScriptedToolCall::new("everything__echo", json!({"message": "hi"})).with_id("e1"),
        ]),
        Turn::text("unreachable"),
    ]));
    let app = App::builder()
        .mcp_server(server)
        .provide_arc(Arc::clone(&hooks))
        .agent::<McpAgent>()
        .shared_model(model)
        .build()
        .unwrap();
    let err = app
        .execute(
            Target::agent::<McpAgent>(),
            "go",
            RunContext::new().tenant("evil"),
        )
        .await
        .unwrap_err();
    let blocked = err.as_blocked().map(|b| b.interceptor);
    assert_eq!(blocked, Some("mcp-acl-tool-interceptor"), "{err}");
}

#[tokio::test]
async fn build_errors_name_the_server_and_the_tool() {
    let Some(server) = env::everything().await else {
        return;
    };

    #[mcp_tool(
        name = "missing-remote-tool",
        description = "Does not exist",
        server = "everything",
        remote = "no-such-tool"
    )]
    pub struct MissingRemoteTool;
    let err = App::builder()
        .mcp_server(server.clone())
        .tool::<MissingRemoteTool>()
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("missing-remote-tool")
            && text.contains("no-such-tool")
            && text.contains("get-sum"),
        "{text}"
    );

    #[derive(Dto, Debug, Clone, PartialEq)]
    pub struct WrongSumDto {
        #[text(prompt = "First")]
        pub a: String,
    }
    #[mcp_tool(name = "wrong-sum-tool", description = "Wrong DTO", server = "everything",
               remote = "get-sum", input = WrongSumDto)]
    pub struct WrongSumTool;
    let err = App::builder()
        .mcp_server(server.clone())
        .tool::<WrongSumTool>()
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`b`") && text.contains("`a` is string in the DTO but number"),
        "{text}"
    );

    // A server the app does not connect.
    let err = App::builder().tool::<GetSumTool>().build().unwrap_err();
    assert!(
        matches!(
            err,
            BuildError::Mcp {
                server: "everything",
                tool: Some("get-sum-tool"),
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn the_same_declarations_work_over_streamable_http() {
    let Some(entry) = env::everything_entry() else {
        return;
    };
    let (_child, url) = env::everything_over_http(&entry).await;
    let server = McpServer::connect(McpServerConfig::http("everything", &url))
        .await
        .expect("connects over HTTP");
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);
    let out = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .invoke(SumDto { a: 20.0, b: 22.0 })
        .await
        .unwrap();
    assert_eq!(out.text, "The sum of 20 and 22 is 42.");
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1);

    // A URL where nothing listens is an initialize error naming the server.
    let err = McpServer::connect(
        McpServerConfig::http("nowhere", "http://127.0.0.1:9/mcp")
            .connect_timeout(Duration::from_secs(5)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            McpError::Initialize {
                server: "nowhere",
                ..
            } | McpError::TimedOut {
                server: "nowhere",
                ..
            }
        ),
        "{err}"
    );
}
