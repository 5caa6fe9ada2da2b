//! The event stream: events in order, ending like `execute`.

use super::*;

/// A compact rendering of an event, for order assertions.
fn label(e: &RunEvent) -> String {
    match e {
        RunEvent::RunStarted { target, .. } => format!("run-started:{target}"),
        RunEvent::StepStarted { step, .. } => format!("step-started:{step}"),
        RunEvent::TextDelta { .. } => "text".into(),
        RunEvent::Usage { usage, .. } => format!("usage:{}", usage.total_tokens),
        RunEvent::ToolCallRequested { call_id, .. } => format!("requested:{call_id}"),
        RunEvent::ToolCallDecision {
            call_id, decision, ..
        } => match decision {
            CallDecision::Allowed => format!("allowed:{call_id}"),
            CallDecision::ReplyToModel { .. } => format!("replied:{call_id}"),
            CallDecision::Blocked { .. } => format!("blocked:{call_id}"),
            CallDecision::GuardFailed { .. } => format!("guard-failed:{call_id}"),
            CallDecision::Rejected { .. } => format!("rejected:{call_id}"),
            _ => format!("decision:{call_id}"),
        },
        RunEvent::ToolResult {
            call_id, is_error, ..
        } => format!(
            "result:{call_id}:{}",
            if *is_error { "error" } else { "ok" }
        ),
        RunEvent::ToolError { call_id, .. } => format!("tool-error:{call_id}"),
        RunEvent::ToolCallCancelled { call_id, .. } => format!("cancelled:{call_id}"),
        RunEvent::RouteChosen { route, .. } => format!("route:{route}"),
        RunEvent::FinalAnswer { text, .. } => format!("final:{text}"),
        RunEvent::StepFinished { step, outcome, .. } => match outcome {
            StepOutcome::Succeeded => format!("step-finished:{step}"),
            _ => format!("step-failed:{step}"),
        },
        RunEvent::Completed(out) => format!("completed:{}", out.text),
        _ => "other".into(),
    }
}

#[tokio::test]
async fn the_stream_yields_events_in_order_and_ends_like_execute() {
    let f = fixture(self_correction_script());
    let mut stream = f.app.stream(
        Target::agent::<SupportAgent>(),
        "Where is my order?",
        acme().run_id("run-1"),
    );
    let mut labels = Vec::new();
    let mut last = None;
    while let Some(item) = stream.next().await {
        let event = item.expect("no error");
        labels.push(label(&event));
        last = Some(event);
    }
    let mut compact: Vec<String> = Vec::new();
    for l in labels {
        // Text deltas are many; keep one per run of them.
        if l == "text" && compact.last().is_some_and(|p| p == "text") {
            continue;
        }
        compact.push(l);
    }
    assert_eq!(
        compact,
        [
            "run-started:support-agent",
            "step-started:support-agent",
            "usage:15",
            "requested:c1",
            "replied:c1",
            "result:c1:error",
            "requested:c2",
            "allowed:c2",
            "result:c2:ok",
            "text",
            "final:Order ACME-42 has shipped.",
            "step-finished:support-agent",
            "completed:Order ACME-42 has shipped.",
        ]
    );
    let Some(RunEvent::Completed(streamed)) = last else {
        panic!("the stream ends with Completed")
    };
    // `execute` on the same script returns the same output.
    let g = fixture(self_correction_script());
    let executed = g
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "Where is my order?",
            acme().run_id("run-1"),
        )
        .await
        .unwrap();
    assert_eq!(streamed, executed);
    assert_eq!(g.model.requests(), f.model.requests());
}

#[tokio::test]
async fn the_stream_ends_with_the_same_error_as_execute() {
    let f = fixture([Turn::tool_call(
        "get-order-tool",
        json!({"orderId": "EVIL-1"}),
    )]);
    let items: Vec<_> = f
        .app
        .stream(Target::agent::<SupportAgent>(), "x", acme())
        .collect()
        .await;
    let last = items.last().unwrap();
    let Err(err) = last else {
        panic!("the stream ends with the error")
    };
    assert!(err.as_blocked().is_some());
    assert!(items[..items.len() - 1].iter().all(Result::is_ok));
}
