//! The app and the interceptor cascade: chains are resolved once, when the app is built.
//!
//! `before_tool_call` runs outer to inner (application → … → tool), `after_tool_call` inner to
//! outer. `exclude_tool_interceptors` at a scope removes an inherited interceptor for that scope
//! and everything below it; an interceptor attached at several scopes runs once, at its outermost
//! place.
use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::di::{CallId, Injectable, Services, TenantContext};
use crate::dto::Dto;
use crate::error::{BlockKind, BuildError, ToolBlockedError, ToolCallError};
use crate::interceptor::{ErasedInterceptor, InterceptorMeta, ToolInterceptor};
use crate::pipeline::{CallEnv, ErasedToolSlot, JsonOutcome, Outcome, ToolSlot, run_typed};
use crate::tool::{Tool, ToolMeta};

/// The kind of a scope in the cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `#[application]` (or the app builder).
    Application,
    /// `#[workflow]`.
    Workflow,
    /// `#[agent]`.
    Agent,
    /// `#[tool]` / `#[mcp_tool]`.
    Tool,
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Application => "application",
            Self::Workflow => "workflow",
            Self::Agent => "agent",
            Self::Tool => "tool",
        })
    }
}

/// A scope: its kind and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeRef {
    /// Application, workflow, agent or tool.
    pub kind: ScopeKind,
    /// The component's name.
    pub name: &'static str,
}

impl fmt::Display for ScopeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.kind, self.name)
    }
}

/// One scope of a path with what it attaches and excludes.
#[derive(Debug, Clone)]
pub struct ScopeSpec {
    /// The scope.
    pub scope: ScopeRef,
    /// `tool_interceptors = [...]`.
    pub attach: Vec<&'static InterceptorMeta>,
    /// `exclude_tool_interceptors = [...]`.
    pub exclude: Vec<&'static InterceptorMeta>,
}

/// One interceptor of a resolved chain and where it came from.
#[derive(Debug, Clone)]
pub struct ChainEntry {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// The scope that attached it (its outermost place).
    pub origin: ScopeRef,
}

/// An inherited interceptor that a scope excluded.
#[derive(Debug, Clone)]
pub struct Exclusion {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// Where it was attached.
    pub attached_at: ScopeRef,
    /// Where it was excluded.
    pub excluded_at: ScopeRef,
}

/// The resolved, ordered interceptor chain of one tool on one path.
pub struct Chain {
    pub(crate) before: Box<[Arc<dyn ErasedInterceptor>]>,
    /// Already in inner-to-outer order.
    pub(crate) after: Box<[Arc<dyn ErasedInterceptor>]>,
    pub(crate) entries: Vec<ChainEntry>,
    pub(crate) exclusions: Vec<Exclusion>,
    pub(crate) path: Arc<[&'static str]>,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chain")
            .field("path", &self.path)
            .field("entries", &self.entries)
            .field("exclusions", &self.exclusions)
            .finish()
    }
}

impl Chain {
    /// The interceptors in `before_tool_call` order (outer to inner), with their origin.
    pub fn entries(&self) -> &[ChainEntry] {
        &self.entries
    }
    /// The exclusions applied on this path.
    pub fn exclusions(&self) -> &[Exclusion] {
        &self.exclusions
    }
    /// Names of the interceptors whose `before_tool_call` runs, in order.
    pub fn before_order(&self) -> Vec<&'static str> {
        self.before.iter().map(|i| i.meta().name).collect()
    }
    /// Names of the interceptors whose `after_tool_call` runs, in order (inner to outer).
    pub fn after_order(&self) -> Vec<&'static str> {
        self.after.iter().map(|i| i.meta().name).collect()
    }
    /// The scope names of the path (outermost first, without the tool).
    pub fn path(&self) -> &[&'static str] {
        &self.path
    }
}

/// Builds each interceptor type once per app.
#[derive(Default)]
pub(crate) struct InterceptorPool {
    built: HashMap<TypeId, Arc<dyn ErasedInterceptor>>,
}

impl InterceptorPool {
    pub(crate) fn get(
        &mut self,
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        if let Some(i) = self.built.get(&(meta.type_id)()) {
            return Ok(Arc::clone(i));
        }
        services.ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        let built = (meta.build)(services).map_err(|e| BuildError::ServiceConstruction {
            service: meta.type_name,
            message: e.to_string(),
        })?;
        self.built.insert((meta.type_id)(), Arc::clone(&built));
        Ok(built)
    }
}

/// Resolves the chain of one path (outermost scope first; the last scope is the tool's).
pub(crate) fn resolve_chain(
    scopes: &[ScopeSpec],
    pool: &mut InterceptorPool,
    services: &mut Services,
) -> Result<Chain, BuildError> {
    let mut entries: Vec<ChainEntry> = Vec::new();
    let mut exclusions: Vec<Exclusion> = Vec::new();
    for spec in scopes {
        for ex in &spec.exclude {
            if let Some(pos) = entries.iter().position(|e| e.interceptor.same(ex)) {
                let removed = entries.remove(pos);
                exclusions.push(Exclusion {
                    interceptor: removed.interceptor,
                    attached_at: removed.origin,
                    excluded_at: spec.scope,
                });
            }
        }
        for at in &spec.attach {
            if !entries.iter().any(|e| e.interceptor.same(at)) {
                entries.push(ChainEntry {
                    interceptor: at,
                    origin: spec.scope,
                });
            }
        }
    }
    let mut before = Vec::new();
    let mut after = Vec::new();
    for entry in &entries {
        let built = pool.get(entry.interceptor, services)?;
        if built.has_before() {
            before.push(Arc::clone(&built));
        }
        if built.has_after() {
            after.push(built);
        }
    }
    after.reverse();
    let path: Arc<[&'static str]> = scopes
        .iter()
        .filter(|s| s.scope.kind != ScopeKind::Tool)
        .map(|s| s.scope.name)
        .collect();
    Ok(Chain {
        before: before.into(),
        after: after.into(),
        entries,
        exclusions,
        path,
    })
}

pub(crate) struct ToolEntry {
    pub(crate) meta: &'static ToolMeta,
    pub(crate) slot: Arc<dyn ErasedToolSlot>,
    /// The application → tool chain, used by direct invokes.
    pub(crate) direct: Arc<Chain>,
}

struct AppInner {
    name: &'static str,
    services: Services,
    tools: Vec<ToolEntry>,
    by_type: HashMap<TypeId, usize>,
    by_name: HashMap<&'static str, usize>,
}

/// A built application: services constructed, every chain resolved. Cheap to clone.
#[derive(Clone)]
pub struct App {
    inner: Arc<AppInner>,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("name", &self.inner.name)
            .field(
                "tools",
                &self
                    .inner
                    .tools
                    .iter()
                    .map(|t| t.meta.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Builds an [`App`].
///
/// ```
/// # use agboss_core::{App, tool, ToolHandler, ToolError};
/// # use agboss_core::dto::Dto;
/// # #[derive(Dto, Debug, Clone, PartialEq)]
/// # pub struct PingDto { #[text(prompt = "Anything")] pub text: String }
/// # #[tool(name = "ping-tool", description = "Answers", input = PingDto, output = PingDto)]
/// # pub struct PingTool;
/// # impl ToolHandler<PingDto, PingDto> for PingTool {
/// #     async fn run(&self, input: PingDto) -> Result<PingDto, ToolError> { Ok(input) }
/// # }
/// let app = App::builder().tool::<PingTool>().build().expect("valid app");
/// let out = futures::executor::block_on(app.tool::<PingTool>().invoke_json(r#"{"text":"hi"}"#));
/// assert_eq!(out.unwrap(), r#"{"text":"hi"}"#);
/// ```
#[must_use = "an AppBuilder does nothing until `.build()`"]
pub struct AppBuilder {
    name: &'static str,
    attach: Vec<&'static InterceptorMeta>,
    tools: Vec<&'static ToolMeta>,
    services: Services,
}

impl App {
    /// Starts an app builder.
    pub fn builder() -> AppBuilder {
        AppBuilder {
            name: "app",
            attach: Vec::new(),
            tools: Vec::new(),
            services: Services::default(),
        }
    }

    /// The app's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// A handle to call tool `T` directly, through its application → tool chain.
    pub fn tool<T: Tool>(&self) -> ToolHandle<'_, T> {
        ToolHandle {
            app: self,
            tenant: None,
            call_id: None,
            _tool: PhantomData,
        }
    }

    /// A handle to call a tool by its registered name with JSON arguments.
    pub fn tool_by_name(&self, name: &str) -> Option<DynToolHandle<'_>> {
        let idx = *self.inner.by_name.get(name)?;
        Some(DynToolHandle {
            app: self,
            entry: &self.inner.tools[idx],
            tenant: None,
            call_id: None,
        })
    }

    /// The tools of the app.
    pub fn tools(&self) -> impl Iterator<Item = &'static ToolMeta> + '_ {
        self.inner.tools.iter().map(|t| t.meta)
    }

    /// The resolved direct-invoke chain of tool `T`.
    pub fn direct_chain<T: Tool>(&self) -> Option<&Chain> {
        let idx = *self.inner.by_type.get(&TypeId::of::<T>())?;
        Some(&self.inner.tools[idx].direct)
    }

    /// The app's services.
    pub fn services(&self) -> &Services {
        &self.inner.services
    }

    fn entry<T: Tool>(&self) -> Result<(&ToolEntry, &ToolSlot<T>), ToolCallError> {
        let not_in_app = || ToolCallError::NotInApp {
            tool_name: T::META.name.to_string(),
        };
        let idx = *self
            .inner
            .by_type
            .get(&TypeId::of::<T>())
            .ok_or_else(not_in_app)?;
        let entry = &self.inner.tools[idx];
        let slot = entry
            .slot
            .as_any()
            .downcast_ref::<ToolSlot<T>>()
            .ok_or_else(not_in_app)?;
        Ok((entry, slot))
    }
}

impl AppBuilder {
    /// Names the app (the application scope in chains and errors).
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }
    /// Attaches an interceptor at application level (outermost).
    pub fn tool_interceptor<I: ToolInterceptor>(mut self) -> Self {
        self.attach.push(I::META);
        self
    }
    /// Adds a tool (its tool-level interceptors come with it).
    pub fn tool<T: Tool>(mut self) -> Self {
        self.tools.push(T::META);
        self
    }
    /// Adds a tool by its registration data.
    pub fn tool_meta(mut self, meta: &'static ToolMeta) -> Self {
        self.tools.push(meta);
        self
    }
    /// Provides a service instance (required for `#[injectable(provided)]`, and replaces the
    /// default construction of any other service: the way to plug in a fake in tests).
    pub fn provide<S: Injectable>(mut self, service: S) -> Self {
        self.services.insert(Arc::new(service));
        self
    }
    /// Like [`AppBuilder::provide`], with a shared instance.
    pub fn provide_arc<S: Injectable>(mut self, service: Arc<S>) -> Self {
        self.services.insert(service);
        self
    }

    /// Checks names, builds services, resolves every chain.
    pub fn build(self) -> Result<App, BuildError> {
        crate::registry::check_unique_names()?;
        let mut services = self.services;
        let mut pool = InterceptorPool::default();
        let app_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Application,
                name: self.name,
            },
            attach: self.attach,
            exclude: Vec::new(),
        };
        let mut tools = Vec::new();
        let mut by_type = HashMap::new();
        let mut by_name = HashMap::new();
        for meta in self.tools {
            let id = (meta.type_id)();
            if by_type.contains_key(&id) {
                continue;
            }
            services.ensure(meta.type_name, meta.deps, &mut Vec::new())?;
            let tool_scope = ScopeSpec {
                scope: ScopeRef {
                    kind: ScopeKind::Tool,
                    name: meta.name,
                },
                attach: meta.tool_interceptors.to_vec(),
                exclude: meta.exclude_tool_interceptors.to_vec(),
            };
            let chain = resolve_chain(&[app_scope.clone(), tool_scope], &mut pool, &mut services)?;
            let slot = (meta.erased)().build_slot(&services).map_err(|e| {
                BuildError::ServiceConstruction {
                    service: meta.type_name,
                    message: e.to_string(),
                }
            })?;
            by_type.insert(id, tools.len());
            by_name.insert(meta.name, tools.len());
            tools.push(ToolEntry {
                meta,
                slot,
                direct: Arc::new(chain),
            });
        }
        Ok(App {
            inner: Arc::new(AppInner {
                name: self.name,
                services,
                tools,
                by_type,
                by_name,
            }),
        })
    }
}

/// A typed handle on one tool of an app: `app.tool::<T>().invoke(input)`.
#[must_use = "a ToolHandle does nothing until `.invoke(..)`"]
pub struct ToolHandle<'a, T> {
    app: &'a App,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
    _tool: PhantomData<fn() -> T>,
}

impl<T: Tool> ToolHandle<'_, T> {
    /// Runs the call for a tenant (what `TenantContext` deps receive).
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Sets the call id (generated otherwise).
    pub fn call_id(mut self, call_id: &str) -> Self {
        self.call_id = Some(CallId::new(call_id));
        self
    }

    fn env(&self) -> CallEnv<'_> {
        CallEnv {
            services: &self.app.inner.services,
            tenant: self.tenant.as_ref(),
            call_id: self.call_id.clone().unwrap_or_else(CallId::generate),
        }
    }

    /// Invokes the tool with a typed input, through the whole pipeline. A `reply_to_model`
    /// decision is a [`ToolBlockedError`] here, since no model reads it. The typed output is not
    /// truncated (`max_result_size` bounds text results; see [`ToolHandle::invoke_json`]).
    pub async fn invoke(&self, input: T::Input) -> Result<T::Output, ToolCallError> {
        let (entry, slot) = self.app.entry::<T>()?;
        input
            .validate()
            .map_err(|source| ToolCallError::InvalidInput {
                tool_name: T::META.name.to_string(),
                source,
            })?;
        let env = self.env();
        let call_id = env.call_id.clone();
        match run_typed(slot, &entry.direct, env, input, None).await? {
            Outcome::Ran(out) => Ok(out),
            Outcome::ReplyToModel {
                message,
                interceptor,
            } => Err(reply_as_block(T::META.name, &call_id, interceptor, message)),
        }
    }

    /// Invokes the tool with JSON text arguments, as a model would; returns the serialized
    /// output, truncated to `max_result_size`.
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        let (entry, _) = self.app.entry::<T>()?;
        dyn_invoke_json(entry, self.env(), args).await
    }

    /// Like [`ToolHandle::invoke_json`] with a JSON value.
    pub async fn invoke_value(&self, args: Value) -> Result<Value, ToolCallError> {
        let text = self.invoke_json(&args.to_string()).await?;
        serde_json::from_str(&text).map_err(|e| ToolCallError::Serialize {
            tool_name: T::META.name.to_string(),
            message: e.to_string(),
        })
    }

    /// Runs the call and reports a `reply_to_model` as an outcome instead of an error (what an
    /// agent loop does).
    pub async fn call(&self, args: &str) -> Result<JsonOutcome, ToolCallError> {
        let (entry, _) = self.app.entry::<T>()?;
        entry.slot.call_json(&entry.direct, self.env(), args).await
    }
}

fn reply_as_block(
    tool_name: &str,
    call_id: &CallId,
    interceptor: &'static str,
    message: String,
) -> ToolCallError {
    ToolCallError::Blocked(ToolBlockedError {
        tool_name: tool_name.to_string(),
        call_id: call_id.to_string(),
        interceptor,
        kind: BlockKind::ReplyToModel { message },
    })
}

async fn dyn_invoke_json(
    entry: &ToolEntry,
    env: CallEnv<'_>,
    args: &str,
) -> Result<String, ToolCallError> {
    let call_id = env.call_id.clone();
    match entry.slot.call_json(&entry.direct, env, args).await? {
        JsonOutcome::Ran { text, .. } => Ok(text),
        JsonOutcome::ReplyToModel {
            message,
            interceptor,
        } => Err(reply_as_block(
            entry.meta.name,
            &call_id,
            interceptor,
            message,
        )),
    }
}

/// A handle on a tool found by name, called with JSON.
#[must_use = "a DynToolHandle does nothing until `.invoke_json(..)`"]
pub struct DynToolHandle<'a> {
    app: &'a App,
    entry: &'a ToolEntry,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
}

impl DynToolHandle<'_> {
    /// The tool's registration data.
    pub fn meta(&self) -> &'static ToolMeta {
        self.entry.meta
    }
    /// Runs the call for a tenant.
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Sets the call id.
    pub fn call_id(mut self, call_id: &str) -> Self {
        self.call_id = Some(CallId::new(call_id));
        self
    }
    fn env(&self) -> CallEnv<'_> {
        CallEnv {
            services: &self.app.inner.services,
            tenant: self.tenant.as_ref(),
            call_id: self.call_id.clone().unwrap_or_else(CallId::generate),
        }
    }
    /// Invokes with JSON text (see [`ToolHandle::invoke_json`]).
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        dyn_invoke_json(self.entry, self.env(), args).await
    }
    /// Runs the call, reporting `reply_to_model` as an outcome.
    pub async fn call(&self, args: &str) -> Result<JsonOutcome, ToolCallError> {
        self.entry
            .slot
            .call_json(&self.entry.direct, self.env(), args)
            .await
    }
}

/// Decodes a DTO for a tool's input from JSON, as the pipeline does (used by test helpers).
#[doc(hidden)]
pub fn decode_input<T: Tool>(args: &Value) -> Result<T::Input, ToolCallError> {
    <T::Input as Dto>::from_json_value(args).map_err(|source| ToolCallError::InvalidInput {
        tool_name: T::META.name.to_string(),
        source,
    })
}
