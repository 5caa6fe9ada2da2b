//! The build of an app's structure: every tool slot, every path's chain, the warnings.
use crate::contract::usage_limits::UsageLimits;
use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Duration;

use super::bound::{BoundTool, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
use super::guardrails::GuardSpec;
use super::resolution::{
    AgentToolMeta, PendingAgent, PendingRouter, PendingWorkflow, Resolution, check_agent_refs,
    check_tool_names, dedup, tool_key, tool_scope,
};
use super::{BuildWarning, Pool, RemoteServers, ScopeSpec};
use crate::contract::MetaRef;
use crate::contract::agent::{AgentMeta, RouterMeta};
use crate::contract::guardrail::GuardrailMeta;
use crate::contract::interceptor::InterceptorMeta;
use crate::contract::pii_policy::PiiPolicyMeta;
use crate::contract::registry::Registration;
use crate::contract::scope::{ScopeKind, ScopeRef};
use crate::contract::tool::ToolMeta;
use crate::contract::workflow::{ApplicationMeta, WorkflowMeta};
use crate::di::BuildError;
use crate::di::Services;
use crate::pipeline::Chain;

/// What an app is built from: the builder's settings.
pub(crate) struct Blueprint {
    pub(crate) name: &'static str,
    /// `AppBuilder::usage_limits`, the outermost of every path's limits.
    pub(crate) usage_limits: UsageLimits,
    pub(crate) application: Option<&'static ApplicationMeta>,
    pub(crate) attach: Vec<&'static InterceptorMeta>,
    pub(crate) pii_policies: Vec<&'static PiiPolicyMeta>,
    pub(crate) tools: Vec<&'static ToolMeta>,
    pub(crate) agents: Vec<&'static AgentMeta>,
    pub(crate) routers: Vec<&'static RouterMeta>,
    pub(crate) workflows: Vec<&'static WorkflowMeta>,
    pub(crate) max_result_size: Option<usize>,
    pub(crate) services: Services,
    pub(crate) deny_warnings: bool,
    pub(crate) hook_timeout: Duration,
    pub(crate) input_guardrails: Vec<&'static GuardrailMeta>,
    pub(crate) output_guardrails: Vec<&'static GuardrailMeta>,
    pub(crate) mask_answer: bool,
    pub(crate) guardrail_timeout: Duration,
    /// The app's remote servers (connected MCP servers), if any.
    pub(crate) remote: Option<Arc<RemoteServers>>,
    /// Servers whose every tool the application takes (besides `#[application(mcp_servers)]`).
    pub(crate) mcp_server_tools: Vec<&'static str>,
    /// Makes the tool that asks an agent (`agent_tools = [..]`): the engine's, set by the
    /// builder.
    pub(crate) agent_tool: Option<AgentToolMeta>,
}

impl Blueprint {
    pub(crate) fn new() -> Self {
        Self {
            name: "app",
            application: None,
            usage_limits: UsageLimits::default(),
            attach: Vec::new(),
            pii_policies: Vec::new(),
            tools: Vec::new(),
            agents: Vec::new(),
            routers: Vec::new(),
            workflows: Vec::new(),
            max_result_size: None,
            services: Services::default(),
            deny_warnings: false,
            hook_timeout: crate::contract::interceptor::DEFAULT_HOOK_TIMEOUT,
            input_guardrails: Vec::new(),
            output_guardrails: Vec::new(),
            mask_answer: false,
            guardrail_timeout: crate::contract::guardrail::DEFAULT_GUARDRAIL_TIMEOUT,
            remote: None,
            mcp_server_tools: Vec::new(),
            agent_tool: None,
        }
    }

    /// Checks names, builds services and tool slots, resolves every chain of every path.
    pub(crate) fn resolve(self) -> Result<Resolved, BuildError> {
        crate::contract::registry::check_unique_names()?;
        let mut r = Resolution {
            services: self.services,
            pool: Pool::new(self.hook_timeout, self.guardrail_timeout),
            slots: HashMap::new(),
            warnings: Vec::new(),
            exclusions: Vec::new(),
            guard_exclusions: Vec::new(),
            app_max: self.max_result_size,
            remote: self.remote,
            agent_tool: self.agent_tool,
            agent_tool_metas: HashMap::new(),
        };
        let app_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Application,
                name: self.name,
            },
            attach: self.attach,
            exclude: Vec::new(),
            pii_policies: self.pii_policies,
            guardrails: GuardSpec {
                input: self.input_guardrails,
                output: self.output_guardrails,
                mask_answer: self.mask_answer,
                ..GuardSpec::default()
            },
        };

        let app_guardrails = app_scope.guardrails.clone();
        // Build every tool slot first (services must exist before the Arc is frozen).
        let mut all_tools: Vec<MetaRef<ToolMeta>> =
            self.tools.iter().map(|t| MetaRef::Static(*t)).collect();
        let app_servers = self
            .application
            .map_or(&[][..], |a| a.mcp_servers)
            .iter()
            .chain(&self.mcp_server_tools);
        for server in app_servers {
            all_tools.extend(r.server_tools(server)?);
        }
        let mut agent_metas: Vec<&'static AgentMeta> = self.agents.clone();
        for router in &self.routers {
            agent_metas.extend_from_slice(router.routes);
        }
        for w in &self.workflows {
            all_tools.extend(w.tools.iter().map(|t| MetaRef::Static(*t)));
            agent_metas.extend_from_slice(w.agents);
            for router in w.routers {
                agent_metas.extend_from_slice(router.routes);
            }
        }
        check_agent_refs(&agent_metas)?;
        for agent in agent_metas {
            all_tools.extend(r.agent_tools(agent)?);
        }
        check_tool_names(&all_tools)?;
        for meta in &all_tools {
            r.slot(meta)?;
        }

        // Resolve chains against the services, then freeze them.
        let mut pending_tools: Vec<(MetaRef<ToolMeta>, Chain, Option<usize>)> = Vec::new();
        for meta in dedup(&all_tools) {
            let chain = r.tool_chain(&[app_scope.clone(), tool_scope(&meta)], &meta)?;
            pending_tools.push((meta, chain, r.app_max));
        }
        let mut pending_agents: Vec<PendingAgent> = Vec::new();
        let mut pending_routers: Vec<PendingRouter> = Vec::new();
        let mut pending_workflows: Vec<PendingWorkflow> = Vec::new();
        let app_scopes = vec![app_scope.clone()];
        for a in &self.agents {
            pending_agents.push(r.agent(&app_scopes, None, a, None)?);
        }
        for router in &self.routers {
            pending_routers.push(r.router(&app_scopes, router, None, &mut pending_agents)?);
        }
        for w in &self.workflows {
            let w_scope = ScopeSpec {
                scope: ScopeRef {
                    kind: ScopeKind::Workflow,
                    name: w.name,
                },
                attach: w.tool_interceptors.to_vec(),
                exclude: w.exclude_tool_interceptors.to_vec(),
                pii_policies: w.pii_policies.to_vec(),
                guardrails: GuardSpec::from(&w.guardrails),
            };
            let scopes = vec![app_scope.clone(), w_scope.clone()];
            let mut agents = Vec::new();
            for a in w.agents {
                agents.push(pending_agents.len());
                pending_agents.push(r.agent(&scopes, None, a, w.max_result_size)?);
            }
            let mut routers = Vec::new();
            for router in w.routers {
                routers.push(pending_routers.len());
                let pending = r.router(&scopes, router, w.max_result_size, &mut pending_agents)?;
                pending_routers.push(pending);
            }
            let mut tools = Vec::new();
            for t in w.tools {
                let t = MetaRef::Static(*t);
                let chain =
                    r.tool_chain(&[app_scope.clone(), w_scope.clone(), tool_scope(&t)], &t)?;
                tools.push((t, chain, w.max_result_size.or(r.app_max)));
            }
            pending_workflows.push(PendingWorkflow {
                meta: w,
                agents,
                routers,
                tools,
            });
        }

        // Warnings.
        let mut warnings = r.warnings;
        for (at, interceptor, used) in &r.exclusions {
            if !used {
                warnings.push(BuildWarning::UselessExclusion {
                    interceptor: interceptor.name,
                    at: *at,
                });
            }
        }
        for (at, guardrail, used) in &r.guard_exclusions {
            if !used {
                warnings.push(BuildWarning::UselessGuardrailExclusion {
                    guardrail: guardrail.name,
                    at: *at,
                });
            }
        }
        if let Some(application) = self.application {
            // Sets: every registration is looked up (linear in registrations + reached names).
            use crate::contract::registry::{Registration as R, all_with_modules, module_within};
            use std::collections::HashSet;
            // Only the components declared in the application's module (or below it) are
            // its own: a binary may hold other apps' components (examples, tests).
            let scope = all_with_modules()
                .find(|r| matches!(r.component, R::Application(m) if m.name == application.name))
                .map(|r| r.module);
            let reached_agents: HashSet<&str> =
                pending_agents.iter().map(|a| a.meta.name).collect();
            let reached_routers: HashSet<&str> =
                pending_routers.iter().map(|r| r.meta.name).collect();
            let reached_workflows: HashSet<&str> =
                pending_workflows.iter().map(|w| w.meta.name).collect();
            let reached_tools: HashSet<&str> = all_tools.iter().map(|t| &*t.name).collect();
            for registered in all_with_modules() {
                if scope.is_some_and(|scope| !module_within(registered.module, scope)) {
                    continue;
                }
                let (kind, name, reached) = match &registered.component {
                    Registration::Agent(m) => ("agent", m.name, reached_agents.contains(m.name)),
                    Registration::Router(m) => ("router", m.name, reached_routers.contains(m.name)),
                    Registration::Workflow(m) => {
                        ("workflow", m.name, reached_workflows.contains(m.name))
                    }
                    Registration::Tool(m) => {
                        let name: &'static str = &m.name;
                        ("tool", name, reached_tools.contains(name))
                    }
                    _ => continue,
                };
                if !reached {
                    warnings.push(BuildWarning::Unreachable { kind, name });
                }
            }
        }
        warnings.sort_by_key(|w| w.to_string());
        warnings.dedup();
        for w in &warnings {
            tracing::warn!(app = self.name, "{w}");
        }
        if self.deny_warnings && !warnings.is_empty() {
            return Err(BuildError::Invalid(format!(
                "the app has {} warning(s) and `deny_warnings` is on: {}",
                warnings.len(),
                warnings
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }

        // Freeze.
        let services = Arc::new(r.services);
        let slots = r.slots;
        let bind =
            |meta: MetaRef<ToolMeta>, chain: Chain, inherited_max: Option<usize>| BoundTool {
                slot: Arc::clone(&slots[&tool_key(&meta)]),
                chain: Arc::new(chain),
                services: Arc::clone(&services),
                max_result_size: meta.max_result_size.or(inherited_max),
                policy: Arc::default(),
                meta,
            };
        let mut tools = Vec::new();
        let mut by_type = HashMap::default();
        let mut by_name = HashMap::with_hasher(foldhash::fast::RandomState::default());
        for (meta, chain, max) in pending_tools {
            by_type.insert((meta.type_id)(), tools.len());
            by_name.insert(meta.name.clone(), tools.len());
            tools.push(bind(meta, chain, max));
        }
        // Declared usage limits: the strictest of the application's, the path's workflow's and
        // the agent's.
        let app_limits = match self.application {
            Some(a) => self
                .usage_limits
                .strictest(&UsageLimits::from(&a.usage_limits)),
            None => self.usage_limits.clone(),
        };
        let workflow_limits = |name: Option<&str>| match name {
            Some(name) => self.workflows.iter().find(|w| w.name == name).map_or_else(
                || app_limits.clone(),
                |w| app_limits.strictest(&UsageLimits::from(&w.usage_limits)),
            ),
            None => app_limits.clone(),
        };
        let agents: Vec<Arc<ResolvedAgent>> = pending_agents
            .into_iter()
            .enumerate()
            .map(|(index, p)| {
                let on_path = p
                    .scopes
                    .iter()
                    .find(|s| s.kind == ScopeKind::Workflow)
                    .map(|s| s.name);
                let usage_limits =
                    workflow_limits(on_path).strictest(&UsageLimits::from(&p.meta.usage_limits));
                Arc::new(ResolvedAgent {
                    usage_limits,
                    meta: p.meta,
                    scopes: p.scopes,
                    guardrails: p.guardrails,
                    index,
                    tools: p
                        .tools
                        .into_iter()
                        .map(|(m, c, max)| bind(m, c, max))
                        .collect(),
                })
            })
            .collect();
        let routers: Vec<Arc<ResolvedRouter>> = pending_routers
            .iter()
            .map(|p| {
                Arc::new(ResolvedRouter {
                    meta: p.meta,
                    guardrails: p.guardrails.clone(),
                    routes: p.routes.iter().map(|i| Arc::clone(&agents[*i])).collect(),
                })
            })
            .collect();
        let workflows = pending_workflows
            .into_iter()
            .map(|w| {
                Arc::new(ResolvedWorkflow {
                    usage_limits: workflow_limits(Some(w.meta.name)),
                    meta: w.meta,
                    agents: w.agents.iter().map(|i| Arc::clone(&agents[*i])).collect(),
                    routers: w.routers.iter().map(|i| Arc::clone(&routers[*i])).collect(),
                    tools: w
                        .tools
                        .into_iter()
                        .map(|(m, c, max)| bind(m, c, max))
                        .collect(),
                })
            })
            .collect();
        Ok(Resolved {
            name: self.name,
            application: self.application,
            services,
            tools,
            by_type,
            by_name,
            agents,
            routers,
            workflows,
            warnings,
            app_guardrails,
            usage_limits: app_limits,
        })
    }
}

/// An app's resolved structure: services built, every tool bound on every path.
pub(crate) struct Resolved {
    pub(crate) name: &'static str,
    pub(crate) application: Option<&'static ApplicationMeta>,
    pub(crate) services: Arc<Services>,
    /// Every tool on its direct (application → tool) chain.
    pub(crate) tools: Vec<BoundTool>,
    pub(crate) by_type: HashMap<TypeId, usize, BuildHasherDefault<TypeIdHasher>>,
    /// By name, with a fast hasher: the lookup of every by-name call.
    pub(crate) by_name: HashMap<Cow<'static, str>, usize, foldhash::fast::RandomState>,
    pub(crate) agents: Vec<Arc<ResolvedAgent>>,
    pub(crate) routers: Vec<Arc<ResolvedRouter>>,
    pub(crate) workflows: Vec<Arc<ResolvedWorkflow>>,
    pub(crate) warnings: Vec<BuildWarning>,
    /// What the application scope attaches at the text boundary (for `describe`).
    pub(crate) app_guardrails: GuardSpec,
    /// The usage limits of the application: `AppBuilder::usage_limits` and
    /// `#[application(usage_limits(..))]`, the strictest of both.
    pub(crate) usage_limits: UsageLimits,
}

impl Resolved {
    /// Every tool of the app on every path: direct, under each agent, each workflow step.
    pub(crate) fn every_bound_tool(&self) -> impl Iterator<Item = &BoundTool> {
        self.tools
            .iter()
            .chain(self.agents.iter().flat_map(|a| a.tools.iter()))
            .chain(self.workflows.iter().flat_map(|w| w.tools.iter()))
    }

    /// The tool `tool` on the path whose policy digest is `digest` (what an approval ticket
    /// records of the call it was made for).
    pub(crate) fn bound_for(&self, tool: &str, digest: &str) -> Option<&BoundTool> {
        self.every_bound_tool()
            .find(|b| b.meta().name == tool && *b.policy_digest() == *digest)
    }

    /// The tool `tool` on the ticket's path or, when no path has that digest any more, on any
    /// path (its input DTO is the same on every path).
    pub(crate) fn bound_named(&self, tool: &str, digest: &str) -> Option<&BoundTool> {
        self.bound_for(tool, digest)
            .or_else(|| self.every_bound_tool().find(|b| b.meta().name == tool))
    }
}

/// `TypeId`s are hashes already: the typed handle's lookup (on every direct call) skips SipHash.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl std::hash::Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_u128(&mut self, n: u128) {
        self.0 ^= n as u64 ^ (n >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
