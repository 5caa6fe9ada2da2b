//! The app's side of serving it over MCP: the callbacks and bound tools of the path chosen
//! ([`McpServePath`](crate::mcp::server::McpServePath)), the warnings of serving it, and the
//! approval tickets its calls wait on as MCP tasks (in the app's store).
use std::borrow::Cow;
use std::sync::Arc;

use foldhash::HashMap;
use futures::future::BoxFuture;

use super::App;
use crate::cascade::{BoundTool, served_path_warnings};
use crate::contract::outcome::ToolCallError;
use crate::engine::{RunError, direct};
use crate::mcp::server::{ApprovalState, ApprovalTasks, ClaimedCall, ServedPath, ServedSet};
use crate::store::TicketStore as _;
use crate::store::types::now_ms;
use crate::store::{Lease, RunStore as _, StoreError, Ticket, TicketDecision, TicketState};

/// The tools of `path` (`None`: no such agent).
pub(super) fn served_set(app: &App, path: &ServedPath) -> Option<ServedSet> {
    let (callbacks, bound, agent) = match path {
        ServedPath::Direct => (app.callbacks(), app.bound_tools().cloned().collect(), None),
        ServedPath::Agent(name) => {
            let agent = app.agent_by_name(name)?;
            (
                app.agent_callbacks(agent),
                agent.tools.clone(),
                Some(&**agent),
            )
        }
    };
    let label = path.to_string();
    let warnings = served_path_warnings(&label, &bound, agent, app.agents());
    let gated: HashMap<Cow<'static, str>, BoundTool> = bound
        .iter()
        .filter(|b| b.meta().approval.is_some())
        .map(|b| (b.meta().name.clone(), b.clone()))
        .collect();
    let approvals = (app.store().is_some() && !gated.is_empty()).then(|| {
        Arc::new(StoreApprovals {
            app: app.clone(),
            gated,
        }) as Arc<dyn ApprovalTasks>
    });
    Some(ServedSet {
        callbacks,
        bound,
        warnings,
        approvals,
    })
}

/// The served calls' tickets, in the app's store: a direct call's one-call run each, as
/// `app.tool::<T>().invoke(..)` makes them, on the served path's tools.
struct StoreApprovals {
    app: App,
    /// The served tools with an approval channel, on the served path.
    gated: HashMap<Cow<'static, str>, BoundTool>,
}

impl StoreApprovals {
    async fn state(
        &self,
        tenant: &str,
        ticket_id: &str,
    ) -> Result<Option<ApprovalState>, RunError> {
        let Some(store) = self.app.store() else {
            return Ok(None);
        };
        let ticket = match store.ticket(tenant, ticket_id).await {
            Ok(ticket) => ticket,
            Err(StoreError::TicketNotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let Some(bound) = self.gated.get(ticket.tool.as_str()) else {
            return Ok(None);
        };
        if !direct::is_direct_ticket(&ticket, bound) {
            return Ok(None);
        }
        let now = now_ms();
        let tool = ticket.tool.clone();
        Ok(Some(match ticket.state_at(now) {
            TicketState::Pending => ApprovalState::Waiting {
                channel: ticket.channel,
            },
            // Withdrawn by its client: expired before its expiry.
            TicketState::Expired
                if ticket.state == TicketState::Expired && ticket.expires_at_ms > now =>
            {
                ApprovalState::Cancelled
            }
            TicketState::Expired => ApprovalState::Refused(format!(
                "Nobody decided the approval of `{tool}` before it expired; it did not run."
            )),
            TicketState::Superseded => ApprovalState::Refused(format!(
                "The approval of `{tool}` was asked again under its new policy; this call did not run."
            )),
            TicketState::Executing => ApprovalState::Running,
            TicketState::Decided => {
                match direct::claim_decided(&self.app.inner, bound, tenant, ticket).await {
                    Ok(claimed) => ApprovalState::Claimed(ClaimedCall {
                        tool,
                        call_id: claimed.ticket.call_id.clone(),
                        input: claimed.input,
                        grant: claimed.grant,
                        claim: Box::new((claimed.ticket, claimed.lease)),
                    }),
                    // Another poll claims it right now.
                    Err(RunError::Store(
                        StoreError::LeaseHeld { .. } | StoreError::TicketState { .. },
                    )) => ApprovalState::Running,
                    // Rejected (the run is finished failed), or asked again.
                    Err(RunError::Step(refused)) => ApprovalState::Refused(refused.to_string()),
                    Err(e) => return Err(e),
                }
            }
            TicketState::Completed => {
                let run = store.run(tenant, &ticket.run_id).await?;
                let why = || format!("The call of `{tool}` ended without a recorded result.");
                match ticket.decision {
                    Some(TicketDecision::Rejected { .. }) => {
                        ApprovalState::Refused(run.error.unwrap_or_else(why))
                    }
                    _ => ApprovalState::Done(match run.output {
                        Some(output) => Ok(output),
                        None => Err(run.error.unwrap_or_else(why)),
                    }),
                }
            }
        }))
    }

    async fn withdraw_pending(&self, tenant: &str, ticket_id: &str) -> Result<bool, RunError> {
        let Some(store) = self.app.store() else {
            return Ok(false);
        };
        let ticket = match store.ticket(tenant, ticket_id).await {
            Ok(ticket) => ticket,
            Err(StoreError::TicketNotFound { .. }) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let served = self
            .gated
            .get(ticket.tool.as_str())
            .is_some_and(|bound| direct::is_direct_ticket(&ticket, bound));
        if !served {
            return Ok(false);
        }
        if ticket.state_at(now_ms()) == TicketState::Pending {
            direct::withdraw_direct(&self.app.inner, tenant, ticket).await?;
        }
        // Cancelling a task that has gone on (or ended) is acknowledged; it goes on.
        Ok(true)
    }
}

impl ApprovalTasks for StoreApprovals {
    fn open<'a>(
        &'a self,
        tool: &'a str,
        tenant: &'a str,
        call_id: &'a str,
        error: ToolCallError,
    ) -> BoxFuture<'a, ToolCallError> {
        Box::pin(async move {
            match self.gated.get(tool) {
                Some(bound) => {
                    direct::ticket_direct_call(&self.app.inner, bound, tenant, call_id, error).await
                }
                None => error,
            }
        })
    }

    fn poll<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalState>, String>> {
        Box::pin(async move {
            self.state(tenant, ticket_id)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn finish(
        &self,
        claimed: ClaimedCall,
        label: &'static str,
        result: Result<String, String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Ok(claim) = claimed.claim.downcast::<(Ticket, Lease)>() else {
                return;
            };
            let (ticket, lease) = *claim;
            if let Err(e) =
                direct::finish_direct(&self.app.inner, &ticket, &lease, label, result).await
            {
                // The call ran; its end is not recorded: the ticket stays claimed (in doubt),
                // and the call is never run again.
                tracing::error!(ticket = %ticket.id, error = %e, "an approved MCP call's result was not recorded");
            }
        })
    }

    fn withdraw<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            self.withdraw_pending(tenant, ticket_id)
                .await
                .map_err(|e| e.to_string())
        })
    }
}
