//! A support-desk conversation on a thread kept in an embedded SQLite file: two customer turns
//! of tenant `acme`. Turn 1 refunds 40.00 (below the manager-approval limit, so it runs at
//! once); turn 2 reads the order from the thread's history, asks for more than is left, is
//! hard-blocked and `on_error` hands it to a human. (The approval flow of the main demo is
//! `support_desk_approval.rs`.)
use std::sync::Arc;

use agboss_core::App;
use agboss_core::engine::workflow::{Flow, Recovery};
use agboss_core::engine::{RunContext, Target};
use agboss_core::model::{Message, Role, SharedChatModel};
use agboss_core::store::{NewThread, SqliteStore};
use agboss_e2e::support_desk::{
    ManagerInbox, OrderStore, SupportDeskApplication, SupportRouter, SupportWorkflow,
};
use agboss_testing::scripted::{ScriptedModel, Turn};
use serde_json::json;

fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::text("billing-agent"),
        Turn::tool_call_with_id("call_1", "lookup-order-tool", json!({"orderId": "ACME-42"})),
        Turn::tool_call_with_id(
            "call_2",
            "refund-order-tool",
            json!({"orderId": "ACME-42", "amountCents": 4_000, "reason": "broken part only"}),
        ),
        Turn::text("Refunded 40.00 on ACME-42."),
        Turn::text("billing-agent"),
        Turn::tool_call_with_id(
            "call_3",
            "refund-order-tool",
            json!({"orderId": "ACME-42", "amountCents": 10_000, "reason": "the rest of it"}),
        ),
    ])
}

#[tokio::test]
async fn a_conversation_keeps_its_thread_and_its_refunds_across_two_turns_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("agboss-demo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = Arc::new(script());
    let app = App::builder()
        .application::<SupportDeskApplication>()
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .store(SqliteStore::open(dir.join("demo.db")).await.unwrap())
        .build()
        .unwrap();
    let flow = Flow::new()
        .router::<SupportRouter>()
        .on_error(|err, _| match err.as_blocked() {
            Some(_) => Ok(Recovery::Output(
                "A colleague will review the refund.".into(),
            )),
            None => Err(err),
        });
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let target = || Target::workflow_with::<SupportWorkflow>(flow.clone());
    let first = app
        .execute(
            target(),
            "Order 42 arrived broken, refund the broken part, 40.00.",
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(first.text, "Refunded 40.00 on ACME-42.");
    let second = app
        .execute(target(), "Now refund the rest, 100.00.", ctx())
        .await
        .unwrap();
    assert_eq!(second.text, "A colleague will review the refund.");

    // The agent of turn 2 read turn 1: the order record and the refund's receipt, before its
    // own input; its guard counted what turn 1 refunded (85.00 of 125.00 left).
    let req = model.requests()[5].clone();
    let tool_texts: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .filter_map(Message::text)
        .collect();
    assert_eq!(tool_texts.len(), 2, "{tool_texts:?}");
    assert!(
        tool_texts[0].contains("\"amountCents\":12500"),
        "{}",
        tool_texts[0]
    );
    assert_eq!(
        tool_texts[1],
        r#"{"orderId":"ACME-42","refundedCents":4000}"#
    );
    assert_eq!(
        req.messages.last(),
        Some(&Message::user("Now refund the rest, 100.00."))
    );
    assert_eq!(
        app.services()
            .get::<OrderStore>()
            .unwrap()
            .refunded("ACME-42"),
        4_000,
        "the blocked refund did not run"
    );
    assert!(
        app.services()
            .get::<ManagerInbox>()
            .unwrap()
            .tickets()
            .is_empty(),
        "no manager was asked"
    );

    // The thread: each turn's input, the agent's turns and observations, and turn 2's
    // recovered answer (which no model wrote).
    let stored = app.threads("acme").messages(&thread.id).await.unwrap();
    let roles: Vec<&str> = stored.iter().map(|m| m.message.role().as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant", // turn 1
            "user",
            "assistant",
            "assistant", // turn 2
        ]
    );
    assert_eq!(
        stored[8].message,
        Message::assistant("A colleague will review the refund.")
    );
    assert!(app.threads("globex").messages(&thread.id).await.is_err());
    drop(app);
    let _ = std::fs::remove_dir_all(dir);
}
