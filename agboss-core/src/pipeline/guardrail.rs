//! A guardrail behind `dyn` ([`ErasedGuardrail`]): what an `#[input_guardrail]`'s or
//! `#[output_guardrail]`'s meta builds (opaque to the contract, as a [`Built`]) and what
//! [`super::guard::check`] runs, on a shared instance or one built for the run.
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::contract::Built;
use crate::contract::guardrail::{
    GuardrailContext, GuardrailMeta, GuardrailVerdict, InputGuardrail, InputGuardrailComponent,
    OutputGuardrail, OutputGuardrailComponent,
};
use crate::contract::handler_error::GuardrailError;
use crate::di::{DiError, Resolver, Services};

/// A built guardrail behind `dyn`: one check, on a shared instance or (when it depends on the
/// tenant) on an instance built for the run.
#[doc(hidden)]
pub trait ErasedGuardrail: Send + Sync {
    fn meta(&self) -> &'static GuardrailMeta;
    fn check<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        ctx: &'a GuardrailContext<'a>,
    ) -> Result<BoxFuture<'a, Result<GuardrailVerdict, GuardrailError>>, DiError>;
}

/// The check of a concrete guardrail type: which trait method it calls.
trait Check: Send + Sync + Sized + 'static {
    const META: &'static GuardrailMeta;
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;
    fn check<'a>(
        &'a self,
        ctx: &'a GuardrailContext<'a>,
    ) -> BoxFuture<'a, Result<GuardrailVerdict, GuardrailError>>;
}

/// An input guardrail `G` as a [`Check`].
struct InputCheck<G>(G);
/// An output guardrail `G` as a [`Check`].
struct OutputCheck<G>(G);

impl<G: InputGuardrailComponent + InputGuardrail> Check for InputCheck<G> {
    const META: &'static GuardrailMeta = G::META;
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        G::construct(resolver).map(Self)
    }
    fn check<'a>(
        &'a self,
        ctx: &'a GuardrailContext<'a>,
    ) -> BoxFuture<'a, Result<GuardrailVerdict, GuardrailError>> {
        Box::pin(self.0.check_input(ctx))
    }
}

impl<G: OutputGuardrailComponent + OutputGuardrail> Check for OutputCheck<G> {
    const META: &'static GuardrailMeta = G::META;
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        G::construct(resolver).map(Self)
    }
    fn check<'a>(
        &'a self,
        ctx: &'a GuardrailContext<'a>,
    ) -> BoxFuture<'a, Result<GuardrailVerdict, GuardrailError>> {
        Box::pin(self.0.check_output(ctx))
    }
}

/// A guardrail built for an app: shared when it has no per-run deps.
struct BuiltGuardrail<C> {
    shared: Option<C>,
}

impl<C: Check> ErasedGuardrail for BuiltGuardrail<C> {
    fn meta(&self) -> &'static GuardrailMeta {
        C::META
    }
    fn check<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        ctx: &'a GuardrailContext<'a>,
    ) -> Result<BoxFuture<'a, Result<GuardrailVerdict, GuardrailError>>, DiError> {
        Ok(match &self.shared {
            Some(instance) => instance.check(ctx),
            None => {
                let instance = C::construct(resolver)?;
                Box::pin(async move { instance.check(ctx).await })
            }
        })
    }
}

fn build<C: Check>(services: &Services) -> Result<Built, DiError> {
    let shared = if crate::di::any_context(C::META.deps) {
        None
    } else {
        Some(C::construct(&Resolver::for_services(services))?)
    };
    let guard: Arc<dyn ErasedGuardrail> = Arc::new(BuiltGuardrail { shared });
    Ok(Built::new(guard))
}

/// The guardrail a `GuardrailMeta::build` built.
pub(crate) fn guardrail_of(built: Built) -> Result<Arc<dyn ErasedGuardrail>, DiError> {
    built
        .downcast::<Arc<dyn ErasedGuardrail>>()
        .ok_or_else(|| DiError::Failed("a guardrail built no check of this runtime".into()))
}

/// Builds input guardrail `G` against the app's services (what its `GuardrailMeta::build`
/// points at).
#[doc(hidden)]
pub fn build_input_guardrail<G: InputGuardrailComponent + InputGuardrail>(
    services: &Services,
) -> Result<Built, DiError> {
    build::<InputCheck<G>>(services)
}

/// Builds output guardrail `G` against the app's services.
#[doc(hidden)]
pub fn build_output_guardrail<G: OutputGuardrailComponent + OutputGuardrail>(
    services: &Services,
) -> Result<Built, DiError> {
    build::<OutputCheck<G>>(services)
}
