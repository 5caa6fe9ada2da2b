//! One guardrail check, fail closed: building its per-run instance, running it within its time
//! limit, and turning an error, a panic, a missing dependency or a timeout into the kind of
//! block that fails the step. What the engine runs at a text boundary and what
//! `agboss_testing::test_input_guardrail` runs.
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;

use super::guardrail::ErasedGuardrail;
use super::hooks::{bounded, panic_message};
use crate::contract::guardrail::Boundary;
use crate::contract::guardrail::{GuardrailContext, GuardrailVerdict};
use crate::di::{Resolver, Services};

/// Runs `guard` on `ctx` (its dependencies resolved from `services` and the context's tenant)
/// within `limit`. `Err` is how it failed closed.
pub async fn check(
    guard: &Arc<dyn ErasedGuardrail>,
    limit: Duration,
    services: &Services,
    ctx: &GuardrailContext<'_>,
) -> Result<GuardrailVerdict, GuardrailBlockKind> {
    let resolver = Resolver::for_tenant(services, ctx.tenant());
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| guard.check(&resolver, ctx)));
    let future = match started {
        Ok(Ok(future)) => future,
        Ok(Err(dependency)) => {
            return Err(GuardrailBlockKind::Failed {
                message: dependency.to_string(),
            });
        }
        Err(payload) => {
            tracing::error!(guardrail = guard.meta().name, panic = %panic_message(&*payload), "guardrail panicked");
            return Err(GuardrailBlockKind::Panicked);
        }
    };
    match bounded(AssertUnwindSafe(future).catch_unwind(), limit).await {
        Some(Ok(Ok(verdict))) => Ok(verdict),
        Some(Ok(Err(error))) => Err(GuardrailBlockKind::Failed {
            message: error.to_string(),
        }),
        Some(Err(payload)) => {
            tracing::error!(guardrail = guard.meta().name, panic = %panic_message(&*payload), "guardrail panicked");
            Err(GuardrailBlockKind::Panicked)
        }
        None => Err(GuardrailBlockKind::TimedOut {
            after_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        }),
    }
}

/// How a guardrail stopped a step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardrailBlockKind {
    /// The guardrail returned `GuardrailVerdict::block(reason)`.
    Block {
        /// Why.
        reason: String,
    },
    /// The guardrail returned an error (or could not be built for the run): failed closed.
    Failed {
        /// The error's message.
        message: String,
    },
    /// The guardrail panicked: failed closed.
    Panicked,
    /// The guardrail ran past its time limit: failed closed.
    TimedOut {
        /// The limit, in milliseconds.
        after_ms: u64,
    },
}

/// A text that a guardrail stopped at the boundary of an agent or router. A kind of
/// [`StepFailedError`](crate::error::StepFailedError) (`StepFailedError::GuardrailBlocked`), so a
/// flow's `on_error` catches it like a [`ToolBlockedError`](crate::error::ToolBlockedError).
///
/// ```
/// use agboss_core::{Boundary, StepFailedError};
/// use agboss_core::error::{GuardrailBlockKind, GuardrailBlockedError};
/// let blocked = GuardrailBlockedError {
///     step: "support-agent".into(),
///     guardrail: "injection-input-guardrail",
///     boundary: Boundary::Input,
///     kind: GuardrailBlockKind::Block { reason: "prompt injection".into() },
/// };
/// assert!(!blocked.is_failure());
/// let step: StepFailedError = blocked.into();
/// assert_eq!(step.as_guardrail_blocked().unwrap().guardrail, "injection-input-guardrail");
/// assert_eq!(
///     step.to_string(),
///     "input of `support-agent` was blocked by `injection-input-guardrail`: prompt injection"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{boundary} of `{step}` was blocked by `{guardrail}`: {}", self.text())]
pub struct GuardrailBlockedError {
    /// The agent or router.
    pub step: String,
    /// The guardrail's registered name.
    pub guardrail: &'static str,
    /// Input or output.
    pub boundary: Boundary,
    /// Block, or the failure that failed the step closed.
    pub kind: GuardrailBlockKind,
}

impl GuardrailBlockedError {
    /// The reason of a block, or what went wrong.
    pub fn text(&self) -> String {
        match &self.kind {
            GuardrailBlockKind::Block { reason } => reason.clone(),
            GuardrailBlockKind::Failed { message } => format!("the guardrail failed: {message}"),
            GuardrailBlockKind::Panicked => "the guardrail panicked".to_string(),
            GuardrailBlockKind::TimedOut { after_ms } => {
                format!("the guardrail timed out after {after_ms} ms")
            }
        }
    }
    /// True when the guardrail did not decide (it failed, panicked or timed out) and the step
    /// failed closed.
    pub fn is_failure(&self) -> bool {
        !matches!(self.kind, GuardrailBlockKind::Block { .. })
    }
}
