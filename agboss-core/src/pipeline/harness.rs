//! Runs single hooks outside a chain, exactly as the pipeline does: the engine behind
//! `agboss_testing::test_tool_interceptor`.
use std::sync::Arc;

use super::ErasedInterceptor;
use super::Link;
use super::hooks::{Stage, Stop, after_chain, before_chain, caught};
use super::run::decode_input;
use crate::contract::interceptor::{InputHolder, ToolCallContext, ToolCallDecision, ToolOutput};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::tool::Tool;
use crate::di::{CallId, ExecutionContext, Resolver, Services, TenantContext};
use crate::dto::Dto;

/// The hook time limit of a link outside an app: the interceptor's own, else the app default.
fn link(interceptor: &Arc<dyn ErasedInterceptor>) -> Link {
    Link::new(
        Arc::clone(interceptor),
        crate::contract::interceptor::DEFAULT_HOOK_TIMEOUT,
    )
}

/// What one hook runs on: the input validated against `T::Input`, a fresh call context and the
/// one-link chain.
fn single<T: Tool>(
    interceptor: &Arc<dyn ErasedInterceptor>,
    input: &serde_json::Value,
) -> Result<(T::Input, ExecutionContext, [Link; 1]), ToolCallError> {
    let typed = decode_input::<T>(input)?;
    let execution = ExecutionContext::new(CallId::generate(), T::META.name.clone(), Arc::from([]));
    Ok((typed, execution, [link(interceptor)]))
}

/// The context a hook of `T` reads.
fn context<'a, T: Tool>(
    holder: &'a InputHolder<'a, T::Input>,
    execution: &'a ExecutionContext,
) -> ToolCallContext<'a> {
    ToolCallContext {
        tool: T::META,
        input: holder,
        execution,
    }
}

/// Runs `before_tool_call` of one interceptor for a call of tool `T` on a JSON input (validated
/// against `T::Input` first, as in the pipeline).
pub async fn before<T: Tool>(
    interceptor: &Arc<dyn ErasedInterceptor>,
    services: &Services,
    tenant: Option<&TenantContext>,
    input: &serde_json::Value,
) -> Result<ToolCallDecision, ToolCallError> {
    let (typed, execution, links) = single::<T>(interceptor, input)?;
    let (holder, stage) = (InputHolder::new(&typed), Stage::new());
    let call = context::<T>(&holder, &execution);
    let resolver = Resolver::for_call(services, tenant, &execution);
    let walk = before_chain(&links, &resolver, &call, &stage);
    match caught(T::META, &stage, (&links, &links), walk).await? {
        Ok(()) => Ok(ToolCallDecision::Allow),
        Err(Stop::ReplyToModel(_, message)) => Ok(ToolCallDecision::ReplyToModel { message }),
        Err(Stop::Blocked(_, reason)) => Ok(ToolCallDecision::Block { reason }),
        Err(Stop::Failed(error)) => Err(*error),
    }
}

/// Runs `after_tool_call` of one interceptor on `output`, then re-validates the result against
/// `T::Output`, as in the pipeline.
pub async fn after<T: Tool>(
    interceptor: &Arc<dyn ErasedInterceptor>,
    services: &Services,
    tenant: Option<&TenantContext>,
    input: &serde_json::Value,
    output: ToolOutput,
) -> Result<T::Output, ToolCallError> {
    let (typed, execution, links) = single::<T>(interceptor, input)?;
    let (holder, stage) = (InputHolder::new(&typed), Stage::new());
    let call = context::<T>(&holder, &execution);
    let resolver = Resolver::for_call(services, tenant, &execution);
    let walk = after_chain(&links, &resolver, &call, output, &stage);
    let out = caught(T::META, &stage, (&links, &links), walk)
        .await?
        .map_err(|e| *e)?;
    let invalid = |source| {
        ToolCallError::new(
            T::META.name.to_string(),
            ToolCallErrorKind::InvalidOutput { source },
        )
    };
    let typed = out.into_typed::<T::Output>().map_err(invalid)?;
    typed.validate().map_err(invalid)?;
    Ok(typed)
}
