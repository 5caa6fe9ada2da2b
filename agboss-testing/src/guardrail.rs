//! Guardrails as easy to test as plain functions: [`test_input_guardrail`] and
//! [`test_output_guardrail`] build one guardrail with its deps as an app would and run its
//! check exactly as the engine does (time limit, panics and errors failing closed).
//!
//! ```
//! use agboss_core::{
//!     contract::guardrail::GuardrailContext, GuardrailError, contract::guardrail::GuardrailVerdict, contract::guardrail::OutputGuardrail, output_guardrail,
//! };
//! use agboss_testing::{TestOptions, test_output_guardrail};
//!
//! #[output_guardrail(name = "key-output-guardrail", description = "Keeps API keys out of answers")]
//! pub struct KeyOutputGuardrail;
//! impl OutputGuardrail for KeyOutputGuardrail {
//!     async fn check_output(&self, out: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
//!         Ok(if out.text().contains("sk-") { GuardrailVerdict::block("an API key") } else { GuardrailVerdict::pass() })
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let guard = test_output_guardrail::<KeyOutputGuardrail>(TestOptions::new());
//! assert_eq!(guard.check("all good").await, GuardrailVerdict::pass());
//! assert_eq!(guard.check("use sk-123").await, GuardrailVerdict::block("an API key"));
//! # });
//! ```
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use agboss_core::__private::harness_build;
use agboss_core::__private::{ErasedGuardrail, GuardrailMeta, Services};
use agboss_core::error::{BuildError, GuardrailBlockKind};
use agboss_core::pipeline::guard;
use agboss_core::{
    TenantContext, contract::guardrail::Boundary, contract::guardrail::GuardrailContext,
    contract::guardrail::GuardrailVerdict, contract::guardrail::InputGuardrailComponent,
    contract::guardrail::OutputGuardrailComponent, contract::guardrail::TextScope,
};

use crate::TestOptions;

/// A harness around one guardrail. Built by [`test_input_guardrail`] or
/// [`test_output_guardrail`].
#[must_use]
pub struct GuardrailHarness<G> {
    meta: &'static GuardrailMeta,
    guard: Arc<dyn ErasedGuardrail>,
    limit: Duration,
    services: Services,
    tenant: Option<TenantContext>,
    step: String,
    scope: TextScope,
    _g: PhantomData<fn() -> G>,
}

/// Builds input guardrail `G` with its deps as an app would (overrides from `options`). Panics
/// with the build error if a dependency cannot be provided; see [`try_test_input_guardrail`].
pub fn test_input_guardrail<G: InputGuardrailComponent>(
    options: TestOptions,
) -> GuardrailHarness<G> {
    harness_or_panic(try_test_input_guardrail::<G>(options), G::META)
}

/// Like [`test_input_guardrail`], returning the build error.
pub fn try_test_input_guardrail<G: InputGuardrailComponent>(
    options: TestOptions,
) -> Result<GuardrailHarness<G>, BuildError> {
    build(G::META, options)
}

/// Builds output guardrail `G` with its deps as an app would. Panics with the build error if a
/// dependency cannot be provided; see [`try_test_output_guardrail`].
pub fn test_output_guardrail<G: OutputGuardrailComponent>(
    options: TestOptions,
) -> GuardrailHarness<G> {
    harness_or_panic(try_test_output_guardrail::<G>(options), G::META)
}

/// Like [`test_output_guardrail`], returning the build error.
pub fn try_test_output_guardrail<G: OutputGuardrailComponent>(
    options: TestOptions,
) -> Result<GuardrailHarness<G>, BuildError> {
    build(G::META, options)
}

fn harness_or_panic<G>(
    harness: Result<GuardrailHarness<G>, BuildError>,
    meta: &GuardrailMeta,
) -> GuardrailHarness<G> {
    match harness {
        Ok(h) => h,
        Err(e) => panic!("cannot build `{}` for the test: {e}", meta.type_name),
    }
}

fn build<G>(
    meta: &'static GuardrailMeta,
    options: TestOptions,
) -> Result<GuardrailHarness<G>, BuildError> {
    let (tenant, mut services) = options.into_parts();
    let (guard, limit) = harness_build::guardrail(meta, &mut services)?;
    Ok(GuardrailHarness {
        meta,
        guard,
        limit,
        services,
        tenant,
        step: "test-agent".to_string(),
        scope: TextScope::Whole,
        _g: PhantomData,
    })
}

impl<G> GuardrailHarness<G> {
    /// The agent or router the check reports (default `test-agent`).
    pub fn step(mut self, step: impl Into<String>) -> Self {
        self.step = step.into();
        self
    }
    /// Checks the text as a streamed window or an interim text (default: a whole text).
    pub fn scope(mut self, scope: TextScope) -> Self {
        self.scope = scope;
        self
    }
    /// Runs the check on `text`. Panics if the guardrail fails (it would fail the step closed);
    /// use [`GuardrailHarness::try_check`] to assert on failures.
    pub async fn check(&self, text: &str) -> GuardrailVerdict {
        match self.try_check(text).await {
            Ok(verdict) => verdict,
            Err(kind) => panic!("the check of `{}` failed: {kind:?}", self.meta.name),
        }
    }
    /// Runs the check, returning how it failed closed (an error, a panic, a timeout or a
    /// dependency that could not be built) as the engine would report it.
    pub async fn try_check(&self, text: &str) -> Result<GuardrailVerdict, GuardrailBlockKind> {
        let boundary: Boundary = self.meta.boundary;
        let ctx = GuardrailContext::new(boundary, &self.step, text)
            .with_scope(self.scope)
            .with_tenant(self.tenant.as_ref());
        guard::check(&self.guard, self.limit, &self.services, &ctx).await
    }
}
