//! Workflow flows: a workflow's agents, routers and tools as steps run in order (the output of
//! one is the input of the next), with `on_error` handlers that catch a [`StepFailedError`] (so a
//! [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError) too) and recover or re-raise.
//!
//! Every step runs under the workflow's scope in the cascade: agents and routers on their
//! application → workflow → agent paths, tool steps on application → workflow → tool.
//!
//! ```
//! use agboss_core::engine::workflow::{Flow, Recovery};
//! # use agboss_core::{agent, tool, workflow, ToolHandler, ToolError};
//! # use agboss_core::dto::Dto;
//! # #[derive(Dto, Debug, Clone, PartialEq)]
//! # pub struct TicketDto { #[text(prompt = "Ticket")] pub ticket: String }
//! # #[tool(name = "file-ticket-tool", description = "Files", input = TicketDto, output = TicketDto)]
//! # pub struct FileTicketTool;
//! # impl ToolHandler<TicketDto, TicketDto> for FileTicketTool {
//! #     async fn run(&self, input: TicketDto) -> Result<TicketDto, ToolError> { Ok(input) }
//! # }
//! # #[agent(name = "triage-agent", description = "Triage")]
//! # pub struct TriageAgent;
//! # #[workflow(name = "desk-workflow", description = "Desk", agents = [TriageAgent], tools = [FileTicketTool])]
//! # pub struct DeskWorkflow;
//! let flow = Flow::new()
//!     .agent::<TriageAgent>()
//!     .on_error(|err, ctx| match err.as_blocked() {
//!         Some(_) => Ok(Recovery::Output(format!("escalated: {}", ctx.input))),
//!         None => Err(err),
//!     })
//!     .map("to-ticket", |text| Ok(serde_json::json!({ "ticket": text }).to_string()))
//!     .tool::<FileTicketTool>();
//! assert_eq!(flow.step_names(), ["triage-agent", "to-ticket", "file-ticket-tool"]);
//! ```
use std::fmt;
use std::sync::Arc;

use super::run_error::RunError;
use crate::cascade::ResolvedWorkflow;
use crate::contract::agent::{Agent, Router};
use crate::contract::tool::Tool;
use crate::contract::workflow::Workflow;
use crate::engine::run_error::StepFailedError;

/// Implemented by a `#[workflow]` struct to give its flow; run it with
/// `app.execute(Target::workflow::<W>(), input, ctx)`.
pub trait WorkflowFlow: Workflow {
    /// The steps and their error handlers.
    fn flow() -> Flow;
}

/// What an `on_error` handler does with a failed step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// Use this text as the failed step's output and go on.
    Output(String),
    /// Go on with the failed step's input as its output.
    Skip,
    /// End the workflow now with this final answer.
    Finish(String),
}

/// What an `on_error` handler knows about the failure.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct FlowContext<'a> {
    /// The workflow.
    pub workflow: &'static str,
    /// The failed step's name.
    pub step: &'a str,
    /// Its index in the flow.
    pub index: usize,
    /// Its input.
    pub input: &'a str,
    /// The run's tenant, if any.
    pub tenant_id: Option<&'a str>,
}

/// An `on_error` handler: recover (`Ok`) or re-raise (`Err`, usually the error it got).
pub type ErrorHandler = Arc<
    dyn Fn(StepFailedError, &FlowContext<'_>) -> Result<Recovery, StepFailedError> + Send + Sync,
>;

/// A `.map(..)` step's function.
pub type MapFn = Arc<dyn Fn(String) -> Result<String, StepFailedError> + Send + Sync>;

#[derive(Clone)]
pub(super) enum StepSpec {
    Agent(&'static str),
    Router(&'static str),
    Tool(&'static str),
    Map { name: String, f: MapFn },
}

impl StepSpec {
    pub(super) fn name(&self) -> &str {
        match self {
            Self::Agent(n) | Self::Router(n) | Self::Tool(n) => n,
            Self::Map { name, .. } => name,
        }
    }
}

#[derive(Clone)]
pub(super) struct FlowStep {
    pub(super) spec: StepSpec,
    pub(super) on_error: Option<ErrorHandler>,
}

/// The steps of a workflow run, in order.
#[derive(Clone, Default)]
#[must_use = "a Flow does nothing until run with `app.execute(Target::workflow::<W>(), ..)`"]
pub struct Flow {
    pub(super) steps: Vec<FlowStep>,
    pub(super) on_any_error: Option<ErrorHandler>,
}

impl fmt::Debug for Flow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flow")
            .field("steps", &self.step_names())
            .finish()
    }
}

impl Flow {
    /// An empty flow (it returns its input).
    pub fn new() -> Self {
        Self::default()
    }

    fn push(mut self, spec: StepSpec) -> Self {
        self.steps.push(FlowStep {
            spec,
            on_error: None,
        });
        self
    }

    /// Runs agent `A` (on its path under the workflow) on the previous output.
    pub fn agent<A: Agent>(self) -> Self {
        self.push(StepSpec::Agent(A::META.name))
    }
    /// Runs router `R` (under the workflow) on the previous output.
    pub fn router<R: Router>(self) -> Self {
        self.push(StepSpec::Router(R::META.name))
    }
    /// Calls tool `T` (one of the workflow's `tools`, through its application → workflow → tool
    /// chain) with the previous output as JSON arguments; its serialized output is the next
    /// input. A `reply_to_model` fails the step with a `ToolBlockedError` here, since no model
    /// reads it.
    pub fn tool<T: Tool>(self) -> Self {
        self.push(StepSpec::Tool(&T::META.name))
    }
    /// A plain transformation of the previous output (e.g. text into a tool's JSON arguments).
    pub fn map(
        self,
        name: impl Into<String>,
        f: impl Fn(String) -> Result<String, StepFailedError> + Send + Sync + 'static,
    ) -> Self {
        self.push(StepSpec::Map {
            name: name.into(),
            f: Arc::new(f),
        })
    }
    /// Handles a failure of the step just added (any failure: a block, a failing guard, a tool
    /// error under `FailStep`, a model error or `max_turns`, the last two as
    /// `StepFailedError::Other`). Called before any handler is added, it handles every step, like
    /// [`Flow::on_any_error`].
    pub fn on_error(
        mut self,
        handler: impl Fn(StepFailedError, &FlowContext<'_>) -> Result<Recovery, StepFailedError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        let handler: ErrorHandler = Arc::new(handler);
        match self.steps.last_mut() {
            Some(step) => step.on_error = Some(handler),
            None => self.on_any_error = Some(handler),
        }
        self
    }
    /// Handles a failure of any step that its own handler did not recover (or that has none).
    pub fn on_any_error(
        mut self,
        handler: impl Fn(StepFailedError, &FlowContext<'_>) -> Result<Recovery, StepFailedError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.on_any_error = Some(Arc::new(handler));
        self
    }
    /// The steps' names, in order.
    pub fn step_names(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.spec.name()).collect()
    }

    /// The default flow of a workflow: its agents, then its routers, in declaration order.
    pub fn default_for(workflow: &ResolvedWorkflow) -> Self {
        let mut flow = Self::new();
        for a in workflow.meta.agents {
            flow = flow.push(StepSpec::Agent(a.name));
        }
        for r in workflow.meta.routers {
            flow = flow.push(StepSpec::Router(r.name));
        }
        flow
    }

    /// Checks that every step belongs to `workflow`.
    pub(super) fn check(&self, workflow: &ResolvedWorkflow) -> Result<(), RunError> {
        for step in &self.steps {
            let (kind, ok) = match &step.spec {
                StepSpec::Agent(n) => ("agent", workflow.agents.iter().any(|a| a.meta.name == *n)),
                StepSpec::Router(n) => {
                    ("router", workflow.routers.iter().any(|r| r.meta.name == *n))
                }
                StepSpec::Tool(n) => ("tool", workflow.tools.iter().any(|t| t.meta().name == *n)),
                StepSpec::Map { .. } => ("map", true),
            };
            if !ok {
                return Err(RunError::UnknownTarget {
                    kind: format!("{kind} in workflow `{}`", workflow.meta.name),
                    name: step.spec.name().to_string(),
                });
            }
        }
        Ok(())
    }
}
