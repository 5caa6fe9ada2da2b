//! `cargo run --example audit_log`: a `ToolCallListener` keeping an audit event log of
//! `tool_use` / `tool_result` pairs (as in the seed) and printing SSE-style progress lines,
//! attached to a whole app; the calls go through the app's callbacks, as an agent loop makes
//! them.
//!
//! The calls: an allowed call, a foreign-tenant order (the interceptor replies to the model:
//! logged as a result flagged as a refusal), and an invalid input (reported to the model by
//! `on_error`, so the loop can adapt).
use std::sync::Mutex;
use std::time::Instant;

use agboss_core::callback::ToolInvocation;
use agboss_core::error::ToolCallErrorKind;
use agboss_core::prelude::*;
use agboss_e2e::tenant_order::{GetOrderTool, TenantOrderToolInterceptor};
use serde_json::{Value, json};

/// An append-only event log.
#[derive(Default)]
struct EventLog {
    events: Mutex<Vec<Value>>,
}

impl EventLog {
    /// Appends an event and returns its id.
    fn append(&self, kind: &str, payload: Value) -> String {
        let mut events = self.events.lock().expect("log lock");
        let id = format!("evt_{}", events.len() + 1);
        events.push(json!({ "id": id, "type": kind, "payload": payload }));
        id
    }
}

/// The per-call context: the `tool_use` event id and the start time.
#[derive(Default)]
struct UseContext {
    use_id: String,
    started: Option<Instant>,
}

struct AuditListener {
    log: std::sync::Arc<EventLog>,
}

impl AuditListener {
    fn sse(event: &str, data: Value) {
        println!("event: {event}\ndata: {data}\n");
    }
}

impl ToolCallListener for AuditListener {
    type Context = UseContext;

    fn before_call(&self, call: &ToolCallInfo<'_>) -> UseContext {
        // The audit log keeps the input as the path's PII policies mask it, never the raw text.
        let input: Value = serde_json::from_str(call.masked_input).unwrap_or(Value::Null);
        let use_id = self.log.append(
            "agent.tool_use",
            json!({ "call_id": call.call_id, "name": call.tool_name, "input": input }),
        );
        Self::sse(
            "tool_started",
            json!({ "call_id": call.call_id, "tool": call.tool_name }),
        );
        UseContext {
            use_id,
            started: Some(Instant::now()),
        }
    }

    fn after_call(&self, ctx: &mut UseContext, call: &ToolCallInfo<'_>, result: &CallOutcome) {
        // A `reply_to_model` is what the model reads, but it is flagged (and names its
        // interceptor), so the audit trail never mistakes it for a tool output.
        let replied_by = match result {
            CallOutcome::ReplyToModel { interceptor, .. } => Some(*interceptor),
            _ => None,
        };
        self.log.append(
            "agent.tool_result",
            json!({
                "tool_use_id": ctx.use_id,
                "name": call.tool_name,
                "content": result.model_text(),
                "is_error": result.is_error(),
                "replied_by": replied_by,
            }),
        );
    }

    fn on_error(
        &self,
        ctx: &mut UseContext,
        call: &ToolCallInfo<'_>,
        error: &ToolCallError,
    ) -> Option<String> {
        // The full error goes to the audit log; the model gets a short, safe text.
        self.log.append(
            "agent.tool_result",
            json!({ "tool_use_id": ctx.use_id, "name": call.tool_name, "error": error.to_string(), "is_error": true }),
        );
        match error.kind() {
            // The agent loop tells the model which fields were wrong.
            ToolCallErrorKind::InvalidInput { .. } => None,
            // A block or a failing guard fails the step, whatever is returned here.
            _ if error.is_guard_failure() => None,
            // The tool's own failure: a short, safe text for the model, and the loop goes on.
            _ => Some(format!(
                "Tool '{}' could not complete this call.",
                call.tool_name
            )),
        }
    }

    fn after_completion(&self, ctx: UseContext, call: &ToolCallInfo<'_>) {
        // Whole microseconds: an integer, never a float's rounding noise.
        let us = ctx
            .started
            .map(|s| u64::try_from(s.elapsed().as_micros()).unwrap_or(u64::MAX));
        Self::sse(
            "tool_finished",
            json!({ "call_id": call.call_id, "tool": call.tool_name, "duration_us": us }),
        );
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log = std::sync::Arc::new(EventLog::default());
    let app = App::builder()
        .name("shop-application")
        .tool_interceptor::<TenantOrderToolInterceptor>()
        .tool::<GetOrderTool>()
        .tool_call_listener(AuditListener {
            log: std::sync::Arc::clone(&log),
        })
        .build()?;
    let callbacks = app.callbacks();
    let get_order = callbacks
        .iter()
        .find(|c| {
            c.definition().name == <GetOrderTool as agboss_core::contract::tool::Tool>::META.name
        })
        .expect("the tool is in the app");
    let tenant = TenantContext::new("acme");

    for (call_id, args) in [
        ("call_1", r#"{"orderId":"ACME-42"}"#),
        ("call_2", r#"{"orderId":"OTHER-99"}"#),
        ("call_3", r#"{"orderId":42}"#),
    ] {
        let invocation = ToolInvocation::new(call_id, args).with_tenant(Some(&tenant));
        let result = get_order.call(invocation).await;
        match result.model_text() {
            Some(text) => println!("# model reads for {call_id}: {text}\n"),
            None => println!(
                "# {call_id} failed: {}\n",
                result.into_result().unwrap_err()
            ),
        }
    }

    println!("== audit event log");
    for event in log.events.lock().expect("log lock").iter() {
        println!("{event}");
    }
    Ok(())
}
