//! Interceptors in the loop: reply-to-model self-correction, blocks, failing interceptors, wrapped callbacks.

use super::*;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn reply_to_model_lets_the_model_self_correct() {
    let f = fixture(self_correction_script());
    let out = f
        .app
        .execute(
            Target::agent::<SupportAgent>(),
            "Where is my order?",
            acme(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Order ACME-42 has shipped.");
    assert_eq!(out.model_turns, 3);
    assert_eq!(out.tool_calls, 2);
    assert_eq!(out.usage, Usage::new(10, 5));

    let requests = f.model.requests();
    assert_eq!(requests.len(), 3);
    // The first request: instructions, the user's input, the agent's tools.
    assert_eq!(
        requests[0].messages[0],
        Message::system("You help with orders.")
    );
    assert_eq!(requests[0].messages[1], Message::user("Where is my order?"));
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["get-order-tool", "ordered-tool", "stuck-tool"]);
    // The reply arrived as the observation of call c1, and the tool did not run for it.
    assert_eq!(
        observations(&requests[1]),
        [(
            "c1".to_string(),
            "Order OTHER-9 does not belong to tenant acme. Ask the user to confirm their order ID."
                .to_string(),
            true
        )]
    );
    // The corrected call ran; its output is c2's observation.
    let obs = observations(&requests[2]);
    assert_eq!(obs.len(), 2);
    assert_eq!(obs[1].0, "c2");
    assert_eq!(obs[1].1, r#"{"orderId":"ACME-42","status":"shipped"}"#);
    assert!(!obs[1].2);
    assert_eq!(f.log.entries(), ["run:ACME-42"]);
}

#[tokio::test]
async fn block_without_a_handler_fails_execute_with_tool_blocked_error() {
    let f = fixture([
        Turn::tool_call_with_id("c1", "get-order-tool", json!({"orderId": "EVIL-1"})),
        Turn::text("never reached"),
    ]);
    let err = f
        .app
        .execute(Target::agent::<SupportAgent>(), "refund EVIL-1", acme())
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a ToolBlockedError");
    assert_eq!(blocked.interceptor, "tenant-guard-tool-interceptor");
    assert_eq!(blocked.tool_name, "get-order-tool");
    assert_eq!(blocked.call_id, "c1");
    assert_eq!(
        blocked.kind,
        ToolCallDecision::Block {
            reason: "order EVIL-1 is flagged".into()
        }
    );
    assert!(matches!(
        *err,
        RunError::Step(StepFailedError::ToolBlocked(_))
    ));
    // The step failed at once: no further model turn, the tool never ran.
    assert_eq!(f.model.request_count(), 1);
    assert!(f.log.entries().is_empty());
}

#[tokio::test]
async fn failing_or_panicking_interceptors_fail_the_step_closed() {
    for (order, expect_panic) in [("ERR-1", false), ("BOOM-1", true)] {
        let f = fixture([
            Turn::tool_call("get-order-tool", json!({ "orderId": order })),
            Turn::text("never reached"),
        ]);
        let err = f
            .app
            .execute(Target::agent::<SupportAgent>(), "x", acme())
            .await
            .unwrap_err();
        let RunError::Step(StepFailedError::ToolCall { step, source, .. }) = &*err else {
            panic!("expected a failed step, got {err:?}");
        };
        assert_eq!(step, "support-agent");
        if expect_panic {
            assert!(matches!(
                source.kind(),
                ToolCallErrorKind::InterceptorPanicked { .. }
            ));
        } else {
            assert!(matches!(
                source.kind(),
                ToolCallErrorKind::InterceptorFailed { .. }
            ));
        }
        assert_eq!(f.model.request_count(), 1, "never a soft observation");
        assert!(f.log.entries().is_empty());
    }
}

/// A decorator through the `wrap_callbacks` hook sees every call of the loop.
#[tokio::test]
async fn wrap_callbacks_decorates_every_tool_of_the_loop() {
    use agboss_core::callback::{SharedToolCallback, ToolCallback, ToolInvocation, ToolMetadata};
    use agboss_core::model::ToolDefinition;

    struct Counting {
        inner: SharedToolCallback,
        seen: Arc<Mutex<Vec<String>>>,
    }
    impl ToolCallback for Counting {
        fn definition(&self) -> &ToolDefinition {
            self.inner.definition()
        }
        fn metadata(&self) -> &ToolMetadata {
            self.inner.metadata()
        }
        fn call<'a>(
            &'a self,
            invocation: ToolInvocation<'a>,
        ) -> futures::future::BoxFuture<'a, CallOutcome> {
            self.seen.lock().unwrap().push(format!(
                "{}:{}",
                self.inner.definition().name,
                invocation.call_id
            ));
            self.inner.call(invocation)
        }
    }

    let seen = Arc::new(Mutex::new(Vec::new()));
    let paths = Arc::new(Mutex::new(Vec::new()));
    let (seen2, paths2) = (Arc::clone(&seen), Arc::clone(&paths));
    let ctx = acme().wrap_callbacks(move |scopes, callbacks| {
        paths2
            .lock()
            .unwrap()
            .push(scopes.iter().map(|s| s.name).collect::<Vec<_>>());
        callbacks
            .into_iter()
            .map(|inner| {
                Arc::new(Counting {
                    inner,
                    seen: Arc::clone(&seen2),
                }) as SharedToolCallback
            })
            .collect()
    });
    let f = fixture(self_correction_script());
    f.app
        .execute(Target::agent::<SupportAgent>(), "x", ctx)
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["get-order-tool:c1", "get-order-tool:c2"]
    );
    assert_eq!(
        *paths.lock().unwrap(),
        [vec!["test-application", "support-agent"]]
    );
}
