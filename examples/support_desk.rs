//! `cargo run --example support_desk`: the support-desk application's resolved cascade, then a
//! whole conversation run through the agent runtime, printing the event stream.
//!
//! By default the model is an embedded script (no key needed). With `AGBOSS_OPENAI_API_KEY` set
//! (and optionally `AGBOSS_OPENAI_BASE_URL`, `AGBOSS_OPENAI_MODEL`) it talks to a real
//! OpenAI-compatible endpoint instead.
//!
//! The conversation lives in a thread of tenant `acme`, kept in an embedded SQLite file (a
//! temporary one; set `AGBOSS_DB` to keep it), and has two customer turns.
//!
//! Turn 1 shows: the router choosing `billing-agent`; a lookup of a foreign order answered by
//! `reply_to_model`; the model correcting its arguments; a refund above the limit hard-blocked
//! by `refund-limit-tool-interceptor`, which ends the step; and the workflow's `on_error`
//! recovering with a hand-off to a human.
//!
//! Turn 2, on the same thread: the customer asks for a partial refund; the agent reads the
//! order it looked up in turn 1 from the thread's history and refunds within the limit.
use std::sync::Arc;

use agboss_core::App;
use agboss_core::engine::workflow::{Flow, Recovery};
use agboss_core::engine::{CallDecision, RunContext, RunEvent, StepOutcome, Target};
use agboss_core::model::{Message, OpenAiCompatibleModel, Role, SharedChatModel};
use agboss_core::store::{NewThread, SqliteStore};
use agboss_e2e::support_desk::{SupportDeskApplication, SupportRouter, SupportWorkflow};
use agboss_testing::scripted::{ScriptedModel, Turn};
use futures::StreamExt as _;
use serde_json::json;

/// The embedded script: what a model would answer, turn by turn.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        // support-router: which route?
        Turn::text("billing-agent"),
        // billing-agent: looks up the order the customer typed (a foreign one).
        Turn::tool_call_with_id(
            "call_1",
            "lookup-order-tool",
            json!({"orderId": "GLOBEX-42"}),
        ),
        // The reply_to_model observation tells it the order is not acme's: it self-corrects.
        Turn::from_fn(|req| {
            let reply = req.last_tool_result().and_then(Message::text).unwrap_or("");
            if reply.contains("does not belong") {
                Turn::tool_call_with_id(
                    "call_2",
                    "lookup-order-tool",
                    json!({"orderId": "ACME-42"}),
                )
            } else {
                Turn::text("(the reply did not arrive)")
            }
        }),
        // Full refund: 125.00 is above the 100.00 limit, so the call is blocked.
        Turn::tool_call_with_id(
            "call_3",
            "refund-order-tool",
            json!({"orderId": "ACME-42", "amountCents": 12_500, "reason": "parcel arrived broken"}),
        ),
        // Turn 2: the router again, then billing-agent with the thread's history.
        Turn::text("billing-agent"),
        Turn::from_fn(|req| {
            // The order looked up in turn 1 is in the history: no second lookup needed.
            let known = req
                .messages
                .iter()
                .any(|m| m.role() == Role::Tool && m.text().is_some_and(|t| t.contains("ACME-42")));
            if known {
                Turn::tool_call_with_id(
                    "call_4",
                    "refund-order-tool",
                    json!({"orderId": "ACME-42", "amountCents": 4_000, "reason": "broken part only"}),
                )
            } else {
                Turn::text("(the history did not arrive)")
            }
        }),
        Turn::text("Done: 40.00 is refunded on ACME-42, the order you told me about earlier."),
    ])
}

fn print_event(event: &RunEvent) {
    match event {
        RunEvent::RunStarted { run_id, target } => println!("run {run_id} → {target}"),
        RunEvent::RunResumed {
            run_id,
            replayed_steps,
        } => println!("run {run_id} resumed: {replayed_steps} journaled steps read back"),
        RunEvent::StepStarted { step, kind, input } => {
            println!("  ▶ {kind} {step} ← {input:?}")
        }
        RunEvent::TextDelta { .. } => {}
        RunEvent::Usage { step, usage } => {
            println!("    · {step} used {} tokens", usage.total_tokens)
        }
        RunEvent::RouteChosen {
            router,
            route,
            reason,
        } => println!("    ⇢ {router} chose {route} ({reason:?})"),
        RunEvent::ToolCallRequested {
            call_id,
            tool,
            arguments,
            ..
        } => println!("    → {call_id} {tool} {arguments}"),
        RunEvent::ToolCallDecision {
            call_id, decision, ..
        } => match decision {
            CallDecision::Allowed => println!("      ✔ {call_id} allowed"),
            CallDecision::RepliedToModel {
                interceptor,
                message,
            } => println!("      ↩ {call_id} reply_to_model by {interceptor}: {message}"),
            CallDecision::Blocked {
                interceptor,
                reason,
            } => println!("      ✖ {call_id} BLOCKED by {interceptor}: {reason}"),
            other => println!("      ? {call_id} {other:?}"),
        },
        RunEvent::ToolResult {
            call_id, content, ..
        } => println!("      = {call_id} {content}"),
        RunEvent::ToolError { call_id, error, .. } => println!("      ! {call_id} {error}"),
        RunEvent::ToolCallCancelled { call_id, .. } => println!("      ⨯ {call_id} cancelled"),
        RunEvent::FinalAnswer { step, text } => println!("    ✎ {step}: {text}"),
        RunEvent::StepFinished {
            step,
            kind,
            outcome,
        } => match outcome {
            StepOutcome::Succeeded => println!("  ■ {kind} {step} done"),
            StepOutcome::Failed { error } => println!("  ■ {kind} {step} FAILED: {error}"),
            StepOutcome::Recovered { error } => {
                println!("  ■ {kind} {step} recovered by on_error (was: {error})")
            }
            other => println!("  ■ {kind} {step} {other:?}"),
        },
        RunEvent::Completed(out) => println!(
            "completed: {:?} ({} model turns, {} tool calls)",
            out.text, out.model_turns, out.tool_calls
        ),
        other => println!("    {other:?}"),
    }
}

/// Streams one run, printing its events.
async fn run_turn(
    app: &App,
    flow: &Flow,
    request: &str,
    ctx: RunContext,
) -> Result<(), Box<dyn std::error::Error>> {
    println!("\n== customer (tenant acme): {request}");
    let mut events = app.stream(
        Target::workflow_with::<SupportWorkflow>(flow.clone()),
        request,
        ctx,
    );
    while let Some(item) = events.next().await {
        match item {
            Ok(event) => print_event(&event),
            Err(err) => {
                println!("run failed: {err}");
                return Err(err.into());
            }
        }
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = App::builder()
        .application::<SupportDeskApplication>()
        .build()?;
    println!("{}", app.describe());

    // The conversation: a real endpoint when configured, else the embedded script.
    let model: SharedChatModel = if std::env::var_os("AGBOSS_OPENAI_API_KEY").is_some() {
        println!("== model: OpenAI-compatible endpoint from the environment");
        Arc::new(OpenAiCompatibleModel::from_env()?)
    } else {
        println!("== model: embedded script (set AGBOSS_OPENAI_API_KEY for a real one)");
        Arc::new(scripted_model())
    };
    // Threads and run journals in one SQLite file, created on first use.
    let (db, temporary) = match std::env::var_os("AGBOSS_DB") {
        Some(path) => (std::path::PathBuf::from(path), false),
        None => (
            std::env::temp_dir().join(format!("agboss-demo-{}.db", std::process::id())),
            true,
        ),
    };
    println!("== store: SQLite at {}", db.display());
    let store = SqliteStore::open(&db).await?;
    let app = App::builder()
        .application::<SupportDeskApplication>()
        .shared_model(model)
        .store(store)
        .build()?;

    // The workflow's flow: route the request; a blocked refund hands the case to a human.
    let flow = Flow::new().router::<SupportRouter>().on_error(|err, ctx| {
        match err.as_blocked() {
            Some(blocked) => Ok(Recovery::Output(format!(
                "I can't complete that myself ({}). A colleague will review your request \"{}\" within one business day.",
                blocked.text(),
                ctx.input
            ))),
            None => Err(err),
        }
    });
    let thread = app
        .threads("acme")
        .create(NewThread::new().title("Order 42 arrived broken"))
        .await?;
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    run_turn(
        &app,
        &flow,
        "Order 42 arrived broken, please refund it in full.",
        ctx(),
    )
    .await?;
    run_turn(
        &app,
        &flow,
        "I see. Then please refund just the broken part, 40.00.",
        ctx(),
    )
    .await?;

    let messages = app.threads("acme").messages(&thread.id).await?;
    println!(
        "\n== thread {} of tenant acme: {} messages over two runs",
        thread.id,
        messages.len()
    );
    for m in &messages {
        let text = match &m.message {
            Message::Assistant(a) if a.has_tool_calls() => {
                let calls: Vec<&str> = a.tool_calls.iter().map(|c| c.name.as_str()).collect();
                format!("→ {}", calls.join(", "))
            }
            other => other.text().unwrap_or_default().chars().take(90).collect(),
        };
        println!("  {:>2} {:<9} {text}", m.seq, m.message.role().as_str());
    }
    if temporary {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    }
    Ok(())
}
