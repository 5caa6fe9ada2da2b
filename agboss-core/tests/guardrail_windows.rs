//! Streamed output windows overlap by at least the longest match an output guardrail of the
//! path declares (`#[output_guardrail(max_match)]`), whatever overlap the app or the run asked
//! for: a secret split across two deltas is never released in halves.
use std::sync::Arc;

use agboss_core::engine::RunEvent;
use agboss_core::prelude::*;
use agboss_core::{contract::guardrail::Boundary, contract::guardrail::OutputStreaming};
use agboss_testing::scripted::{ScriptedModel, Turn};

/// Blocks answers (and windows) that carry an order locator `LOC-` + 8 digits (12 characters).
#[output_guardrail(
    name = "locator-output-guardrail",
    description = "Keeps locators out of answers",
    max_match = 12
)]
pub struct LocatorOutputGuardrail;

impl OutputGuardrail for LocatorOutputGuardrail {
    async fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> Result<GuardrailVerdict, GuardrailError> {
        let text = output.text();
        let found = text.match_indices("LOC-").any(|(at, _)| {
            text[at + 4..]
                .chars()
                .take(8)
                .filter(char::is_ascii_digit)
                .count()
                == 8
        });
        Ok(if found {
            GuardrailVerdict::block("an order locator")
        } else {
            GuardrailVerdict::pass()
        })
    }
}

#[agent(name = "locator-agent", description = "Answers with text", instructions = "Answer.",
        output_guardrails = [LocatorOutputGuardrail])]
pub struct LocatorAgent;

fn deltas(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

async fn stream(
    text: &str,
    chunk: usize,
    app_mode: OutputStreaming,
    run_mode: Option<OutputStreaming>,
) -> (String, Result<RunOutput, RunError>) {
    let model = Arc::new(ScriptedModel::new([Turn::text(text)]).with_stream_chunk_chars(chunk));
    let app = App::builder()
        .agent::<LocatorAgent>()
        .shared_model(model as _)
        .output_streaming(app_mode)
        .build()
        .unwrap();
    let mut ctx = RunContext::new();
    if let Some(mode) = run_mode {
        ctx = ctx.output_streaming(mode);
    }
    let (events, result) = app
        .stream("locator-agent", "where is it?", ctx)
        .collect_all()
        .await;
    (deltas(&events), result.map_err(RunError::from))
}

#[tokio::test]
async fn windows_without_overlap_still_see_a_declared_match_split_across_deltas() {
    // The locator starts at 16 and spans a window boundary at 8-character windows with chunks
    // of 4: with no overlap, 'LOC-1234' and '5678' were each released by a passing window.
    let text = "here you are:   LOC-12345678 and that is all there is to say today";
    let key_at = text.find("LOC-").unwrap();
    for (app_mode, run_mode) in [
        (OutputStreaming::windows(8, 0), None),
        (OutputStreaming::Hold, Some(OutputStreaming::windows(8, 0))),
        (OutputStreaming::windows(8, 3), None),
    ] {
        let (released, result) = stream(text, 4, app_mode, run_mode).await;
        let err = result.unwrap_err();
        let blocked = err
            .as_step_failed()
            .and_then(|f| f.as_guardrail_blocked())
            .unwrap_or_else(|| panic!("not a guardrail block: {err:?}"));
        assert_eq!(blocked.boundary, Boundary::Output);
        assert!(text.starts_with(&released), "{released:?}");
        assert!(
            released.len() <= key_at,
            "part of the locator was released ({app_mode:?}, {run_mode:?}): {released:?}"
        );
    }
}

#[tokio::test]
async fn a_passing_answer_is_still_released_window_by_window() {
    let text = "a long and perfectly harmless answer about shipping times and returns";
    let (released, result) = stream(text, 5, OutputStreaming::windows(8, 0), None).await;
    assert_eq!(result.unwrap().text, text);
    assert_eq!(released, text);
}
