//! # agboss-core
//!
//! The runtime of agboss-rs: guarded tools, tool interceptors, dependency injection, the
//! interceptor cascade and the agent loop. Every macro is re-exported here, so an application
//! depends on `agboss-core` only (and on `agboss-testing` for its tests).
//!
//! Every tool call, however it is made, runs one pipeline: input DTO validation →
//! `before_tool_call`s (outer to inner) → `run` → `after_tool_call`s (inner to outer) → output
//! re-validation → `max_result_size` truncation. An interceptor that errors or panics fails the
//! call closed.
//!
//! ```
//! use agboss_core::{tool, tool_interceptor, App, BeforeToolCall, InterceptorError, ToolCallContext,
//!     ToolCallDecision, ToolError, ToolHandler};
//! use agboss_core::dto::Dto;
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct GreetDto {
//!     #[text(prompt = "Who to greet", min_length = 1)]
//!     pub name: String,
//! }
//!
//! #[tool(name = "greet-tool", description = "Greets someone", input = GreetDto, output = GreetDto,
//!        tool_interceptors = [NoBobToolInterceptor])]
//! pub struct GreetTool;
//! impl ToolHandler<GreetDto, GreetDto> for GreetTool {
//!     async fn run(&self, input: GreetDto) -> Result<GreetDto, ToolError> {
//!         Ok(GreetDto { name: format!("hello {}", input.name) })
//!     }
//! }
//!
//! #[tool_interceptor(name = "no-bob-tool-interceptor", description = "Blocks Bob")]
//! pub struct NoBobToolInterceptor;
//! impl BeforeToolCall for NoBobToolInterceptor {
//!     async fn before_tool_call(&self, call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
//!         Ok(if call.input()["name"] == "bob" { ToolCallDecision::block("no bob") } else { ToolCallDecision::allow() })
//!     }
//! }
//!
//! let app = App::builder().tool::<GreetTool>().build().unwrap();
//! futures::executor::block_on(async {
//!     let out = app.tool::<GreetTool>().invoke(GreetDto { name: "ann".into() }).await.unwrap();
//!     assert_eq!(out.name, "hello ann");
//!     let err = app.tool::<GreetTool>().invoke(GreetDto { name: "bob".into() }).await.unwrap_err();
//!     assert!(err.as_blocked().is_some());
//! });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
mod approval;
pub mod callback;
pub mod cascade;
pub mod di;
pub mod dto;
pub mod error;
pub mod interceptor;
pub mod listener;
pub mod model;
pub mod pii;
pub mod pii_policy;
pub mod pipeline;
pub mod registry;
pub mod telemetry;
pub mod tool;
pub mod workflow;

#[doc(hidden)]
pub mod __private;

pub use agboss_macros::{
    agent, application, injectable, pii_policy, router, tool, tool_interceptor, workflow,
};
pub use agent::{Agent, Router, ToolErrorPolicy};
pub use agent::{RunContext, RunError, RunEvent, RunOutput, RunStream, Target};
pub use cascade::{
    App, AppBuilder, Application, BoundTool, BuildWarning, Chain, DynToolHandle, ResolvedAgent,
    ResolvedRouter, ResolvedWorkflow, ToolHandle, Workflow,
};
pub use di::{CallId, ExecutionContext, Injectable, TenantContext};
pub use error::{
    BlockKind, BuildError, InterceptorError, StepFailedError, ToolBlockedError, ToolCallError,
    ToolError,
};
pub use interceptor::{
    AfterToolCall, BeforeToolCall, ToolCallContext, ToolCallDecision, ToolCallResultContext,
    ToolInterceptor, ToolOutput,
};
pub use listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
pub use pii_policy::{PiiChain, PiiPolicy, PiiPolicyMeta};
pub use pipeline::{JsonOutcome, Outcome};
pub use tool::{Tool, ToolHandler, ToolMeta};
pub use workflow::{Flow, Recovery, WorkflowFlow};
