//! The flow of a workflow run: its steps in order (each output the next input), a failed
//! step handed to its `on_error` handlers (see [`super::workflow`] for the flow itself).
use super::agent_loop::run_agent;
use super::events::{RunEvent, StepKind, StepOutcome};
use super::output::Stats;
use super::router::run_router;
use super::run_error::RunError;
use super::state::RunState;
use super::tool_step::run_tool_step;
use super::workflow::{Flow, FlowContext, Recovery, StepSpec};
use crate::cascade::ResolvedWorkflow;
use crate::engine::run_error::StepFailedError;

/// Makes a run error of a step catchable by `on_error`, or says it is not (cancellation, unknown
/// steps).
fn catchable(step: &str, err: RunError) -> Result<StepFailedError, RunError> {
    match err {
        RunError::Step(e) => Ok(e),
        // A usage limit ends the run: no handler can spend past it (fail closed).
        RunError::Cancelled | RunError::UnknownTarget { .. } | RunError::UsageLimit(_) => Err(err),
        // A pause for approval, a call in doubt, a store failure: the run stops resumable,
        // never as a step failure an `on_error` could recover from (and so finish).
        other if other.leaves_run_resumable() => Err(other),
        other => Ok(StepFailedError::Other {
            step: step.to_string(),
            message: other.to_string(),
        }),
    }
}

pub(crate) async fn run_workflow(
    run: &RunState,
    workflow: &ResolvedWorkflow,
    flow: &Flow,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    let name = workflow.meta.name;
    flow.check(workflow)?;
    run.emit(|| RunEvent::StepStarted {
        step: name.to_string(),
        kind: StepKind::Workflow,
        input: input.clone(),
    });
    let result = flow_steps(run, workflow, flow, input, stats).await;
    run.emit(|| RunEvent::StepFinished {
        step: name.to_string(),
        kind: StepKind::Workflow,
        outcome: StepOutcome::of(&result),
    });
    result
}

async fn flow_steps(
    run: &RunState,
    workflow: &ResolvedWorkflow,
    flow: &Flow,
    mut current: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    for (index, step) in flow.steps.iter().enumerate() {
        let step_name = step.spec.name();
        // The run's typed answer is its last step's (a tool step or a recovery has none).
        stats.output = None;
        let result = run_step(run, workflow, &step.spec, current.clone(), stats).await;
        let err = match result {
            Ok(out) => {
                current = out;
                continue;
            }
            Err(err) => catchable(step_name, err)?,
        };
        let ctx = FlowContext {
            workflow: workflow.meta.name,
            step: step_name,
            index,
            input: &current,
            tenant_id: run.ctx().tenant_id(),
        };
        let rendered = err.to_string();
        let mut outcome = Err(err);
        for handler in [&step.on_error, &flow.on_any_error].into_iter().flatten() {
            if let Err(e) = outcome {
                outcome = handler(e, &ctx);
            }
        }
        let recovery = outcome?;
        tracing::info!(workflow = workflow.meta.name, step = step_name, error = %rendered, ?recovery, "step failure recovered by on_error");
        run.emit(|| RunEvent::StepFinished {
            step: step_name.to_string(),
            kind: step_kind(&step.spec),
            outcome: StepOutcome::Recovered {
                error: rendered.clone(),
            },
        });
        match recovery {
            Recovery::Output(out) => current = out,
            Recovery::Skip => {}
            Recovery::Finish(answer) => return Ok(answer),
        }
    }
    Ok(current)
}

async fn run_step(
    run: &RunState,
    workflow: &ResolvedWorkflow,
    spec: &StepSpec,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    match spec {
        StepSpec::Agent(n) => {
            let agent = workflow
                .agents
                .iter()
                .find(|a| a.meta.name == *n)
                .expect("checked before the run");
            run_agent(run, agent, input, stats).await
        }
        StepSpec::Router(n) => {
            let router = workflow
                .routers
                .iter()
                .find(|r| r.meta.name == *n)
                .expect("checked before the run");
            run_router(run, router, input, stats).await
        }
        StepSpec::Tool(n) => run_tool_step(run, workflow, n, input).await,
        StepSpec::Map { name, f } => {
            run.emit(|| RunEvent::StepStarted {
                step: name.clone(),
                kind: StepKind::Map,
                input: input.clone(),
            });
            let result = f(input);
            run.emit(|| RunEvent::StepFinished {
                step: name.clone(),
                kind: StepKind::Map,
                outcome: match &result {
                    Ok(_) => StepOutcome::Succeeded,
                    Err(e) => StepOutcome::Failed {
                        error: e.to_string(),
                    },
                },
            });
            Ok(result?)
        }
    }
}

fn step_kind(spec: &StepSpec) -> StepKind {
    match spec {
        StepSpec::Agent(_) => StepKind::Agent,
        StepSpec::Router(_) => StepKind::Router,
        StepSpec::Tool(_) => StepKind::Tool,
        StepSpec::Map { .. } => StepKind::Map,
    }
}
