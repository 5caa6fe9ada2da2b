//! The interceptor chain: order, inspection, blocks, replies to the model, failing hooks, attachment and exclusion.

use super::*;
use agboss_core::CallDecision;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn before_runs_outer_to_inner_and_after_inner_to_outer() {
    let rec = Arc::new(Recorder::new());
    let out = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("hi"))
        .await
        .unwrap();
    assert_eq!(out.text, "[outer][inner]hi");
    assert_eq!(out.length, 2);
    assert_eq!(
        rec.log(),
        [
            "before:outer",
            "before:inner",
            "run",
            "after:inner",
            "after:outer"
        ]
    );
}

#[tokio::test]
async fn the_resolved_chain_is_inspectable() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let chain = app.direct_chain::<EchoTool>().unwrap();
    assert_eq!(
        chain.before_order(),
        ["outer-tool-interceptor", "inner-tool-interceptor"]
    );
    assert_eq!(
        chain.after_order(),
        ["inner-tool-interceptor", "outer-tool-interceptor"]
    );
    assert_eq!(chain.path(), ["test-application"]);
}

#[tokio::test]
async fn block_stops_the_chain_and_the_tool() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .call_id("call_9")
        .invoke(item("outer-block"))
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a block");
    assert_eq!(blocked.interceptor, "outer-tool-interceptor");
    assert_eq!(blocked.call_id, "call_9");
    assert_eq!(
        blocked.kind,
        ToolCallDecision::Block {
            reason: "outer says no".into()
        }
    );
    assert_eq!(rec.log(), ["before:outer"]);
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);

    // A step handler catches it as a StepFailedError and can tell it was a block.
    let step = StepFailedError::from_tool_call("echo-tool", err);
    assert!(matches!(step, StepFailedError::ToolBlocked(_)));
}

#[tokio::test]
async fn reply_to_model_is_an_outcome_for_a_model_and_a_blocked_error_on_direct_invoke() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let outcome = app.tool::<EchoTool>().call(r#"{"text":"reply"}"#).await;
    assert!(
        matches!(
            &outcome,
            CallOutcome::ReplyToModel { message, interceptor: "inner-tool-interceptor" }
                if message == "try another text"
        ),
        "{outcome:?}"
    );
    assert_eq!(
        outcome.decision(),
        CallDecision::ReplyToModel {
            interceptor: "inner-tool-interceptor".into(),
            message: "try another text".into()
        }
    );
    let err = app
        .tool::<EchoTool>()
        .invoke(item("reply"))
        .await
        .unwrap_err();
    assert_eq!(
        err.as_blocked().unwrap().kind,
        ToolCallDecision::ReplyToModel {
            message: "try another text".into()
        }
    );
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_failing_interceptor_fails_closed() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("error"))
        .await
        .unwrap_err();
    match err.kind() {
        ToolCallErrorKind::InterceptorFailed {
            interceptor, error, ..
        } => {
            assert_eq!(*interceptor, "inner-tool-interceptor");
            assert_eq!(error.to_string(), "acl backend down");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.is_guard_failure());
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_panicking_interceptor_fails_closed() {
    let rec = Arc::new(Recorder::new());
    let err = app(&rec)
        .tool::<EchoTool>()
        .invoke(item("interceptor-panic"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::InterceptorPanicked { interceptor: "inner-tool-interceptor", message, .. } if message == "interceptor exploded"),
        "{err:?}"
    );
    assert_eq!(rec.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_interceptor_attached_twice_runs_once_and_exclusion_removes_it() {
    let rec = Arc::new(Recorder::new());
    let app = App::builder()
        .tool_interceptor::<OuterToolInterceptor>()
        .tool::<TwiceTool>()
        .tool::<ExcludingTool>()
        .provide_arc(Arc::clone(&rec))
        .build()
        .unwrap();
    app.tool::<TwiceTool>().invoke(item("a")).await.unwrap();
    assert_eq!(rec.log(), ["before:outer", "run", "after:outer"]);
    let chain = app.direct_chain::<TwiceTool>().unwrap();
    assert_eq!(chain.entries().len(), 1);
    assert_eq!(
        chain.entries()[0].origin.kind,
        agboss_core::contract::scope::ScopeKind::Application
    );

    rec.log.lock().unwrap().clear();
    app.tool::<ExcludingTool>().invoke(item("b")).await.unwrap();
    assert_eq!(rec.log(), ["run"]);
    let chain = app.direct_chain::<ExcludingTool>().unwrap();
    assert!(chain.entries().is_empty());
    assert_eq!(chain.exclusions().len(), 1);
}

#[tokio::test]
async fn a_hook_with_a_large_future_runs_like_any_other() {
    let app = App::builder()
        .tool_interceptor::<BigFutureToolInterceptor>()
        .tool::<PlainEchoTool>()
        .build()
        .unwrap();
    let out = app
        .tool::<PlainEchoTool>()
        .invoke(item("ok"))
        .await
        .unwrap();
    assert_eq!(out.text, "ok");
    let err = app
        .tool::<PlainEchoTool>()
        .invoke(item("deny"))
        .await
        .unwrap_err();
    assert!(err.as_blocked().is_some());
}

#[tokio::test]
async fn hooks_see_the_dto_not_unknown_members_the_model_sent() {
    let app = App::builder()
        .tool_interceptor::<InputShapeToolInterceptor>()
        .tool::<PlainEchoTool>()
        .build()
        .unwrap();
    let outcome = app
        .tool::<PlainEchoTool>()
        .call(r#"{"text":"x","isAdmin":true,"tenant":"other"}"#)
        .await;
    assert!(
        matches!(
            &outcome,
            CallOutcome::ReplyToModel { message, interceptor: "input-shape-tool-interceptor" }
                if message == "text"
        ),
        "{outcome:?}"
    );
}
