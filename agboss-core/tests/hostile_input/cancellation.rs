//! Cancelled calls: the listener learns whether the tool had run.

use super::*;

#[tokio::test]
async fn a_cancelled_call_tells_the_listener_whether_the_tool_had_run() {
    let audit = std::sync::Arc::new(Audit::default());
    let app = App::builder()
        .tool::<HiEffectTool>()
        .tool_call_listener(std::sync::Arc::clone(&audit))
        .build()
        .unwrap();
    let callback = app.callbacks().remove(0);
    for (call_id, stop) in [("c1", "after-run"), ("c2", "in-run")] {
        let args = json!({ "stop": stop }).to_string();
        let call = callback.call(ToolInvocation::new(call_id, &args));
        // The call stalls (in the after-hook, or in the tool); the caller gives up.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
        assert!(gave_up.is_err(), "{call_id} should stall");
    }
    let done = callback
        .call(ToolInvocation::new("c3", r#"{"stop":"nowhere"}"#))
        .await;
    assert!(matches!(done, CallOutcome::Ran(_)));
    assert_eq!(
        *audit.0.lock().unwrap(),
        [
            "cancelled c1 tool_ran=true",
            "cancelled c2 tool_ran=false",
            "completed c3"
        ]
    );
}
