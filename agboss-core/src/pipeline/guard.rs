//! One guardrail check, fail closed: building its per-run instance, running it within its time
//! limit, and turning an error, a panic, a missing dependency or a timeout into the kind of
//! block that fails the step. What the engine runs at a text boundary and what
//! `agboss_testing::test_input_guardrail` runs.
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;

use super::hooks::{bounded, panic_message};
use crate::contract::guardrail::{ErasedGuardrail, GuardrailContext, GuardrailVerdict};
use crate::di::{Resolver, Services};
use crate::error::GuardrailBlockKind;

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
