//! Approval in the agent loop: tickets only after every guard allowed, bound to their input, consumed once, siblings run once, expiry, races, a changed policy.

use super::*;

#[tokio::test]
async fn a_reply_a_block_or_a_failing_guard_never_creates_a_ticket() {
    for reason in ["reply", "block", "fail"] {
        let fx = Fixture::new();
        let model = Arc::new(ScriptedModel::new([
            refund(50_000, reason),
            Turn::text("ok"),
        ]));
        let app = fx.app(&model, "w");
        let result = app
            .execute(
                target(),
                "refund",
                RunContext::new().tenant("acme").run_id("r"),
            )
            .await;
        match reason {
            "reply" => assert_eq!(result.unwrap().text, "ok"),
            _ => assert!(result.unwrap_err().as_step_failed().is_some(), "{reason}"),
        }
        assert!(
            fx.store.run_tickets("acme", "r").await.unwrap().is_empty(),
            "{reason}"
        );
        assert!(fx.log.notified().is_empty(), "{reason}: a human was woken");
        assert!(fx.log.refunds().is_empty());
    }
}

#[tokio::test]
async fn an_approved_call_runs_once_bound_to_its_input() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(12_500, "broken"),
        Turn::text("Refunded."),
    ]));
    let app = fx.app(&model, "w");
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let (events, out) = app
        .stream(target(), "refund ACME-42", ctx())
        .collect_all()
        .await;
    let out = out.map_err(RunError::from);
    let Err(RunError::AwaitingApproval { run_id, tickets }) = out else {
        panic!("{out:?}");
    };
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ApprovalRequested {
            notified: Ok(()),
            ..
        }
    )));
    let [ticket] = tickets.as_slice() else {
        panic!("{tickets:?}")
    };
    assert_eq!(ticket.tool, "ap-refund-tool");
    assert_eq!(ticket.channel, "ap-manager-channel");
    assert_eq!(ticket.state, TicketState::Pending);
    assert_eq!(ticket.run_id, run_id);
    assert_eq!(ticket.thread_id.as_deref(), Some(thread.id.as_str()));
    assert_eq!(
        ticket.input,
        r#"{"orderId":"ACME-42","amountCents":12500,"reason":"broken"}"#
    );
    assert_eq!(ticket.fingerprint.len(), 64);
    // Stored before the channel was told; the tool did not run.
    assert_eq!(
        fx.log.notified(),
        vec![fx.store.ticket("acme", &ticket.id).await.unwrap()]
    );
    assert!(fx.log.refunds().is_empty());

    // Who may decide: the channel's managers of this tenant, nobody else.
    let clerk = Decision::approve(&ticket.id).by(Approver::new("tom").tenant("acme"));
    assert!(matches!(
        app.decide("acme", clerk).await,
        Err(RunError::Unauthorized { .. })
    ));
    let nobody = Decision::approve(&ticket.id);
    assert!(matches!(
        app.decide("acme", nobody).await,
        Err(RunError::Unauthorized { .. })
    ));
    let foreign = Decision::approve(&ticket.id).by(manager());
    assert!(matches!(
        app.decide("globex", foreign).await,
        Err(RunError::Store(StoreError::TicketNotFound { .. }))
    ));
    let outsider =
        Decision::approve(&ticket.id).by(Approver::new("x").tenant("globex").role("manager"));
    assert!(matches!(
        app.decide("acme", outsider).await,
        Err(RunError::Unauthorized { .. })
    ));

    let out = app
        .resume(
            &thread.id,
            Decision::approve(&ticket.id).by(manager()),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded.");
    assert_eq!(fx.log.refunds(), vec![12_500], "ran exactly once");
    let done = fx.store.ticket("acme", &ticket.id).await.unwrap();
    assert_eq!(done.state, TicketState::Completed);
    // Decided once; the finished run is not resumed again.
    let again = app
        .resume(
            &thread.id,
            Decision::approve(&ticket.id).by(manager()),
            ctx(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(*again, RunError::Store(StoreError::TicketState { .. })),
        "{again}"
    );
    let rerun = app.resume_run(&run_id, ctx()).await.unwrap_err();
    assert!(
        matches!(*rerun, RunError::Store(StoreError::RunFinished { .. })),
        "{rerun}"
    );
    assert_eq!(fx.log.refunds(), vec![12_500]);
}

#[tokio::test]
async fn a_call_under_the_condition_needs_no_ticket() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(4_000, "broken"),
        Turn::text("Done."),
    ]));
    let app = fx.app(&model, "w");
    let out = app
        .execute(target(), "refund", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Done.");
    assert_eq!(fx.log.refunds(), vec![4_000]);
    assert!(fx.log.notified().is_empty());
}

#[tokio::test]
async fn a_rejection_becomes_the_observation_and_the_loop_goes_on() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Sorry."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-r");
    let tickets = paused(&app, ctx()).await;
    let reject =
        Decision::reject(&tickets[0].id, "Refunds above 100.00 need a receipt.").by(manager());
    app.decide("acme", reject).await.unwrap();
    let out = app.resume_run("run-r", ctx()).await.unwrap();
    assert_eq!(out.text, "Sorry.");
    assert!(fx.log.refunds().is_empty());
    let req = model.last_request().unwrap();
    assert!(
        req.messages
            .iter()
            .any(|m| m.text() == Some("Refunds above 100.00 need a receipt."))
    );
}

#[tokio::test]
async fn an_edited_input_passes_the_before_chain_again_and_runs_instead() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Refunded 90.00."),
        refund(60_000, "broken"),
    ]));
    let app = fx.app(&model, "w");
    let tickets = paused(&app, RunContext::new().tenant("acme").run_id("run-e")).await;
    let edited = r#"{"orderId":"ACME-42","amountCents":9000,"reason":"partial"}"#;
    app.decide("acme", Decision::edit(&tickets[0].id, edited).by(manager()))
        .await
        .unwrap();
    let out = app
        .resume_run("run-e", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded 90.00.");
    assert_eq!(
        fx.log.refunds(),
        vec![9_000],
        "the edited input ran, not the requested one"
    );

    // An edit the guard refuses is refused like any call: the before chain ran on it.
    let tickets = paused(&app, RunContext::new().tenant("acme").run_id("run-b")).await;
    let blocked = r#"{"orderId":"ACME-42","amountCents":500,"reason":"block"}"#;
    app.decide(
        "acme",
        Decision::edit(&tickets[0].id, blocked).by(manager()),
    )
    .await
    .unwrap();
    let err = app
        .resume_run("run-b", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(err.as_blocked().is_some(), "{err}");
    assert_eq!(fx.log.refunds(), vec![9_000]);
}

#[tokio::test]
async fn siblings_of_a_gated_call_run_once_and_are_not_rerun_on_resume() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls([
            ("ap-lookup-tool", json!({ "orderId": "ACME-42" })),
            (
                "ap-refund-tool",
                json!({ "orderId": "ACME-42", "amountCents": 20_000, "reason": "a" }),
            ),
            (
                "ap-refund-tool",
                json!({ "orderId": "ACME-43", "amountCents": 30_000, "reason": "b" }),
            ),
        ]),
        Turn::text("All done."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-p");
    let tickets = paused(&app, ctx()).await;
    assert_eq!(tickets.len(), 2, "each gated call gets its own ticket");
    assert_ne!(tickets[0].fingerprint, tickets[1].fingerprint);
    assert_eq!(fx.log.lookups.load(Ordering::SeqCst), 1);
    // One decided: the turn still waits for the other.
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    let err = app.resume_run("run-p", ctx()).await.unwrap_err();
    let RunError::AwaitingApproval { tickets: left, .. } = &*err else {
        panic!("{err}")
    };
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, tickets[1].id);
    assert_eq!(fx.log.refunds(), vec![20_000]);
    app.decide("acme", Decision::approve(&tickets[1].id).by(manager()))
        .await
        .unwrap();
    let out = app.resume_run("run-p", ctx()).await.unwrap();
    assert_eq!(out.text, "All done.");
    assert_eq!(fx.log.refunds(), vec![20_000, 30_000]);
    assert_eq!(
        fx.log.lookups.load(Ordering::SeqCst),
        1,
        "the sibling was not rerun"
    );
}

#[tokio::test]
async fn a_decision_made_under_another_policy_is_requested_again() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Done."),
    ]));
    let app = fx.app(&model, "w");
    let ctx = || RunContext::new().tenant("acme").run_id("run-c");
    let tickets = paused(&app, ctx()).await;
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    // The app is redeployed with one more interceptor on the tool's path.
    let changed = fx
        .builder(&model, "w2")
        .tool_interceptor::<ApAuditToolInterceptor>()
        .build()
        .unwrap();
    let err = changed.resume_run("run-c", ctx()).await.unwrap_err();
    let RunError::AwaitingApproval { tickets: again, .. } = &*err else {
        panic!("{err}")
    };
    assert_ne!(again[0].id, tickets[0].id);
    assert_eq!(again[0].fingerprint, tickets[0].fingerprint);
    let old = fx.store.ticket("acme", &tickets[0].id).await.unwrap();
    assert_eq!(old.state, TicketState::Superseded);
    assert!(fx.log.refunds().is_empty(), "not silently applied");
    changed
        .decide("acme", Decision::approve(&again[0].id).by(manager()))
        .await
        .unwrap();
    assert_eq!(
        changed.resume_run("run-c", ctx()).await.unwrap().text,
        "Done."
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

#[tokio::test]
async fn an_expired_ticket_cannot_be_decided() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([Turn::tool_call(
        "ap-quick-tool",
        json!({ "orderId": "ACME-1" }),
    )]));
    let app = fx.app(&model, "w");
    let tickets = paused(&app, RunContext::new().tenant("acme")).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = app
        .decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunError::Store(StoreError::TicketExpired { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn two_instances_racing_to_resume_one_ticket_have_one_winner() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("Done."),
    ]));
    let a = fx.app(&model, "a");
    let b = fx.app(&model, "b");
    let thread = a.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let tickets = paused(&a, ctx()).await;
    let id = tickets[0].id.clone();
    let (ra, rb) = tokio::join!(
        a.resume(&thread.id, Decision::approve(&id).by(manager()), ctx()),
        b.resume(&thread.id, Decision::approve(&id).by(manager()), ctx()),
    );
    let results = [ra, rb];
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    let loser = results.into_iter().find_map(Result::err).unwrap();
    assert!(
        matches!(
            *loser,
            RunError::Store(StoreError::TicketState { .. } | StoreError::LeaseHeld { .. })
        ),
        "{loser}"
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

#[tokio::test]
async fn without_a_store_a_gated_call_fails_its_step_and_never_runs() {
    let log = Arc::new(ApLog::default());
    let model = Arc::new(ScriptedModel::new([
        refund(50_000, "broken"),
        Turn::text("?"),
    ]));
    let app = App::builder()
        .agent::<ApDeskAgent>()
        .provide_arc(Arc::clone(&log))
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .build()
        .unwrap();
    let err = app
        .execute(target(), "refund", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    let step = err.as_step_failed().expect("the step fails");
    assert!(step.to_string().contains("needs approval"), "{step}");
    assert!(log.refunds().is_empty());
    assert!(log.notified().is_empty());
}
