//! One model turn, journaled: read back from the journal of a resumed run (the same request,
//! or [`RunError::JournalMismatch`]), else streamed live through the output gate and recorded
//! before the run goes on.
use futures::StreamExt as _;
use tracing::Instrument as _;

use super::admit::{admit_model, settle_model};
use super::events::RunEvent;
use super::gate::{OutputGate, gate_delta};
use super::output::Stats;
use super::replay::request_digest;
use super::run_error::RunError;
use super::state::RunState;
use super::telemetry::{self, ContentMask};
use crate::model::{
    FinishReason, ModelError, ModelRequest, ModelResponse, ModelStreamEvent, SharedChatModel, Usage,
};

/// One model call, journaled: read back from the journal of a resumed run, else made and
/// recorded before the run goes on (`visible` turns are appended to the run's thread; with
/// a closed `gate`, a final answer is not: the run appends the answer its output guardrails
/// let through). Text deltas go through `gate`; `mask` masks the content a `chat` span
/// records (none without it). Returns the turn number (what the turn's tool call keys use)
/// and the response.
#[expect(
    clippy::too_many_arguments,
    reason = "the turn's inputs, its span's mask and its output gate; one private call site shape"
)]
pub(crate) async fn call_model(
    run: &RunState,
    step: &str,
    model: &SharedChatModel,
    req: &ModelRequest,
    stats: &mut Stats,
    visible: bool,
    mask: Option<ContentMask<'_>>,
    gate: &mut OutputGate,
) -> Result<(u32, ModelResponse), RunError> {
    // Journaled: the turn's number, its request digest and whether its final answer is
    // hidden; a turn the journal holds is read back instead of made.
    let journaled = match run.journal() {
        None => None,
        Some(journal) => {
            let turn = journal.next_model_turn();
            let digest = request_digest(req);
            let hide_final = gate.is_closed();
            // A hidden final answer is not the thread's last visible text either.
            if let Some(replayed) = journal.replayed_model(turn, &digest, visible && !hide_final)? {
                // It ran before: counted, never refused.
                run.budget()
                    .record_model(replayed.usage, model.dyn_model_name());
                stats.model_turns += 1;
                stats.usage += replayed.usage;
                let finish_reason = if replayed.message.tool_calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                };
                let response = ModelResponse {
                    message: replayed.message,
                    finish_reason,
                    usage: replayed.usage,
                };
                return Ok((turn, response));
            }
            Some((turn, digest, hide_final))
        }
    };
    let turn = journaled.as_ref().map_or(stats.model_turns, |j| j.0);
    // One live call site: the future is held once.
    let response = call_model_live(run, step, model, req, stats, mask, gate).await?;
    if let Some((turn, digest, hide_final)) = journaled {
        // Boxed: a store write is a large future, which an app without a store need not
        // carry.
        Box::pin(record_model(
            run, step, turn, digest, &response, visible, hide_final,
        ))
        .await?;
    }
    Ok((turn, response))
}

/// Journals model turn `turn` (see [`call_model`] for `visible` and `hide_final`).
pub(crate) async fn record_model(
    run: &RunState,
    step: &str,
    turn: u32,
    digest: String,
    response: &ModelResponse,
    visible: bool,
    hide_final: bool,
) -> Result<(), RunError> {
    let Some(journal) = run.journal() else {
        return Ok(());
    };
    let visible = visible && !(hide_final && response.message.tool_calls.is_empty());
    journal
        .record_model(
            turn,
            step,
            digest,
            &response.message,
            response.usage,
            visible,
        )
        .await
}

/// One model call, streamed, in its `chat` span: text deltas go through `gate`; returns
/// the assembled response.
pub(crate) async fn call_model_live(
    run: &RunState,
    step: &str,
    model: &SharedChatModel,
    req: &ModelRequest,
    stats: &mut Stats,
    mask: Option<ContentMask<'_>>,
    gate: &mut OutputGate,
) -> Result<ModelResponse, RunError> {
    // Reserved before the call: a refused call is never made.
    let hold = admit_model(run, step, model.dyn_model_name()).await?;
    let span = telemetry::chat_span(step, model, req, mask);
    let model_err = |source: ModelError| RunError::Model {
        step: step.to_string(),
        source,
    };
    let response = run
        .or_cancel(
            async {
                let response = stream_turn(run, step, model, req, gate).await?;
                telemetry::finish_chat(&span, &response, mask);
                Ok::<_, RunError>(response)
            }
            .instrument(span.clone()),
        )
        .await
        .and_then(|r| r);
    let failed = match response {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(source)) => Err(model_err(source)),
        Err(e) => Err(e),
    };
    let response = match failed {
        Ok(response) => response,
        Err(e) => {
            // Nothing known was used: the tenant windows' token reservation is released (a
            // store error there is logged; the call's own error is the run's).
            let _ = settle_model(run, step, hold, None, model.dyn_model_name()).await;
            return Err(e);
        }
    };
    stats.model_turns += 1;
    stats.usage += response.usage;
    if response.usage != Usage::default() {
        run.emit(|| RunEvent::Usage {
            step: step.to_string(),
            usage: response.usage,
        });
    }
    // Settled with what it used: a call that passed a token bound stops the run here.
    settle_model(
        run,
        step,
        hold,
        Some(response.usage),
        model.dyn_model_name(),
    )
    .await?;
    Ok(response)
}

/// Reads one streamed model answer: text deltas go through `gate`. The outer error is the
/// gate's (a window an output guardrail stopped), the inner one the model's.
async fn stream_turn(
    run: &RunState,
    step: &str,
    model: &SharedChatModel,
    req: &ModelRequest,
    gate: &mut OutputGate,
) -> Result<Result<ModelResponse, ModelError>, RunError> {
    // A model that does not stream: its whole answer, its text one delta (what the default
    // `stream` would replay, without the events).
    if !model.dyn_streams() {
        let response = match model.complete_boxed(req).await {
            Ok(response) => response,
            Err(err) => return Ok(Err(err)),
        };
        if let Some(text) = response
            .message
            .content
            .as_deref()
            .filter(|t| !t.is_empty())
        {
            gate_delta(run, step, gate, text.to_string()).await?;
        }
        return Ok(Ok(response));
    }
    let mut stream = match model.stream_boxed(req).await {
        Ok(stream) => stream,
        Err(err) => return Ok(Err(err)),
    };
    let mut response = None;
    while let Some(event) = stream.next().await {
        match event {
            Ok(ModelStreamEvent::TextDelta { delta }) => {
                gate_delta(run, step, gate, delta).await?;
            }
            Ok(ModelStreamEvent::Finished(r)) => response = Some(r),
            Ok(_) => {}
            Err(err) => return Ok(Err(err)),
        }
    }
    Ok(response.ok_or_else(|| ModelError::StreamTruncated {
        detail: "stream ended without a Finished event".to_string(),
    }))
}
