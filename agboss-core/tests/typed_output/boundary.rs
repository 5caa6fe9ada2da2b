//! The output boundary on a typed answer: guardrails and `mask_answer` see the JSON; threads
//! store the valid answer only.
use agboss_core::store::{MemoryStore, NewThread};

use super::*;

#[tokio::test]
async fn output_guardrails_and_mask_answer_see_the_json() {
    let model = Arc::new(ScriptedModel::new([Turn::output(&VerdictDto {
        granted: false,
        reason: "confidential: write to jane.doe@example.com".into(),
        amount_cents: 0,
    })]));
    let app = app(&model).build().unwrap();
    let (events, result) = app
        .stream("guarded-refund-agent", "Order 7?", RunContext::new())
        .collect_all()
        .await;
    let out = result.unwrap();
    let v = out.value::<VerdictDto>().unwrap();
    assert!(
        v.reason.starts_with("[withheld]: write to "),
        "{}",
        v.reason
    );
    assert!(!v.reason.contains("jane.doe@example.com"), "{}", v.reason);
    assert!(!out.text.contains("jane.doe"), "{}", out.text);
    // The stream released the checked, masked JSON once.
    assert_eq!(deltas(&events), vec![out.text.clone()]);
}

#[tokio::test]
async fn a_guardrail_that_replaces_the_answer_leaves_no_typed_value() {
    let model = Arc::new(ScriptedModel::new([Turn::output(&VerdictDto {
        granted: false,
        reason: "That is off-topic.".into(),
        amount_cents: 0,
    })]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("guarded-refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap();
    assert_eq!(out.text, "Let's stay on topic.");
    assert_eq!(out.output, None);
    assert!(matches!(
        out.value::<VerdictDto>(),
        Err(OutputError::Untyped)
    ));
}

#[tokio::test]
async fn a_thread_stores_the_valid_answer_and_none_of_the_invalid_ones() {
    let model = Arc::new(ScriptedModel::new([
        Turn::text(r#"{"granted": "maybe"}"#),
        Turn::output(&verdict()),
    ]));
    let app = app(&model).store(MemoryStore::new()).build().unwrap();
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let out = app
        .execute(
            "refund-agent",
            "Order 7?",
            RunContext::new().tenant("acme").thread(thread.id.clone()),
        )
        .await
        .unwrap();
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    let messages = app.threads("acme").messages(&thread.id).await.unwrap();
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| m.message.text().map(str::to_string))
        .collect();
    assert_eq!(texts.last(), Some(&out.text), "{texts:?}");
    let all = texts.join("\n");
    assert!(
        !all.contains("maybe"),
        "an invalid answer was stored: {all}"
    );
    assert!(
        !all.contains("not a valid"),
        "a correction was stored: {all}"
    );
}

#[tokio::test]
async fn a_resumed_run_reads_its_rejected_answer_back_and_asks_the_same_correction() {
    use agboss_core::store::SharedStore;
    use std::time::Duration;

    let store = SharedStore::new(MemoryStore::new());
    let typed_app = |model: &Arc<ScriptedModel>, worker: &str| {
        app(model)
            .store(store.clone())
            .worker_id(worker)
            .lease_ttl(Duration::from_millis(150))
            .build()
            .unwrap()
    };
    // Worker A: an invalid answer, journaled; then the model stalls and A is gone.
    let first =
        Arc::new(ScriptedModel::new([Turn::text(r#"{"granted": "maybe"}"#)]).hang_when_exhausted());
    let a = typed_app(&first, "worker-a");
    let ctx = RunContext::new().tenant("acme").run_id("typed-7");
    let stalled = a.execute("refund-agent", "Order 7?", ctx.clone());
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stalled)
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Worker B: the rejected turn is read back (not asked again), the correction is the same,
    // and the next answer is taken.
    let second = Arc::new(ScriptedModel::new([Turn::output(&verdict())]));
    let b = typed_app(&second, "worker-b");
    let out = b
        .resume_run("typed-7", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    assert_eq!(out.replayed_steps, 1, "the rejected model turn");
    assert_eq!(second.request_count(), 1);
    let asked = &second.requests()[0];
    let correction = asked.messages.last().and_then(Message::text).unwrap();
    assert!(correction.contains("$.granted"), "{correction}");
    // The stalled request of worker A was the same one: same journal digest.
    assert_eq!(first.requests()[1].messages, asked.messages);
}
