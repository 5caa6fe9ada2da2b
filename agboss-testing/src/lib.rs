//! Test helpers of agboss-rs: interceptors and tools as easy to test as plain functions.
//!
//! - [`test_tool_interceptor`] runs one interceptor's hooks for a call of a given tool, with the
//!   same input validation, dependency injection, fail-closed handling and output re-validation as
//!   the real pipeline.
//! - [`test_tool`] invokes one tool through its whole pipeline (its own tool-level interceptors
//!   plus any you add).
//! - [`test_input_guardrail`] / [`test_output_guardrail`] run one guardrail's check as the
//!   engine does and return its verdict.
//! - [`trajectory::trajectory`] / [`trajectory::assert_trajectory`] read a run's moves (tool
//!   calls, routes, rejected typed answers, refused calls, answers) from its events, in order.
//! - `Turn::output` scripts a typed answer ([`scripted`]).
//! - [`store::conformance`] checks a store backend against the store contract, trait by trait.
//!
//! ```
//! use agboss_core::{tool, tool_interceptor, BeforeToolCall, InterceptorError, ToolCallContext,
//!     ToolCallDecision, ToolError, ToolHandler};
//! use agboss_core::dto::Dto;
//! use agboss_testing::{test_tool_interceptor, TestOptions};
//! use serde_json::json;
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct NoteDto {
//!     #[text(prompt = "A note")]
//!     pub note: String,
//! }
//! #[tool(name = "note-tool", description = "Stores a note", input = NoteDto, output = NoteDto)]
//! pub struct NoteTool;
//! impl ToolHandler<NoteDto, NoteDto> for NoteTool {
//!     async fn run(&self, input: NoteDto) -> Result<NoteDto, ToolError> { Ok(input) }
//! }
//! #[tool_interceptor(name = "short-note-tool-interceptor", description = "Keeps notes short")]
//! pub struct ShortNoteToolInterceptor;
//! impl BeforeToolCall for ShortNoteToolInterceptor {
//!     async fn before_tool_call(&self, call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
//!         let note: NoteDto = call.input_as()?;
//!         Ok(if note.note.len() > 5 { ToolCallDecision::reply_to_model("shorter, please") } else { ToolCallDecision::allow() })
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let interceptor = test_tool_interceptor::<ShortNoteToolInterceptor>(TestOptions::new());
//! let run = interceptor.before_tool_call::<NoteTool>(json!({ "note": "far too long" })).await;
//! assert_eq!(run.output, ToolCallDecision::reply_to_model("shorter, please"));
//! # });
//! ```
use std::marker::PhantomData;
use std::sync::Arc;

use agboss_core::__private::harness;
use agboss_core::__private::harness_build;
use agboss_core::__private::{ErasedInterceptor, Services, ToolInterceptor};
use agboss_core::di::Injectable;
use agboss_core::error::BuildError;
use agboss_core::{
    App, AppBuilder, TenantContext, ToolCallDecision, ToolCallError, ToolOutput,
    contract::tool::Tool,
};
use serde_json::Value;

/// Options of a test harness: the tenant and service overrides.
#[derive(Default, Clone)]
#[must_use]
pub struct TestOptions {
    tenant: Option<TenantContext>,
    services: Services,
}

impl TestOptions {
    /// No tenant, default services.
    pub fn new() -> Self {
        Self::default()
    }
    /// The tenant that `TenantContext` deps receive.
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Replaces a service with a given instance (a fake, a stub), or provides an
    /// `#[injectable(provided)]` one.
    pub fn service<S: Injectable>(mut self, service: S) -> Self {
        self.services.insert(Arc::new(service));
        self
    }
    fn into_parts(self) -> (Option<TenantContext>, Services) {
        (self.tenant, self.services)
    }
}

/// The result of running one hook: `.output` is the decision (before) or the transformed,
/// re-validated typed output (after).
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct HookRun<O> {
    /// What the hook produced.
    pub output: O,
}

/// A harness around one interceptor. Built by [`test_tool_interceptor`].
#[must_use]
pub struct InterceptorHarness<I> {
    interceptor: Arc<dyn ErasedInterceptor>,
    services: Services,
    tenant: Option<TenantContext>,
    _i: PhantomData<fn() -> I>,
}

/// Builds interceptor `I` with its deps as an app would (services constructed, overrides from
/// `options` used instead). Panics with the build error if a dependency cannot be provided;
/// use [`try_test_tool_interceptor`] to assert on that error.
pub fn test_tool_interceptor<I: ToolInterceptor>(options: TestOptions) -> InterceptorHarness<I> {
    match try_test_tool_interceptor::<I>(options) {
        Ok(h) => h,
        Err(e) => panic!("cannot build `{}` for the test: {e}", I::META.type_name),
    }
}

/// Like [`test_tool_interceptor`], returning the build error.
pub fn try_test_tool_interceptor<I: ToolInterceptor>(
    options: TestOptions,
) -> Result<InterceptorHarness<I>, BuildError> {
    let mut services = options.services;
    let interceptor = harness_build::interceptor(I::META, &mut services)?;
    Ok(InterceptorHarness {
        interceptor,
        services,
        tenant: options.tenant,
        _i: PhantomData,
    })
}

impl<I: ToolInterceptor> InterceptorHarness<I> {
    /// Runs `before_tool_call` for a call of tool `T` with a JSON input (validated against the
    /// tool's input DTO first). Panics if the hook fails (it would fail the call closed);
    /// use [`InterceptorHarness::try_before_tool_call`] to assert on failures.
    pub async fn before_tool_call<T: Tool>(&self, input: Value) -> HookRun<ToolCallDecision> {
        match self.try_before_tool_call::<T>(input).await {
            Ok(output) => HookRun { output },
            Err(e) => panic!("before_tool_call of `{}` failed: {e}", I::META.name),
        }
    }

    /// Runs `before_tool_call`, returning the failure as the pipeline would report it.
    pub async fn try_before_tool_call<T: Tool>(
        &self,
        input: Value,
    ) -> Result<ToolCallDecision, ToolCallError> {
        harness::before::<T>(
            &self.interceptor,
            &self.services,
            self.tenant.as_ref(),
            &input,
        )
        .await
    }

    /// Runs `after_tool_call` for a call of tool `T` with a JSON input and an output (typed or
    /// JSON); returns the transformed output, re-validated against the tool's output DTO.
    /// Panics on failure; see [`InterceptorHarness::try_after_tool_call`].
    pub async fn after_tool_call<T: Tool>(
        &self,
        input: Value,
        output: impl Into<ToolOutput>,
    ) -> HookRun<T::Output> {
        match self.try_after_tool_call::<T>(input, output).await {
            Ok(output) => HookRun { output },
            Err(e) => panic!("after_tool_call of `{}` failed: {e}", I::META.name),
        }
    }

    /// Runs `after_tool_call`, returning the failure as the pipeline would report it.
    pub async fn try_after_tool_call<T: Tool>(
        &self,
        input: Value,
        output: impl Into<ToolOutput>,
    ) -> Result<T::Output, ToolCallError> {
        harness::after::<T>(
            &self.interceptor,
            &self.services,
            self.tenant.as_ref(),
            &input,
            output.into(),
        )
        .await
    }
}

/// A harness that invokes one tool through its whole pipeline. Built by [`test_tool`].
#[must_use]
pub struct ToolHarness<T> {
    builder: Option<AppBuilder>,
    app: Option<App>,
    tenant: Option<TenantContext>,
    _t: PhantomData<fn() -> T>,
}

/// A harness for tool `T` with its tool-level interceptors.
pub fn test_tool<T: Tool>() -> ToolHarness<T> {
    ToolHarness {
        builder: Some(App::builder().name("test-application").tool::<T>()),
        app: None,
        tenant: None,
        _t: PhantomData,
    }
}

impl<T: Tool> ToolHarness<T> {
    fn map_builder(mut self, f: impl FnOnce(AppBuilder) -> AppBuilder) -> Self {
        self.builder = self.builder.take().map(f);
        self.app = None;
        self
    }
    /// Adds an application-level interceptor around the tool.
    pub fn tool_interceptor<I: ToolInterceptor>(self) -> Self {
        self.map_builder(|b| b.tool_interceptor::<I>())
    }
    /// Provides or replaces a service.
    pub fn service<S: Injectable>(self, service: S) -> Self {
        self.map_builder(|b| b.provide(service))
    }
    /// The tenant of the calls.
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Builds the app now, returning the build error if any.
    pub fn build(mut self) -> Result<Self, BuildError> {
        if let Some(builder) = self.builder.take() {
            self.app = Some(builder.build()?);
        }
        Ok(self)
    }
    /// The built app (building it on first use; panics on a build error).
    pub fn app(&mut self) -> &App {
        if self.app.is_none() {
            let builder = self.builder.take().expect("builder present until built");
            match builder.build() {
                Ok(app) => self.app = Some(app),
                Err(e) => panic!("cannot build the app for `{}`: {e}", T::META.name),
            }
        }
        self.app.as_ref().expect("built above")
    }
    /// Invokes the tool with a typed input through its pipeline.
    pub async fn invoke(&mut self, input: T::Input) -> Result<T::Output, ToolCallError> {
        let tenant = self.tenant.clone();
        let app = self.app();
        let handle = app.tool::<T>();
        let handle = match tenant {
            Some(t) => handle.tenant(t),
            None => handle,
        };
        handle.invoke(input).await
    }
    /// Invokes the tool with JSON arguments through its pipeline.
    pub async fn invoke_json(&mut self, args: Value) -> Result<Value, ToolCallError> {
        let tenant = self.tenant.clone();
        let app = self.app();
        let handle = app.tool::<T>();
        let handle = match tenant {
            Some(t) => handle.tenant(t),
            None => handle,
        };
        handle.invoke_value(args).await
    }
}

pub mod approval;
pub mod flaky;
pub mod guardrail;
pub use guardrail::{
    GuardrailHarness, test_input_guardrail, test_output_guardrail, try_test_input_guardrail,
    try_test_output_guardrail,
};
pub mod scripted;
pub use scripted::ScriptedModel;
#[doc(hidden)]
pub mod fuzz;
pub mod store;
pub mod trajectory;
