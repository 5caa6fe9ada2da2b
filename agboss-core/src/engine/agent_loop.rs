//! The tool loop of an agent: model turns, each turn's tool calls run concurrently through the
//! agent's callback stack, every outcome read by the one observation policy
//! ([`crate::pipeline::observe`]).
use tracing::Instrument as _;

use super::events::{RunEvent, StepKind, StepOutcome};
use super::first_turn::{FirstTurn, first_turn_checked};
use super::gate::{OutputGate, gate_final, gate_interim};
use super::guardrails::{Checked, check_text};
use super::handoff::{self, Ended};
use super::model_turn::call_model;
use super::output::{DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, Stats};
use super::run_error::RunError;
use super::state::RunState;
use super::telemetry;
use super::tool_calls::run_calls;
use super::typed_output::TypedOutput;
use crate::callback::stack::agent_stack;
use crate::cascade::{GuardrailChain, GuardrailEntry, ResolvedAgent};
use crate::contract::guardrail::{Boundary, TextScope};
use crate::model::{Message, ModelRequest};

/// Runs an agent's tool loop to its final answer.
pub(crate) async fn run_agent(
    run: &RunState,
    agent: &ResolvedAgent,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    run_route(run, agent, None, input, stats).await
}

/// [`run_agent`] for an agent whose router already ran the input guardrails in
/// `checked` (they do not run again).
pub(crate) async fn run_route(
    run: &RunState,
    agent: &ResolvedAgent,
    checked: Option<&GuardrailChain>,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    let (mut agent, mut checked, mut input) = (agent, checked, input);
    // A handed-over request is checked by its target's input guardrails, all of them.
    let mut handed_over = false;
    loop {
        match run_step(run, agent, checked, handed_over, input, stats).await? {
            Ended::Answer(text) => return Ok(text),
            Ended::Handoff {
                to,
                reason,
                input: request,
            } => {
                agent = handoff::take(run, agent.meta.name, to, reason, &mut stats.handoffs)?;
                (checked, input, handed_over) = (None, request, true);
            }
        }
    }
}

/// One agent's step, to its final answer or its handoff.
async fn run_step(
    run: &RunState,
    agent: &ResolvedAgent,
    checked: Option<&GuardrailChain>,
    handed_over: bool,
    input: String,
    stats: &mut Stats,
) -> Result<Ended, RunError> {
    let name = agent.meta.name;
    // The run's typed answer is the last answering step's: none until this one answers.
    stats.output = None;
    run.emit(|| RunEvent::StepStarted {
        step: name.to_string(),
        kind: StepKind::Agent,
        input: input.clone(),
    });
    // The run's own agent is traced by the run's span; a routed or workflow agent gets one.
    let span = if name == run.target_name() && !handed_over {
        tracing::Span::none()
    } else {
        telemetry::agent_span(name)
    };
    // Boxed: the loop's future is the largest of a run (its model turn, its guardrails, its
    // calls). Held inline, every future above it (the route, the target, the run) would
    // carry it and copy it once per level; boxed, it is copied once, into the box.
    let result = Box::pin(agent_loop(run, agent, checked, handed_over, input, stats))
        .instrument(span.clone())
        .await;
    telemetry::finish_step(&span, &result);
    run.emit(|| RunEvent::StepFinished {
        step: name.to_string(),
        kind: StepKind::Agent,
        outcome: StepOutcome::of(&result),
    });
    result
}

/// Ends the step with `text`.
fn final_answer(run: &RunState, step: &str, text: String) -> Result<Ended, RunError> {
    run.emit(|| RunEvent::FinalAnswer {
        step: step.to_string(),
        text: text.clone(),
    });
    Ok(Ended::Answer(text))
}

async fn agent_loop(
    run: &RunState,
    agent: &ResolvedAgent,
    checked: Option<&GuardrailChain>,
    handed_over: bool,
    input: String,
    stats: &mut Stats,
) -> Result<Ended, RunError> {
    let meta = agent.meta;
    let model = run
        .rt()
        .model_for(meta.name)
        .cloned()
        .ok_or_else(|| RunError::NoModel {
            step: meta.name.to_string(),
        })?;
    // The input boundary: blocking guardrails before the model is called; parallel ones
    // while the first turn streams (held back, see `super::guardrails`).
    let (parallel_guards, blocking_guards): (Vec<&GuardrailEntry>, Vec<&GuardrailEntry>) = agent
        .guardrails
        .input
        .entries()
        .iter()
        .filter(|e| checked.is_none_or(|c| !c.contains(e.meta)))
        .partition(|e| e.meta.parallel);
    // The run's own target: its blocking guardrails ran before the run was stored.
    let blocking_guards = if checked.is_none() && run.input_checked() && !handed_over {
        Vec::new()
    } else {
        blocking_guards
    };
    let input = match check_text(
        run,
        meta.name,
        Boundary::Input,
        &blocking_guards,
        input,
        TextScope::Whole,
    )
    .await?
    {
        Checked::Go(text) => text,
        Checked::Respond(answer) => return final_answer(run, meta.name, answer),
    };
    // The agent's tools, decorated once for the whole run (see `crate::callback`).
    let callbacks = agent_stack(
        &run.rt().listeners,
        agent,
        run.rt().base_callbacks(agent),
        &run.ctx().layers,
    );
    let mut req = ModelRequest::default().with_tools(
        callbacks
            .iter()
            .map(|c| c.shared_definition())
            .chain(handoff::definitions(meta)),
    );
    if !meta.instructions.is_empty() {
        req.messages.push(Message::system(meta.instructions));
    }
    // A typed answer: the request asks for its schema (a system message next to the
    // instructions for a model without a structured mode), and the gate holds every answer
    // until it is valid.
    let mut typed = TypedOutput::prepare(meta, &model, &mut req);
    if let Some(journal) = run.journal() {
        // The thread's history, as it was when the run started.
        req.messages.extend(journal.history.iter().cloned());
    }
    req.messages.push(Message::user(input.clone()));
    let max_turns = run
        .ctx()
        .max_turns
        .or(meta.max_turns)
        .unwrap_or(DEFAULT_MAX_TURNS);
    let parallel = run
        .ctx()
        .max_parallel
        .or(meta.max_parallel_tool_calls)
        .unwrap_or(DEFAULT_MAX_PARALLEL_TOOL_CALLS)
        .max(1);
    // What a `chat` span records of this agent's turns is masked by its tools' policies.
    let mask = |text: &str| {
        callbacks
            .iter()
            .fold(text.to_string(), |t, c| c.mask_for_model(&t).into_owned())
    };
    let mode = run
        .ctx()
        .output_streaming
        .unwrap_or(run.rt().output_streaming);
    let mut gate = match typed {
        Some(_) => OutputGate::for_typed_path(&agent.guardrails),
        None => OutputGate::for_path(&agent.guardrails, mode),
    };
    for turn_index in 0..max_turns {
        let (turn, response) = if turn_index == 0 && !parallel_guards.is_empty() {
            // Boxed: a model turn raced with guardrails is a large future, and only agents
            // with parallel input guardrails run one.
            match Box::pin(first_turn_checked(
                run,
                meta.name,
                &model,
                &mut req,
                stats,
                &parallel_guards,
                &mask,
                &mut gate,
            ))
            .await?
            {
                FirstTurn::Ran(turn, response) => (turn, response),
                FirstTurn::Respond(answer) => return final_answer(run, meta.name, answer),
            }
        } else {
            call_model(
                run,
                meta.name,
                &model,
                &req,
                stats,
                true,
                Some(&mask),
                &mut gate,
            )
            .await?
        };
        let message = response.message;
        if message.tool_calls.is_empty() {
            let text = match typed.as_mut() {
                None => message.content.unwrap_or_default(),
                Some(typed) => match typed.read(run, meta.name, &mut req, message)? {
                    Some(json) => json,
                    None => {
                        gate.discard();
                        continue;
                    }
                },
            };
            let text = gate_final(run, meta.name, &agent.guardrails, &mut gate, text).await?;
            // What the caller gets typed: the answer as the output boundary let it through.
            stats.output = typed
                .as_ref()
                .and_then(|_| serde_json::from_str(&text).ok());
            return final_answer(run, meta.name, text);
        }
        if let Some(answer) = gate_interim(run, meta.name, &mut gate).await? {
            return final_answer(run, meta.name, answer);
        }
        // A handoff ends the step: the other calls of its turn do not run.
        if let Some((call, to)) = handoff::requested(meta, &message.tool_calls) {
            handoff::record(run, turn, call, to).await?;
            let reason = handoff::reason(call);
            return Ok(Ended::Handoff { to, reason, input });
        }
        let calls = message.tool_calls.clone();
        req.messages.push(Message::Assistant(message));
        stats.tool_calls = stats
            .tool_calls
            .saturating_add(u32::try_from(calls.len()).unwrap_or(u32::MAX));
        for call in &calls {
            run.emit(|| RunEvent::ToolCallRequested {
                step: meta.name.to_string(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
            });
        }
        let observations = run_calls(
            run,
            meta.name,
            meta.tool_errors,
            &callbacks,
            &calls,
            parallel,
            turn,
        )
        .await?;
        for (call, obs) in calls.iter().zip(observations) {
            req.messages.push(Message::Tool {
                call_id: call.id.clone(),
                content: obs.content,
                is_error: obs.is_error,
            });
        }
    }
    Err(RunError::MaxTurnsExceeded {
        agent: meta.name.to_string(),
        max_turns,
    })
}
