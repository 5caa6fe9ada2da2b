//! Handles to call one tool of an app directly: typed ([`ToolHandle`]) or by name
//! ([`DynToolHandle`]). Both run the tool's direct (application → tool) chain.
use std::marker::PhantomData;

use serde_json::Value;

use super::App;
use crate::cascade::BoundTool;
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered};
use crate::contract::tool::{CallEnv, Tool, ToolMeta};
use crate::di::{CallId, TenantContext};
use crate::error::ToolCallError;
use crate::pipeline::{ToolSlot, call_json_typed, run_typed};

/// A typed handle on one tool of an app: `app.tool::<T>().invoke(input)`.
#[must_use = "a ToolHandle does nothing until `.invoke(..)`"]
pub struct ToolHandle<'a, T> {
    app: &'a App,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
    _tool: PhantomData<fn() -> T>,
}

impl<'a, T: Tool> ToolHandle<'a, T> {
    pub(super) fn new(app: &'a App) -> Self {
        Self {
            app,
            tenant: None,
            call_id: None,
            _tool: PhantomData,
        }
    }
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

    fn call_id_or_new(&self) -> CallId {
        call_id_or_new(&self.call_id)
    }

    fn entry(&self) -> Result<(&BoundTool, &ToolSlot<T>), ToolCallError> {
        let not_in_app = || ToolCallError::NotInApp {
            tool_name: T::META.name.to_string(),
        };
        let bound = self.app.bound::<T>().ok_or_else(not_in_app)?;
        let slot = bound
            .slot
            .as_any()
            .downcast_ref::<ToolSlot<T>>()
            .ok_or_else(not_in_app)?;
        Ok((bound, slot))
    }

    /// Invokes the tool with a typed input, through the whole pipeline. A `reply_to_model`
    /// decision is a [`ToolBlockedError`](crate::ToolBlockedError) here, since no model reads
    /// it. The typed output is not truncated (`max_result_size` bounds text results; see
    /// [`ToolHandle::invoke_json`]).
    pub async fn invoke(&self, input: T::Input) -> Result<T::Output, ToolCallError> {
        let call_id = self.call_id_or_new();
        direct(
            self.typed_with(input, call_id.clone()).await,
            T::META,
            &call_id,
        )
    }

    /// Like [`ToolHandle::invoke`], returning the whole [`CallOutcome`] (decision included).
    pub async fn call_typed(&self, input: T::Input) -> CallOutcome<T::Output> {
        self.typed_with(input, self.call_id_or_new()).await
    }

    async fn typed_with(&self, input: T::Input, call_id: CallId) -> CallOutcome<T::Output> {
        let (bound, slot) = match self.entry() {
            Ok(entry) => entry,
            Err(error) => return CallOutcome::failed(FailureKind::Rejected, error),
        };
        if let Err(source) = crate::dto::Dto::validate(&input) {
            return CallOutcome::failed(
                FailureKind::Rejected,
                ToolCallError::InvalidInput {
                    tool_name: T::META.name.to_string(),
                    source,
                },
            );
        }
        let env = env(self.app, self.tenant.as_ref(), call_id);
        run_typed(slot, &bound.chain, env, input).await
    }

    /// Invokes the tool with JSON text arguments, as a model would; returns the serialized
    /// output, masked and truncated to `max_result_size`.
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        let call_id = self.call_id_or_new();
        direct(
            self.json_with(args, call_id.clone()).await,
            T::META,
            &call_id,
        )
        .map(|r| r.text)
    }

    /// Like [`ToolHandle::invoke_json`] with a JSON value.
    pub async fn invoke_value(&self, args: Value) -> Result<Value, ToolCallError> {
        let text = self.invoke_json(&args.to_string()).await?;
        serde_json::from_str(&text).map_err(|e| ToolCallError::Serialize {
            tool_name: T::META.name.to_string(),
            message: e.to_string(),
        })
    }

    /// Runs the call with JSON text arguments and returns its [`CallOutcome`], as an agent loop
    /// sees it (a `reply_to_model` is an outcome, not an error).
    pub async fn call(&self, args: &str) -> CallOutcome<Rendered> {
        self.json_with(args, self.call_id_or_new()).await
    }

    async fn json_with(&self, args: &str, call_id: CallId) -> CallOutcome<Rendered> {
        match self.entry() {
            Ok((bound, slot)) => {
                let env = env(self.app, self.tenant.as_ref(), call_id);
                call_json_typed(slot, &bound.chain, env, args, bound.max_result_size).await
            }
            Err(error) => CallOutcome::failed(FailureKind::Rejected, error),
        }
    }
}

/// A handle on a tool found by name, called with JSON.
#[must_use = "a DynToolHandle does nothing until `.invoke_json(..)`"]
pub struct DynToolHandle<'a> {
    app: &'a App,
    bound: &'a BoundTool,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
}

impl<'a> DynToolHandle<'a> {
    pub(super) fn new(app: &'a App, bound: &'a BoundTool) -> Self {
        Self {
            app,
            bound,
            tenant: None,
            call_id: None,
        }
    }
    /// The tool's registration data.
    pub fn meta(&self) -> &'static ToolMeta {
        self.bound.meta
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
    /// Invokes with JSON text (see [`ToolHandle::invoke_json`]).
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        let call_id = call_id_or_new(&self.call_id);
        let env = env(self.app, self.tenant.as_ref(), call_id.clone());
        direct(
            self.bound.call_with(env, args).await,
            self.bound.meta,
            &call_id,
        )
        .map(|r| r.text)
    }
    /// Runs the call and returns its [`CallOutcome`] (`reply_to_model` is an outcome).
    pub async fn call(&self, args: &str) -> CallOutcome<Rendered> {
        let call_id = call_id_or_new(&self.call_id);
        let env = env(self.app, self.tenant.as_ref(), call_id);
        self.bound.call_with(env, args).await
    }
}

/// The call id a caller set, else a new one.
fn call_id_or_new(call_id: &Option<CallId>) -> CallId {
    call_id.clone().unwrap_or_else(CallId::generate)
}

/// The result of a direct call. The call id is only read (formatted) for a reply, which is an
/// error here.
fn direct<O>(
    outcome: CallOutcome<O>,
    tool: &ToolMeta,
    call_id: &CallId,
) -> Result<O, ToolCallError> {
    match outcome {
        CallOutcome::Ran(output) => Ok(output),
        other => other.into_direct(tool.name, call_id.as_str()),
    }
}

fn env<'a>(app: &'a App, tenant: Option<&'a TenantContext>, call_id: CallId) -> CallEnv<'a> {
    CallEnv {
        services: app.services(),
        tenant,
        call_id,
        run_timeout: None,
        progress: None,
        idempotency_key: None,
        approval: None,
    }
}
