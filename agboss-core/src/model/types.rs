//! Provider-neutral message, tool and response types.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::output::OutputFormat;

/// The author of a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions from the application.
    System,
    /// The end user.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, fed back to the model.
    Tool,
}

impl Role {
    /// The lower-case wire name (`"system"`, `"user"`, `"assistant"`, `"tool"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool call requested by the model.
///
/// `arguments` is the raw JSON text exactly as the model produced it. It is **not**
/// validated here: models do emit malformed JSON, and deciding what to do about it is
/// the runtime's job (see [`ToolCallRequest::parse_arguments`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// Provider-assigned call id; the matching [`Message::Tool`] must echo it.
    pub id: String,
    /// Name of the tool to call.
    pub name: String,
    /// Raw JSON text of the arguments, possibly malformed or empty.
    pub arguments: String,
}

impl ToolCallRequest {
    /// Creates a tool call request from its parts.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// Parses [`arguments`](Self::arguments) as JSON into `T`.
    ///
    /// An empty or whitespace-only argument string is treated as `{}`, which is what
    /// providers mean when a tool takes no parameters.
    pub fn parse_arguments<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            serde_json::from_str("{}")
        } else {
            serde_json::from_str(&self.arguments)
        }
    }
}

/// The content of an assistant turn: optional text and zero or more tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text the model produced, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool calls the model requested, in the order the model listed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
}

impl AssistantMessage {
    /// An assistant message with text only.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        }
    }

    /// An assistant message with tool calls only.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCallRequest>) -> Self {
        Self {
            content: None,
            tool_calls: calls.into_iter().collect(),
        }
    }

    /// `true` when the model asked for at least one tool call.
    pub fn has_tool_calls(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// One message of a conversation.
///
/// Serialized with an internal `role` tag, e.g.
/// `{"role":"tool","call_id":"call_1","content":"42","is_error":false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// System instructions.
    System {
        /// The instructions.
        content: String,
    },
    /// A user message.
    User {
        /// The text.
        content: String,
    },
    /// A model turn: text and/or tool calls.
    Assistant(AssistantMessage),
    /// The observation returned by a tool for one call.
    Tool {
        /// Id of the [`ToolCallRequest`] this answers.
        call_id: String,
        /// The observation, as text shown to the model.
        content: String,
        /// `true` when the tool call failed (denied, invalid arguments, tool error).
        ///
        /// OpenAI's wire format has no such flag, so providers that lack one send
        /// `content` unchanged: phrase error observations so the model can tell.
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::Assistant(AssistantMessage::text(content))
    }

    /// A successful tool observation for `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed tool observation for `call_id` (`is_error: true`).
    pub fn tool_error(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error: true,
        }
    }

    /// The author of this message.
    pub fn role(&self) -> Role {
        match self {
            Message::System { .. } => Role::System,
            Message::User { .. } => Role::User,
            Message::Assistant(_) => Role::Assistant,
            Message::Tool { .. } => Role::Tool,
        }
    }

    /// The text of the message, if it has any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content } | Message::User { content } => Some(content),
            Message::Assistant(a) => a.content.as_deref(),
            Message::Tool { content, .. } => Some(content),
        }
    }
}

impl From<AssistantMessage> for Message {
    fn from(value: AssistantMessage) -> Self {
        Message::Assistant(value)
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Tool name, as the model must spell it in a call.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

impl ToolDefinition {
    /// Creates a tool definition.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// How the model should choose tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (the provider default when tools are given).
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call the named tool.
    Tool(String),
}

/// A request to a [`ChatModel`](super::ChatModel).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools offered to the model; empty means none.
    #[serde(default)]
    pub tools: Vec<Arc<ToolDefinition>>,
    /// Sampling temperature; `None` uses the provider default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Upper bound of generated tokens; `None` uses the provider default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Tool choice; `None` uses the provider default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// The shape of the final answer (a typed output); `None` for free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Arc<OutputFormat>>,
}

impl ModelRequest {
    /// A request with these messages, no tools and provider defaults.
    pub fn new(messages: impl IntoIterator<Item = Message>) -> Self {
        Self {
            messages: messages.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Sets the offered tools.
    pub fn with_tools<T: Into<Arc<ToolDefinition>>>(
        mut self,
        tools: impl IntoIterator<Item = T>,
    ) -> Self {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the maximum number of generated tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Asks for a final answer of this [`OutputFormat`].
    pub fn with_output(mut self, output: impl Into<Arc<OutputFormat>>) -> Self {
        self.output = Some(output.into());
        self
    }

    /// The last tool observation in the conversation, if any.
    pub fn last_tool_result(&self) -> Option<&Message> {
        self.messages
            .iter()
            .rev()
            .find(|m| matches!(m, Message::Tool { .. }))
    }
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum FinishReason {
    /// Natural end of the answer.
    Stop,
    /// The model wants tool calls executed.
    ToolCalls,
    /// The token limit was hit.
    Length,
    /// The provider filtered the content.
    ContentFilter,
    /// Anything else the provider reported (kept verbatim).
    Other(String),
}

impl FinishReason {
    /// The wire spelling (`"stop"`, `"tool_calls"`, …).
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
        }
    }
}

impl From<&str> for FinishReason {
    fn from(value: &str) -> Self {
        match value {
            "stop" => FinishReason::Stop,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "length" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

impl From<String> for FinishReason {
    fn from(value: String) -> Self {
        FinishReason::from(value.as_str())
    }
}

impl From<FinishReason> for String {
    fn from(value: FinishReason) -> Self {
        value.as_str().to_owned()
    }
}

/// Token accounting of one model call. All zero when the provider did not report it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Sum as reported by the provider.
    pub total_tokens: u64,
}

impl Usage {
    /// Usage from prompt and completion counts; `total_tokens` is their sum.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
        }
    }
}

/// Adds up usage, saturating: counts a hostile or broken provider reports can never overflow
/// (no panic in debug builds, no silent wrap to 0 in release).
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(rhs.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(rhs.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(rhs.total_tokens);
    }
}

/// The answer of a model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The assistant turn: text and/or tool calls.
    pub message: AssistantMessage,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Token accounting (zeros when not reported).
    #[serde(default)]
    pub usage: Usage,
}

impl ModelResponse {
    /// A text-only response with `finish_reason: stop` and zero usage.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            message: AssistantMessage::text(content),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }
    }

    /// A tool-call response with `finish_reason: tool_calls` and zero usage.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCallRequest>) -> Self {
        Self {
            message: AssistantMessage::tool_calls(calls),
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
        }
    }

    /// Replaces the usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }
}

/// One event of a streamed model call.
///
/// A well-formed stream emits text and tool-call events in the order the provider sent
/// them, at most one [`Usage`](ModelStreamEvent::Usage) event, and ends with exactly one
/// [`Finished`](ModelStreamEvent::Finished) carrying the assembled response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelStreamEvent {
    /// A piece of assistant text.
    TextDelta {
        /// The new text.
        delta: String,
    },
    /// A new tool call begins; `index` identifies it in later argument deltas.
    ToolCallStarted {
        /// Position of the call in the assistant message.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A piece of the raw JSON arguments of call `index`.
    ToolCallArgumentsDelta {
        /// Position of the call in the assistant message.
        index: usize,
        /// The new argument text.
        delta: String,
    },
    /// Token accounting, when the provider reports it.
    Usage(Usage),
    /// The end of the stream, with the fully assembled response.
    Finished(ModelResponse),
}
