//! Tool calls in the loop: invalid and unknown calls, parallel calls and their bound, cancelling siblings.

use super::*;

#[tokio::test]
async fn invalid_and_unknown_calls_become_observations_and_the_loop_goes_on() {
    let f = fixture([
        calls(&[
            ("u1", "refund-everything-tool", "{}"),
            ("j1", "get-order-tool", "{orderId: ACME-1"),
            ("d1", "get-order-tool", r#"{"orderId": 42}"#),
            ("d2", "get-order-tool", r#"{"orderId": "A"}"#),
            ("e1", "get-order-tool", ""),
        ]),
        Turn::text("Sorry, let me try again later."),
    ]);
    let out = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap();
    assert_eq!(out.text, "Sorry, let me try again later.");
    let obs = observations(&f.model.requests()[1]);
    let ids: Vec<&str> = obs.iter().map(|o| o.0.as_str()).collect();
    assert_eq!(ids, ["u1", "j1", "d1", "d2", "e1"]);
    assert!(obs.iter().all(|o| o.2), "every observation is an error");
    assert_eq!(
        obs[0].1,
        "Unknown tool `refund-everything-tool`. The tools you can call are: get-order-tool, ordered-tool, stuck-tool."
    );
    assert!(obs[1].1.contains("are not valid JSON"), "{}", obs[1].1);
    // DTO failures name the field paths.
    assert!(obs[2].1.contains("$.orderId:"), "{}", obs[2].1);
    assert!(obs[3].1.contains("$.orderId:"), "{}", obs[3].1);
    assert!(!obs[3].1.contains("line 1"), "{}", obs[3].1);
    // Empty arguments are `{}`: a missing required field.
    assert!(obs[4].1.contains("$.orderId: is required"), "{}", obs[4].1);
    assert!(f.log.entries().is_empty(), "no tool ran");
}

#[tokio::test]
async fn parallel_calls_run_concurrently_and_keep_the_models_order() {
    let f = fixture([
        calls(&[
            ("p1", "ordered-tool", r#"{"label":"first"}"#),
            ("p2", "ordered-tool", r#"{"label":"second"}"#),
        ]),
        Turn::text("done"),
    ]);
    // `first` cannot finish before `second` ran: a sequential loop would never end (the guard
    // turns that into a failure instead of a hang).
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        f.app.execute(Target::agent::<SupportAgent>(), "x", acme()),
    )
    .await
    .expect("the calls ran concurrently")
    .unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(f.log.entries(), ["second:done", "first:done"]);
    let obs = observations(&f.model.requests()[1]);
    assert_eq!(
        obs,
        [
            ("p1".to_string(), r#"{"label":"first"}"#.to_string(), false),
            ("p2".to_string(), r#"{"label":"second"}"#.to_string(), false),
        ]
    );
}

#[tokio::test]
async fn max_parallel_tool_calls_bounds_the_concurrency() {
    let three_counts = || {
        calls(&[
            ("p1", "ordered-tool", r#"{"label":"count"}"#),
            ("p2", "ordered-tool", r#"{"label":"count"}"#),
            ("p3", "ordered-tool", r#"{"label":"count"}"#),
        ])
    };
    // `serial-agent` sets `max_parallel_tool_calls = 1`.
    let f = fixture([three_counts(), Turn::text("done")]);
    let out = f
        .app
        .execute(Target::agent::<SerialAgent>(), "x", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 1);

    // The default bound lets all three overlap; a run-level bound of 2 caps them.
    let f = fixture([three_counts(), Turn::text("done")]);
    f.app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap();
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 3);
    let f = fixture([three_counts(), Turn::text("done")]);
    f.app
        .execute(
            Target::agent::<SupportAgent>(),
            "x",
            acme().max_parallel_tool_calls(2),
        )
        .await
        .unwrap();
    assert_eq!(f.log.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_block_cancels_sibling_calls_still_in_flight() {
    let f = fixture([
        calls(&[
            ("s1", "stuck-tool", r#"{"label":"slow"}"#),
            ("b1", "get-order-tool", r#"{"orderId":"EVIL-7"}"#),
            ("q1", "get-order-tool", r#"{"orderId":"ACME-7"}"#),
        ]),
        Turn::text("never reached"),
    ]);
    let stream = f.app.stream(
        Target::agent::<SupportAgent>(),
        "x",
        acme().max_parallel_tool_calls(2),
    );
    // If the loop waited for its siblings, `stuck-tool` would hold it forever.
    let (events, result) = tokio::time::timeout(Duration::from_secs(20), stream.collect_all())
        .await
        .expect("the block ended the step without waiting for siblings");
    let err = result.unwrap_err();
    assert_eq!(err.as_blocked().unwrap().call_id, "b1");
    // The sibling started and was dropped before finishing; the queued call never started.
    assert_eq!(f.log.entries(), ["stuck:start"]);
    let cancelled: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCallCancelled { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, ["s1", "q1"]);
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallDecision { call_id, decision: CallDecision::Blocked { .. }, .. } if call_id == "b1"
    )));
}

#[tokio::test]
async fn an_unknown_tool_name_of_a_megabyte_is_quoted_short() {
    let name = format!("{}-tool", "x".repeat(1 << 20));
    let f = fixture([calls(&[("u1", name.as_str(), "{}")]), Turn::text("Sorry.")]);
    let out = f
        .app
        .execute(Target::agent::<SupportAgent>(), "x", acme())
        .await
        .unwrap();
    assert_eq!(out.text, "Sorry.");
    let obs = observations(&f.model.requests()[1]);
    assert_eq!(obs.len(), 1);
    assert!(obs[0].2, "an error observation");
    assert!(
        obs[0].1.starts_with("Unknown tool `xxx"),
        "{}",
        &obs[0].1[..80]
    );
    assert!(
        obs[0].1.len() <= 2 * agboss_core::dto::MAX_ERROR_TEXT,
        "the observation quotes {} bytes of the name",
        obs[0].1.len()
    );
}
