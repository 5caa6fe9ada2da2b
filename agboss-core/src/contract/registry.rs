//! The registration entries every macro submits through `inventory`, so the runtime can list
//! components, look them up by name and refuse duplicate names.
use std::collections::HashMap;

use super::agent::{AgentMeta, RouterMeta};
use super::channel::ChannelMeta;
use super::guardrail::GuardrailMeta;
use super::interceptor::InterceptorMeta;
use super::pii_policy::PiiPolicyMeta;
use super::tool::ToolMeta;
use super::workflow::{ApplicationMeta, WorkflowMeta};
use crate::di::BuildError;
use crate::di::InjectableMeta;

/// One registered component.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Registration {
    /// A `#[tool]`.
    Tool(&'static ToolMeta),
    /// A `#[tool_interceptor]`.
    ToolInterceptor(&'static InterceptorMeta),
    /// An `#[injectable]` service.
    Injectable(&'static InjectableMeta),
    /// An `#[agent]`.
    Agent(&'static AgentMeta),
    /// A `#[router]`.
    Router(&'static RouterMeta),
    /// A `#[workflow]`.
    Workflow(&'static WorkflowMeta),
    /// An `#[application]`.
    Application(&'static ApplicationMeta),
    /// A `#[pii_policy]`.
    PiiPolicy(&'static PiiPolicyMeta),
    /// A `#[channel]`.
    Channel(&'static ChannelMeta),
    /// An `#[input_guardrail]`.
    InputGuardrail(&'static GuardrailMeta),
    /// An `#[output_guardrail]`.
    OutputGuardrail(&'static GuardrailMeta),
}

/// A [`Registration`] with the module its macro was expanded in (`module_path!()`), which
/// scopes [`BuildWarning::Unreachable`](crate::cascade::BuildWarning::Unreachable) to the components of
/// the application being built.
#[doc(hidden)]
#[derive(Debug)]
pub struct Registered {
    /// The component.
    pub component: Registration,
    /// Where it was declared.
    pub module: &'static str,
}

inventory::collect!(Registered);

impl Registration {
    /// The kind, as in rule messages: `tool`, `tool-interceptor`, `injectable`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Tool(_) => "tool",
            Self::ToolInterceptor(_) => "tool-interceptor",
            Self::Injectable(_) => "injectable",
            Self::Agent(_) => "agent",
            Self::Router(_) => "router",
            Self::Workflow(_) => "workflow",
            Self::Application(_) => "application",
            Self::PiiPolicy(_) => "pii-policy",
            Self::Channel(_) => "channel",
            Self::InputGuardrail(_) => "input-guardrail",
            Self::OutputGuardrail(_) => "output-guardrail",
        }
    }
    /// The registered name (the type name for services).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Tool(m) => {
                let m: &'static ToolMeta = m;
                &m.name
            }
            Self::ToolInterceptor(m) => m.name,
            Self::Injectable(m) => m.type_name,
            Self::Agent(m) => m.name,
            Self::Router(m) => m.name,
            Self::Workflow(m) => m.name,
            Self::Application(m) => m.name,
            Self::PiiPolicy(m) => m.name,
            Self::Channel(m) => m.name,
            Self::InputGuardrail(m) | Self::OutputGuardrail(m) => m.name,
        }
    }
    /// The description (empty for services).
    pub fn description(&self) -> &'static str {
        match self {
            Self::Tool(m) => {
                let m: &'static ToolMeta = m;
                &m.description
            }
            Self::ToolInterceptor(m) => m.description,
            Self::Injectable(_) => "",
            Self::Agent(m) => m.description,
            Self::Router(m) => m.description,
            Self::Workflow(m) => m.description,
            Self::Application(m) => m.description,
            Self::PiiPolicy(m) => m.description,
            Self::Channel(m) => m.description,
            Self::InputGuardrail(m) | Self::OutputGuardrail(m) => m.description,
        }
    }
    /// The Rust type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Tool(m) => m.type_name,
            Self::ToolInterceptor(m) => m.type_name,
            Self::Injectable(m) => m.type_name,
            Self::Agent(m) => m.type_name,
            Self::Router(m) => m.type_name,
            Self::Workflow(m) => m.type_name,
            Self::Application(m) => m.type_name,
            Self::PiiPolicy(m) => m.type_name,
            Self::Channel(m) => m.type_name,
            Self::InputGuardrail(m) | Self::OutputGuardrail(m) => m.type_name,
        }
    }
}

/// Every component registered in this binary.
pub fn all() -> impl Iterator<Item = &'static Registration> {
    inventory::iter::<Registered>
        .into_iter()
        .map(|r| &r.component)
}

/// Every registration with the module it was declared in.
pub(crate) fn all_with_modules() -> impl Iterator<Item = &'static Registered> {
    inventory::iter::<Registered>.into_iter()
}

/// Whether `module` is `scope` or one of its descendants (`a::b` is in `a`, `ab` is not).
pub(crate) fn module_within(module: &str, scope: &str) -> bool {
    module
        .strip_prefix(scope)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// A registered tool by name.
pub fn find_tool(name: &str) -> Option<&'static ToolMeta> {
    all().find_map(|r| match r {
        Registration::Tool(m) if m.name == name => Some(*m),
        _ => None,
    })
}

/// A registered tool interceptor by name.
pub fn find_tool_interceptor(name: &str) -> Option<&'static InterceptorMeta> {
    all().find_map(|r| match r {
        Registration::ToolInterceptor(m) if m.name == name => Some(*m),
        _ => None,
    })
}

/// Refuses two components of one kind with the same name.
pub fn check_unique_names() -> Result<(), BuildError> {
    let mut seen: HashMap<(&'static str, &'static str), &'static str> = HashMap::new();
    let mut dups: Vec<BuildError> = Vec::new();
    for reg in all() {
        if matches!(reg, Registration::Injectable(_)) {
            continue;
        }
        if let Some(first) = seen.insert((reg.kind(), reg.name()), reg.type_name())
            && first != reg.type_name()
        {
            dups.push(BuildError::DuplicateName {
                kind: reg.kind(),
                name: reg.name().into(),
                first,
                second: reg.type_name(),
            });
        }
    }
    // Deterministic: report the alphabetically first duplicate.
    dups.sort_by_key(|e| e.to_string());
    match dups.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
