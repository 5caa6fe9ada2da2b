//! Anthropic Messages wire format: request bodies, responses, the typed SSE events of a stream.
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::model::error::ModelError;
use crate::model::events::SseDecoder;
use crate::model::http::{WireError, truncate};
use crate::model::output::OUTPUT_TOOL;
use crate::model::types::{
    AssistantMessage, FinishReason, Message, ModelRequest, ModelResponse, ModelStreamEvent,
    ToolCallRequest, ToolChoice, Usage,
};

/// Builds the JSON body of `POST /v1/messages`. System messages become the `system` field;
/// tool results become `tool_result` blocks of a user turn (consecutive ones, and a user text
/// right after them, share one turn, as the API wants).
pub(crate) fn request_body(
    model: &str,
    max_tokens: u32,
    req: &ModelRequest,
    stream: bool,
) -> Value {
    let mut system = Vec::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, block: Value| match messages.last_mut() {
        Some((last, blocks)) if *last == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    };
    for message in &req.messages {
        match message {
            Message::System { content } => system.push(content.as_str()),
            Message::User { content } => push("user", json!({"type": "text", "text": content})),
            Message::Assistant(a) => {
                if let Some(text) = a.content.as_deref().filter(|t| !t.is_empty()) {
                    push("assistant", json!({"type": "text", "text": text}));
                }
                for call in &a.tool_calls {
                    push(
                        "assistant",
                        json!({"type": "tool_use", "id": call.id, "name": call.name,
                               "input": arguments_object(&call.arguments)}),
                    );
                }
            }
            Message::Tool {
                call_id,
                content,
                is_error,
            } => push(
                "user",
                json!({"type": "tool_result", "tool_use_id": call_id, "content": content,
                       "is_error": is_error}),
            ),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(max_tokens)),
    );
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages));
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let mut tool_choice = req.tool_choice.as_ref().map(|choice| match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    });
    if let Some(output) = &req.output {
        // The typed answer is a forced tool call: that tool alone, or any tool beside the
        // request's own (a tool call then, or the answer).
        if tool_choice.is_none() {
            tool_choice = Some(if tools.is_empty() {
                json!({"type": "tool", "name": OUTPUT_TOOL})
            } else {
                json!({"type": "any"})
            });
        }
        tools.push(json!({
            "name": OUTPUT_TOOL,
            "description": format!("Give your final answer ({}) with this tool.", output.name),
            "input_schema": output.schema,
        }));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = tool_choice {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// The answer to a request with an output: a call of [`OUTPUT_TOOL`] is the answer's text
/// (its input), no tool call; the other calls stay (the loop runs them, and asks again).
pub(crate) fn read_output(mut response: ModelResponse) -> ModelResponse {
    let Some(pos) = response
        .message
        .tool_calls
        .iter()
        .position(|c| c.name == OUTPUT_TOOL)
    else {
        return response;
    };
    let call = response.message.tool_calls.remove(pos);
    response.message.content = Some(call.arguments);
    if response.message.tool_calls.is_empty() {
        response.finish_reason = FinishReason::Stop;
    }
    response
}

/// A call's argument text as the object `tool_use.input` must be: `{}` for an empty text,
/// and the text kept under `_raw` when it is not a JSON object (the model sees what it sent).
fn arguments_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ "_raw": arguments }),
    }
}

/// A `stop_reason` as a [`FinishReason`].
fn finish_reason(stop_reason: &str) -> FinishReason {
    match stop_reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Input tokens, cached ones included.
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts.iter().any(Option::is_some).then(|| {
            parts
                .iter()
                .flatten()
                .fold(0u64, |a, b| a.saturating_add(*b))
        })
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

/// The text of `tool_use.input` as a call's argument text.
fn input_text(input: &Value) -> String {
    match input {
        Value::Null => "{}".to_owned(),
        v => v.to_string(),
    }
}

/// Parses the body of a successful non-streamed messages call.
pub(crate) fn parse_response(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let text = String::from_utf8_lossy(body);
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| ModelError::malformed(format!("{e}: {}", truncate(&text, 200))))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let error: WireError = serde_json::from_value(value["error"].clone())
            .map_err(|e| ModelError::malformed(format!("error body: {e}")))?;
        return Err(error.into_error());
    }
    let message: WireMessage = serde_json::from_value(value)
        .map_err(|e| ModelError::malformed(format!("messages body: {e}")))?;
    let mut out = AssistantMessage::default();
    for block in message.content {
        match block {
            WireBlock::Text { text } => out.content.get_or_insert_with(String::new).push_str(&text),
            WireBlock::ToolUse { id, name, input } => {
                out.tool_calls
                    .push(ToolCallRequest::new(id, name, input_text(&input)));
            }
            WireBlock::Other => {}
        }
    }
    let finish = match message.stop_reason.as_deref() {
        Some(reason) => finish_reason(reason),
        None if out.has_tool_calls() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    let usage = &message.usage;
    Ok(ModelResponse {
        message: out,
        finish_reason: finish,
        usage: Usage::new(usage.input().unwrap_or(0), usage.output_tokens.unwrap_or(0)),
    })
}

/// One event of a stream, by its `type` (the same as the SSE `event:` name).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        error: WireError,
    },
    /// `ping`, `content_block_stop` and event types added later.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    /// Thinking, signatures, citations: not part of the answer.
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// One `tool_use` block being streamed.
struct PartialCall {
    /// The block's index in the message.
    block: usize,
    id: String,
    name: String,
    /// `input_json_delta`s so far.
    arguments: String,
    /// The block start's `input`, used when no delta comes.
    initial: Value,
}

/// Turns the events of a streamed messages call into [`ModelStreamEvent`]s: `text_delta`s
/// into text, each `tool_use` block into a call (its `input_json_delta`s into argument
/// deltas), the usage of `message_start` and `message_delta` into one usage event, and
/// `message_stop` into the assembled response.
#[derive(Default)]
pub struct StreamDecoder {
    text: Option<String>,
    calls: Vec<PartialCall>,
    stop_reason: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    done: bool,
}

impl StreamDecoder {
    fn call_of(&mut self, block: usize) -> Option<(usize, &mut PartialCall)> {
        self.calls
            .iter_mut()
            .enumerate()
            .find(|(_, c)| c.block == block)
    }

    fn response(&self) -> ModelResponse {
        let tool_calls: Vec<ToolCallRequest> = self
            .calls
            .iter()
            .map(|c| {
                let arguments = if c.arguments.is_empty() {
                    input_text(&c.initial)
                } else {
                    c.arguments.clone()
                };
                ToolCallRequest::new(c.id.clone(), c.name.clone(), arguments)
            })
            .collect();
        let finish = match self.stop_reason.as_deref() {
            Some(reason) => finish_reason(reason),
            None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        ModelResponse {
            message: AssistantMessage {
                content: self.text.clone(),
                tool_calls,
            },
            finish_reason: finish,
            usage: self.usage(),
        }
    }

    fn usage(&self) -> Usage {
        Usage::new(
            self.input_tokens.unwrap_or(0),
            self.output_tokens.unwrap_or(0),
        )
    }
}

impl SseDecoder for StreamDecoder {
    const END_MARKER: &'static str = "message_stop";

    fn on_event(&mut self, data: &str, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError> {
        if self.done || data.trim().is_empty() {
            return Ok(());
        }
        let event: StreamEvent = serde_json::from_str(data).map_err(|e| {
            ModelError::malformed(format!("stream event: {e}: {}", truncate(data, 200)))
        })?;
        match event {
            StreamEvent::MessageStart { message } => {
                self.input_tokens = message.usage.input();
                self.output_tokens = message.usage.output_tokens;
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block: WireBlock::ToolUse { id, name, input },
            } => {
                out.push(ModelStreamEvent::ToolCallStarted {
                    index: self.calls.len(),
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.push(PartialCall {
                    block: index,
                    id,
                    name,
                    arguments: String::new(),
                    initial: input,
                });
            }
            StreamEvent::ContentBlockStart { .. } => {}
            StreamEvent::ContentBlockDelta {
                delta: Delta::Text { text },
                ..
            } => {
                self.text.get_or_insert_with(String::new).push_str(&text);
                out.push(ModelStreamEvent::TextDelta { delta: text });
            }
            StreamEvent::ContentBlockDelta {
                index,
                delta: Delta::InputJson { partial_json },
            } => {
                let Some((position, call)) = self.call_of(index) else {
                    return Err(ModelError::malformed(format!(
                        "input_json_delta for block {index}, which is not a tool_use block"
                    )));
                };
                call.arguments.push_str(&partial_json);
                out.push(ModelStreamEvent::ToolCallArgumentsDelta {
                    index: position,
                    delta: partial_json,
                });
            }
            StreamEvent::ContentBlockDelta { .. } => {}
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    // Cumulative counts: the last one is the call's.
                    self.output_tokens = usage.output_tokens.or(self.output_tokens);
                    self.input_tokens = usage.input().or(self.input_tokens);
                }
            }
            StreamEvent::MessageStop => {
                self.done = true;
                let usage = self.usage();
                if usage != Usage::default() {
                    out.push(ModelStreamEvent::Usage(usage));
                }
                out.push(ModelStreamEvent::Finished(self.response()));
            }
            StreamEvent::Error { error } => {
                return Err(error.into_error());
            }
            StreamEvent::Other => {}
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
