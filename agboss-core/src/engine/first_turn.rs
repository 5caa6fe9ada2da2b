//! The first model turn of an agent with `parallel` input guardrails: the turn streams while
//! the guardrails run, held back and journaled only once every one passed.
use super::gate::{OutputGate, gate_delta};
use super::guardrails::{Checked, check_text};
use super::model_turn::{call_model, call_model_live, record_model};
use super::output::Stats;
use super::replay::request_digest;
use super::run_error::RunError;
use super::state::RunState;
use super::telemetry::ContentMask;
use crate::cascade::GuardrailEntry;
use crate::contract::guardrail::{Boundary, TextScope};
use crate::model::{Message, ModelRequest, ModelResponse, SharedChatModel};

/// The first model turn while the `parallel` input guardrails run: its deltas are held and
/// it is journaled only once every guardrail passed; a block, a failure or a fixed answer
/// drops it (nothing of it ran), a rewrite makes the turn again on the rewritten input.
#[expect(
    clippy::too_many_arguments,
    reason = "call_model's inputs plus the parallel guardrails"
)]
pub(super) async fn first_turn_checked(
    run: &RunState,
    step: &str,
    model: &SharedChatModel,
    req: &mut ModelRequest,
    stats: &mut Stats,
    guards: &[&GuardrailEntry],
    mask: ContentMask<'_>,
    gate: &mut OutputGate,
) -> Result<FirstTurn, RunError> {
    let input = match req.messages.last() {
        Some(Message::User { content }) => content.clone(),
        _ => String::new(),
    };
    let replaying = run.journal().is_some_and(|j| j.has_next_model_turn());
    if replaying {
        // A resumed run: the turn is read back, not made again; check, then replay it.
        return match check_text(
            run,
            step,
            Boundary::Input,
            guards,
            input.clone(),
            TextScope::Whole,
        )
        .await?
        {
            Checked::Respond(answer) => Ok(FirstTurn::Respond(answer)),
            Checked::Go(text) => {
                if text != input {
                    set_last_user(req, text);
                }
                let (turn, response) =
                    call_model(run, step, model, req, stats, true, Some(mask), gate).await?;
                Ok(FirstTurn::Ran(turn, response))
            }
        };
    }
    let mut held = OutputGate::holding();
    let mut turn_stats = Stats::default();
    let verdict;
    let mut response = None;
    {
        let check = check_text(
            run,
            step,
            Boundary::Input,
            guards,
            input.clone(),
            TextScope::Whole,
        );
        let live = call_model_live(
            run,
            step,
            model,
            req,
            &mut turn_stats,
            Some(mask),
            &mut held,
        );
        tokio::pin!(check, live);
        verdict = loop {
            tokio::select! {
                biased;
                v = &mut check => break v,
                r = &mut live, if response.is_none() => response = Some(r),
            }
        };
        if matches!(&verdict, Ok(Checked::Go(text)) if *text == input) && response.is_none() {
            response = Some(live.await);
        }
    }
    match verdict? {
        Checked::Respond(answer) => Ok(FirstTurn::Respond(answer)),
        Checked::Go(text) if text != input => {
            // The model read the input before its rewrite: its work is discarded.
            set_last_user(req, text);
            let (turn, response) =
                call_model(run, step, model, req, stats, true, Some(mask), gate).await?;
            Ok(FirstTurn::Ran(turn, response))
        }
        Checked::Go(_) => {
            let response = response.expect("awaited above")?;
            stats.model_turns += turn_stats.model_turns;
            stats.usage += turn_stats.usage;
            let turn = match run.journal() {
                Some(journal) => {
                    let turn = journal.next_model_turn();
                    let digest = request_digest(req);
                    record_model(run, step, turn, digest, &response, true, gate.is_closed())
                        .await?;
                    turn
                }
                None => stats.model_turns - 1,
            };
            for delta in held.take_held() {
                gate_delta(run, step, gate, delta).await?;
            }
            Ok(FirstTurn::Ran(turn, response))
        }
    }
}

/// How the first turn under parallel input guardrails ended.
pub(crate) enum FirstTurn {
    /// The turn ran (its number and response) and every input guardrail passed.
    Ran(u32, ModelResponse),
    /// A guardrail answered instead.
    Respond(String),
}

/// Replaces the input of a request (its last message, the user's).
fn set_last_user(req: &mut ModelRequest, text: String) {
    if let Some(last) = req.messages.last_mut() {
        *last = Message::user(text);
    }
}
