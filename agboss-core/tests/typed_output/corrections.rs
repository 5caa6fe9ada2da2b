//! Invalid answers: corrections up to `output_retries`, then `RunError::InvalidOutput`.
use super::*;

#[tokio::test]
async fn an_invalid_answer_goes_back_with_every_failing_path_and_the_fixed_one_is_taken() {
    let model = Arc::new(
        ScriptedModel::new([
            Turn::text(r#"{"granted": "yes", "reason": "ok", "amountCents": -5}"#),
            Turn::output(&verdict()),
        ])
        .with_stream_chunk_chars(3),
    );
    let app = app(&model).build().unwrap();
    let (events, result) = app
        .stream("refund-agent", "Order 7?", RunContext::new())
        .collect_all()
        .await;
    let out = result.unwrap();
    assert_eq!(out.value::<VerdictDto>().unwrap(), verdict());
    assert_eq!(out.model_turns, 2);
    // The second request holds the invalid answer and a correction naming every path.
    let second = &model.requests()[1];
    let n = second.messages.len();
    assert!(matches!(&second.messages[n - 2], Message::Assistant(a)
        if a.content.as_deref().is_some_and(|t| t.contains("\"yes\""))));
    let Message::User { content } = &second.messages[n - 1] else {
        panic!("no correction: {:?}", second.messages[n - 1]);
    };
    for path in ["$.granted", "$.reason", "$.amountCents"] {
        assert!(content.contains(path), "{path} missing from {content}");
    }
    // One rejection event, and nothing of the invalid answer streamed: one delta, the valid
    // answer, whole.
    let rejected: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::OutputRejected { attempt, error, .. } => Some((*attempt, error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, 1);
    assert_eq!(rejected[0].1.errors.len(), 3, "{}", rejected[0].1);
    assert_eq!(deltas(&events), vec![out.text.clone()]);
    assert_trajectory(&events, &["refund-agent ✗ output", "refund-agent ✎"]);
    let finals: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, RunEvent::FinalAnswer { .. }))
        .collect();
    assert_eq!(finals.len(), 1);
}

#[tokio::test]
async fn past_its_corrections_the_step_fails_with_the_paths_of_the_last_answer() {
    let model = Arc::new(ScriptedModel::new([
        Turn::text("I think yes."),
        Turn::text(r#"{"granted": true}"#),
        Turn::text(r#"{"granted": true, "reason": "x", "amountCents": 1}"#),
        Turn::output(&verdict()),
    ]));
    let app = app(&model).build().unwrap();
    let err = app
        .execute("refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap_err();
    // The default: 2 corrections, so the third invalid answer fails the step.
    let RunError::InvalidOutput {
        agent,
        attempts,
        source,
    } = &*err
    else {
        panic!("not InvalidOutput: {err}");
    };
    assert_eq!(agent, "refund-agent");
    assert_eq!(*attempts, 3);
    assert_eq!(source.dto, "VerdictDto");
    assert!(source.at("$.reason").is_some(), "{source}");
    assert!(err.to_string().contains("$.reason"), "{err}");
    assert_eq!(model.remaining(), 1, "asked again past the bound");
    // The first rejection was not JSON at all: one `json` error at `$`.
    let first_correction = model.requests()[1].messages.last().unwrap().clone();
    assert!(
        first_correction.text().unwrap().contains("- $:"),
        "{first_correction:?}"
    );
}

#[tokio::test]
async fn output_retries_zero_fails_at_the_first_invalid_answer() {
    let model = Arc::new(ScriptedModel::new([
        Turn::text(r#"{"granted": true, "reason": "Fine.", "amountCents": 100001}"#),
        Turn::output(&verdict()),
    ]));
    let app = app(&model).build().unwrap();
    let err = app
        .execute("strict-refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap_err();
    let RunError::InvalidOutput {
        attempts, source, ..
    } = &*err
    else {
        panic!("not InvalidOutput: {err}");
    };
    assert_eq!(*attempts, 1);
    assert_eq!(source.at("$.amountCents").unwrap().code, "max");
    assert_eq!(model.request_count(), 1);
}

#[tokio::test]
async fn a_fenced_answer_is_read_without_its_fence() {
    let model = Arc::new(ScriptedModel::new([Turn::text(
        "```json\n{\"granted\": false, \"reason\": \"Too late.\", \"amountCents\": 0}\n```",
    )]));
    let app = app(&model).build().unwrap();
    let out = app
        .execute("strict-refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap();
    let v = out.value::<VerdictDto>().unwrap();
    assert!(!v.granted);
    assert_eq!(v.reason, "Too late.");
}

#[tokio::test]
async fn the_correction_bound_stops_a_model_that_never_answers_in_json() {
    // Twelve answers that are never JSON: the third (2 corrections, the default) ends it,
    // well before max_turns.
    let model = Arc::new(ScriptedModel::new((0..12).map(|_| Turn::text("not json"))));
    let app = app(&model).build().unwrap();
    let err = app
        .execute("refund-agent", "Order 7?", RunContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::InvalidOutput { attempts: 3, .. }),
        "{err}"
    );
    assert_eq!(model.request_count(), 3);
}
