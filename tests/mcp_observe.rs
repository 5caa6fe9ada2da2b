//! Listeners and PII policies see calls of remote tools as any other: an `#[mcp_tool]` on
//! server-everything (see `mcp_client.rs` for the peers), called through the app's callbacks.
use std::sync::Arc;

use agboss_core::*;

#[path = "mcp/env.rs"]
mod env;

/// Records what the app-wide listener saw of remote calls.
#[derive(Default, Clone)]
struct Seen(Arc<std::sync::Mutex<Vec<String>>>);

impl ToolCallListener for Seen {
    type Context = ();
    fn after_call(&self, _: &mut (), call: &ToolCallInfo<'_>, result: &CallOutcome<Rendered>) {
        self.0.lock().unwrap().push(format!(
            "{} {}",
            call.tool_name,
            result.model_text().unwrap_or_default()
        ));
    }
}

#[pii_policy(name = "mcp-email-pii-policy", description = "Masks e-mails", detectors = [email])]
pub struct McpEmailPiiPolicy;

#[mcp_tool(name = "masked-echo-tool", description = "Echoes, masked", server = "everything",
           remote = "echo", pii_policies = [McpEmailPiiPolicy])]
pub struct MaskedEchoTool;

#[tokio::test]
async fn listeners_and_pii_policies_see_remote_calls_as_any_other() {
    let Some(server) = env::everything().await else {
        return;
    };
    let seen = Seen::default();
    let app = App::builder()
        .mcp_server(server)
        .tool::<MaskedEchoTool>()
        .tool_call_listener(seen.clone())
        .build()
        .unwrap();
    // The app's callbacks (what agent loops and MCP serving call) carry the listeners.
    let callbacks = app.callbacks();
    let echo = callbacks
        .iter()
        .find(|c| c.definition().name == "masked-echo-tool")
        .unwrap();
    let outcome = echo
        .call(ToolInvocation::new(
            "c1",
            r#"{"message": "write to ana@example.com"}"#,
        ))
        .await;
    let CallOutcome::Ran(Rendered { text, .. }) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        !text.contains("ana@example.com") && text.contains("Echo: write to"),
        "{text}"
    );
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("masked-echo-tool ") && !seen[0].contains("ana@example.com"),
        "{seen:?}"
    );
}
