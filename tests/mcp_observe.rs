//! Listeners and PII policies see calls of remote tools as any other: an `#[mcp_tool]` on
//! server-everything (see `mcp_client/` for the peers), called through the app's callbacks.
use std::sync::Arc;

use agboss_core::callback::ToolInvocation;
use agboss_core::contract::outcome::Rendered;
use agboss_core::prelude::*;

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

/// agboss on both ends: a whole server's tools reached over streamable HTTP with the
/// config's bearer token, each call running the remote app's pipeline as that token's tenant.
#[tokio::test]
async fn headers_of_an_http_config_reach_the_server_and_its_guards() {
    use agboss_core::mcp::client::{McpServer, McpServerConfig};
    use agboss_core::mcp::server::BearerTokens;
    use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};

    let log = Arc::new(CrmRunLog::new());
    let remote = crm_app(Arc::clone(&log)).unwrap();
    let served = remote
        .serve_mcp()
        .direct_chains()
        .authenticator(BearerTokens::new().token("t-acme", "acme"))
        .http("127.0.0.1:0")
        .await
        .unwrap();
    let url = served.url();

    // Without the header the session is refused; with it the tools are listed.
    assert!(
        McpServer::connect(McpServerConfig::http("crm", url.as_str()))
            .await
            .is_err()
    );
    let crm = McpServer::connect(McpServerConfig::http("crm", url.as_str()).bearer_token("t-acme"))
        .await
        .unwrap();
    assert!(crm.tool("get-customer-tool").is_some());

    let app = App::builder()
        .mcp_server(crm)
        .mcp_server_tools("crm")
        .build()
        .unwrap();
    let text = app
        .tool_by_name("crm__get-customer-tool")
        .unwrap()
        .invoke_json(r#"{"customerId": "ACME-7"}"#)
        .await
        .unwrap();
    // The remote pipeline ran as acme and masked the e-mail before it left the server.
    assert!(
        text.contains("ACME-7") && !text.contains("ann@example.com"),
        "{text}"
    );
    assert_eq!(log.runs_of("get-customer-tool"), 1);
    served.shutdown().await.unwrap();
}
