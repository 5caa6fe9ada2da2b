//! A call admitted before it starts: reserved in the run's budget (and every outer run's),
//! then in the tenant windows of the app's store; a model call settled after it. Every model
//! call and tool call of a run goes through here.
use super::run_error::RunError;
use super::state::{RunState, limit_exceeded};
use super::tenant_usage::{ModelHold, Refusal};
use crate::model::Usage;

fn tenant(run: &RunState) -> &str {
    run.ctx().tenant_id().unwrap_or_default()
}

fn refused(run: &RunState, step: &str, refusal: Refusal) -> RunError {
    match refusal {
        Refusal::Limit(limit) => limit_exceeded(run, step, limit),
        Refusal::Store(e) => {
            // Fail closed: a window that cannot be counted admits no call.
            tracing::warn!(step, error = %e, "tenant usage could not be reserved");
            RunError::Store(e)
        }
    }
}

/// Reserves a call of `tool` (step `step`): refused when a bound of the run or of the tenant's
/// windows would pass, or when the store cannot reserve.
pub(crate) async fn admit_tool(run: &RunState, step: &str, tool: &str) -> Result<(), RunError> {
    run.budget()
        .reserve_tool(tool)
        .map_err(|refused| limit_exceeded(run, step, refused))?;
    let Some(gate) = run.rt().tenant_gate.as_ref() else {
        return Ok(());
    };
    if let Err(refusal) = gate.reserve_tool(tenant(run), tool).await {
        run.budget().release_tool(tool);
        return Err(refused(run, step, refusal));
    }
    Ok(())
}

/// Reserves a call of `model`: what the tenant windows hold of it is settled with
/// [`settle_model`] after the call.
pub(crate) async fn admit_model(
    run: &RunState,
    step: &str,
    model: &str,
) -> Result<ModelHold, RunError> {
    run.budget()
        .reserve_model(model)
        .map_err(|refused| limit_exceeded(run, step, refused))?;
    let Some(gate) = run.rt().tenant_gate.as_ref() else {
        return Ok(ModelHold::default());
    };
    match gate.reserve_model(tenant(run), model).await {
        Ok(hold) => Ok(hold),
        Err(refusal) => {
            run.budget().release_model();
            Err(refused(run, step, refusal))
        }
    }
}

/// Settles a model call with what it used (`None`: it failed, and used nothing that is
/// known): a bound its usage passed fails the run after it.
pub(crate) async fn settle_model(
    run: &RunState,
    step: &str,
    hold: ModelHold,
    usage: Option<Usage>,
    model: &str,
) -> Result<(), RunError> {
    if let Some(gate) = run.rt().tenant_gate.as_ref() {
        gate.settle_model(hold, usage.unwrap_or_default(), model)
            .await
            .map_err(|refusal| refused(run, step, refusal))?;
    } else {
        drop(hold);
    }
    if let Some(usage) = usage {
        run.budget()
            .settle_model(usage, model)
            .map_err(|over| limit_exceeded(run, step, over))?;
    }
    Ok(())
}
