//! An agent calls declared and whole-server tools through its chain.

use super::*;

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
