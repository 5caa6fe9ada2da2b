//! Layer 3, the cascade: every path of an app (application → [workflow →] [agent →] tool)
//! resolved once, when the app is built, into the chain its calls run on.
//!
//! `before_tool_call` runs outer to inner (application → … → tool), `after_tool_call` inner to
//! outer. `exclude_tool_interceptors` at a scope removes an inherited interceptor for that scope
//! and everything below it; an interceptor attached at several scopes runs once, at its outermost
//! place. PII policies of every scope of a path apply, outermost first (each once); there is no
//! `exclude_pii_policies`: an inner scope cannot switch off the masking an outer one requires.
//!
//! Uses [`crate::contract`] (the metas), [`crate::pipeline`] (the [`Chain`] it builds, the
//! tools' call slots and the interceptors behind `dyn`) and the leaves ([`crate::di`],
//! [`crate::error`], [`crate::model`] for tool definitions, [`crate::pii`], the digest for the
//! policy digest).
mod bound;
mod describe;
mod guardrails;
mod resolution;
mod resolve;
#[cfg(feature = "mcp")]
mod served;

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Duration;

pub use crate::pipeline::{Chain, ChainEntry, Exclusion};
pub use bound::{BoundTool, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
pub(crate) use describe::render as describe;
pub(crate) use guardrails::GuardSpec;
pub use guardrails::{GuardrailChain, GuardrailEntry, Guardrails};
use resolve::TypeIdHasher;
pub(crate) use resolve::{Blueprint, Resolved};
#[cfg(feature = "mcp")]
pub(crate) use served::{render_served, served_path_warnings};

use crate::contract::MetaRef;
use crate::contract::interceptor::InterceptorMeta;
use crate::contract::pii_policy::PiiPolicyMeta;
use crate::contract::scope::{ScopeKind, ScopeRef};
use crate::contract::tool::ToolMeta;
use crate::di::BuildError;
use crate::di::Services;
use crate::pii::PiiMasker;
use crate::pipeline::ErasedGuardrail;
use crate::pipeline::Link;
use crate::pipeline::pii::{PiiChain, policy_masker};
use crate::pipeline::{ErasedInterceptor, interceptor_of};

/// One scope of a path with what it attaches and excludes.
#[derive(Debug, Clone)]
pub(crate) struct ScopeSpec {
    /// The scope.
    pub scope: ScopeRef,
    /// `tool_interceptors = [...]`.
    pub attach: Vec<&'static InterceptorMeta>,
    /// `exclude_tool_interceptors = [...]`.
    pub exclude: Vec<&'static InterceptorMeta>,
    /// `pii_policies = [...]`.
    pub pii_policies: Vec<&'static PiiPolicyMeta>,
    /// What it attaches and excludes at the text boundary.
    pub guardrails: GuardSpec,
}

/// Something found at build time that is probably a mistake but does not stop the app.
/// Reported through `tracing::warn!` and [`App::warnings`](crate::App::warnings); [`AppBuilder::deny_warnings`](crate::AppBuilder::deny_warnings)
/// turns them into a build error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildWarning {
    /// An exclusion with nothing inherited to remove.
    UselessExclusion {
        /// The interceptor excluded.
        interceptor: &'static str,
        /// Where.
        at: ScopeRef,
    },
    /// A guardrail exclusion with nothing inherited to remove.
    UselessGuardrailExclusion {
        /// The guardrail excluded.
        guardrail: &'static str,
        /// Where.
        at: ScopeRef,
    },
    /// A component declared in the `#[application]`'s module (or a module below it) that no
    /// path of the application reaches. Components declared elsewhere in the binary (another
    /// app's, an example's, a test's) are not the application's and are not reported.
    Unreachable {
        /// tool, agent, router or workflow.
        kind: &'static str,
        /// Its name.
        name: &'static str,
    },
    /// A tool sets `#[tool(timeout_ms)]`, and an interceptor on its chain sets no
    /// `#[tool_interceptor(timeout_ms)]` of its own, so the interceptor's hooks get the app's
    /// [`interceptor_timeout`](crate::AppBuilder::interceptor_timeout), which is longer than
    /// the tool's limit. A tool's `timeout_ms` bounds its `run` only (before 0.2 it bounded the
    /// hooks too): give the interceptor its own `timeout_ms`, or lower the app's interceptor
    /// timeout, to keep the guard's limit.
    HooksNotBoundByToolTimeout {
        /// The tool.
        tool: std::borrow::Cow<'static, str>,
        /// The interceptor whose hooks are not bounded by the tool's `timeout_ms`.
        interceptor: &'static str,
        /// The limit its hooks get instead.
        hook_timeout: Duration,
    },
    /// A tool served over MCP ([`App::serve_mcp`](crate::App::serve_mcp)) runs on a path
    /// that lacks interceptors an agent path of the same tool has: an MCP client calls it
    /// without the guards that agent's calls pass (an emergency stop on the agent, say).
    /// Serve the agent's path (`.agent(..)`), or attach the guards where the served path
    /// has them.
    ServedPathLacksInterceptors {
        /// The tool.
        tool: std::borrow::Cow<'static, str>,
        /// The path served: `direct chains` or `agent `name``.
        served: String,
        /// The agent whose path has them.
        agent: &'static str,
        /// The interceptors of the agent's path that the served path lacks, in chain order.
        interceptors: Vec<&'static str>,
    },
}

impl fmt::Display for BuildWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UselessExclusion { interceptor, at } => write!(
                f,
                "{at} excludes `{interceptor}`, but no outer scope attaches it: the exclusion does nothing"
            ),
            Self::UselessGuardrailExclusion { guardrail, at } => write!(
                f,
                "{at} excludes guardrail `{guardrail}`, but no outer scope attaches it: the exclusion does nothing"
            ),
            Self::Unreachable { kind, name } => write!(
                f,
                "{kind} `{name}` is registered but no path of the application reaches it"
            ),
            Self::HooksNotBoundByToolTimeout {
                tool,
                interceptor,
                hook_timeout,
            } => write!(
                f,
                "tool `{tool}` sets `timeout_ms`, which bounds its `run` only: the hooks of `{interceptor}` \
                 get the app's interceptor timeout ({} ms); set `#[tool_interceptor(timeout_ms = ..)]` \
                 on `{interceptor}` or `AppBuilder::interceptor_timeout` to bound them",
                hook_timeout.as_millis()
            ),
            Self::ServedPathLacksInterceptors {
                tool,
                served,
                agent,
                interceptors,
            } => write!(
                f,
                "tool `{tool}` is served over MCP on the {served} without `{}`, which agent `{agent}`'s \
                 path runs: an MCP client calls it unguarded by them (serve `.agent(\"{agent}\")`, or \
                 attach them where the served path has them)",
                interceptors.join("`, `")
            ),
        }
    }
}

/// A server of remote tools an app is built with: a connected MCP server
/// (`agboss_core::mcp::client::McpServer`, feature `mcp`). The cascade names no transport: it
/// asks the server to check the tools declared on it and to list its tools as tools of the app.
#[doc(hidden)]
pub trait RemoteServer: Send + Sync + 'static {
    /// The name tools and scopes refer to it by.
    fn name(&self) -> &'static str;
    /// Whether the remote end of `meta` (an `#[mcp_tool]`) exists and fits its declaration.
    fn check(&self, meta: &ToolMeta) -> Result<(), BuildError>;
    /// Every tool of the server, as tools of the app (their data owned by the app).
    fn server_tools(&self) -> Result<Vec<MetaRef<ToolMeta>>, BuildError>;
    /// The server as `Any` (its tools find their connection through it).
    fn as_any(&self) -> &dyn std::any::Any;
    /// The `#[channel]` a call without its tenant's credential asks to connect the account
    /// on, and whether the server takes per-tenant credentials (checked at build).
    fn account_channel(&self) -> Option<(&'static str, bool)> {
        None
    }
}

/// The remote servers of an app, kept in its services.
pub(crate) struct RemoteServers(Vec<Arc<dyn RemoteServer>>);

impl RemoteServers {
    pub(crate) fn new(servers: Vec<Arc<dyn RemoteServer>>) -> Result<Self, BuildError> {
        for (i, s) in servers.iter().enumerate() {
            if servers[..i].iter().any(|o| o.name() == s.name()) {
                return Err(BuildError::Mcp {
                    server: s.name(),
                    tool: None,
                    problem: "given twice; give each server one name".into(),
                });
            }
        }
        Ok(Self(servers))
    }

    /// Every server.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &dyn RemoteServer> {
        self.0.iter().map(|s| &**s)
    }

    /// The server named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&dyn RemoteServer> {
        self.0.iter().find(|s| s.name() == name).map(|s| &**s)
    }

    fn check(&self, meta: &ToolMeta, server: &'static str) -> Result<(), BuildError> {
        self.get(server)
            .ok_or_else(|| not_connected(server, Some(meta.name.clone())))?
            .check(meta)
    }

    fn server_tools(&self, server: &'static str) -> Result<Vec<MetaRef<ToolMeta>>, BuildError> {
        self.get(server)
            .ok_or_else(|| not_connected(server, None))?
            .server_tools()
    }
}

/// The error of a remote tool or server in an app without MCP servers.
pub(crate) fn not_connected(
    server: &'static str,
    tool: Option<std::borrow::Cow<'static, str>>,
) -> BuildError {
    BuildError::Mcp {
        server,
        tool,
        problem: "not connected to the app; add `.mcp_server(McpServer::connect(McpServerConfig::..).await?)` to the builder (feature `mcp`)".into(),
    }
}

/// Builds each interceptor type and each PII policy's masker once per app.
pub(crate) struct Pool {
    built: HashMap<TypeId, Arc<dyn ErasedInterceptor>, BuildHasherDefault<TypeIdHasher>>,
    maskers: HashMap<TypeId, Arc<PiiMasker>, BuildHasherDefault<TypeIdHasher>>,
    guards: HashMap<TypeId, Arc<dyn ErasedGuardrail>, BuildHasherDefault<TypeIdHasher>>,
    /// The hook time limit of interceptors that set none.
    hook_timeout: Duration,
    /// The check time limit of guardrails that set none.
    guardrail_timeout: Duration,
}

impl Pool {
    pub(crate) fn new(hook_timeout: Duration, guardrail_timeout: Duration) -> Self {
        Self {
            built: HashMap::default(),
            maskers: HashMap::default(),
            guards: HashMap::default(),
            hook_timeout,
            guardrail_timeout,
        }
    }

    /// The app's instance of an interceptor, built (with the services it needs) on first use.
    pub(crate) fn interceptor(
        &mut self,
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        self.interceptor_of((meta.type_id)(), meta, services)
    }

    /// [`Pool::interceptor`] with the interceptor's `TypeId` known.
    fn interceptor_of(
        &mut self,
        id: TypeId,
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        if let Some(i) = self.built.get(&id) {
            return Ok(Arc::clone(i));
        }
        services.ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        let built = (meta.build)(services)
            .and_then(interceptor_of)
            .map_err(|e| BuildError::ServiceConstruction {
                service: meta.type_name,
                message: e.to_string(),
            })?;
        self.built.insert(id, Arc::clone(&built));
        Ok(built)
    }

    fn link(&self, interceptor: Arc<dyn ErasedInterceptor>) -> Link {
        Link::new(interceptor, self.hook_timeout)
    }

    /// Resolves the policies of a path (each scope's list, outermost scope first).
    fn pii<'s>(
        &mut self,
        scopes: impl IntoIterator<Item = &'s [&'static PiiPolicyMeta]>,
    ) -> Result<PiiChain, BuildError> {
        let mut policies: Vec<(&'static PiiPolicyMeta, Arc<PiiMasker>)> = Vec::new();
        for list in scopes {
            for meta in list {
                if policies.iter().any(|(m, _)| m.same(meta)) {
                    continue;
                }
                let masker = match self.maskers.get(&(meta.type_id)()) {
                    Some(m) => Arc::clone(m),
                    None => {
                        let m = Arc::new(policy_masker(meta)?);
                        self.maskers.insert((meta.type_id)(), Arc::clone(&m));
                        m
                    }
                };
                policies.push((meta, masker));
            }
        }
        Ok(PiiChain::from_policies(policies))
    }

    /// Resolves the chain of one path (outermost scope first; the last scope is the tool's).
    pub(crate) fn chain(
        &mut self,
        scopes: &[ScopeSpec],
        services: &mut Services,
    ) -> Result<Chain, BuildError> {
        // Each entry's `TypeId` beside it: membership tests compare ids, not fn-pointer calls.
        let mut entries: Vec<ChainEntry> = Vec::new();
        let mut ids: Vec<TypeId> = Vec::new();
        let mut exclusions: Vec<Exclusion> = Vec::new();
        for spec in scopes {
            for ex in &spec.exclude {
                let id = (ex.type_id)();
                if let Some(pos) = ids.iter().position(|i| *i == id) {
                    ids.remove(pos);
                    let removed = entries.remove(pos);
                    exclusions.push(Exclusion {
                        interceptor: removed.interceptor,
                        attached_at: removed.origin,
                        excluded_at: spec.scope,
                    });
                }
            }
            for at in &spec.attach {
                let id = (at.type_id)();
                if !ids.contains(&id) {
                    ids.push(id);
                    entries.push(ChainEntry {
                        interceptor: at,
                        origin: spec.scope,
                    });
                }
            }
        }
        let mut before = Vec::new();
        let mut after = Vec::new();
        for (entry, id) in entries.iter().zip(ids) {
            let built = self.interceptor_of(id, entry.interceptor, services)?;
            if built.has_before() {
                before.push(self.link(Arc::clone(&built)));
            }
            if built.has_after() {
                after.push(self.link(built));
            }
        }
        after.reverse();
        let path: Arc<[&'static str]> = scopes
            .iter()
            .filter(|s| s.scope.kind != ScopeKind::Tool)
            .map(|s| s.scope.name)
            .collect();
        let pii = self.pii(scopes.iter().map(|s| s.pii_policies.as_slice()))?;
        Ok(Chain {
            before: before.into(),
            after: after.into(),
            entries,
            exclusions,
            path,
            pii,
        })
    }
}

/// Builds single interceptors outside an app: the engine behind `agboss_testing` (which
/// reaches it through `__private::harness_build`).
pub(crate) mod harness_build {
    use std::sync::Arc;
    use std::time::Duration;

    use super::Pool;
    use crate::contract::interceptor::InterceptorMeta;
    use crate::di::BuildError;
    use crate::di::Services;
    use crate::pipeline::{ErasedGuardrail, ErasedInterceptor};

    /// Builds one interceptor (and the services it needs) as an app would.
    pub fn interceptor(
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        Pool::new(
            crate::contract::interceptor::DEFAULT_HOOK_TIMEOUT,
            crate::contract::guardrail::DEFAULT_GUARDRAIL_TIMEOUT,
        )
        .interceptor(meta, services)
    }

    /// Builds one guardrail (and the services it needs) as an app would, with the default
    /// time limit; returns it with the limit its checks run under.
    pub fn guardrail(
        meta: &'static crate::contract::guardrail::GuardrailMeta,
        services: &mut Services,
    ) -> Result<(Arc<dyn ErasedGuardrail>, Duration), BuildError> {
        let limit = meta.timeout_ms.map_or(
            crate::contract::guardrail::DEFAULT_GUARDRAIL_TIMEOUT,
            Duration::from_millis,
        );
        let guard = Pool::new(
            crate::contract::interceptor::DEFAULT_HOOK_TIMEOUT,
            crate::contract::guardrail::DEFAULT_GUARDRAIL_TIMEOUT,
        )
        .guardrail(meta, services)?;
        Ok((guard, limit))
    }
}
