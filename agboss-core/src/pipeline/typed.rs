//! Interceptors behind `dyn` ([`ErasedInterceptor`], what a chain calls) with their hook
//! futures (inline when small); the per-type hook table the macro fills ([`TypedInterceptor`],
//! what an [`InterceptorMeta`]'s `build` makes), the hooks it dispatches to without a function
//! pointer ([`BeforeHook`], [`AfterHook`]) and the autoref probes that find which hooks a type
//! has.
use std::marker::PhantomData;
use std::sync::Arc;

use crate::contract::Built;
use crate::contract::handler_error::InterceptorError;
use crate::contract::interceptor::{
    AfterToolCall, BeforeToolCall, InterceptorMeta, ToolCallContext, ToolCallDecision,
    ToolCallResultContext, ToolInterceptor, ToolOutput,
};
use crate::di::{DiError, Resolver, Services};

/// Bytes a hook's future may take before it is boxed: typical hooks (a few references and an
/// `await` on a service) fit, so a guarded call allocates nothing per interceptor.
pub(crate) const HOOK_FUTURE_INLINE: usize = 128;

/// A hook's future, stored inline when it fits (see [`HOOK_FUTURE_INLINE`]), boxed otherwise.
/// Building the per-invocation instance happens before it exists; a dependency that cannot be
/// built is its output ([`HookError::Dependency`]), so the chain moves one value, not a
/// `Result` around it.
#[doc(hidden)]
pub type BeforeFuture<'a> =
    stackfuture::StackFuture<'a, Result<ToolCallDecision, HookError>, HOOK_FUTURE_INLINE>;
#[doc(hidden)]
pub type AfterFuture<'a> =
    stackfuture::StackFuture<'a, Result<ToolOutput, HookError>, HOOK_FUTURE_INLINE>;

/// Why a hook did not produce a value.
#[doc(hidden)]
pub enum HookError {
    /// The hook returned `Err`.
    Failed(InterceptorError),
    /// The per-invocation instance could not be built.
    Dependency(DiError),
}

/// A resolved interceptor, behind `dyn`. Building the per-invocation instance (when the
/// interceptor has context deps) happens in `before` / `after`; the returned future runs the
/// hook and owns that instance.
#[doc(hidden)]
pub trait ErasedInterceptor: Send + Sync {
    fn meta(&self) -> &'static InterceptorMeta;
    fn has_before(&self) -> bool;
    fn has_after(&self) -> bool;
    fn before<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: &'a ToolCallContext<'a>,
    ) -> BeforeFuture<'a>;
    fn after<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: ToolCallResultContext<'a>,
    ) -> AfterFuture<'a>;
}

/// The interceptor an [`InterceptorMeta`]'s `build` made.
pub(crate) fn interceptor_of(built: Built) -> Result<Arc<dyn ErasedInterceptor>, DiError> {
    built
        .downcast::<Arc<dyn ErasedInterceptor>>()
        .ok_or_else(|| {
            DiError::Failed("an interceptor type built no hook table of this runtime".into())
        })
}

/// The `before_tool_call` of a concrete interceptor type, implemented by the probe's tags:
/// [`probe::HasBefore`] runs the hook on the shared instance (or one built for the call),
/// [`probe::NoBefore`] allows. The chain calls it directly, through no function pointer.
#[doc(hidden)]
pub trait BeforeHook<I>: Send + Sync + 'static {
    /// Whether `I` has the hook.
    const PRESENT: bool;
    /// The hook's future on `shared` (`None`: the interceptor has per-invocation deps, and an
    /// instance is built from `resolver`).
    fn start<'a>(
        shared: Option<&'a I>,
        resolver: &'a Resolver<'a>,
        call: &'a ToolCallContext<'a>,
    ) -> BeforeFuture<'a>;
}

/// The `after_tool_call` of a concrete interceptor type (see [`BeforeHook`]).
#[doc(hidden)]
pub trait AfterHook<I>: Send + Sync + 'static {
    /// Whether `I` has the hook.
    const PRESENT: bool;
    /// The hook's future (see [`BeforeHook::start`]).
    fn start<'a>(
        shared: Option<&'a I>,
        resolver: &'a Resolver<'a>,
        call: ToolCallResultContext<'a>,
    ) -> AfterFuture<'a>;
}

/// The hooks of a concrete interceptor type, found by the macro (`B` and `A` are the probe's
/// tags).
#[doc(hidden)]
pub struct TypedInterceptor<I, B, A> {
    /// `Some` when the interceptor has no per-invocation deps: built once, shared.
    shared: Option<I>,
    hooks: PhantomData<fn() -> (B, A)>,
}

impl<I: ToolInterceptor, B: BeforeHook<I>, A: AfterHook<I>> TypedInterceptor<I, B, A> {
    #[doc(hidden)]
    pub fn build(services: &Services, _before: B, _after: A) -> Result<Built, DiError> {
        let shared = if crate::di::any_context(I::META.deps) {
            None
        } else {
            Some(I::construct(&Resolver::for_services(services))?)
        };
        let built: Arc<dyn ErasedInterceptor> = Arc::new(Self {
            shared,
            hooks: PhantomData,
        });
        Ok(Built::new(built))
    }
}

impl<I: ToolInterceptor, B: BeforeHook<I>, A: AfterHook<I>> ErasedInterceptor
    for TypedInterceptor<I, B, A>
{
    fn meta(&self) -> &'static InterceptorMeta {
        I::META
    }
    fn has_before(&self) -> bool {
        B::PRESENT
    }
    fn has_after(&self) -> bool {
        A::PRESENT
    }
    fn before<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: &'a ToolCallContext<'a>,
    ) -> BeforeFuture<'a> {
        B::start(self.shared.as_ref(), resolver, call)
    }
    fn after<'a>(
        &'a self,
        resolver: &'a Resolver<'a>,
        call: ToolCallResultContext<'a>,
    ) -> AfterFuture<'a> {
        A::start(self.shared.as_ref(), resolver, call)
    }
}

/// Autoref probes the macro uses to find which hook traits a type implements.
#[doc(hidden)]
pub mod probe {
    use super::*;
    use std::future::{Future, ready};
    use std::marker::PhantomData;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    pub struct Probe<T>(PhantomData<T>);
    impl<T> Probe<T> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Self(PhantomData)
        }
    }

    pin_project_lite::pin_project! {
        /// A hook's future, its `Err` as the chain reads it ([`HookError::Failed`]); a plain
        /// projection, cheaper than a generic `map` combinator.
        struct Failing<F> {
            #[pin]
            fut: F,
        }
    }

    impl<F: Future<Output = Result<T, InterceptorError>>, T> Future for Failing<F> {
        type Output = Result<T, HookError>;
        #[inline]
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            match self.project().fut.poll(cx) {
                Poll::Ready(result) => Poll::Ready(result.map_err(HookError::Failed)),
                Poll::Pending => Poll::Pending,
            }
        }
    }

    fn failing<F>(fut: F) -> Failing<F> {
        Failing { fut }
    }

    /// Tag: the type implements `BeforeToolCall`.
    #[derive(Clone, Copy)]
    pub struct HasBefore;
    /// Tag: the type does not implement `BeforeToolCall`.
    #[derive(Clone, Copy)]
    pub struct NoBefore;
    /// Tag: the type implements `AfterToolCall`.
    #[derive(Clone, Copy)]
    pub struct HasAfter;
    /// Tag: the type does not implement `AfterToolCall`.
    #[derive(Clone, Copy)]
    pub struct NoAfter;

    pub trait ViaBefore {
        fn before_tag(&self) -> HasBefore {
            HasBefore
        }
    }
    impl<I: BeforeToolCall> ViaBefore for &Probe<I> {}
    pub trait ViaNoBefore {
        fn before_tag(&self) -> NoBefore {
            NoBefore
        }
    }
    impl<I> ViaNoBefore for Probe<I> {}
    pub trait ViaAfter {
        fn after_tag(&self) -> HasAfter {
            HasAfter
        }
    }
    impl<I: AfterToolCall> ViaAfter for &Probe<I> {}
    pub trait ViaNoAfter {
        fn after_tag(&self) -> NoAfter {
            NoAfter
        }
    }
    impl<I> ViaNoAfter for Probe<I> {}

    impl<I: BeforeToolCall + ToolInterceptor> BeforeHook<I> for HasBefore {
        const PRESENT: bool = true;
        #[inline]
        fn start<'a>(
            shared: Option<&'a I>,
            resolver: &'a Resolver<'a>,
            call: &'a ToolCallContext<'a>,
        ) -> BeforeFuture<'a> {
            match shared {
                Some(i) => BeforeFuture::from_or_box(failing(i.before_tool_call(call))),
                None => {
                    match I::construct(resolver) {
                        Ok(i) => BeforeFuture::from_or_box(async move {
                            failing(i.before_tool_call(call)).await
                        }),
                        Err(error) => BeforeFuture::from(ready(Err(HookError::Dependency(error)))),
                    }
                }
            }
        }
    }
    impl<I: Send + Sync + 'static> BeforeHook<I> for NoBefore {
        const PRESENT: bool = false;
        fn start<'a>(
            _: Option<&'a I>,
            _: &'a Resolver<'a>,
            _: &'a ToolCallContext<'a>,
        ) -> BeforeFuture<'a> {
            BeforeFuture::from(ready(Ok(ToolCallDecision::Allow)))
        }
    }
    impl<I: AfterToolCall + ToolInterceptor> AfterHook<I> for HasAfter {
        const PRESENT: bool = true;
        #[inline]
        fn start<'a>(
            shared: Option<&'a I>,
            resolver: &'a Resolver<'a>,
            call: ToolCallResultContext<'a>,
        ) -> AfterFuture<'a> {
            match shared {
                Some(i) => AfterFuture::from_or_box(failing(i.after_tool_call(call))),
                None => {
                    match I::construct(resolver) {
                        Ok(i) => AfterFuture::from_or_box(async move {
                            failing(i.after_tool_call(call)).await
                        }),
                        Err(error) => AfterFuture::from(ready(Err(HookError::Dependency(error)))),
                    }
                }
            }
        }
    }
    impl<I: Send + Sync + 'static> AfterHook<I> for NoAfter {
        const PRESENT: bool = false;
        fn start<'a>(
            _: Option<&'a I>,
            _: &'a Resolver<'a>,
            call: ToolCallResultContext<'a>,
        ) -> AfterFuture<'a> {
            AfterFuture::from(ready(Ok(call.output)))
        }
    }

    /// Which hooks `I` implements, as constants: `Hooks::<I>::BEFORE` is `true` when
    /// `I: BeforeToolCall` (an inherent constant) and `false` otherwise (the constant of
    /// [`NoHooks`], which the path finds when the inherent one does not apply). The macro
    /// asserts `BEFORE || AFTER` in a constant, so a type with neither hook reads one error,
    /// `[tool-interceptor.missing-handler]`, that names no type of ours.
    pub struct Hooks<I>(PhantomData<I>);
    impl<I: BeforeToolCall> Hooks<I> {
        pub const BEFORE: bool = true;
    }
    impl<I: AfterToolCall> Hooks<I> {
        pub const AFTER: bool = true;
    }
    /// The `false` of [`Hooks`].
    pub trait NoHooks {
        const BEFORE: bool = false;
        const AFTER: bool = false;
    }
    impl<I> NoHooks for Hooks<I> {}
}
