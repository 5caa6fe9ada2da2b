//! Guardrails on streamed answers: text held back, windows across deltas, masked answers.

use super::*;
use agboss_core::contract::guardrail::Boundary;
use agboss_core::contract::guardrail::OutputStreaming;

#[tokio::test]
async fn streaming_holds_text_back_until_the_whole_answer_passed() {
    // The key arrives split across deltas of 3 characters.
    let model = Arc::new(
        ScriptedModel::new([Turn::text("here it is: sk-1234, enjoy")]).with_stream_chunk_chars(3),
    );
    let log = Arc::new(Log::default());
    let app = app_with(&model, &log).build().unwrap();
    let (events, result) = app
        .stream("desk-agent", "key?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(
        guardrail_block(&result.unwrap_err()).boundary,
        Boundary::Output
    );
    assert_eq!(deltas(&events), "", "held text was released");

    // A passing answer is released as it was streamed, after the verdict.
    let model =
        Arc::new(ScriptedModel::new([Turn::text("all fine here")]).with_stream_chunk_chars(3));
    let app = app_with(&model, &log).build().unwrap();
    let (events, result) = app
        .stream("desk-agent", "status?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, "all fine here");
    assert_eq!(deltas(&events), "all fine here");
    let verdict_at = events
        .iter()
        .position(|e| {
            matches!(
                e,
                RunEvent::GuardrailVerdict {
                    boundary: Boundary::Output,
                    ..
                }
            )
        })
        .unwrap();
    let first_delta = events
        .iter()
        .position(|e| matches!(e, RunEvent::TextDelta { .. }))
        .unwrap();
    assert!(verdict_at < first_delta);
}

#[tokio::test]
async fn streaming_windows_catch_a_secret_split_across_deltas() {
    let text = "hello there, the key you asked for is sk-1234 and nothing else";
    let model = Arc::new(ScriptedModel::new([Turn::text(text)]).with_stream_chunk_chars(3));
    let log = Arc::new(Log::default());
    let app = app_with(&model, &log)
        .output_streaming(OutputStreaming::windows(8, 8))
        .build()
        .unwrap();
    let (events, result) = app
        .stream("desk-agent", "key?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(
        guardrail_block(&result.unwrap_err()).boundary,
        Boundary::Output
    );
    let released = deltas(&events);
    assert!(!released.is_empty(), "windows released nothing");
    assert!(text.starts_with(&released), "{released:?}");
    let key_at = text.find("sk-1234").unwrap();
    assert!(
        released.len() <= key_at,
        "part of the key was released: {released:?}"
    );
    // Every window the guardrail saw overlapped the one before it.
    let windows: Vec<String> = log
        .entries()
        .into_iter()
        .filter_map(|e| e.strip_prefix("secret:Window:").map(str::to_string))
        .collect();
    assert!(windows.len() >= 2, "{windows:?}");

    // Windows of a passing answer release all of it, in order.
    let text = "a long and perfectly harmless answer about shipping times";
    let model = Arc::new(ScriptedModel::new([Turn::text(text)]).with_stream_chunk_chars(5));
    let app = app_with(&model, &log)
        .output_streaming(OutputStreaming::windows(10, 4))
        .build()
        .unwrap();
    let (events, result) = app
        .stream("desk-agent", "shipping?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().text, text);
    assert_eq!(deltas(&events), text);
    let first_delta = events
        .iter()
        .position(|e| matches!(e, RunEvent::TextDelta { .. }))
        .unwrap();
    let final_verdict = events
        .iter()
        .rposition(|e| matches!(e, RunEvent::GuardrailVerdict { .. }))
        .unwrap();
    assert!(
        first_delta < final_verdict,
        "windows were not released before the end"
    );
}

#[tokio::test]
async fn mask_answer_masks_the_final_answer_with_the_paths_pii_policies() {
    let model = Arc::new(
        ScriptedModel::new([Turn::text("write to jane.doe@example.com")])
            .with_stream_chunk_chars(4),
    );
    let log = Arc::new(Log::default());
    let app = app_with(&model, &log).build().unwrap();
    let (events, result) = app
        .stream("masked-agent", "contact?", RunContext::new())
        .collect_all()
        .await;
    let text = result.unwrap().text;
    assert!(!text.contains("jane.doe@example.com"), "{text}");
    assert!(text.starts_with("write to "), "{text}");
    assert_eq!(deltas(&events), text, "the stream released unmasked text");
}
