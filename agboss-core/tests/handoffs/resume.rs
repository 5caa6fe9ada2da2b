//! A run journaled past a handoff resumes on the target: the source's turn and the handoff
//! are read back, never asked again.
use std::time::Duration;

use agboss_core::store::SharedStore;

use super::*;

#[tokio::test]
async fn a_run_resumed_after_a_handoff_goes_on_with_the_target() {
    let store = SharedStore::new(MemoryStore::new());
    let app = |model: &Arc<ScriptedModel>, worker: &str| {
        builder(model)
            .0
            .store(store.clone())
            .worker_id(worker)
            .lease_ttl(Duration::from_millis(150))
            .build()
            .unwrap()
    };
    // Worker A: the triage agent hands off, journaled; the shipping model stalls, A is gone.
    let first = Arc::new(ScriptedModel::new([transfer("parcel")]).hang_when_exhausted());
    let a = app(&first, "worker-a");
    let ctx = RunContext::new().tenant("acme").run_id("handoff-1");
    let stalled = a.execute("triage-agent", "Where is parcel P-1?", ctx);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stalled)
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Worker B: the triage turn and the handoff are read back; the shipping agent answers.
    let second = Arc::new(ScriptedModel::new([Turn::text("P-1 is in Lyon.")]));
    let b = app(&second, "worker-b");
    let out = b
        .resume_run("handoff-1", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "P-1 is in Lyon.");
    assert_eq!(out.replayed_steps, 2, "the triage turn and the handoff");
    assert_eq!(
        second.request_count(),
        1,
        "only the shipping agent is asked"
    );
    let asked = &second.requests()[0];
    assert_eq!(tool_names(asked), ["track-tool"]);
    assert_eq!(
        asked.messages.first().and_then(Message::text),
        Some("You track parcels.")
    );
    // The stalled request of worker A was the same one: same journal digest.
    assert_eq!(first.requests()[1].messages, asked.messages);
}
