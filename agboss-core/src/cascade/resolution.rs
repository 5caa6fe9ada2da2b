//! The mutable state of one build (`Resolution`): tool slots, chains, the agents, routers and
//! workflows of every path before they are frozen, and the exclusions each path used.
use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::guardrails::{GuardExclusion, GuardSpec, Guardrails};
use super::{BuildWarning, Pool, RemoteServers, ScopeSpec, not_connected};
use crate::contract::MetaRef;
use crate::contract::agent::{AgentMeta, RouterMeta};
use crate::contract::interceptor::InterceptorMeta;
use crate::contract::scope::{ScopeKind, ScopeRef};
use crate::contract::tool::ToolMeta;
use crate::contract::workflow::WorkflowMeta;
use crate::pipeline::Chain;
use crate::pipeline::{ErasedToolSlot, slot_of};

use crate::di::BuildError;
use crate::di::Services;

/// A tool's own scope. A tool made at run time (a whole server's) attaches nothing there (its
/// data is the server's listing), so its scope is never named in a chain or a warning: it goes
/// by its type's name.
pub(super) fn tool_scope(meta: &MetaRef<ToolMeta>) -> ScopeSpec {
    let name: &'static str = match meta.as_static() {
        Some(meta) => &meta.name,
        None => meta.type_name,
    };
    ScopeSpec {
        scope: ScopeRef {
            kind: ScopeKind::Tool,
            name,
        },
        attach: meta.tool_interceptors.to_vec(),
        exclude: meta.exclude_tool_interceptors.to_vec(),
        pii_policies: meta.pii_policies.to_vec(),
        guardrails: GuardSpec::default(),
    }
}

/// What tells tools apart: the type, and the name (one type serves every tool of a whole MCP
/// server).
pub(super) type ToolKey = (TypeId, Cow<'static, str>);

pub(super) fn tool_key(meta: &ToolMeta) -> ToolKey {
    ((meta.type_id)(), meta.name.clone())
}

/// The tools once each, in first-seen order (linear: a set of their keys).
pub(super) fn dedup(tools: &[MetaRef<ToolMeta>]) -> Vec<MetaRef<ToolMeta>> {
    let mut seen: std::collections::HashSet<ToolKey> = std::collections::HashSet::default();
    tools
        .iter()
        .filter(|t| seen.insert(tool_key(t)))
        .cloned()
        .collect()
}

/// Every handoff target (`#[agent(handoffs = [..])]`) and every agent tool (`agent_tools =
/// [..]`) is an agent of the app: one it does not hold could only fail at run time.
pub(super) fn check_agent_refs(agents: &[&'static AgentMeta]) -> Result<(), BuildError> {
    let missing = |list: &'static [fn() -> &'static AgentMeta]| {
        list.iter()
            .map(|t| t())
            .find(|target| !agents.iter().any(|a| a.name == target.name))
    };
    for agent in agents {
        if let Some(target) = missing(agent.handoffs) {
            return Err(BuildError::UnknownHandoff {
                agent: agent.name,
                target: target.name,
            });
        }
        if let Some(target) = missing(agent.agent_tools) {
            return Err(BuildError::UnknownAgentTool {
                agent: agent.name,
                target: target.name,
            });
        }
    }
    Ok(())
}

/// Two different tools with one name (a whole server's tool beside a declared one, say): the
/// model could not tell them apart. Registered tools are checked by the registry already.
pub(super) fn check_tool_names(tools: &[MetaRef<ToolMeta>]) -> Result<(), BuildError> {
    let mut names: HashMap<&str, &ToolMeta> = HashMap::new();
    for t in tools {
        if let Some(first) = names.insert(&t.name, t)
            && tool_key(first) != tool_key(t)
        {
            return Err(BuildError::DuplicateName {
                kind: "tool",
                name: t.name.clone(),
                first: first.type_name,
                second: t.type_name,
            });
        }
    }
    Ok(())
}

pub(super) struct PendingAgent {
    pub(super) meta: &'static AgentMeta,
    pub(super) scopes: Vec<ScopeRef>,
    pub(super) guardrails: Guardrails,
    pub(super) tools: Vec<(MetaRef<ToolMeta>, Chain, Option<usize>)>,
}

pub(super) struct PendingRouter {
    pub(super) meta: &'static RouterMeta,
    pub(super) guardrails: Guardrails,
    pub(super) routes: Vec<usize>,
}

pub(super) struct PendingWorkflow {
    pub(super) meta: &'static WorkflowMeta,
    pub(super) agents: Vec<usize>,
    pub(super) routers: Vec<usize>,
    pub(super) tools: Vec<(MetaRef<ToolMeta>, Chain, Option<usize>)>,
}

/// The mutable state of one build.
pub(super) struct Resolution {
    pub(super) services: Services,
    pub(super) pool: Pool,
    pub(super) slots: HashMap<ToolKey, Arc<dyn ErasedToolSlot>>,
    pub(super) warnings: Vec<BuildWarning>,
    /// Every (scope, excluded interceptor) and whether it removed something on any path: an
    /// exclusion is useless only when it is useless on every path through its scope.
    pub(super) exclusions: Vec<(ScopeRef, &'static InterceptorMeta, bool)>,
    /// The same for guardrail exclusions.
    pub(super) guard_exclusions: Vec<GuardExclusion>,
    pub(super) app_max: Option<usize>,
    pub(super) remote: Option<Arc<RemoteServers>>,
    /// Makes the tool that asks an agent (`agent_tools = [..]`; the engine's, given by the
    /// builder: the cascade sits below the engine), and the ones made, by agent name.
    pub(super) agent_tool: Option<AgentToolMeta>,
    pub(super) agent_tool_metas: HashMap<&'static str, MetaRef<ToolMeta>>,
}

/// Makes the registration data of the tool that asks an agent.
pub(crate) type AgentToolMeta = fn(&'static AgentMeta) -> MetaRef<ToolMeta>;

impl Resolution {
    /// Every tool of a whole server.
    pub(super) fn server_tools(
        &self,
        server: &'static str,
    ) -> Result<Vec<MetaRef<ToolMeta>>, BuildError> {
        match &self.remote {
            Some(remote) => remote.server_tools(server),
            None => Err(not_connected(server, None)),
        }
    }

    /// An agent's tools: its own, then those of its servers, then the agents it asks.
    pub(super) fn agent_tools(
        &mut self,
        meta: &'static AgentMeta,
    ) -> Result<Vec<MetaRef<ToolMeta>>, BuildError> {
        let mut tools: Vec<MetaRef<ToolMeta>> =
            meta.tools.iter().map(|t| MetaRef::Static(*t)).collect();
        for server in meta.mcp_servers {
            tools.extend(self.server_tools(server)?);
        }
        for asked in meta.agent_tools.iter().map(|a| a()) {
            let make = self.agent_tool.ok_or_else(|| {
                BuildError::Invalid("agent tools need the engine's tool type".into())
            })?;
            let tool = self
                .agent_tool_metas
                .entry(asked.name)
                .or_insert_with(|| make(asked));
            tools.push(tool.clone());
        }
        Ok(tools)
    }

    pub(super) fn slot(&mut self, meta: &MetaRef<ToolMeta>) -> Result<(), BuildError> {
        let id = tool_key(meta);
        if self.slots.contains_key(&id) {
            return Ok(());
        }
        if let Some(remote) = &meta.mcp {
            match &self.remote {
                Some(servers) => servers.check(meta, remote.server())?,
                None => return Err(not_connected(remote.server(), Some(meta.name.clone()))),
            }
        }
        self.services
            .ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        if let Some(channel) = meta.approval {
            // The tool's approval channel is built from the same services, once per app.
            self.services
                .ensure(channel.name, channel.deps, &mut Vec::new())?;
        }
        let slot = (meta.erased)()
            .build_slot(meta, &self.services)
            .and_then(slot_of)
            .map_err(|e| BuildError::ServiceConstruction {
                service: meta.type_name,
                message: e.to_string(),
            })?;
        self.slots.insert(id, slot);
        Ok(())
    }

    pub(super) fn chain(&mut self, scopes: &[ScopeSpec]) -> Result<Chain, BuildError> {
        let chain = self.pool.chain(scopes, &mut self.services)?;
        for spec in scopes {
            for ex in &spec.exclude {
                let used = chain
                    .exclusions
                    .iter()
                    .any(|e| e.interceptor.same(ex) && e.excluded_at == spec.scope);
                match self
                    .exclusions
                    .iter_mut()
                    .find(|(at, i, _)| *at == spec.scope && i.same(ex))
                {
                    Some(entry) => entry.2 |= used,
                    None => self.exclusions.push((spec.scope, ex, used)),
                }
            }
        }
        Ok(chain)
    }

    /// The chain of a tool on `scopes` (the tool's own scope last), with a warning for each of
    /// its interceptors whose hooks the tool's `timeout_ms` might be taken to bound: since
    /// 0.2 a tool's `timeout_ms` bounds its `run` only, and an interceptor without a
    /// `timeout_ms` of its own gets the app's interceptor timeout. Only a bound looser than the
    /// tool's is reported: that is where a guard's time limit silently grew.
    pub(super) fn tool_chain(
        &mut self,
        scopes: &[ScopeSpec],
        tool: &ToolMeta,
    ) -> Result<Chain, BuildError> {
        let chain = self.chain(scopes)?;
        if let Some(ms) = tool.timeout_ms {
            let hook_timeout = self.pool.hook_timeout;
            if hook_timeout > Duration::from_millis(ms) {
                for entry in &chain.entries {
                    if entry.interceptor.timeout_ms.is_none() {
                        self.warnings
                            .push(BuildWarning::HooksNotBoundByToolTimeout {
                                tool: tool.name.clone(),
                                interceptor: entry.interceptor.name,
                                hook_timeout,
                            });
                    }
                }
            }
        }
        Ok(chain)
    }

    /// A router and its routes (added to `agents`): the router's guardrails on application →
    /// [workflow →] router, each route's on application → [workflow →] router → agent.
    pub(super) fn router(
        &mut self,
        outer: &[ScopeSpec],
        meta: &'static RouterMeta,
        workflow_max: Option<usize>,
        agents: &mut Vec<PendingAgent>,
    ) -> Result<PendingRouter, BuildError> {
        let router_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Router,
                name: meta.name,
            },
            attach: Vec::new(),
            exclude: Vec::new(),
            pii_policies: Vec::new(),
            guardrails: GuardSpec::from(&meta.guardrails),
        };
        let mut path = outer.to_vec();
        path.push(router_scope.clone());
        let guardrails =
            self.pool
                .guardrails(&path, &mut self.services, &mut self.guard_exclusions)?;
        let mut routes = Vec::new();
        for a in meta.routes {
            routes.push(agents.len());
            agents.push(self.agent(outer, Some(&router_scope), a, workflow_max)?);
        }
        Ok(PendingRouter {
            meta,
            guardrails,
            routes,
        })
    }

    pub(super) fn agent(
        &mut self,
        outer: &[ScopeSpec],
        router: Option<&ScopeSpec>,
        meta: &'static AgentMeta,
        workflow_max: Option<usize>,
    ) -> Result<PendingAgent, BuildError> {
        let agent_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Agent,
                name: meta.name,
            },
            attach: meta.tool_interceptors.to_vec(),
            exclude: meta.exclude_tool_interceptors.to_vec(),
            pii_policies: meta.pii_policies.to_vec(),
            guardrails: GuardSpec::from(&meta.guardrails),
        };
        // The text boundary's path has the router (if any); the tools' chains do not.
        let mut guard_path: Vec<ScopeSpec> = outer.to_vec();
        guard_path.extend(router.cloned());
        guard_path.push(agent_scope.clone());
        let guardrails =
            self.pool
                .guardrails(&guard_path, &mut self.services, &mut self.guard_exclusions)?;
        let mut scopes: Vec<ScopeSpec> = outer.to_vec();
        scopes.push(agent_scope);
        let inherited = meta.max_result_size.or(workflow_max).or(self.app_max);
        let mut tools = Vec::new();
        let own = self.agent_tools(meta)?;
        for t in &own {
            let mut path = scopes.clone();
            path.push(tool_scope(t));
            let chain = self.tool_chain(&path, t)?;
            tools.push((t.clone(), chain, inherited));
        }
        // An agent without tools still reports its useless exclusions.
        if own.is_empty() {
            self.chain(&scopes)?;
        }
        Ok(PendingAgent {
            meta,
            scopes: scopes.iter().map(|s| s.scope).collect(),
            guardrails,
            tools,
        })
    }
}
