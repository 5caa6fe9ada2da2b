//! One hook of one interceptor, fail closed: building its per-invocation instance, running it
//! to completion within its time limit, and turning an error, a panic, a missing dependency or
//! a timeout into the call's error.
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures::FutureExt as _;

use super::trace::record_decision;
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

/// Runs `fut` to completion, or gives up after `limit` (`None`). The first poll happens before
/// any timer exists, so a future that is ready at once (most hooks) costs no clock read; one that
/// suspends is bounded by a tokio timer. Outside a tokio runtime there is no timer: the future is
/// awaited unbounded (nothing it guards runs meanwhile).
pub(crate) async fn bounded<F: Future>(fut: F, limit: Duration) -> Option<F::Output> {
    let mut fut = pin!(fut);
    if let Poll::Ready(out) =
        futures::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
    {
        return Some(out);
    }
    if tokio::runtime::Handle::try_current().is_err() {
        return Some(fut.await);
    }
    tokio::time::timeout(limit, fut).await.ok()
}

/// Runs one interceptor's `before_tool_call`, failing closed on an error, a panic or a timeout.
pub(crate) async fn before_one(
    link: &Link,
    resolver: &Resolver<'_>,
    call: &ToolCallContext<'_>,
) -> Result<ToolCallDecision, ToolCallError> {
    let name = link.interceptor.meta().name;
    let result = guarded_hook(call.tool, link, || link.interceptor.before(resolver, call)).await;
    match &result {
        Ok(ToolCallDecision::Allow) => tracing::debug!(
            tool = call.tool.name,
            call_id = call.call_id(),
            interceptor = name,
            decision = "allow",
            "before_tool_call"
        ),
        Ok(ToolCallDecision::ReplyToModel { message }) => {
            record_decision("reply_to_model");
            tracing::debug!(
                tool = call.tool.name,
                call_id = call.call_id(),
                interceptor = name,
                decision = "reply_to_model",
                reply = message.as_str(),
                "before_tool_call"
            )
        }
        Ok(ToolCallDecision::Block { reason }) => {
            record_decision("block");
            tracing::debug!(
                tool = call.tool.name,
                call_id = call.call_id(),
                interceptor = name,
                decision = "block",
                reason = reason.as_str(),
                "before_tool_call"
            )
        }
        Err(_) => record_decision("interceptor_error"),
    }
    result
}

/// Runs one interceptor's `after_tool_call`, failing closed on an error, a panic or a timeout.
pub(crate) async fn after_one(
    link: &Link,
    resolver: &Resolver<'_>,
    call: ToolCallResultContext<'_>,
) -> Result<ToolOutput, ToolCallError> {
    let tool = call.call.tool;
    tracing::trace!(
        tool = tool.name,
        interceptor = link.interceptor.meta().name,
        "after_tool_call"
    );
    guarded_hook(tool, link, || link.interceptor.after(resolver, call)).await
}

/// Starts a hook (building its per-invocation instance) and runs it to completion within the
/// link's time limit, failing closed: a dependency that cannot be built, an `Err`, a panic
/// (while building or running) and a timeout all become the call's error.
async fn guarded_hook<F, T>(
    tool: &ToolMeta,
    link: &Link,
    start: impl FnOnce() -> Result<F, DiError>,
) -> Result<T, ToolCallError>
where
    F: Future<Output = Result<T, InterceptorError>>,
{
    let interceptor = link.interceptor.meta().name;
    let result = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(Ok(future)) => {
            match bounded(AssertUnwindSafe(future).catch_unwind(), link.timeout).await {
                Some(ran) => ran.map(|r| r.map_err(HookError::Failed)),
                None => {
                    return Err(ToolCallError::InterceptorTimeout {
                        tool_name: tool.name.to_string(),
                        interceptor,
                        timeout_ms: u64::try_from(link.timeout.as_millis()).unwrap_or(u64::MAX),
                    });
                }
            }
        }
        Ok(Err(dependency)) => Ok(Err(HookError::Dependency(dependency))),
        Err(payload) => Err(payload),
    };
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(HookError::Failed(error))) => Err(ToolCallError::InterceptorFailed {
            tool_name: tool.name.to_string(),
            interceptor,
            error,
        }),
        Ok(Err(HookError::Dependency(source))) => Err(ToolCallError::Dependency {
            tool_name: tool.name.to_string(),
            component: interceptor,
            source,
        }),
        Err(payload) => Err(ToolCallError::InterceptorPanicked {
            tool_name: tool.name.to_string(),
            interceptor,
            message: panic_message(&*payload),
        }),
    }
}
