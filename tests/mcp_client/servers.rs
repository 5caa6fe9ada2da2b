//! The server as a whole: its tools listed once, build errors naming server and tool, streamable HTTP.

use super::*;
use agboss_core::error::BuildError;

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
            &err,
            BuildError::Mcp {
                server: "everything",
                tool: Some(tool),
                ..
            } if tool == "get-sum-tool"
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
