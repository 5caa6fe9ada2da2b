//! The chat-model contract: [`ChatModel`] (native `async`, for implementors), its
//! dyn-compatible twin [`DynChatModel`], and the impls that let `Arc`, `Box` and `&` of a
//! model be a model again.

use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::Arc;

use super::error::ModelError;
use super::stream::{ModelStream, stream_from_response};
use super::types::{ModelRequest, ModelResponse};

/// A boxed, `Send` future, as returned by [`DynChatModel`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A chat model shared behind dynamic dispatch, as the runtime stores it.
pub type SharedChatModel = Arc<dyn DynChatModel>;

/// A chat model: takes a conversation and answers with text and/or tool calls.
///
/// Implement it with plain `async fn`s. The runtime stores models as
/// [`SharedChatModel`] (`Arc<dyn DynChatModel>`); every `ChatModel` is a
/// [`DynChatModel`] through a blanket impl, and `Arc<dyn DynChatModel>` is a
/// `ChatModel` again.
pub trait ChatModel: Send + Sync {
    /// Runs one model call and returns the whole answer.
    fn complete(
        &self,
        req: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;

    /// Runs one model call and streams the answer.
    ///
    /// The default implementation awaits [`complete`](Self::complete) and replays the
    /// response as events (see [`stream_from_response`]).
    fn stream(
        &self,
        req: &ModelRequest,
    ) -> impl Future<Output = Result<ModelStream, ModelError>> + Send {
        async move {
            let response = self.complete(req).await?;
            Ok(stream_from_response(response, 0))
        }
    }

    /// True when [`stream`](Self::stream) is the model's own (a provider that streams its
    /// answer, a test model that cuts it into deltas); false (the default) when it is the
    /// default replay of [`complete`](Self::complete).
    ///
    /// The agent loop reads a model that streams through `stream`; one that does not, through
    /// `complete`, its text then being one delta, exactly what the default `stream` would give,
    /// without building and replaying the events. Override it together with `stream`.
    ///
    /// ```
    /// use agboss_core::model::{ChatModel, ModelError, ModelRequest, ModelResponse, ModelStream, stream_from_response};
    /// struct Chunky;
    /// impl ChatModel for Chunky {
    ///     async fn complete(&self, _req: &ModelRequest) -> Result<ModelResponse, ModelError> {
    ///         Ok(ModelResponse::text("hello there"))
    ///     }
    ///     async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
    ///         Ok(stream_from_response(self.complete(req).await?, 3))
    ///     }
    ///     fn streams(&self) -> bool {
    ///         true
    ///     }
    /// }
    /// assert!(Chunky.streams());
    /// ```
    fn streams(&self) -> bool {
        false
    }

    /// The model name requests ask for (`gen_ai.request.model` on `chat` spans); empty when
    /// unknown (the default).
    fn model_name(&self) -> &str {
        ""
    }

    /// The provider, as the OpenTelemetry GenAI conventions name it (`gen_ai.provider.name`:
    /// `"openai"`, `"anthropic"`, …); empty when unknown (the default).
    fn provider_name(&self) -> &'static str {
        ""
    }

    /// True when the model honours a request's [`output`](ModelRequest::output) itself (a
    /// structured-output mode: OpenAI's `response_format`, Anthropic's forced tool); false (the
    /// default) when it ignores it: the agent loop then tells the model the schema in a system
    /// message ([`OutputFormat::prompt`](super::OutputFormat::prompt)). Either way the answer
    /// is decoded and validated before anyone sees it.
    ///
    /// ```
    /// use agboss_core::model::{ChatModel, ModelError, ModelRequest, ModelResponse};
    /// struct Plain;
    /// impl ChatModel for Plain {
    ///     async fn complete(&self, _req: &ModelRequest) -> Result<ModelResponse, ModelError> {
    ///         Ok(ModelResponse::text(r#"{"ok":true}"#))
    ///     }
    /// }
    /// assert!(!Plain.structured_output());
    /// ```
    fn structured_output(&self) -> bool {
        false
    }
}

/// The dyn-compatible twin of [`ChatModel`], with boxed futures.
///
/// Do not implement it directly: implement [`ChatModel`] and get this one for free.
pub trait DynChatModel: Send + Sync {
    /// Boxed [`ChatModel::complete`].
    fn complete_boxed<'a>(
        &'a self,
        req: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Boxed [`ChatModel::stream`].
    fn stream_boxed<'a>(
        &'a self,
        req: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>>;

    /// [`ChatModel::streams`].
    fn dyn_streams(&self) -> bool;

    /// [`ChatModel::model_name`].
    fn dyn_model_name(&self) -> &str;

    /// [`ChatModel::provider_name`].
    fn dyn_provider_name(&self) -> &'static str;

    /// [`ChatModel::structured_output`].
    fn dyn_structured_output(&self) -> bool;
}

impl<M: ChatModel> DynChatModel for M {
    fn complete_boxed<'a>(
        &'a self,
        req: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.complete(req))
    }

    fn stream_boxed<'a>(
        &'a self,
        req: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelStream, ModelError>> {
        Box::pin(self.stream(req))
    }

    fn dyn_streams(&self) -> bool {
        self.streams()
    }

    fn dyn_model_name(&self) -> &str {
        self.model_name()
    }

    fn dyn_provider_name(&self) -> &'static str {
        self.provider_name()
    }

    fn dyn_structured_output(&self) -> bool {
        self.structured_output()
    }
}

/// A model behind dynamic dispatch is a model again (and so `Arc<dyn DynChatModel>`,
/// `Box<dyn DynChatModel>` and `&dyn DynChatModel`, through the pointer impl below).
impl ChatModel for dyn DynChatModel {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.complete_boxed(req).await
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        self.stream_boxed(req).await
    }

    fn streams(&self) -> bool {
        self.dyn_streams()
    }

    fn model_name(&self) -> &str {
        self.dyn_model_name()
    }

    fn provider_name(&self) -> &'static str {
        self.dyn_provider_name()
    }

    fn structured_output(&self) -> bool {
        self.dyn_structured_output()
    }
}

/// The pointers to a model that are a model: `Arc`, `Box` and `&` (sealed: implemented here
/// only, so the forwarding impl below is written once).
pub trait ModelPointer: Deref + Send + Sync {}

impl<M: ?Sized + Send + Sync> ModelPointer for Arc<M> {}
impl<M: ?Sized + Send + Sync> ModelPointer for Box<M> {}
impl<M: ?Sized + Sync> ModelPointer for &M {}

impl<P> ChatModel for P
where
    P: ModelPointer,
    P::Target: ChatModel,
{
    fn complete(
        &self,
        req: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).complete(req)
    }

    fn stream(
        &self,
        req: &ModelRequest,
    ) -> impl Future<Output = Result<ModelStream, ModelError>> + Send {
        (**self).stream(req)
    }

    fn streams(&self) -> bool {
        (**self).streams()
    }

    fn model_name(&self) -> &str {
        (**self).model_name()
    }

    fn provider_name(&self) -> &'static str {
        (**self).provider_name()
    }

    fn structured_output(&self) -> bool {
        (**self).structured_output()
    }
}
