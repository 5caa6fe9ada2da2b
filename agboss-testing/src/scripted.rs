//! [`ScriptedModel`]: a [`ChatModel`] that plays scripted turns and records what it saw.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Mutex, MutexGuard};

use agboss_core::dto::Dto;
use agboss_core::model::{
    AssistantMessage, ChatModel, FinishReason, ModelError, ModelRequest, ModelResponse,
    ModelStream, ToolCallRequest, Usage, stream_from_response,
};

/// A tool call in a scripted [`Turn`].
///
/// Without an explicit id it gets `call_N`, numbered from 1 across the whole script in
/// the order the calls are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

impl ScriptedToolCall {
    /// A call of `name` with these JSON arguments.
    pub fn new(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    /// A call whose arguments are this raw text, e.g. malformed JSON.
    pub fn raw(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Sets the call id instead of an auto-generated one.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

impl<N: Into<String>> From<(N, serde_json::Value)> for ScriptedToolCall {
    fn from((name, arguments): (N, serde_json::Value)) -> Self {
        ScriptedToolCall::new(name, arguments)
    }
}

type TurnFn = Box<dyn Fn(&ModelRequest) -> Turn + Send + Sync>;

enum TurnKind {
    Reply {
        text: Option<String>,
        calls: Vec<ScriptedToolCall>,
        usage: Usage,
        finish_reason: Option<FinishReason>,
    },
    Response(ModelResponse),
    Error(ModelError),
    Dynamic(TurnFn),
}

/// One scripted answer of a [`ScriptedModel`].
pub struct Turn(TurnKind);

impl fmt::Debug for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            TurnKind::Reply {
                text,
                calls,
                usage,
                finish_reason,
            } => f
                .debug_struct("Turn::Reply")
                .field("text", text)
                .field("calls", calls)
                .field("usage", usage)
                .field("finish_reason", finish_reason)
                .finish(),
            TurnKind::Response(r) => f.debug_tuple("Turn::Response").field(r).finish(),
            TurnKind::Error(e) => f.debug_tuple("Turn::Error").field(e).finish(),
            TurnKind::Dynamic(_) => f.write_str("Turn::Dynamic(..)"),
        }
    }
}

impl Turn {
    fn reply(text: Option<String>, calls: Vec<ScriptedToolCall>) -> Self {
        Turn(TurnKind::Reply {
            text,
            calls,
            usage: Usage::default(),
            finish_reason: None,
        })
    }

    /// A final text answer (`finish_reason: stop`).
    pub fn text(text: impl Into<String>) -> Self {
        Self::reply(Some(text.into()), Vec::new())
    }

    /// One tool call with an auto-generated id (`finish_reason: tool_calls`).
    pub fn tool_call(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self::reply(None, vec![ScriptedToolCall::new(name, arguments)])
    }

    /// One tool call with an explicit id.
    pub fn tool_call_with_id(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self::reply(
            None,
            vec![ScriptedToolCall::new(name, arguments).with_id(id)],
        )
    }

    /// One tool call whose arguments are this raw text (e.g. malformed JSON).
    pub fn raw_tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::reply(None, vec![ScriptedToolCall::raw(name, arguments)])
    }

    /// Several tool calls in one assistant turn, e.g.
    /// `Turn::tool_calls([("a", json!({})), ("b", json!({"x": 1}))])`.
    pub fn tool_calls<C: Into<ScriptedToolCall>>(calls: impl IntoIterator<Item = C>) -> Self {
        Self::reply(None, calls.into_iter().map(Into::into).collect())
    }

    /// Exactly this response; its tool-call ids are used as given.
    pub fn response(response: ModelResponse) -> Self {
        Turn(TurnKind::Response(response))
    }

    /// The model call fails with this error.
    pub fn error(error: ModelError) -> Self {
        Turn(TurnKind::Error(error))
    }

    /// A turn computed from the request when it is served, e.g. to echo the last tool
    /// observation. The closure may return any turn, another closure included.
    pub fn from_fn(f: impl Fn(&ModelRequest) -> Turn + Send + Sync + 'static) -> Self {
        Turn(TurnKind::Dynamic(Box::new(f)))
    }

    /// The typed answer `value` of an agent with `output = T`: its JSON as the answer's text,
    /// served only to a request that asks for a `T` ([`ModelRequest::output`] named
    /// `T::DTO_NAME`); any other request gets a [`ModelError`] (the script expected a typed
    /// answer there). The value is not validated: script an invalid one to test corrections.
    ///
    /// ```
    /// use agboss_core::prelude::*;
    /// use agboss_testing::scripted::{ScriptedModel, Turn};
    ///
    /// #[derive(Dto, Debug, PartialEq)]
    /// pub struct VerdictDto {
    ///     #[boolean(prompt = "Whether it is granted")]
    ///     pub granted: bool,
    /// }
    ///
    /// #[agent(name = "verdict-agent", description = "Decides", output = VerdictDto)]
    /// pub struct VerdictAgent;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([Turn::output(&VerdictDto { granted: true })]);
    /// let app = App::builder().agent::<VerdictAgent>().model(model).build().unwrap();
    /// let out = app.execute(Target::agent::<VerdictAgent>(), "Refund?", RunContext::new()).await.unwrap();
    /// assert_eq!(out.value::<VerdictDto>().unwrap(), VerdictDto { granted: true });
    /// # });
    /// ```
    pub fn output<T: Dto>(value: &T) -> Self {
        let json = serde_json::to_string(value).unwrap_or_default();
        Self::from_fn(move |req| match &req.output {
            Some(format) if format.name == T::DTO_NAME => Turn::text(json.clone()),
            other => Turn::error(ModelError::other(format!(
                "the script has a typed answer ({}) here, but the request asks for {}",
                T::DTO_NAME,
                other
                    .as_ref()
                    .map_or("free text".to_string(), |f| f.name.clone())
            ))),
        })
    }

    /// Adds assistant text to a text or tool-call turn (no effect on other turns).
    pub fn with_text(mut self, new_text: impl Into<String>) -> Self {
        if let TurnKind::Reply { text, .. } = &mut self.0 {
            *text = Some(new_text.into());
        }
        self
    }

    /// Sets the reported usage of a text or tool-call turn (zeros by default).
    pub fn with_usage(mut self, new_usage: Usage) -> Self {
        if let TurnKind::Reply { usage, .. } = &mut self.0 {
            *usage = new_usage;
        }
        self
    }

    /// Overrides the finish reason of a text or tool-call turn.
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        if let TurnKind::Reply { finish_reason, .. } = &mut self.0 {
            *finish_reason = Some(reason);
        }
        self
    }
}

impl From<ModelResponse> for Turn {
    fn from(value: ModelResponse) -> Self {
        Turn::response(value)
    }
}

struct State {
    turns: VecDeque<Turn>,
    requests: Vec<ModelRequest>,
    served: usize,
    next_call_id: usize,
}

/// A [`ChatModel`] that answers with scripted [`Turn`]s, in order, and records every
/// [`ModelRequest`] it receives.
///
/// Running out of turns fails the call with [`ModelError::ScriptExhausted`].
/// [`stream`](ChatModel::stream) emits the same answer as deltas of a few characters.
///
/// ```
/// use agboss_core::model::{ChatModel, Message, ModelRequest};
/// use agboss_testing::scripted::{ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::tool_call("get-order-tool", json!({"order_id": 7})),
///     Turn::text("Your order has shipped."),
/// ]);
/// let first = model.complete(&ModelRequest::new([Message::user("Where is order 7?")])).await.unwrap();
/// assert_eq!(first.message.tool_calls[0].id, "call_1");
/// assert_eq!(first.message.tool_calls[0].arguments, r#"{"order_id":7}"#);
/// let second = model.complete(&ModelRequest::new([Message::tool_result("call_1", "shipped")])).await.unwrap();
/// assert_eq!(second.message.content.as_deref(), Some("Your order has shipped."));
/// assert_eq!(model.requests().len(), 2);
/// # });
/// ```
pub struct ScriptedModel {
    state: Mutex<State>,
    stream_chunk_chars: usize,
    hang_when_exhausted: bool,
    structured_output: bool,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ScriptedModel")
            .field("remaining", &state.turns.len())
            .field("served", &state.served)
            .field("requests", &state.requests.len())
            .finish()
    }
}

impl Default for ScriptedModel {
    fn default() -> Self {
        Self::new([])
    }
}

impl ScriptedModel {
    /// A model that plays `turns` in order.
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self {
            state: Mutex::new(State {
                turns: turns.into_iter().collect(),
                requests: Vec::new(),
                served: 0,
                next_call_id: 1,
            }),
            stream_chunk_chars: 4,
            hang_when_exhausted: false,
            structured_output: false,
        }
    }

    /// Once every turn was played, a call never answers (instead of failing with
    /// `ScriptExhausted`): a model that stalls, to stop a run at a known point (a crash test
    /// kills or drops the run there).
    pub fn hang_when_exhausted(mut self) -> Self {
        self.hang_when_exhausted = true;
        self
    }

    /// Says it honours a request's [`output`](ModelRequest::output) itself, like a provider
    /// with a structured-output mode: the agent loop then sends no schema prompt (default:
    /// it does not, and the loop adds the schema as a system message).
    pub fn with_structured_output(mut self) -> Self {
        self.structured_output = true;
        self
    }

    /// Sets the size of streamed text/argument deltas, in characters (default 4; `0`
    /// emits each text and each argument string as one delta).
    pub fn with_stream_chunk_chars(mut self, chars: usize) -> Self {
        self.stream_chunk_chars = chars;
        self
    }

    /// Appends a turn to the script.
    pub fn push(&self, turn: Turn) {
        self.lock().turns.push_back(turn);
    }

    /// Clones of every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock().requests.clone()
    }

    /// A clone of the last request received.
    pub fn last_request(&self) -> Option<ModelRequest> {
        self.lock().requests.last().cloned()
    }

    /// Number of requests received so far (served or not).
    pub fn request_count(&self) -> usize {
        self.lock().requests.len()
    }

    /// Number of turns not played yet.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    /// `true` when every scripted turn was played.
    pub fn is_exhausted(&self) -> bool {
        self.remaining() == 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock must not hide the script from the
        // test's own assertions.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `req`, plays the next turn.
    fn serve(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut turn = {
            let mut state = self.lock();
            state.requests.push(req.clone());
            match state.turns.pop_front() {
                Some(t) => {
                    state.served += 1;
                    t
                }
                None => {
                    return Err(ModelError::ScriptExhausted {
                        served: state.served,
                    });
                }
            }
        };
        // Closures run without the lock held, so they may inspect the model.
        while let TurnKind::Dynamic(f) = &turn.0 {
            turn = f(req);
        }
        match turn.0 {
            TurnKind::Dynamic(_) => unreachable!("resolved above"),
            TurnKind::Error(e) => Err(e),
            TurnKind::Response(r) => Ok(r),
            TurnKind::Reply {
                text,
                calls,
                usage,
                finish_reason,
            } => {
                let tool_calls: Vec<ToolCallRequest> = {
                    let mut state = self.lock();
                    calls
                        .into_iter()
                        .map(|c| {
                            let id = c.id.unwrap_or_else(|| {
                                let id = format!("call_{}", state.next_call_id);
                                state.next_call_id += 1;
                                id
                            });
                            ToolCallRequest::new(id, c.name, c.arguments)
                        })
                        .collect()
                };
                let finish_reason = finish_reason.unwrap_or(if tool_calls.is_empty() {
                    FinishReason::Stop
                } else {
                    FinishReason::ToolCalls
                });
                Ok(ModelResponse {
                    message: AssistantMessage {
                        content: text,
                        tool_calls,
                    },
                    finish_reason,
                    usage,
                })
            }
        }
    }
}

impl ScriptedModel {
    async fn hang_if_exhausted(&self, req: &ModelRequest) {
        if self.hang_when_exhausted && self.is_exhausted() {
            self.lock().requests.push(req.clone());
            std::future::pending::<()>().await;
        }
    }
}

impl ChatModel for ScriptedModel {
    /// `"scripted"` (the `gen_ai.request.model` of its `chat` spans).
    fn model_name(&self) -> &str {
        "scripted"
    }

    /// `"agboss.scripted"`.
    fn provider_name(&self) -> &'static str {
        "agboss.scripted"
    }

    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.hang_if_exhausted(req).await;
        self.serve(req)
    }

    /// See [`with_structured_output`](Self::with_structured_output).
    fn structured_output(&self) -> bool {
        self.structured_output
    }

    /// True when it cuts its answers into deltas (`stream_chunk_chars` above 0); otherwise its
    /// stream is the default replay of `complete`.
    fn streams(&self) -> bool {
        self.stream_chunk_chars > 0
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelStream, ModelError> {
        self.hang_if_exhausted(req).await;
        let response = self.serve(req)?;
        Ok(stream_from_response(response, self.stream_chunk_chars))
    }
}
