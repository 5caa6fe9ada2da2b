//! `on_error`: reporting or propagating, panics, replies to the model, blocks, invalid input, timeouts.

use super::*;
use agboss_core::error::ToolCallErrorKind;

// --- Error policy ----------------------------------------------------------------------------

#[tokio::test]
async fn on_error_returning_some_reports_the_failure_to_the_model_as_the_result() {
    let (app, _) = app();
    let rec = Arc::new(Recording::reporting("Tool failed, try later"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("r", &text("fail"))).await.settle().unwrap();
    assert_eq!(
        out,
        Seen::ReportedError {
            message: "Tool failed, try later".into()
        }
    );
    assert!(out.is_error());
    assert_eq!(out.content(), "Tool failed, try later");
}

#[tokio::test]
async fn on_error_returning_none_propagates_the_error() {
    let (app, _) = app();
    let cb = ToolCallListeners::wrap(echo(&app), Recording::default());
    let err = cb
        .call(inv("r", &text("panic")))
        .await
        .settle()
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::ToolPanicked { message, .. } if message == "tool exploded"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_panicking_on_error_replaces_the_tool_error() {
    let (app, _) = app();
    let rec = Arc::new(Recording::panicking_in("on_error"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("e", &text("fail"))))
        .catch_unwind()
        .await;
    let payload = caught.expect_err("the listener's panic, not the tool's error");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("listener on_error exploded")
    );
    assert_eq!(count(&rec.lines(), "completion"), 1);
}

// --- How a listener sees our outcomes --------------------------------------------------------

#[tokio::test]
async fn a_reply_to_model_is_a_result_the_listener_can_tell_from_a_tool_output() {
    let (app, runs) = app();
    let seen = Arc::new(Mutex::new(None));
    struct Catch(Arc<Mutex<Option<Seen>>>);
    impl ToolCallListener for Catch {
        type Context = ();
        fn after_call(&self, _: &mut (), _: &ToolCallInfo<'_>, result: &CallOutcome) {
            *self.0.lock().unwrap() = Seen::of(result);
        }
    }
    let cb = ToolCallListeners::wrap(echo(&app), Catch(Arc::clone(&seen)));
    let out = cb.call(inv("r", &text("reply"))).await.settle().unwrap();
    let expected = Seen::ReplyToModel {
        message: "use another text".into(),
        interceptor: "lsn-guard-tool-interceptor",
    };
    assert_eq!(out, expected);
    assert_eq!(seen.lock().unwrap().as_ref(), Some(&expected));
    assert!(expected.is_error());
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_block_is_seen_by_on_error_but_never_softened() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::reporting("nothing to see"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let err = cb
        .call(inv("b", &text("block")))
        .await
        .settle()
        .unwrap_err();
    let blocked = err.as_blocked().expect("still a block");
    assert_eq!(blocked.interceptor, "lsn-guard-tool-interceptor");
    assert_eq!(
        blocked.kind,
        ToolCallDecision::Block {
            reason: "not allowed".into()
        }
    );
    let lines = rec.lines();
    assert!(lines[1].starts_with("error b#0 b tool `lsn-echo-tool` (call b) was blocked"));
    assert_eq!(lines[2], "completion b#0 b");
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn an_invalid_input_goes_to_on_error_with_the_field_errors() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::reporting("fix `text`"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("i", r#"{"text": 42}"#)).await.settle().unwrap();
    assert_eq!(out.content(), "fix `text`");
    assert!(rec.lines()[1].starts_with("error i#0 i invalid input for tool `lsn-echo-tool`"));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn a_timeout_goes_to_on_error() {
    let (app, _) = app();
    let slow = app
        .callbacks()
        .into_iter()
        .find(|c| c.definition().name == "lsn-slow-tool")
        .unwrap();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(slow, Arc::clone(&rec));
    let err = cb.call(inv("t", &text("x"))).await.settle().unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ToolCallErrorKind::Timeout { timeout_ms: 20, .. }
        ),
        "{err:?}"
    );
    assert!(rec.lines()[1].starts_with("error t#0 t tool `lsn-slow-tool` timed out"));
}
