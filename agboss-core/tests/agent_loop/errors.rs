//! Errors of the loop: tool errors (reported or failing the step), max turns, typed model and target errors.

use super::*;
use agboss_core::contract::agent::ToolErrorPolicy;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn a_tool_error_is_reported_safely_by_default() {
    let f = fixture([
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("The order system is down."),
    ]);
    let (events, result) = f
        .app
        .stream(Target::agent::<SupportAgent>(), "x", acme())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "The order system is down.");
    let obs = observations(&f.model.requests()[1]);
    assert_eq!(obs.len(), 1);
    assert!(obs[0].2);
    assert!(
        obs[0].1.contains("`get-order-tool` failed (tool error)"),
        "{}",
        obs[0].1
    );
    assert!(
        !obs[0].1.contains("s3cret"),
        "no internal details for the model"
    );
    // The operator sees the full error in the event stream.
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolError { error, call_id, .. } if call_id == "c1" && error.contains("s3cret")
    )));
}

#[tokio::test]
async fn a_tool_error_fails_the_step_under_fail_step() {
    let f = fixture([
        Turn::tool_call("get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("never reached"),
    ]);
    let err = f
        .app
        .execute(Target::agent::<StrictAgent>(), "x", acme())
        .await
        .unwrap_err();
    let RunError::Step(StepFailedError::ToolCall { step, source, .. }) = &*err else {
        panic!("expected a failed step, got {err:?}");
    };
    assert_eq!(step, "strict-agent");
    assert!(matches!(
        source.kind(),
        ToolCallErrorKind::ToolFailed { .. }
    ));
    assert!(err.as_blocked().is_none());
    assert_eq!(f.model.request_count(), 1);

    // The same policy per tool, on an agent that reports by default.
    let f = fixture([
        Turn::tool_call("get-order-tool", json!({"orderId": "ACME-FAIL"})),
        Turn::text("never reached"),
    ]);
    let ctx = acme().tool_error_policy("get-order-tool", ToolErrorPolicy::FailStep);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", ctx)
        .await
        .unwrap_err();
    assert!(matches!(
        *err,
        RunError::Step(StepFailedError::ToolCall { .. })
    ));
}

#[tokio::test]
async fn max_turns_ends_the_loop_with_a_typed_error() {
    let looping = || {
        (0..5)
            .map(|_| Turn::tool_call("get-order-tool", json!({"orderId": "ACME-1"})))
            .collect::<Vec<_>>()
    };
    let f = fixture(looping());
    let err = f
        .app
        .execute(Target::agent::<ShortAgent>(), "x", acme())
        .await
        .unwrap_err();
    assert!(
        matches!(&*err, RunError::MaxTurnsExceeded { agent, max_turns: 2 } if agent == "short-agent"),
        "{err:?}"
    );
    assert_eq!(f.model.request_count(), 2);

    let f = fixture(looping());
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme().max_turns(3))
        .await
        .unwrap_err();
    assert!(matches!(
        *err,
        RunError::MaxTurnsExceeded { max_turns: 3, .. }
    ));
    assert_eq!(f.model.request_count(), 3);
}

#[tokio::test]
async fn model_errors_unknown_targets_missing_models_and_cancellation_are_typed() {
    let f = fixture([Turn::error(ModelError::other("provider down"))]);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::Model { ref step, .. } if step == "support-agent"));

    let err = f
        .app
        .execute("no-such-agent", "x", acme())
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::UnknownTarget { ref name, .. } if name == "no-such-agent"));

    let bare = App::builder().agent::<BillingAgent>().build().unwrap();
    let err = bare
        .execute("billing-agent", "x", RunContext::new())
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::NoModel { .. }));

    let token = CancelToken::new();
    token.cancel();
    let f = fixture([Turn::text("never")]);
    let err = f
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "x",
            acme().cancel_token(token),
        )
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::Cancelled));
    assert_eq!(f.model.request_count(), 0);
}
