//! The listener context: handed back to after_call, on_error and after_completion; once per call; no-op defaults; panics.

use super::*;
use agboss_core::error::ToolCallErrorKind;

// --- Correlation context -------------------------------------------------------------------

#[tokio::test]
async fn the_context_of_before_call_is_handed_back_to_after_call_and_after_completion() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let out = cb.call(inv("c1", &text("hi"))).await.settle().unwrap();
    assert_eq!(
        out,
        Seen::Output {
            content: text("echo:hi"),
            truncated: false
        }
    );
    assert_eq!(
        rec.lines(),
        [
            format!("before c1 lsn-echo-tool {}", text("hi")),
            format!("after c1#0 c1 output {}", text("echo:hi")),
            "completion c1#0 c1".to_string(),
        ]
    );
}

#[tokio::test]
async fn the_context_is_handed_back_to_on_error() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    cb.call(inv("c2", &text("fail")))
        .await
        .settle()
        .unwrap_err();
    let lines = rec.lines();
    assert!(lines[1].starts_with("error c2#0 c2 tool `lsn-echo-tool` failed: disk on fire"));
    assert_eq!(lines[2], "completion c2#0 c2");
}

#[tokio::test]
async fn after_completion_runs_once_after_success() {
    let (app, _) = app();
    let rec = Arc::new(Recording::default());
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    cb.call(inv("s", &text("ok"))).await.settle().unwrap();
    let lines = rec.lines();
    assert_eq!(count(&lines, "completion"), 1);
    assert_eq!(lines.last().unwrap(), "completion s#0 s");
}

#[tokio::test]
async fn after_completion_runs_once_after_failure_handling_reported_or_propagated() {
    let (app, _) = app();
    for listener in [Recording::default(), Recording::reporting("it failed")] {
        let rec = Arc::new(listener);
        let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
        let _ = cb.call(inv("f", &text("fail"))).await;
        let lines = rec.lines();
        assert_eq!(count(&lines, "completion"), 1, "{lines:?}");
        // After the failure handling, not before.
        assert!(lines[1].starts_with("error"));
        assert_eq!(lines[2], "completion f#0 f");
    }
}

#[tokio::test]
async fn after_completion_is_not_called_when_before_call_panics() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::panicking_in("before_call"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("p", &text("hi"))))
        .catch_unwind()
        .await;
    assert!(caught.is_err(), "the panic propagates");
    assert!(rec.lines().is_empty(), "{:?}", rec.lines());
    assert_eq!(runs.get(), 0, "the tool did not run");
}

#[tokio::test]
async fn all_listener_methods_have_no_op_defaults() {
    let (app, _) = app();
    let plain = echo(&app);
    let wrapped = ToolCallListeners::wrap(echo(&app), Nop);
    for t in ["hi", "reply"] {
        assert_eq!(
            wrapped.call(inv("n", &text(t))).await.settle().unwrap(),
            plain.call(inv("n", &text(t))).await.settle().unwrap()
        );
    }
    // The default `on_error` propagates the error.
    let err = wrapped
        .call(inv("n", &text("fail")))
        .await
        .settle()
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::ToolFailed { .. }),
        "{err:?}"
    );
}

// --- Listener methods are not guarded --------------------------------------------------------

#[tokio::test]
async fn a_panicking_after_call_discards_a_result_whose_side_effects_happened() {
    let (app, runs) = app();
    let rec = Arc::new(Recording::panicking_in("after_call"));
    let cb = ToolCallListeners::wrap(echo(&app), Arc::clone(&rec));
    let caught = AssertUnwindSafe(cb.call(inv("a", &text("hi"))))
        .catch_unwind()
        .await;
    let payload = caught.expect_err("the panic propagates");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("listener after_call exploded")
    );
    assert_eq!(runs.get(), 1, "the tool ran");
    // `after_completion` still ran, once (a `finally`), before the panic went on.
    assert_eq!(count(&rec.lines(), "completion"), 1);
}
