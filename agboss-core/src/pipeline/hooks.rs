//! One hook of one interceptor, fail closed: building its per-invocation instance, running it
//! to completion within its time limit, and turning an error, a panic, a missing dependency or
//! a timeout into the call's error.
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt as _;

use crate::contract::chain::Link;
use crate::contract::interceptor::{
    HookError, ToolCallContext, ToolCallDecision, ToolCallResultContext, ToolOutput,
};
use crate::contract::tool::ToolMeta;
use crate::di::{DiError, Resolver};
use crate::error::{InterceptorError, ToolCallError};

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
    /// costs no clock read and no allocation. Outside a tokio runtime, or in one built without
    /// its time driver, there is no timer: the future is awaited unbounded (nothing it guards
    /// runs meanwhile).
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
    Bounded {
        fut,
        limit,
        timer: None,
        untimed: false,
    }
}

/// Why a hook did not produce a value: always a guard failure. Boxed, so that the result an
/// allowing hook returns through the chain stays small.
pub(crate) type HookFailure = Box<ToolCallError>;

/// Runs one interceptor's `before_tool_call`, failing closed on an error, a panic or a timeout.
pub(crate) async fn before_one(
    link: &Link,
    resolver: &Resolver<'_>,
    call: &ToolCallContext<'_>,
) -> Result<ToolCallDecision, HookFailure> {
    let name = link.interceptor.meta().name;
    let result = guarded_hook(call.tool, name, link.timeout, || {
        link.interceptor.before(resolver, call)
    })
    .await;
    match &result {
        Ok(ToolCallDecision::Allow) => tracing::debug!(
            tool = call.tool.name,
            call_id = call.call_id(),
            interceptor = name,
            decision = "allow",
            "before_tool_call"
        ),
        Ok(ToolCallDecision::ReplyToModel { message }) => tracing::debug!(
            tool = call.tool.name,
            call_id = call.call_id(),
            interceptor = name,
            decision = "reply_to_model",
            reply = message.as_str(),
            "before_tool_call"
        ),
        Ok(ToolCallDecision::Block { reason }) => tracing::debug!(
            tool = call.tool.name,
            call_id = call.call_id(),
            interceptor = name,
            decision = "block",
            reason = reason.as_str(),
            "before_tool_call"
        ),
        // Recorded on the call's span when it ends (`CallTrace::finish`).
        Err(_) => {}
    }
    result
}

/// Runs one interceptor's `after_tool_call`, failing closed on an error, a panic or a timeout.
pub(crate) async fn after_one(
    link: &Link,
    resolver: &Resolver<'_>,
    call: ToolCallResultContext<'_>,
) -> Result<ToolOutput, HookFailure> {
    let tool = call.call.tool;
    let name = link.interceptor.meta().name;
    tracing::trace!(tool = tool.name, interceptor = name, "after_tool_call");
    guarded_hook(tool, name, link.timeout, || {
        link.interceptor.after(resolver, call)
    })
    .await
}

/// Starts a hook (building its per-invocation instance) and runs it to completion within its
/// time limit, failing closed: a dependency that cannot be built, an `Err`, a panic
/// (while building or running) and a timeout all become the call's error.
async fn guarded_hook<F, T>(
    tool: &ToolMeta,
    interceptor: &'static str,
    limit: Duration,
    start: impl FnOnce() -> Result<F, DiError>,
) -> Result<T, HookFailure>
where
    F: Future<Output = Result<T, InterceptorError>>,
{
    let result = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(Ok(future)) => {
            let mut future = std::pin::pin!(future);
            // The first poll in place, under `catch_unwind`: a hook that is ready at once (most
            // are) needs no timer and no wrapper future. One that suspends is bounded from here.
            let first = std::future::poll_fn(|cx| {
                Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| {
                    future.as_mut().poll(cx)
                })))
            })
            .await;
            let ran = match first {
                Ok(Poll::Ready(out)) => Some(Ok(out)),
                Ok(Poll::Pending) => {
                    bounded(AssertUnwindSafe(future.as_mut()).catch_unwind(), limit).await
                }
                Err(payload) => Some(Err(payload)),
            };
            match ran {
                Some(ran) => ran.map(|r| r.map_err(HookError::Failed)),
                None => {
                    return Err(Box::new(ToolCallError::InterceptorTimeout {
                        tool_name: tool.name.to_string(),
                        interceptor,
                        timeout_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                    }));
                }
            }
        }
        Ok(Err(dependency)) => Ok(Err(HookError::Dependency(dependency))),
        Err(payload) => Err(payload),
    };
    let error = match result {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(HookError::Failed(error))) => ToolCallError::InterceptorFailed {
            tool_name: tool.name.to_string(),
            interceptor,
            error,
        },
        Ok(Err(HookError::Dependency(source))) => ToolCallError::Dependency {
            tool_name: tool.name.to_string(),
            component: interceptor,
            source,
        },
        Err(payload) => ToolCallError::InterceptorPanicked {
            tool_name: tool.name.to_string(),
            interceptor,
            message: panic_message(&*payload),
        },
    };
    Err(Box::new(error))
}
