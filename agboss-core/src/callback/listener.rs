//! [`ToolCallListener`] and [`ToolCallListeners`]: observe every tool invocation (audit and event
//! logs of `tool_use` / `tool_result` pairs, SSE progress to a UI, per-call metrics) without
//! writing a [`ToolCallback`] decorator by hand.
//!
//! ```
//! use std::sync::Mutex;
//! use agboss_core::callback::{ToolCallback, ToolInvocation};
//! use agboss_core::callback::listener::{ToolCallInfo, ToolCallListener, ToolCallListeners};
//! use agboss_core::{CallOutcome, ToolCallError};
//! # use agboss_core::{App, tool, ToolHandler, ToolError};
//! # use agboss_core::dto::Dto;
//! # #[derive(Dto, Debug, Clone, PartialEq)]
//! # pub struct PingDto { #[text(prompt = "Anything")] pub text: String }
//! # #[tool(name = "listened-ping-tool", description = "Answers", input = PingDto, output = PingDto)]
//! # pub struct ListenedPingTool;
//! # impl ToolHandler<PingDto, PingDto> for ListenedPingTool {
//! #     async fn run(&self, input: PingDto) -> Result<PingDto, ToolError> { Ok(input) }
//! # }
//!
//! #[derive(Default)]
//! struct EventLog(Mutex<Vec<String>>);
//!
//! impl ToolCallListener for EventLog {
//!     /// The id of the `tool_use` event, handed back for the `tool_result` event.
//!     type Context = usize;
//!
//!     fn before_call(&self, call: &ToolCallInfo<'_>) -> usize {
//!         let mut log = self.0.lock().unwrap();
//!         // `masked_input`: the arguments with the path's PII policies applied.
//!         log.push(format!("tool_use {} {} {}", call.call_id, call.tool_name, call.masked_input));
//!         log.len() - 1
//!     }
//!     fn after_call(&self, use_id: &mut usize, call: &ToolCallInfo<'_>, result: &CallOutcome) {
//!         let text = result.model_text().unwrap_or_default();
//!         let line = format!("tool_result of #{use_id}: {text} (error: {})", result.is_error());
//!         self.0.lock().unwrap().push(line);
//!     }
//!     fn on_error(&self, use_id: &mut usize, call: &ToolCallInfo<'_>, error: &ToolCallError) -> Option<String> {
//!         let message = format!("Tool '{}' failed: {error}", call.tool_name);
//!         self.0.lock().unwrap().push(format!("tool_result of #{use_id}: {message} (error: true)"));
//!         Some(message) // report to the model and go on; `None` propagates the error
//!     }
//! }
//!
//! let app = App::builder().tool::<ListenedPingTool>().build().unwrap();
//! let log = std::sync::Arc::new(EventLog::default());
//! let observed = ToolCallListeners::wrap_all(app.callbacks(), log.clone());
//! futures::executor::block_on(async {
//!     let ping = &observed[0];
//!     let result = ping.call(ToolInvocation::new("call_1", r#"{"text":"hi"}"#)).await;
//!     assert_eq!(result.model_text(), Some(r#"{"text":"hi"}"#));
//!     // Invalid input: reported to the model by `on_error`.
//!     let result = ping.call(ToolInvocation::new("call_2", r#"{"text":1}"#)).await;
//!     assert!(result.failure().unwrap().report().is_some());
//! });
//! let log = log.0.lock().unwrap();
//! assert_eq!(log[0], r#"tool_use call_1 listened-ping-tool {"text":"hi"}"#);
//! assert_eq!(log[1], r#"tool_result of #0: {"text":"hi"} (error: false)"#);
//! assert!(log[3].starts_with("tool_result of #2: Tool 'listened-ping-tool' failed: invalid input"));
//! ```
//!
//! # Semantics
//!
//! * **Correlation context**: [`ToolCallListener::before_call`] returns the listener's
//!   [`Context`](ToolCallListener::Context) (any type: a use id, an `Instant`, a resource); the
//!   decorator hands it back (`&mut`) to `after_call` / `on_error` of the same invocation and
//!   gives it up (by value) to `after_completion`. Every method also receives the call id
//!   ([`ToolCallInfo::call_id`]). `after_completion` runs exactly once, after `after_call` or
//!   `on_error` (also when they panic: like a `finally`, before the panic goes on); it does not
//!   run when `before_call` panics. Every method has a no-op default (the default
//!   `before_call` returns `Context::default()`).
//! * **Error policy is yours, for the tool's own failures**: `on_error` returning
//!   `Some(message)` reports the failure to the model as the call's result (report and
//!   continue: [`CallFailure::report`](crate::contract::outcome::CallFailure::report)); `None` propagates the error
//!   (fail fast). A guard failure (a block, an interceptor that errored, panicked or timed out,
//!   a missing dependency) is told to `on_error` for the record, but what it returns is ignored:
//!   the call fails closed and the step fails, whatever a listener says.
//! * **Transparent decoration**: `definition()` and `metadata()` are the wrapped callback's,
//!   untouched (same references), so wrapping composes with every source of callbacks
//!   (bound tools, MCP tools, a user's own [`ToolCallback`]). Wrapping a wrapped callback nests:
//!   the outer listener's `before_call` runs first and its `after_call` last, and it sees what
//!   the inner one made of the call (an inner report reaches it through `after_call`).
//! * **Listener methods must not panic**: the decorator does not guard them (observability
//!   failures stay loud instead of leaving silent audit gaps). A panicking `before_call` keeps
//!   the tool from running; a panicking `after_call` discards a result whose side effects have
//!   already happened (the model may retry the tool); a panicking `on_error` replaces the tool's
//!   error. Handle your own failures inside the listener.
//!
//! # How a listener sees each outcome
//!
//! | the call… | listener sees | the caller gets |
//! |---|---|---|
//! | ran (possibly truncated, masked) | `after_call` with [`CallOutcome::Ran`] | the output |
//! | got a `reply_to_model` from an interceptor | `after_call` with [`CallOutcome::ReplyToModel`] (`is_error()` is true, the interceptor is named): what the model reads, but never mistaken for a tool output | the reply |
//! | was reported by an inner listener | `after_call` with the failure and its report | the report |
//! | was **blocked** | `on_error` with [`ToolCallErrorKind::Blocked`](crate::error::ToolCallErrorKind::Blocked), for the record; **what it returns is ignored**: a hard block stays hard | the block |
//! | had a **guard failure** (interceptor error, panic, timeout; missing dependency) | `on_error` with that error, for the record; **what it returns is ignored**: fail closed | the guard failure |
//! | had an invalid input | `on_error` with [`ToolCallErrorKind::InvalidInput`](crate::error::ToolCallErrorKind::InvalidInput) (the field errors); a report lets the model fix its arguments | the report, or the error |
//! | the tool failed (error, panic, timeout, invalid output) | `on_error` with that error | the report, or the error |
//! | was cancelled (its future dropped) | `on_cancelled(context, call, tool_ran)`: whether the tool's `run` had returned `Ok` (side effects may have happened, no result recorded) | — |
//!
//! Listener methods are synchronous, called on the task running the call: keep them short (push
//! to a channel to do slow work elsewhere).
//!
//! # Attaching listeners
//!
//! * to any list of callbacks: [`ToolCallListeners::wrap_all`] (or [`ToolCallListeners::wrap`]);
//! * to a whole app or one agent: [`AppBuilder::tool_call_listener`](crate::AppBuilder::tool_call_listener) /
//!   [`AppBuilder::agent_tool_call_listener`](crate::AppBuilder::agent_tool_call_listener);
//!   [`App::agent_callbacks`](crate::App::agent_callbacks) and [`App::callbacks`](crate::App::callbacks)
//!   hand out the decorated callbacks (the agent loop calls its tools through them, see
//!   [`super`]). App-wide listeners are outside agent listeners; among listeners of one
//!   level the first registered is the outermost.
use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{SharedToolCallback, ToolCallback, ToolInvocation, ToolMetadata};
use crate::contract::outcome::ToolCallError;
use crate::contract::outcome::{CallOutcome, Rendered};
use crate::contract::tool::CallProgress;
use crate::di::TenantContext;
use crate::model::ToolDefinition;

/// What a listener is told about one invocation.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolCallInfo<'a> {
    /// The call id (the model's, or generated).
    pub call_id: &'a str,
    /// The tool's name, as the model calls it.
    pub tool_name: &'a str,
    /// The arguments, as JSON text exactly as the model sent them (the listener page's
    /// `toolInput`). Raw: it holds whatever personal data the model sent.
    pub input: &'a str,
    /// The arguments with the PII policies of the tool's path applied: what an audit log
    /// should keep.
    pub masked_input: &'a str,
    /// The callback's definition.
    pub definition: &'a ToolDefinition,
    /// The callback's metadata (source, path, `max_result_size`).
    pub metadata: &'a ToolMetadata,
    /// The tenant of the run, if any.
    pub tenant: Option<&'a TenantContext>,
}

/// Observes tool invocations. Every method has a no-op default; see the [module
/// docs](crate::callback::listener) for the semantics.
pub trait ToolCallListener: Send + Sync + 'static {
    /// The per-invocation correlation context returned by [`before_call`](Self::before_call) and
    /// handed back to the other methods for the same invocation. `()` when none is needed; wrap
    /// a type without `Default` in an `Option`.
    type Context: Default + Send + 'static;

    /// Before the call (the wrapped callback has not run yet). A panic here keeps the tool from
    /// running, and no other method runs for this call.
    fn before_call(&self, call: &ToolCallInfo<'_>) -> Self::Context {
        let _ = call;
        Self::Context::default()
    }

    /// After a call that produced a result for the model: a tool output, a `reply_to_model`, or
    /// a failure an inner listener reported (tell them apart by the [`CallOutcome`] variant;
    /// [`CallOutcome::model_text`] is what the model reads).
    fn after_call(
        &self,
        context: &mut Self::Context,
        call: &ToolCallInfo<'_>,
        result: &CallOutcome<Rendered>,
    ) {
        let _ = (context, call, result);
    }

    /// After a failed call that nobody reported yet. `Some(message)` reports the failure to the
    /// model as the call's result; `None` propagates the error. Only a rejected input or the
    /// tool's own failure can be reported: for a block or a guard failure (an interceptor that
    /// errored, panicked or timed out, a missing dependency) the returned value is ignored and
    /// the call fails closed.
    fn on_error(
        &self,
        context: &mut Self::Context,
        call: &ToolCallInfo<'_>,
        error: &ToolCallError,
    ) -> Option<String> {
        let _ = (context, call, error);
        None
    }

    /// Once after `after_call` or `on_error` (even when they panicked): release resources,
    /// record durations.
    fn after_completion(&self, context: Self::Context, call: &ToolCallInfo<'_>) {
        let _ = (context, call);
    }

    /// The call was cancelled (its future dropped: the run was cancelled or timed out, the
    /// client went away) after `before_call` and before the call ended. `tool_ran` is true when
    /// the tool's `run` had already returned `Ok`: its side effects may have happened although
    /// no result was recorded (its after-hooks did not finish). Instead of `after_call` /
    /// `on_error` / `after_completion`; runs where the future is dropped, so keep it short.
    fn on_cancelled(&self, context: Self::Context, call: &ToolCallInfo<'_>, tool_ran: bool) {
        let _ = (context, call, tool_ran);
    }
}

impl<L: ToolCallListener> ToolCallListener for Arc<L> {
    type Context = L::Context;
    fn before_call(&self, call: &ToolCallInfo<'_>) -> Self::Context {
        (**self).before_call(call)
    }
    fn after_call(
        &self,
        context: &mut Self::Context,
        call: &ToolCallInfo<'_>,
        result: &CallOutcome<Rendered>,
    ) {
        (**self).after_call(context, call, result)
    }
    fn on_error(
        &self,
        context: &mut Self::Context,
        call: &ToolCallInfo<'_>,
        error: &ToolCallError,
    ) -> Option<String> {
        (**self).on_error(context, call, error)
    }
    fn after_completion(&self, context: Self::Context, call: &ToolCallInfo<'_>) {
        (**self).after_completion(context, call)
    }
    fn on_cancelled(&self, context: Self::Context, call: &ToolCallInfo<'_>, tool_ran: bool) {
        (**self).on_cancelled(context, call, tool_ran)
    }
}

/// The context of a call in flight: handed to `on_cancelled` if the call's future is dropped
/// before it ends.
struct InFlight<'g, L: ToolCallListener> {
    listener: &'g L,
    info: &'g ToolCallInfo<'g>,
    progress: &'g CallProgress,
    context: Option<L::Context>,
}

impl<L: ToolCallListener> InFlight<'_, L> {
    /// The call ended: the context goes on to `after_call` / `on_error`.
    fn ended(mut self) -> L::Context {
        self.context.take().unwrap_or_default()
    }
}

impl<L: ToolCallListener> Drop for InFlight<'_, L> {
    fn drop(&mut self) {
        if let Some(context) = self.context.take() {
            self.listener
                .on_cancelled(context, self.info, self.progress.tool_ran());
        }
    }
}

/// A callback decorated with a listener (what [`ToolCallListeners::wrap`] returns).
pub struct ListenedToolCallback<L> {
    inner: SharedToolCallback,
    listener: Arc<L>,
}

impl<L> ListenedToolCallback<L> {
    /// Decorates `inner` with `listener`.
    pub fn new(inner: SharedToolCallback, listener: Arc<L>) -> Self {
        Self { inner, listener }
    }
    /// The decorated callback.
    pub fn inner(&self) -> &SharedToolCallback {
        &self.inner
    }
}

impl<L> fmt::Debug for ListenedToolCallback<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListenedToolCallback")
            .field("name", &self.inner.definition().name)
            .field("listener", &std::any::type_name::<L>())
            .finish()
    }
}

type PanicPayload = Box<dyn Any + Send + 'static>;

impl<L: ToolCallListener> ToolCallback for ListenedToolCallback<L> {
    fn definition(&self) -> &ToolDefinition {
        self.inner.definition()
    }
    fn shared_definition(&self) -> Arc<ToolDefinition> {
        self.inner.shared_definition()
    }
    fn metadata(&self) -> &ToolMetadata {
        self.inner.metadata()
    }
    fn mask_for_model<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.inner.mask_for_model(text)
    }
    fn call<'a>(&'a self, invocation: ToolInvocation<'a>) -> BoxFuture<'a, CallOutcome<Rendered>> {
        Box::pin(async move {
            let definition = self.inner.definition();
            let masked_input = self.inner.mask_for_model(invocation.arguments);
            let info = ToolCallInfo {
                call_id: invocation.call_id,
                tool_name: &definition.name,
                input: invocation.arguments,
                masked_input: &masked_input,
                definition,
                metadata: self.inner.metadata(),
                tenant: invocation.tenant,
            };
            // One record of progress for the whole stack of listeners.
            let own_progress = CallProgress::default();
            let progress = invocation.progress.unwrap_or(&own_progress);
            let listener = &*self.listener;
            // Not guarded: a panic keeps the tool from running and skips every other method.
            let in_flight = InFlight {
                listener,
                info: &info,
                progress,
                context: Some(listener.before_call(&info)),
            };
            let mut outcome = self.inner.call(invocation.with_progress(progress)).await;
            let mut context = in_flight.ended();
            // A panic of `after_call` / `on_error` is held until `after_completion` ran (a
            // `finally`), then resumed: never swallowed.
            let handled: Result<(), PanicPayload> = match &mut outcome {
                CallOutcome::Failed(failure) if failure.report().is_none() => {
                    catch_unwind(AssertUnwindSafe(|| {
                        listener.on_error(&mut context, &info, failure.error())
                    }))
                    .map(|report| {
                        if let Some(message) = report {
                            // Refused for a block or a guard failure: those fail closed.
                            failure.set_report(self.inner.mask_for_model(&message).into_owned());
                        }
                    })
                }
                _ => catch_unwind(AssertUnwindSafe(|| {
                    listener.after_call(&mut context, &info, &outcome)
                })),
            };
            listener.after_completion(context, &info);
            match handled {
                Ok(()) => outcome,
                Err(payload) => resume_unwind(payload),
            }
        })
    }
}

/// Decorates callbacks with listeners.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallListeners;

impl ToolCallListeners {
    /// Decorates one callback. Pass an `Arc<L>` to share one listener with other wrappings.
    pub fn wrap<L: ToolCallListener>(
        callback: SharedToolCallback,
        listener: L,
    ) -> SharedToolCallback {
        Arc::new(ListenedToolCallback::new(callback, Arc::new(listener)))
    }

    /// Decorates every callback with one shared listener, keeping the order.
    pub fn wrap_all<L: ToolCallListener>(
        callbacks: impl IntoIterator<Item = SharedToolCallback>,
        listener: L,
    ) -> Vec<SharedToolCallback> {
        let listener = Arc::new(listener);
        callbacks
            .into_iter()
            .map(|cb| {
                Arc::new(ListenedToolCallback::new(cb, Arc::clone(&listener))) as SharedToolCallback
            })
            .collect()
    }
}
