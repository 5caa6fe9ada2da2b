//! The hooks of a chain, fail closed: `before_tool_call`s outer to inner until one does not
//! allow, `after_tool_call`s inner to outer, each within its time limit, an error, a missing
//! dependency or a timeout becoming the call's error.
//!
//! Panics are caught once, around the whole call ([`caught`]), not per hook: the walk records
//! which hook is running in a [`Stage`], so a panic still names its interceptor. A hook
//! that is ready at once (most are) costs its erased call and one poll: no timer, no wrapper
//! future, no allocation.
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use super::{HookError, Link};
use crate::contract::interceptor::{
    ToolCallContext, ToolCallDecision, ToolCallResultContext, ToolOutput,
};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::tool::ToolMeta;
use crate::di::Resolver;

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

pin_project_lite::pin_project! {
    /// `fut` bounded by `limit`: `Some(output)`, or `None` once the limit passed. The timer is
    /// armed only when `fut` first suspends, so a future that is ready at once (most hooks)
    /// costs no clock read and no allocation. Without a limit, outside a tokio runtime, or in
    /// one built without its time driver, there is no timer: the future is awaited unbounded
    /// (nothing it guards runs meanwhile).
    pub(crate) struct Bounded<F> {
        #[pin]
        fut: F,
        limit: Duration,
        timer: Option<Pin<Box<tokio::time::Sleep>>>,
        untimed: bool,
    }
}

impl<F: Future> Future for Bounded<F> {
    type Output = Option<F::Output>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.fut.poll(cx) {
            return Poll::Ready(Some(out));
        }
        if *this.untimed {
            return Poll::Pending;
        }
        let timer = match this.timer {
            Some(timer) => timer,
            None => {
                if tokio::runtime::Handle::try_current().is_err() {
                    *this.untimed = true;
                    return Poll::Pending;
                }
                // A runtime built without the time driver has no timers (tokio panics when
                // asked for one): then the future is awaited unbounded, as outside a runtime.
                let limit = *this.limit;
                match std::panic::catch_unwind(move || Box::pin(tokio::time::sleep(limit))) {
                    Ok(sleep) => this.timer.insert(sleep),
                    Err(_) => {
                        tracing::warn!(
                            "a tokio runtime without timers: a suspended hook or tool cannot be bounded"
                        );
                        *this.untimed = true;
                        return Poll::Pending;
                    }
                }
            }
        };
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Bounds `fut` by `limit` (see [`Bounded`]).
#[inline]
pub(crate) fn bounded<F: Future>(fut: F, limit: Duration) -> Bounded<F> {
    bounded_by(fut, Some(limit))
}

/// Bounds `fut` by `limit` when there is one (see [`Bounded`]).
#[inline]
pub(crate) fn bounded_by<F: Future>(fut: F, limit: Option<Duration>) -> Bounded<F> {
    Bounded {
        fut,
        limit: limit.unwrap_or(Duration::ZERO),
        timer: None,
        untimed: limit.is_none(),
    }
}

/// Which hook of a chain is running, when one is: what a panic caught around the call names.
/// An atomic (a plain store on the hot path) so that a call's future stays `Send`.
pub(crate) struct Stage(AtomicUsize);

impl Stage {
    const NONE: usize = usize::MAX;
    const AFTER: usize = 1 << (usize::BITS - 1);

    pub(crate) const fn new() -> Self {
        Self(AtomicUsize::new(Self::NONE))
    }
    #[inline]
    fn set(&self, at: usize) {
        self.0.store(at, Ordering::Relaxed);
    }
    /// The running link, found in the chain's `before` and `after` lists.
    pub(crate) fn link<'l>(&self, before: &'l [Link], after: &'l [Link]) -> Option<&'l Link> {
        match self.0.load(Ordering::Relaxed) {
            Self::NONE => None,
            at if at & Self::AFTER != 0 => after.get(at & !Self::AFTER),
            at => before.get(at),
        }
    }
}

pin_project_lite::pin_project! {
    /// `fut` (a call, or a part of one, whose chain walks record their running hook in
    /// `stage`) with its panics turned into the call's error: `InterceptorPanicked` naming the
    /// link that was running (of `before` or `after`), else `ToolPanicked`. One `catch_unwind`
    /// per poll of the whole call instead of one per hook. Not polled again once it panicked.
    pub(crate) struct Caught<'s, F> {
        #[pin]
        fut: F,
        tool: &'s ToolMeta,
        stage: &'s Stage,
        before: &'s [Link],
        after: &'s [Link],
    }
}

impl<F: Future> Future for Caught<'_, F> {
    type Output = Result<F::Output, ToolCallError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let fut = this.fut;
        match std::panic::catch_unwind(AssertUnwindSafe(move || fut.poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panicked(
                this.tool,
                this.stage.link(this.before, this.after),
                &*payload,
            ))),
        }
    }
}

/// `fut` with its panics caught (see [`Caught`]).
#[inline]
pub(crate) fn caught<'s, F: Future>(
    tool: &'s ToolMeta,
    stage: &'s Stage,
    (before, after): (&'s [Link], &'s [Link]),
    fut: F,
) -> Caught<'s, F> {
    Caught {
        fut,
        tool,
        stage,
        before,
        after,
    }
}

#[cold]
fn panicked(tool: &ToolMeta, link: Option<&Link>, payload: &(dyn Any + Send)) -> ToolCallError {
    let message = panic_message(payload);
    match link {
        Some(link) => ToolCallError::new(
            tool.name.to_string(),
            ToolCallErrorKind::InterceptorPanicked {
                interceptor: link.interceptor.meta().name,
                message,
            },
        ),
        None => ToolCallError::new(
            tool.name.to_string(),
            ToolCallErrorKind::ToolPanicked { message },
        ),
    }
}

/// Why a hook did not produce a value: always a guard failure. Boxed, so that the result an
/// allowing hook returns through the chain stays small.
pub(crate) type HookFailure = Box<ToolCallError>;

/// How a `before_tool_call` chain stopped short of the tool.
pub(crate) enum Stop<'a> {
    /// A hook decided `reply_to_model`, with its message.
    ReplyToModel(&'a Link, String),
    /// A hook decided `block`, with its reason.
    Blocked(&'a Link, String),
    /// A hook failed closed.
    Failed(HookFailure),
}

/// Runs the `before_tool_call`s of `links` in order: `Ok` when every one allowed, else the
/// first decision that did not, or the failure. Panics propagate (see [`caught`]).
pub(crate) async fn before_chain<'l>(
    links: &'l [Link],
    resolver: &Resolver<'_>,
    call: &ToolCallContext<'_>,
    stage: &Stage,
) -> Result<(), Stop<'l>> {
    // Whether decision events are wanted, once per walk.
    let events = tracing::level_enabled!(tracing::Level::DEBUG);
    for (at, link) in links.iter().enumerate() {
        stage.set(at);
        // Built in place and polled through a reference: the hook's future is never moved.
        let mut future = std::pin::pin!(link.interceptor.before(resolver, call));
        let decision = match bounded(future.as_mut(), link.timeout).await {
            Some(Ok(decision)) => decision,
            Some(Err(error)) => return Err(Stop::Failed(hook_failed(call.tool, link, error))),
            None => return Err(Stop::Failed(timed_out(call.tool, link))),
        };
        if events {
            decision_event(call, link, &decision);
        }
        match decision {
            ToolCallDecision::Allow => {}
            ToolCallDecision::ReplyToModel { message } => {
                return Err(Stop::ReplyToModel(link, message));
            }
            ToolCallDecision::Block { reason } => return Err(Stop::Blocked(link, reason)),
        }
    }
    stage.set(Stage::NONE);
    Ok(())
}

/// Runs the `after_tool_call`s of `links` in order (already inner to outer), each given the
/// previous one's output. Panics propagate (see [`caught`]).
pub(crate) async fn after_chain(
    links: &[Link],
    resolver: &Resolver<'_>,
    call: &ToolCallContext<'_>,
    mut output: ToolOutput,
    stage: &Stage,
) -> Result<ToolOutput, HookFailure> {
    // Whether hook events are wanted, once per walk.
    let events = tracing::level_enabled!(tracing::Level::TRACE);
    for (at, link) in links.iter().enumerate() {
        stage.set(at | Stage::AFTER);
        if events {
            tracing::trace!(
                tool = &*call.tool.name,
                interceptor = link.interceptor.meta().name,
                "after_tool_call"
            );
        }
        let result_call = ToolCallResultContext {
            call: ToolCallContext { ..*call },
            output,
        };
        let mut future = std::pin::pin!(link.interceptor.after(resolver, result_call));
        output = match bounded(future.as_mut(), link.timeout).await {
            Some(Ok(output)) => output,
            Some(Err(error)) => return Err(hook_failed(call.tool, link, error)),
            None => return Err(timed_out(call.tool, link)),
        };
    }
    stage.set(Stage::NONE);
    Ok(output)
}

#[cold]
fn hook_failed(tool: &ToolMeta, link: &Link, error: HookError) -> HookFailure {
    let tool_name = tool.name.to_string();
    let interceptor = link.interceptor.meta().name;
    Box::new(match error {
        HookError::Failed(error) => ToolCallError::new(
            tool_name,
            ToolCallErrorKind::InterceptorFailed { interceptor, error },
        ),
        HookError::Dependency(source) => ToolCallError::new(
            tool_name,
            ToolCallErrorKind::Dependency {
                component: interceptor,
                source,
            },
        ),
    })
}

#[cold]
fn timed_out(tool: &ToolMeta, link: &Link) -> HookFailure {
    Box::new(ToolCallError::new(
        tool.name.to_string(),
        ToolCallErrorKind::InterceptorTimeout {
            interceptor: link.interceptor.meta().name,
            timeout_ms: u64::try_from(link.timeout.as_millis()).unwrap_or(u64::MAX),
        },
    ))
}

/// The `before_tool_call` event of one decision (see [`super::trace`]).
#[inline(never)]
fn decision_event(call: &ToolCallContext<'_>, link: &Link, decision: &ToolCallDecision) {
    let interceptor = link.interceptor.meta().name;
    match decision {
        ToolCallDecision::Allow => tracing::debug!(
            tool = &*call.tool.name,
            call_id = call.call_id(),
            interceptor,
            decision = "allow",
            "before_tool_call"
        ),
        ToolCallDecision::ReplyToModel { message } => tracing::debug!(
            tool = &*call.tool.name,
            call_id = call.call_id(),
            interceptor,
            decision = "reply_to_model",
            reply = message.as_str(),
            "before_tool_call"
        ),
        ToolCallDecision::Block { reason } => tracing::debug!(
            tool = &*call.tool.name,
            call_id = call.call_id(),
            interceptor,
            decision = "block",
            reason = reason.as_str(),
            "before_tool_call"
        ),
    }
}
