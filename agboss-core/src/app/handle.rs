//! Handles to call one tool of an app directly: typed ([`ToolHandle`]) or by name
//! ([`DynToolHandle`]). Both run the tool's direct (application → tool) chain.
use std::marker::PhantomData;

use serde_json::Value;

use super::App;
use crate::cascade::BoundTool;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{CallDecision, CallOutcome, FailureKind, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::tool::{Tool, ToolMeta};
use crate::di::{CallId, TenantContext};
use crate::engine::StepFailedError;
use crate::engine::{Decision, RunError, direct};
use crate::pipeline::CallEnv;
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
        let not_in_app =
            || ToolCallError::new(T::META.name.to_string(), ToolCallErrorKind::NotInApp);
        let bound = self.app.bound::<T>().ok_or_else(not_in_app)?;
        let slot = bound
            .slot
            .as_any()
            .downcast_ref::<ToolSlot<T>>()
            .ok_or_else(not_in_app)?;
        Ok((bound, slot))
    }

    /// Invokes the tool with a typed input, through the whole pipeline. A `reply_to_model`
    /// decision is a [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError) here, since no model reads
    /// it. The typed output is not truncated (`max_result_size` bounds text results; see
    /// [`ToolHandle::invoke_json`]).
    ///
    /// A call of a tool with an approval channel that every `before_tool_call` allowed does not
    /// run: it fails with [`ToolCallErrorKind::ApprovalRequired`](crate::error::ToolCallErrorKind::ApprovalRequired), whose `ticket_id` (in an app with
    /// a store) names the ticket made for it; [`ToolHandle::resume`] runs it once decided.
    pub async fn invoke(&self, input: T::Input) -> Result<T::Output, ToolCallError> {
        let call_id = self.call_id_or_new();
        let outcome = self.typed_with(input, call_id.clone(), None).await;
        let outcome = match outcome {
            CallOutcome::Failed(failure) if failure.kind() == FailureKind::Approval => {
                let Ok((bound, _)) = self.entry() else {
                    return Err(failure.into_error());
                };
                let tenant = self.tenant.as_ref().map_or("", TenantContext::tenant_id);
                // Boxed: the ticket's store round trips are the rare path, and held inline
                // they would make every call's future larger.
                return Err(Box::pin(direct::ticket_direct_call(
                    &self.app.inner,
                    bound,
                    tenant,
                    call_id.as_str(),
                    failure.into_error(),
                ))
                .await);
            }
            outcome => outcome,
        };
        direct(outcome, T::META, &call_id)
    }

    /// Decides the ticket of a direct call of this tool ([`ToolHandle::invoke`] returned it in
    /// [`ToolCallErrorKind::ApprovalRequired`](crate::error::ToolCallErrorKind::ApprovalRequired)) and, approved, runs the call once, through the same
    /// chain (every `before_tool_call` again), bound to the approved input (or the approver's
    /// edit), returning its output. A rejection is a [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError)
    /// naming the channel; a ticket made under another policy is requested again
    /// (`ApprovalRequired` with a new ticket). Decided and run exactly once: a second resume is
    /// refused.
    ///
    /// ```
    /// # use agboss_core::prelude::*;
    /// # use agboss_core::error::ToolCallErrorKind;
    /// # use agboss_core::dto::Dto;
    /// # use agboss_core::engine::Decision;
    /// # use agboss_core::store::{MemoryStore, Ticket};
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct PayDto { #[integer(prompt = "Cents", min = 1)] pub cents: i64 }
    /// #[channel(name = "boss-channel", description = "The boss approves payments")]
    /// pub struct BossChannel;
    /// impl ApprovalChannel for BossChannel {
    ///     async fn notify(&self, _t: &Ticket) -> Result<(), ChannelError> { Ok(()) }
    ///     async fn authorize(&self, a: &Approver, _t: &Ticket) -> Result<bool, ChannelError> { Ok(a.id == "boss") }
    /// }
    /// #[tool(name = "pay-tool", description = "Pays", input = PayDto, output = PayDto, approval = BossChannel)]
    /// pub struct PayTool;
    /// impl ToolHandler<PayDto, PayDto> for PayTool {
    ///     async fn run(&self, input: PayDto) -> Result<PayDto, ToolError> { Ok(input) }
    /// }
    /// # futures::executor::block_on(async {
    /// let app = App::builder().tool::<PayTool>().store(MemoryStore::new()).build().unwrap();
    /// let err = app.tool::<PayTool>().invoke(PayDto { cents: 500 }).await.unwrap_err();
    /// let ToolCallErrorKind::ApprovalRequired { ticket_id: Some(ticket), .. } = err.kind() else { panic!() };
    /// let paid = app.tool::<PayTool>().resume(Decision::approve(ticket).by(Approver::new("boss"))).await.unwrap();
    /// assert_eq!(paid.cents, 500);
    /// # });
    /// ```
    pub async fn resume(&self, decision: Decision) -> Result<T::Output, RunError> {
        let (bound, _) = self
            .entry()
            .map_err(|e| RunError::Step(StepFailedError::from_tool_call(&*T::META.name, e)))?;
        let tenant = self.tenant.as_ref().map_or("", TenantContext::tenant_id);
        let claimed = direct::claim_direct(&self.app.inner, bound, tenant, decision).await?;
        let step = |e| RunError::Step(StepFailedError::from_tool_call(&*T::META.name, e));
        let call_id = CallId::new(&claimed.ticket.call_id);
        let (label, result) = match serde_json::from_str::<T::Input>(&claimed.input) {
            Ok(input) => {
                let outcome = self
                    .typed_with(input, call_id.clone(), Some(&claimed.grant))
                    .await;
                (
                    outcome.decision().label(),
                    direct(outcome, T::META, &call_id),
                )
            }
            Err(e) => (
                // An edit that is not the tool's input (checked when decided: a store's row).
                CallDecision::Rejected {
                    reason: String::new(),
                }
                .label(),
                Err(ToolCallError::new(
                    T::META.name.to_string(),
                    ToolCallErrorKind::InvalidInput {
                        source: crate::dto::ValidationError::single(
                            &T::META.name,
                            "",
                            "json",
                            &e.to_string(),
                        ),
                    },
                )),
            ),
        };
        let recorded = match &result {
            Ok(output) => Ok(serde_json::to_string(output).unwrap_or_default()),
            Err(e) => Err(e.to_string()),
        };
        direct::finish_direct(
            &self.app.inner,
            &claimed.ticket,
            &claimed.lease,
            label,
            recorded,
        )
        .await?;
        result.map_err(step)
    }

    /// Like [`ToolHandle::invoke`], returning the whole [`CallOutcome`] (decision included).
    pub async fn call_typed(&self, input: T::Input) -> CallOutcome<T::Output> {
        self.typed_with(input, self.call_id_or_new(), None).await
    }

    async fn typed_with(
        &self,
        input: T::Input,
        call_id: CallId,
        grant: Option<&ApprovalGrant>,
    ) -> CallOutcome<T::Output> {
        let (bound, slot) = match self.entry() {
            Ok(entry) => entry,
            Err(error) => return CallOutcome::failed(FailureKind::Rejected, error),
        };
        if let Err(source) = crate::dto::Dto::validate(&input) {
            return CallOutcome::failed(
                FailureKind::Rejected,
                ToolCallError::new(
                    T::META.name.to_string(),
                    ToolCallErrorKind::InvalidInput { source },
                ),
            );
        }
        let mut env = env(self.app, self.tenant.as_ref(), call_id);
        env.approval = grant;
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
        serde_json::from_str(&text).map_err(|e| {
            ToolCallError::new(
                T::META.name.to_string(),
                ToolCallErrorKind::Serialize {
                    message: e.to_string(),
                },
            )
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
    pub fn meta(&self) -> &'a ToolMeta {
        self.bound.meta()
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
            self.bound.meta(),
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
        other => other.into_direct(&tool.name, call_id.as_str()),
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
