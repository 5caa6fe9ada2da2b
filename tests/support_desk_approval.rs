//! The main demo's approval flow as a test: a refund above 100.00 that every guard allows waits
//! for `manager-channel`; a clerk is refused, a manager approves, the run resumes and the refund
//! runs exactly once (on SQLite, like the demo). A call a guard blocks or answers never gets a
//! ticket.
use std::sync::Arc;

use agboss_core::engine::workflow::{Flow, Recovery};
use agboss_core::engine::{Decision, RunContext, RunError, RunEvent, Target};
use agboss_core::model::{Message, Role, SharedChatModel};
use agboss_core::store::{
    MemoryStore, NewThread, SharedStore, SqliteStore, StoreError, TicketDecision, TicketState,
    TicketStore as _,
};
use agboss_core::{App, contract::channel::Approver};
use agboss_e2e::support_desk::{
    AuditLog, ManagerInbox, OrderStore, RefundInputDto, SupportClock, SupportDeskApplication,
    SupportRouter, SupportWorkflow, money, needs_manager_approval,
};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

fn refund(call_id: &str, order_id: &str, cents: i64) -> Turn {
    Turn::tool_call_with_id(
        call_id,
        "refund-order-tool",
        json!({"orderId": order_id, "amountCents": cents, "reason": "parcel arrived broken"}),
    )
}

fn app(model: &Arc<ScriptedModel>, store: &SharedStore) -> App {
    App::builder()
        .application::<SupportDeskApplication>()
        .shared_model(Arc::clone(model) as SharedChatModel)
        .store(store.clone())
        .build()
        .expect("the support desk builds")
}

fn manager() -> Approver {
    Approver::new("maria").tenant("acme").role("manager")
}

fn refunded(app: &App, order_id: &str) -> i64 {
    app.services()
        .get::<OrderStore>()
        .unwrap()
        .refunded(order_id)
}

fn inbox(app: &App) -> Arc<ManagerInbox> {
    app.services().get::<ManagerInbox>().unwrap()
}

#[test]
fn a_manager_is_needed_above_100_00_only() {
    let at = |amount_cents| RefundInputDto {
        order_id: "ACME-42".into(),
        amount_cents,
        reason: "broken".into(),
    };
    assert!(!needs_manager_approval(&at(10_000)));
    assert!(needs_manager_approval(&at(10_001)));
}

#[test]
fn amounts_read_as_money() {
    assert_eq!(money(12_500), "125.00");
    assert_eq!(money(240_000), "2,400.00");
    assert_eq!(money(123_456_789), "1,234,567.89");
    assert_eq!(money(5), "0.05");
    assert_eq!(money(-50), "-0.50");
}

#[tokio::test]
async fn the_demo_flow_waits_for_a_manager_refuses_a_clerk_and_refunds_once() {
    let model = Arc::new(ScriptedModel::new([
        Turn::text("billing-agent"),
        Turn::tool_call_with_id("call_1", "lookup-order-tool", json!({"orderId": "ACME-42"})),
        refund("call_2", "ACME-42", 12_500),
        // After the approval, the resumed run's agent reads the receipt.
        Turn::text("Refunded 125.00 on ACME-42."),
        // The customer's second turn: nothing is left to refund.
        Turn::text("billing-agent"),
        refund("call_3", "ACME-42", 1_500),
    ]));
    // On SQLite, like the demo.
    let dir = std::env::temp_dir().join(format!("agboss-approval-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SharedStore::new(SqliteStore::open(dir.join("desk.db")).await.unwrap());
    let app = app(&model, &store);
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);

    // Turn 1 stops at the gated call.
    let (events, out) = app
        .stream(
            Target::router::<SupportRouter>(),
            "Order 42 arrived broken, please refund it in full.",
            ctx(),
        )
        .collect_all()
        .await;
    let out = out.map_err(RunError::from);
    let Err(RunError::AwaitingApproval { run_id, tickets }) = out else {
        panic!("expected the run to wait for approval, got {out:?}");
    };
    let [ticket] = tickets.as_slice() else {
        panic!("{tickets:?}")
    };
    assert_eq!(ticket.tool, "refund-order-tool");
    assert_eq!(ticket.channel, "manager-channel");
    assert_eq!(ticket.call_id, "call_2");
    assert_eq!(ticket.run_id, run_id);
    assert_eq!(ticket.tenant, "acme");
    assert_eq!(ticket.thread_id.as_deref(), Some(thread.id.as_str()));
    assert_eq!(ticket.state, TicketState::Pending);
    assert_eq!(
        ticket.input,
        r#"{"orderId":"ACME-42","amountCents":12500,"reason":"parcel arrived broken"}"#
    );
    assert_eq!(ticket.fingerprint.len(), 64);
    let requested: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ApprovalRequested { ticket, notified } => Some((ticket.id.clone(), notified)),
            _ => None,
        })
        .collect();
    assert_eq!(requested, [(ticket.id.clone(), &Ok(()))]);

    // The whole before chain ran first (the audit hook saw the call, every later hook allowed
    // it), then the ticket was stored, then the channel was told; the refund did not run.
    let audit = app.services().get::<AuditLog>().unwrap().entries();
    assert!(
        audit
            .last()
            .unwrap()
            .starts_with("tool_use call_2 refund-order-tool"),
        "{audit:?}"
    );
    let stored = store.ticket("acme", &ticket.id).await.unwrap();
    assert_eq!(inbox(&app).tickets(), vec![stored]);
    assert_eq!(refunded(&app, "ACME-42"), 0);

    // Who may decide: a manager of acme, nobody else.
    for approver in [
        Approver::new("tom").tenant("acme").role("clerk"),
        Approver::new("max").role("manager"),
        Approver::new("gus").tenant("globex").role("manager"),
    ] {
        let id = approver.id.clone();
        let err = app
            .decide("acme", Decision::approve(&ticket.id).by(approver))
            .await
            .unwrap_err();
        assert!(matches!(err, RunError::Unauthorized { .. }), "{id}: {err}");
    }
    let err = app
        .resume(&thread.id, Decision::approve(&ticket.id), ctx())
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::Unauthorized { .. }), "{err}");
    assert_eq!(err.run_id(), ticket.run_id, "the run the ticket waits in");
    let still = store.ticket("acme", &ticket.id).await.unwrap();
    assert_eq!(still.state, TicketState::Pending);
    assert_eq!(refunded(&app, "ACME-42"), 0);

    // The manager approves: the run resumes from its journal and the refund runs once.
    let out = app
        .resume(
            &thread.id,
            Decision::approve(&ticket.id).by(manager()),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(out.run_id, run_id);
    assert_eq!(out.text, "Refunded 125.00 on ACME-42.");
    assert!(out.replayed_steps > 0);
    assert_eq!(refunded(&app, "ACME-42"), 12_500);
    let done = store.ticket("acme", &ticket.id).await.unwrap();
    assert_eq!(done.state, TicketState::Completed);
    assert!(
        matches!(&done.decision, Some(TicketDecision::Approved { by }) if by == "maria"),
        "{:?}",
        done.decision
    );
    let audit = app.services().get::<AuditLog>().unwrap().entries();
    let results: Vec<&String> = audit
        .iter()
        .filter(|e| e.as_str() == "tool_result call_2 refund-order-tool")
        .collect();
    assert_eq!(results.len(), 1, "{audit:?}");

    // The thread holds the refund's observation and the answer.
    let messages = app.threads("acme").messages(&thread.id).await.unwrap();
    let texts: Vec<(Role, &str)> = messages
        .iter()
        .filter_map(|m| Some((m.message.role(), m.message.text()?)))
        .collect();
    assert!(
        texts.contains(&(Role::Tool, r#"{"orderId":"ACME-42","refundedCents":12500}"#)),
        "{texts:?}"
    );
    assert_eq!(
        messages.last().unwrap().message,
        Message::assistant("Refunded 125.00 on ACME-42.")
    );

    // Decided once, run once.
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
    assert_eq!(refunded(&app, "ACME-42"), 12_500);

    // Turn 2 (the whole workflow): the agent refunds from the thread's history, but nothing is
    // left, so the guard blocks it: no ticket, no manager woken, `on_error` hands it over.
    let flow = Flow::new()
        .router::<SupportRouter>()
        .on_error(|err, _| match err.as_blocked() {
            Some(b) => Ok(Recovery::Output(format!(
                "A colleague will review: {}",
                b.text()
            ))),
            None => Err(err),
        });
    let out = app
        .execute(
            Target::workflow_with::<SupportWorkflow>(flow),
            "Please refund the 15.00 shipping too.",
            ctx().run_id("run-turn-2"),
        )
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "A colleague will review: a refund of 15.00 on ACME-42 is more than the 0.00 left of the 125.00 paid"
    );
    assert!(
        store
            .run_tickets("acme", "run-turn-2")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(inbox(&app).tickets().len(), 1);
    assert_eq!(refunded(&app, "ACME-42"), 12_500);
    drop((app, store));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_refund_a_guard_blocks_or_answers_never_gets_a_ticket() {
    // (order, cents, clock hour, the interceptor that blocks; None: it is answered)
    let cases = [
        // Above what was paid.
        ("ACME-42", 50_000, 10, Some("refund-limit-tool-interceptor")),
        // Above the hard cap, on an order that cost more.
        ("ACME-7", 150_000, 10, Some("refund-limit-tool-interceptor")),
        // Outside support hours (the router keeps its workflow's chain).
        (
            "ACME-42",
            12_500,
            23,
            Some("support-hours-tool-interceptor"),
        ),
        // Another tenant's order: the last before hook, order-ownership, replies to the model.
        ("GLOBEX-7", 15_000, 10, None),
    ];
    for (order, cents, hour, expected) in cases {
        let model = Arc::new(ScriptedModel::new([
            Turn::text("billing-agent"),
            refund("call_1", order, cents),
            Turn::text("Which order do you mean?"),
        ]));
        let store = SharedStore::new(MemoryStore::new());
        let app = App::builder()
            .application::<SupportDeskApplication>()
            .provide(SupportClock::at(hour))
            .shared_model(Arc::clone(&model) as SharedChatModel)
            .store(store.clone())
            .build()
            .unwrap();
        let result = app
            .execute(
                Target::router::<SupportRouter>(),
                "refund",
                RunContext::new().tenant("acme").run_id("run-1"),
            )
            .await;
        let case = format!("{order} {cents} at {hour}:00");
        match expected {
            Some(interceptor) => {
                let err = result.unwrap_err();
                let blocked = err.as_blocked().unwrap_or_else(|| panic!("{case}: {err}"));
                assert_eq!(blocked.interceptor, interceptor, "{case}");
            }
            None => assert_eq!(result.unwrap().text, "Which order do you mean?", "{case}"),
        }
        assert!(
            store.run_tickets("acme", "run-1").await.unwrap().is_empty(),
            "{case}: a ticket was made"
        );
        assert!(
            inbox(&app).tickets().is_empty(),
            "{case}: a manager was woken"
        );
        assert_eq!(refunded(&app, order), 0, "{case}");
    }
}

#[tokio::test]
async fn a_workflow_run_pauses_for_approval_and_resumes_with_its_flow() {
    // The pause passes through the workflow (an `on_error` never sees it as a failure), and
    // the run resumes by running the same target with the same run id.
    let model = Arc::new(ScriptedModel::new([
        Turn::text("billing-agent"),
        refund("call_1", "ACME-42", 12_500),
        Turn::text("Refunded after approval."),
    ]));
    let store = SharedStore::new(MemoryStore::new());
    let app = app(&model, &store);
    let flow = Flow::new()
        .router::<SupportRouter>()
        .on_any_error(|_, _| Ok(Recovery::Output("handed to a human".into())));
    let target = || Target::workflow_with::<SupportWorkflow>(flow.clone());
    let ctx = || RunContext::new().tenant("acme").run_id("wf-run");
    let err = app
        .execute(target(), "refund ACME-42 in full", ctx())
        .await
        .unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &*err else {
        panic!("the workflow run waits, not recovers: {err}");
    };
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    let out = app
        .execute(target(), "refund ACME-42 in full", ctx())
        .await
        .unwrap();
    assert_eq!(out.text, "Refunded after approval.");
    assert_eq!(refunded(&app, "ACME-42"), 12_500);
}
