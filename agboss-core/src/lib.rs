//! # agboss-core
//!
//! The runtime of agboss-rs: guarded tools, tool interceptors, dependency injection, the
//! interceptor cascade and the agent loop. Every macro is re-exported here, so an application
//! depends on `agboss-core` only (and on `agboss-testing` for its tests).
//!
//! The reference, feature by feature, is the [`guide`]: DTOs, tools and interceptors, the
//! cascade, DI, the runtime, providers, listeners, PII, tracing, errors, threads and durable
//! runs, approval, MCP and guardrails, each page with compiled examples.
//!
//! Every tool call, however it is made, runs one pipeline: input DTO validation →
//! `before_tool_call`s (outer to inner) → the approval point → `run` → `after_tool_call`s (inner
//! to outer) → output re-validation → PII masking and `max_result_size` truncation, and ends
//! with one [`CallOutcome`] that carries the decision. An interceptor that errors, panics or
//! times out fails the call closed.
//!
//! # Cargo features
//!
//! An app opts into what it uses; the default is the embedded SQLite store only.
//!
//! | feature | what it brings |
//! |---|---|
//! | `sqlite` (default) | [`store::SqliteStore`] (sqlx, a bundled SQLite) |
//! | `postgres` | [`store::PostgresStore`] |
//! | `openai` | [`model::OpenAiCompatibleModel`] (reqwest over rustls with `ring`, SSE) |
//! | `anthropic` | [`model::AnthropicModel`] (the same HTTP core) |
//! | `mcp` | `#[mcp_tool]`, whole MCP servers' tools and `App::serve_mcp` (rmcp, axum) |
//! | `mcp-oauth` | `McpServe::oauth`: the MCP server as an OAuth 2.1 resource server (jsonwebtoken, RustCrypto) |
//! | `console` | `agboss_core::console`: the approval inbox and live run pages (axum) |
//! | `otel` | `telemetry::otel`: export of the spans over OTLP/HTTP |
//! | `tls` | rustls' `ring` provider installed once as the process default (implied by every feature that builds an HTTP client; for the workspace's crates with a client of their own) |
//!
//! This reference is built with every feature (`cargo doc -p agboss-core --all-features`).
//!
//! # Layers
//!
//! Each module uses only the modules below it:
//!
//! | layer | module | what |
//! |---|---|---|
//! | 6 | [`app`] | [`App`], [`AppBuilder`], the tool handles, `execute` / `stream` |
//! | 5 | [`engine`] | runs: the agent loop, routers, workflows, events |
//! | 4 | [`callback`] | [`callback::ToolCallback`], listeners, the one callback stack |
//! | 3 | [`cascade`] | scopes resolved into chains, once per app; `describe()`; [`cascade::BuildWarning`] |
//! | 2 | [`pipeline`] | one guarded call on a resolved chain; the call slot and the interceptors behind `dyn`; rendering; the observation policy |
//! | 1 | [`contract`] | the traits users implement, the metas macros generate, the registry, an approval ticket's data and the outcome |
//! | leaves | [`di`], [`dto`], [`error`], [`model`], [`pii`], [`store`], [`telemetry`], `stamp` | dependency injection, DTOs, errors, model providers, PII detectors, threads/runs/tickets, span conventions, the digest and the clock |
//!
//! An app imports the [`prelude`]; the crate root re-exports the items it names most, the
//! rest is named through its module.
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

pub mod app;
pub mod callback;
pub mod cascade;
#[cfg(feature = "console")]
pub mod console;
pub mod contract;
pub mod di;
pub mod dto;
pub mod engine;
pub mod error;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod pii;
pub mod pipeline;
pub mod prelude;
mod stamp;
pub mod store;
pub mod telemetry;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "mcp",
    feature = "otel",
    feature = "tls"
))]
mod tls;

#[doc(hidden)]
pub mod __private;

mod compat;
#[doc(hidden)]
pub use compat::moved::*;
#[doc(hidden)]
pub use compat::{agent, listener};

/// The reference, page by page: every feature with its rules and compiled examples. Pages
/// only (no items); start at the [table of contents](guide).
pub mod guide {
    #![doc = include_str!("../docs/guide/index.md")]
    pub mod dto {
        #![doc = include_str!("../docs/guide/dto.md")]
    }
    pub mod tools {
        #![doc = include_str!("../docs/guide/tools.md")]
    }
    pub mod cascade {
        #![doc = include_str!("../docs/guide/cascade.md")]
    }
    pub mod di {
        #![doc = include_str!("../docs/guide/di.md")]
    }
    pub mod testing {
        #![doc = include_str!("../docs/guide/testing.md")]
    }
    pub mod runtime {
        #![doc = include_str!("../docs/guide/runtime.md")]
    }
    pub mod providers {
        #![doc = include_str!("../docs/guide/providers.md")]
    }
    pub mod listeners {
        #![doc = include_str!("../docs/guide/listeners.md")]
    }
    pub mod pii {
        #![doc = include_str!("../docs/guide/pii.md")]
    }
    pub mod tracing {
        #![doc = include_str!("../docs/guide/tracing.md")]
    }
    pub mod errors {
        #![doc = include_str!("../docs/guide/errors.md")]
    }
    pub mod threads {
        #![doc = include_str!("../docs/guide/threads.md")]
    }
    pub mod approval {
        #![doc = include_str!("../docs/guide/approval.md")]
    }
    pub mod deployment {
        #![doc = include_str!("../docs/guide/deployment.md")]
    }
    /// MCP both ways (feature `mcp`).
    pub mod mcp {
        #![cfg_attr(feature = "mcp", doc = include_str!("../docs/guide/mcp.md"))]
        #![cfg_attr(
            not(feature = "mcp"),
            doc = "MCP both ways: this page needs the feature `mcp` (`cargo doc --features mcp`)."
        )]
    }
    /// The console: an approval inbox and live run pages (feature `console`).
    pub mod console {
        #![cfg_attr(feature = "console", doc = include_str!("../docs/guide/console.md"))]
        #![cfg_attr(
            not(feature = "console"),
            doc = "The console: this page needs the feature `console` (`cargo doc --features console`)."
        )]
    }
    pub mod guardrails {
        #![doc = include_str!("../docs/guide/guardrails.md")]
    }
    pub mod typed_outputs {
        #![doc = include_str!("../docs/guide/typed_outputs.md")]
    }
    pub mod handoffs {
        #![doc = include_str!("../docs/guide/handoffs.md")]
    }
    pub mod agent_tools {
        #![doc = include_str!("../docs/guide/agent_tools.md")]
    }
    pub mod usage_limits {
        #![doc = include_str!("../docs/guide/usage_limits.md")]
    }
    pub mod differences {
        #![doc = include_str!("../docs/guide/differences.md")]
    }
}

// The README's samples are doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// `#[mcp_tool]` (feature `mcp`; without it, a use is the error `[mcp-tool.feature]`): see
/// the `mcp::client` module.
pub use agboss_macros::mcp_tool;
pub use agboss_macros::{
    agent, application, channel, injectable, input_guardrail, output_guardrail, pii_policy, router,
    tool, tool_interceptor, workflow,
};
pub use app::{App, AppBuilder, ToolHandle};
pub use contract::interceptor::{
    AfterToolCall, BeforeToolCall, ToolCallContext, ToolCallDecision, ToolCallResultContext,
    ToolOutput,
};
pub use contract::tool::ToolHandler;
pub use di::{ExecutionContext, TenantContext};
pub use engine::{RunContext, RunError, RunEvent, RunFailed, RunOutput, Target};

// How a call ended and the errors a caller names (8 items; the rest of the errors are in
// `agboss_core::error`, the rest of the call's vocabulary in `agboss_core::contract::outcome`).
#[doc(hidden)]
#[allow(deprecated)]
pub use compat::root::{
    BlockKind, BuildError, CallFailure, FailureKind, GuardrailBlockKind, GuardrailBlockedError,
    Rendered, ToolBlockedError,
};
pub use contract::handler_error::{ChannelError, GuardrailError, InterceptorError, ToolError};

// The traits the root re-exported in 0.1, kept so that 0.1 code compiles: rustc cannot mark a
// re-export deprecated, so they are hidden instead (their homes are the prelude and their modules).
#[doc(hidden)]
pub use callback::{ToolCallback, listener::ToolCallListener};
#[doc(hidden)]
pub use contract::agent::{Agent, Router};
#[doc(hidden)]
pub use contract::channel::ApprovalChannel;
#[doc(hidden)]
pub use contract::guardrail::{
    InputGuardrail, InputGuardrailComponent, OutputGuardrail, OutputGuardrailComponent,
};
#[doc(hidden)]
pub use contract::interceptor::ToolInterceptor;
pub use contract::outcome::{CallDecision, CallOutcome, ToolCallError};
#[doc(hidden)]
pub use contract::pii_policy::PiiPolicy;
#[doc(hidden)]
pub use contract::tool::Tool;
#[doc(hidden)]
pub use contract::workflow::{Application, Workflow};
#[doc(hidden)]
pub use di::Injectable;
pub use engine::StepFailedError;
#[doc(hidden)]
pub use engine::workflow::WorkflowFlow;
