//! The tool loop of an agent: model turns, each turn's tool calls run concurrently through the
//! agent's callback stack, every outcome read by the one observation policy
//! ([`crate::pipeline::observe`]).
use futures::StreamExt as _;
use tracing::Instrument as _;

use super::approval::{Attempt, Called, Slot};
use super::events::{RunEvent, StepKind, StepOutcome};
use super::guardrails::{Checked, FirstTurn, OutputGate};
use super::journal::{ToolReplay, tool_key};
use super::run::{DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, Engine, RunError, Stats};
use super::telemetry;
use crate::callback::stack::agent_stack;
use crate::callback::{SharedToolCallback, ToolInvocation};
use crate::cascade::{GuardrailChain, GuardrailEntry, ResolvedAgent};
use crate::contract::agent::ToolErrorPolicy;
use crate::contract::guardrail::{Boundary, TextScope};
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::engine::run_error::StepFailedError;
use crate::model::{Message, ModelRequest, ToolCallRequest};
use crate::pipeline::observe::{Observation, Reader, observe};

impl Engine {
    /// Runs an agent's tool loop to its final answer.
    pub(crate) async fn run_agent(
        &self,
        agent: &ResolvedAgent,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        self.run_route(agent, None, input, stats).await
    }

    /// [`Engine::run_agent`] for an agent whose router already ran the input guardrails in
    /// `checked` (they do not run again).
    pub(crate) async fn run_route(
        &self,
        agent: &ResolvedAgent,
        checked: Option<&GuardrailChain>,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        let name = agent.meta.name;
        self.emit(|| RunEvent::StepStarted {
            step: name.to_string(),
            kind: StepKind::Agent,
            input: input.clone(),
        });
        // The run's own agent is traced by the run's span; a routed or workflow agent gets one.
        let span = if name == self.target_name {
            tracing::Span::none()
        } else {
            telemetry::agent_span(name)
        };
        // Boxed: the loop's future is the largest of a run (its model turn, its guardrails, its
        // calls). Held inline, every future above it (the route, the target, the run) would
        // carry it and copy it once per level; boxed, it is copied once, into the box.
        let result = Box::pin(self.agent_loop(agent, checked, input, stats))
            .instrument(span.clone())
            .await;
        telemetry::finish_step(&span, &result);
        self.emit(|| RunEvent::StepFinished {
            step: name.to_string(),
            kind: StepKind::Agent,
            outcome: StepOutcome::of(&result),
        });
        result
    }

    /// Ends the step with `text`.
    fn final_answer(&self, step: &str, text: String) -> Result<String, RunError> {
        self.emit(|| RunEvent::FinalAnswer {
            step: step.to_string(),
            text: text.clone(),
        });
        Ok(text)
    }

    async fn agent_loop(
        &self,
        agent: &ResolvedAgent,
        checked: Option<&GuardrailChain>,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        let meta = agent.meta;
        let model = self
            .rt
            .model_for(meta.name)
            .cloned()
            .ok_or_else(|| RunError::NoModel {
                step: meta.name.to_string(),
            })?;
        // The input boundary: blocking guardrails before the model is called; parallel ones
        // while the first turn streams (held back, see `super::guardrails`).
        let (parallel_guards, blocking_guards): (Vec<&GuardrailEntry>, Vec<&GuardrailEntry>) =
            agent
                .guardrails
                .input
                .entries()
                .iter()
                .filter(|e| checked.is_none_or(|c| !c.contains(e.meta)))
                .partition(|e| e.meta.parallel);
        // The run's own target: its blocking guardrails ran before the run was stored.
        let blocking_guards = if checked.is_none() && self.input_checked {
            Vec::new()
        } else {
            blocking_guards
        };
        let input = match self
            .check_text(
                meta.name,
                Boundary::Input,
                &blocking_guards,
                input,
                TextScope::Whole,
            )
            .await?
        {
            Checked::Go(text) => text,
            Checked::Respond(answer) => return self.final_answer(meta.name, answer),
        };
        // The agent's tools, decorated once for the whole run (see `crate::callback::stack`).
        let callbacks = agent_stack(
            &self.rt.listeners,
            agent,
            self.rt.base_callbacks(agent),
            &self.ctx.layers,
        );
        let mut req =
            ModelRequest::default().with_tools(callbacks.iter().map(|c| c.shared_definition()));
        if !meta.instructions.is_empty() {
            req.messages.push(Message::system(meta.instructions));
        }
        if let Some(journal) = &self.journal {
            // The thread's history, as it was when the run started.
            req.messages.extend(journal.history.iter().cloned());
        }
        req.messages.push(Message::user(input));
        let max_turns = self
            .ctx
            .max_turns
            .or(meta.max_turns)
            .unwrap_or(DEFAULT_MAX_TURNS);
        let parallel = self
            .ctx
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
        let mode = self
            .ctx
            .output_streaming
            .unwrap_or(self.rt.output_streaming);
        let mut gate = OutputGate::for_path(&agent.guardrails, mode);
        for turn_index in 0..max_turns {
            let (turn, response) = if turn_index == 0 && !parallel_guards.is_empty() {
                // Boxed: a model turn raced with guardrails is a large future, and only agents
                // with parallel input guardrails run one.
                match Box::pin(self.first_turn_checked(
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
                    FirstTurn::Respond(answer) => return self.final_answer(meta.name, answer),
                }
            } else {
                self.call_model(meta.name, &model, &req, stats, true, Some(&mask), &mut gate)
                    .await?
            };
            let message = response.message;
            if message.tool_calls.is_empty() {
                let text = message.content.unwrap_or_default();
                let text = self
                    .gate_final(meta.name, &agent.guardrails, &mut gate, text)
                    .await?;
                return self.final_answer(meta.name, text);
            }
            if let Some(answer) = self.gate_interim(meta.name, &mut gate).await? {
                return self.final_answer(meta.name, answer);
            }
            let calls = message.tool_calls.clone();
            req.messages.push(Message::Assistant(message));
            stats.tool_calls = stats
                .tool_calls
                .saturating_add(u32::try_from(calls.len()).unwrap_or(u32::MAX));
            for call in &calls {
                self.emit(|| RunEvent::ToolCallRequested {
                    step: meta.name.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
            }
            let observations = self
                .run_calls(
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

    /// Runs one turn's calls, at most `parallel` at once; observations in the model's order. The
    /// first call that fails the step drops the others still in flight.
    async fn run_calls(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        calls: &[ToolCallRequest],
        parallel: usize,
        turn: u32,
    ) -> Result<Vec<Observation>, RunError> {
        // A call in doubt stops the run before any call of its turn runs.
        self.check_in_doubt(calls, turn)?;
        let mut slots: Vec<Option<Observation>> = calls.iter().map(|_| None).collect();
        // Gated calls waiting for a decision; the turn goes on once every one is decided.
        let mut tickets = Vec::new();
        // Collected first: a lazy iterator of borrowing closures trips the `Send` check of the
        // boxed stream future (higher-ranked lifetime inference).
        let mut calls_futures = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            calls_futures
                .push(async move { (i, self.run_one(step, policy, callbacks, call, turn).await) });
        }
        let mut pending = futures::stream::iter(calls_futures).buffer_unordered(parallel);
        loop {
            let next = match self.or_cancel(pending.next()).await {
                Ok(next) => next,
                Err(cancelled) => {
                    drop(pending);
                    self.emit_cancelled(step, calls, &slots, None);
                    return Err(cancelled);
                }
            };
            match next {
                None => break,
                Some((i, Ok(Slot::Done(obs)))) => slots[i] = Some(obs),
                Some((_, Ok(Slot::Pending(ticket)))) => tickets.push(*ticket),
                Some((i, Err(err))) => {
                    // Dropping the stream drops (cancels) every sibling still running or queued.
                    drop(pending);
                    self.emit_cancelled(step, calls, &slots, Some(i));
                    return Err(err);
                }
            }
        }
        if !tickets.is_empty() {
            // Every call that needed no approval ran and is journaled: a resume reads it back.
            let run_id = self
                .journal
                .as_ref()
                .map(|j| j.record.run_id.clone())
                .unwrap_or_default();
            tickets.sort_by_key(|t| {
                calls
                    .iter()
                    .position(|c| c.id == t.call_id)
                    .unwrap_or(usize::MAX)
            });
            return Err(RunError::AwaitingApproval { run_id, tickets });
        }
        Ok(slots
            .into_iter()
            .map(|s| s.expect("every call of the turn finished"))
            .collect())
    }

    fn emit_cancelled(
        &self,
        step: &str,
        calls: &[ToolCallRequest],
        slots: &[Option<Observation>],
        failed: Option<usize>,
    ) {
        for (j, call) in calls.iter().enumerate() {
            if slots[j].is_none() && Some(j) != failed {
                tracing::debug!(step, call_id = %call.id, tool = %call.name, "tool call cancelled");
                self.emit(|| RunEvent::ToolCallCancelled {
                    step: step.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                });
            }
        }
    }

    /// [`RunError::InDoubt`] for the first call of the turn that started, has no recorded end
    /// and may not run again.
    fn check_in_doubt(&self, calls: &[ToolCallRequest], turn: u32) -> Result<(), RunError> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        for call in calls {
            let key = tool_key(turn, &call.id);
            if let ToolReplay::Started {
                idempotent: false,
                call_id,
                tool,
                ..
            } = journal.tool_state(&key)
            {
                self.emit(|| RunEvent::ToolCallInDoubt {
                    step: journal.record.target.clone(),
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                });
                return Err(RunError::InDoubt {
                    run_id: journal.record.run_id.clone(),
                    call_id,
                    tool,
                    key,
                });
            }
        }
        Ok(())
    }

    /// One call, journaled: a finished call of a resumed run is read back; otherwise its start
    /// is recorded before it runs and its observation before the run goes on.
    async fn run_one(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
        turn: u32,
    ) -> Result<Slot, RunError> {
        let Some(journal) = &self.journal else {
            return match self
                .call_tool(step, policy, callbacks, call, Attempt::first(None))
                .await?
            {
                Called::Observed(obs, _) => Ok(Slot::Done(obs)),
                Called::NeedsApproval(error) => Err(self.approval_without_store(step, error)),
            };
        };
        let key = tool_key(turn, &call.id);
        let idempotency_key = match journal.tool_state(&key) {
            ToolReplay::Finished(obs) => return Ok(Slot::Done(obs)),
            ToolReplay::Awaiting { ticket_id } => {
                return self
                    .settle_ticket(step, policy, callbacks, call, &key, &ticket_id)
                    .await;
            }
            // Checked before the turn ran: only idempotent calls are left here.
            ToolReplay::Started {
                idempotency_key, ..
            } => idempotency_key,
            ToolReplay::Fresh => {
                let idempotency_key = journal.idempotency_key(&key);
                let idempotent = callbacks
                    .iter()
                    .find(|c| c.definition().name == call.name)
                    .is_some_and(|c| c.metadata().idempotent);
                journal
                    .record_tool_started(&key, &call.id, &call.name, &idempotency_key, idempotent)
                    .await?;
                idempotency_key
            }
        };
        match self
            .call_tool(
                step,
                policy,
                callbacks,
                call,
                Attempt::first(Some(&idempotency_key)),
            )
            .await?
        {
            Called::Observed(obs, decision) => {
                journal
                    .record_tool_finished(&key, &call.id, &call.name, decision, &obs, true)
                    .await?;
                Ok(Slot::Done(obs))
            }
            Called::NeedsApproval(error) => {
                let ticket = self
                    .open_ticket(journal, &key, callbacks, call, error)
                    .await?;
                Ok(Slot::Pending(Box::new(ticket)))
            }
        }
    }

    /// One call: its observation (with its decision's label), a gated call's need for approval
    /// (journaled runs only), or the error that fails the step.
    pub(super) async fn call_tool(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
        attempt: Attempt<'_>,
    ) -> Result<Called, RunError> {
        let policy = self
            .ctx
            .tool_errors
            .get(call.name.as_str())
            .copied()
            .unwrap_or(policy);
        let Some(callback) = callbacks.iter().find(|c| c.definition().name == call.name) else {
            let known: Vec<&str> = callbacks
                .iter()
                .map(|c| c.definition().name.as_str())
                .collect();
            // The name is the model's text: quoted bounded, like every error text.
            let name = crate::dto::bounded(call.name.clone());
            let reason = if known.is_empty() {
                format!("Unknown tool `{name}`: no tools are available.")
            } else {
                format!(
                    "Unknown tool `{name}`. The tools you can call are: {}.",
                    known.join(", ")
                )
            };
            let mut outcome = CallOutcome::failed(
                FailureKind::Rejected,
                ToolCallError::new(name, ToolCallErrorKind::NotInApp),
            );
            if let CallOutcome::Failed(failure) = &mut outcome {
                failure.set_report(reason);
            }
            let (obs, label) = self.observed(step, call, outcome, policy, &|t| t.into())?;
            return Ok(Called::Observed(obs, label));
        };
        // An empty argument text is an empty object; anything else goes to the input DTO as is
        // (text that is not JSON is one of its errors).
        let arguments = attempt.arguments.unwrap_or(call.arguments.as_str());
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let invocation = ToolInvocation::new(&call.id, arguments)
            .with_tenant(self.ctx.tenant.as_ref())
            .with_idempotency_key(attempt.idempotency_key)
            .with_approval(attempt.grant);
        let outcome = match callback.call(invocation).await {
            // A journaled run makes a ticket of it; any other run fails the step (below).
            CallOutcome::Failed(failure)
                if failure.kind() == FailureKind::Approval && self.journal.is_some() =>
            {
                let outcome: CallOutcome<Rendered> = CallOutcome::Failed(failure);
                let decision = outcome.decision();
                self.emit(|| RunEvent::ToolCallDecision {
                    step: step.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    decision,
                });
                let CallOutcome::Failed(failure) = outcome else {
                    unreachable!("matched above")
                };
                return Ok(Called::NeedsApproval(failure.into_error()));
            }
            outcome => outcome,
        };
        let (obs, label) =
            self.observed(step, call, outcome, policy, &|t| callback.mask_for_model(t))?;
        Ok(Called::Observed(obs, label))
    }

    /// Reads an outcome with the observation policy and reports it as events; returns the
    /// observation with the decision's label.
    fn observed(
        &self,
        step: &str,
        call: &ToolCallRequest,
        outcome: CallOutcome,
        policy: ToolErrorPolicy,
        mask: &dyn Fn(&str) -> std::borrow::Cow<'_, str>,
    ) -> Result<(Observation, &'static str), RunError> {
        let observed = observe(&call.name, &call.id, outcome, Reader::Model(policy), mask);
        match &observed.verdict {
            Ok(obs) if obs.is_error => {
                tracing::debug!(step, call_id = %call.id, tool = %call.name, decision = ?observed.decision, "tool call refused or failed; reported to the model")
            }
            Ok(_) => {}
            Err(err) if err.is_guard_failure() => {
                tracing::error!(step, call_id = %call.id, tool = %call.name, error = %err, "tool call guard failed or blocked: the step fails")
            }
            Err(err) => {
                tracing::warn!(step, call_id = %call.id, tool = %call.name, error = %err, "tool call failed: the step fails")
            }
        }
        let decision = observed.decision;
        let label = decision.label();
        self.emit(|| RunEvent::ToolCallDecision {
            step: step.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            decision,
        });
        if let Some(error) = observed.tool_error {
            tracing::warn!(step, call_id = %call.id, tool = %call.name, %error, ?policy, "tool failed");
            self.emit(|| RunEvent::ToolError {
                step: step.to_string(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                error,
            });
        }
        match observed.verdict {
            Ok(obs) => {
                self.emit(|| RunEvent::ToolResult {
                    step: step.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    content: obs.content.clone(),
                    is_error: obs.is_error,
                    truncated: obs.truncated,
                });
                Ok((obs, label))
            }
            Err(err) => Err(StepFailedError::from_tool_call(step, err).into()),
        }
    }
}
