//! Dependency injection: `#[injectable]` services, and the per-invocation contexts
//! [`TenantContext`] and [`ExecutionContext`].
//!
//! Components (tools, interceptors) list their dependencies with `deps = [...]`; each entry maps,
//! in order, to one field of the struct. Services are app-wide singletons, built once when the app
//! is built and shared as `Arc<S>`. Contexts are per invocation: a component that takes one is
//! built afresh for every call, so a tenant can never leak into another call. A component without
//! context dependencies is built once and shared.
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

mod error;

pub use error::{BuildError, DiError};

/// What kind of value a dependency is.
#[derive(Clone, Copy)]
pub enum DepKind {
    /// [`TenantContext`], per invocation.
    Tenant,
    /// [`ExecutionContext`], per invocation.
    Execution,
    /// An `#[injectable]` service, app-wide.
    Service(&'static InjectableMeta),
}

/// One dependency of a component, as the macros record it.
#[derive(Clone, Copy)]
pub struct DepMeta {
    /// The dependency's type name, for messages.
    pub type_name: &'static str,
    /// Context or service.
    pub kind: DepKind,
}

impl fmt::Debug for DepMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_name)
    }
}

impl DepMeta {
    /// True for per-invocation contexts.
    pub const fn is_context(&self) -> bool {
        matches!(self.kind, DepKind::Tenant | DepKind::Execution)
    }
}

/// True when any dependency is a per-invocation context.
#[doc(hidden)]
pub const fn any_context(deps: &[DepMeta]) -> bool {
    let mut i = 0;
    while i < deps.len() {
        if deps[i].is_context() {
            return true;
        }
        i += 1;
    }
    false
}

/// Builds a service for `InjectableMeta::construct`.
pub type ServiceConstructor = fn(&Resolver<'_>) -> Result<Arc<dyn Any + Send + Sync>, DiError>;

/// Registration data of an `#[injectable]` service.
pub struct InjectableMeta {
    /// The service's type name.
    pub type_name: &'static str,
    /// Its `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Its dependencies.
    pub deps: &'static [DepMeta],
    /// `None` for `#[injectable(provided)]`: the app must be given an instance.
    pub construct: Option<ServiceConstructor>,
}

impl fmt::Debug for InjectableMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_name)
    }
}

/// Implemented by `#[injectable]`: an app-wide singleton service.
#[diagnostic::on_unimplemented(
    message = "[deps.not-injectable] `{Self}` is not an injectable service",
    label = "add `#[injectable]` to `{Self}`",
    note = "a dep is `TenantContext`, `ExecutionContext` or an `#[injectable]` service (its field is `Arc<Service>`, or `Service` when it is `Clone`)"
)]
pub trait Injectable: Send + Sync + Sized + 'static {
    /// Registration data.
    const META: &'static InjectableMeta;
}

/// A value that can be injected into a component's field.
#[diagnostic::on_unimplemented(
    message = "[deps.not-injectable] `{Self}` cannot be injected",
    label = "this field cannot be injected",
    note = "a dep field is `TenantContext`, `ExecutionContext`, or `Arc<Service>` (or `Service` when it is `Clone`) for a type with `#[injectable]`: add `#[injectable]` to the service"
)]
pub trait Inject: Sized {
    /// What the dependency is.
    const DEP: DepMeta;
    /// Produces the value for one invocation.
    fn inject(resolver: &Resolver<'_>) -> Result<Self, DiError>;
}

/// The tenant a call runs for. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TenantContext {
    tenant_id: Arc<str>,
}

impl TenantContext {
    /// A tenant by id.
    pub fn new(tenant_id: impl Into<Arc<str>>) -> Self {
        Self {
            tenant_id: tenant_id.into(),
        }
    }
    /// The tenant's id.
    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }
}

impl fmt::Debug for TenantContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TenantContext")
            .field("tenant_id", &&*self.tenant_id)
            .finish()
    }
}

tokio::task_local! {
    /// The tenant of the tool call whose `run` is being polled (set by the pipeline around the
    /// `run` of an MCP tool): what a remote server's per-tenant credentials are resolved by.
    static CALL_TENANT: Option<TenantContext>;
}

/// Runs `run` (a tool's `run`) with `tenant` as the call's tenant ([`call_tenant`]).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn with_call_tenant<F: std::future::Future>(
    tenant: Option<&TenantContext>,
    run: F,
) -> impl std::future::Future<Output = F::Output> {
    CALL_TENANT.scope(tenant.cloned(), run)
}

/// The tenant of the tool call being run, if any (`None` outside [`with_call_tenant`]).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn call_tenant() -> Option<TenantContext> {
    CALL_TENANT.try_with(Clone::clone).ok().flatten()
}

impl From<&str> for TenantContext {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

impl From<String> for TenantContext {
    fn from(id: String) -> Self {
        Self::new(id)
    }
}

/// A call id: generated (`call_<n>`) or given by the model. A generated id is a number until
/// someone reads it as text (most calls never do), then formatted once, inline, without
/// allocation; a given id is stored inline when short (up to 23 bytes).
#[derive(Clone)]
pub struct CallId {
    seq: u64,
    text: std::sync::OnceLock<smol_str::SmolStr>,
}

impl CallId {
    /// A call id from a string.
    pub fn new(id: &str) -> Self {
        Self {
            seq: 0,
            text: std::sync::OnceLock::from(smol_str::SmolStr::new(id)),
        }
    }

    /// The next process-wide generated id, `call_<n>`.
    pub fn generate() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            seq: NEXT.fetch_add(1, Ordering::Relaxed),
            text: std::sync::OnceLock::new(),
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        self.text.get_or_init(|| format_seq(self.seq))
    }
}

fn format_seq(n: u64) -> smol_str::SmolStr {
    let mut digits = itoa::Buffer::new();
    let mut text = smol_str::SmolStrBuilder::new();
    text.push_str("call_");
    text.push_str(digits.format(n));
    text.finish()
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
impl PartialEq for CallId {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}
impl Eq for CallId {}
impl PartialEq<str> for CallId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}
impl PartialEq<&str> for CallId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// What is known about the current invocation: the call id, the tool and the scope path it runs
/// under (application, workflow, agent). Cheap to clone.
#[derive(Clone, Debug)]
pub struct ExecutionContext {
    pub(crate) call_id: CallId,
    pub(crate) tool_name: std::borrow::Cow<'static, str>,
    pub(crate) path: Arc<[&'static str]>,
    pub(crate) idempotency_key: Option<Arc<str>>,
}

impl ExecutionContext {
    /// A context for a call (used by the runtime and test helpers).
    pub fn new(
        call_id: CallId,
        tool_name: impl Into<std::borrow::Cow<'static, str>>,
        path: Arc<[&'static str]>,
    ) -> Self {
        Self {
            call_id,
            tool_name: tool_name.into(),
            path,
            idempotency_key: None,
        }
    }
    /// With an idempotency key (what journaled runs give each call).
    #[inline]
    pub fn with_idempotency_key(mut self, key: Option<&str>) -> Self {
        self.idempotency_key = key.map(Arc::from);
        self
    }
    /// The call's idempotency key: the same on every attempt of the call, when its run is
    /// journaled (an app with a store), so a tool that talks to a payment API or a queue can
    /// pass it on and have a rerun deduplicated. Outside a journaled run it is the call id.
    ///
    /// ```
    /// use agboss_core::{di::CallId, ExecutionContext};
    /// let ctx = ExecutionContext::new(CallId::new("call_1"), "refund-tool", [].into());
    /// assert_eq!(ctx.idempotency_key(), "call_1");
    /// let ctx = ctx.with_idempotency_key(Some("idem_42"));
    /// assert_eq!(ctx.idempotency_key(), "idem_42");
    /// ```
    pub fn idempotency_key(&self) -> &str {
        self.idempotency_key
            .as_deref()
            .unwrap_or_else(|| self.call_id.as_str())
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        self.call_id.as_str()
    }
    /// The tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
    /// The names of the scopes the call runs under, outermost first (application, workflow,
    /// agent); empty for a bare tool.
    pub fn path(&self) -> &[&'static str] {
        &self.path
    }
}

/// The app-wide singletons, by type.
#[derive(Default, Clone)]
pub struct Services {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl fmt::Debug for Services {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Services")
            .field("count", &self.map.len())
            .finish()
    }
}

impl Services {
    /// Adds (or replaces) a service instance.
    pub fn insert<S: Send + Sync + 'static>(&mut self, service: Arc<S>) {
        self.map.insert(TypeId::of::<S>(), service);
    }
    pub(crate) fn insert_erased(&mut self, id: TypeId, service: Arc<dyn Any + Send + Sync>) {
        self.map.insert(id, service);
    }
    /// True when a service of that type is present.
    pub fn contains_id(&self, id: TypeId) -> bool {
        self.map.contains_key(&id)
    }
    /// A service by type.
    pub fn get<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.map
            .get(&TypeId::of::<S>())
            .and_then(|s| Arc::clone(s).downcast::<S>().ok())
    }

    /// Builds every service that `deps` (transitively) needs and that is not present yet.
    pub(crate) fn ensure(
        &mut self,
        component: &'static str,
        deps: &'static [DepMeta],
        stack: &mut Vec<&'static str>,
    ) -> Result<(), BuildError> {
        for dep in deps {
            let DepKind::Service(meta) = dep.kind else {
                continue;
            };
            if self.contains_id((meta.type_id)()) {
                continue;
            }
            if stack.contains(&meta.type_name) {
                let mut cycle: Vec<&str> = stack.clone();
                cycle.push(meta.type_name);
                return Err(BuildError::DependencyCycle(cycle.join(" -> ")));
            }
            if let Some(ctx) = meta.deps.iter().find(|d| d.is_context()) {
                return Err(BuildError::ContextInService {
                    service: meta.type_name,
                    context: ctx.type_name,
                });
            }
            let Some(construct) = meta.construct else {
                return Err(BuildError::MissingProvider {
                    component,
                    dependency: meta.type_name,
                    hint: "it is `#[injectable(provided)]`: give the app an instance with `.provide(...)`",
                });
            };
            stack.push(meta.type_name);
            self.ensure(meta.type_name, meta.deps, stack)?;
            stack.pop();
            let resolver = Resolver::for_services(self);
            let service = construct(&resolver).map_err(|e| BuildError::ServiceConstruction {
                service: meta.type_name,
                message: e.to_string(),
            })?;
            self.insert_erased((meta.type_id)(), service);
        }
        Ok(())
    }
}

/// Hands dependencies to a component's constructor: the app's services and, during a call, the
/// invocation's contexts.
pub struct Resolver<'a> {
    services: &'a Services,
    tenant: Option<&'a TenantContext>,
    execution: Option<&'a ExecutionContext>,
}

impl<'a> Resolver<'a> {
    /// The app's services.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn services(&self) -> &'a Services {
        self.services
    }

    /// A resolver for building services (no invocation contexts).
    pub fn for_services(services: &'a Services) -> Self {
        Self {
            services,
            tenant: None,
            execution: None,
        }
    }
    /// A resolver for one check at a run's text boundary: the services and the run's tenant
    /// (no execution context: that exists only during a tool call).
    pub fn for_tenant(services: &'a Services, tenant: Option<&'a TenantContext>) -> Self {
        Self {
            services,
            tenant,
            execution: None,
        }
    }
    /// A resolver for one invocation.
    pub fn for_call(
        services: &'a Services,
        tenant: Option<&'a TenantContext>,
        execution: &'a ExecutionContext,
    ) -> Self {
        Self {
            services,
            tenant,
            execution: Some(execution),
        }
    }
    /// The invocation's tenant.
    pub fn tenant(&self) -> Option<&'a TenantContext> {
        self.tenant
    }
    /// The invocation's execution context.
    pub fn execution(&self) -> Option<&'a ExecutionContext> {
        self.execution
    }
    /// A service by type.
    pub fn service<S: Injectable>(&self) -> Result<Arc<S>, DiError> {
        self.services
            .get::<S>()
            .ok_or(DiError::MissingService(S::META.type_name))
    }
}

impl Inject for TenantContext {
    const DEP: DepMeta = DepMeta {
        type_name: "TenantContext",
        kind: DepKind::Tenant,
    };
    fn inject(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        resolver.tenant.cloned().ok_or(DiError::NoTenant)
    }
}

impl Inject for ExecutionContext {
    const DEP: DepMeta = DepMeta {
        type_name: "ExecutionContext",
        kind: DepKind::Execution,
    };
    fn inject(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        resolver.execution.cloned().ok_or(DiError::Failed(
            "no ExecutionContext outside an invocation".into(),
        ))
    }
}

impl<S: Injectable> Inject for Arc<S> {
    const DEP: DepMeta = DepMeta {
        type_name: S::META.type_name,
        kind: DepKind::Service(S::META),
    };
    fn inject(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        resolver.service::<S>()
    }
}

impl<S: Injectable + Clone> Inject for S {
    const DEP: DepMeta = DepMeta {
        type_name: S::META.type_name,
        kind: DepKind::Service(S::META),
    };
    fn inject(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        resolver.service::<S>().map(|s| (*s).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_call_ids_are_unique_and_well_formed() {
        let a = CallId::generate();
        let b = CallId::generate();
        assert_ne!(a, b);
        for id in [&a, &b] {
            let s = id.as_str();
            assert!(s.starts_with("call_"), "{s}");
            assert!(s[5..].parse::<u64>().is_ok(), "{s}");
        }
        assert_eq!(CallId::new("call_7"), "call_7");
        let long = "x".repeat(64);
        assert_eq!(CallId::new(&long).as_str(), long);
    }
}
