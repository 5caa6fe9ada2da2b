//! OpenAI Chat Completions wire format: request bodies, responses, stream chunks.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::error::ModelError;
use crate::model::events::SseDecoder;
use crate::model::http::{WireError, parse_error_body, truncate};
use crate::model::types::{
    AssistantMessage, FinishReason, Message, ModelRequest, ModelResponse, ModelStreamEvent,
    ToolCallRequest, ToolChoice, Usage,
};

/// Builds the JSON body of `POST /chat/completions`; with `strict`, every tool is sent with
/// `"strict": true` and the strict variant of its schema.
pub(crate) fn request_body(model: &str, req: &ModelRequest, stream: bool, strict: bool) -> Value {
    let messages: Vec<Value> = req.messages.iter().map(message_to_wire).collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
    });
    let obj = body.as_object_mut().expect("json! object");
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut function = json!({
                    "name": t.name,
                    "description": t.description,
                });
                if strict {
                    function["parameters"] = crate::dto::strict_schema(t.parameters.clone());
                    function["strict"] = Value::Bool(true);
                } else {
                    function["parameters"] = t.parameters.clone();
                }
                json!({"type": "function", "function": function})
            })
            .collect();
        obj.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &req.tool_choice {
        let v = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        obj.insert("tool_choice".into(), v);
    }
    if let Some(output) = &req.output {
        // Structured outputs: the answer is one object of the strict schema.
        obj.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": output.name,
                "schema": crate::dto::strict_schema(output.schema.clone()),
                "strict": true,
            }}),
        );
    }
    if let Some(t) = req.temperature {
        obj.insert("temperature".into(), json!(t));
    }
    if let Some(m) = req.max_tokens {
        obj.insert("max_tokens".into(), json!(m));
    }
    if stream {
        obj.insert("stream".into(), json!(true));
        obj.insert("stream_options".into(), json!({"include_usage": true}));
    }
    body
}

fn message_to_wire(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant(a) => {
            let mut v = json!({"role": "assistant"});
            let obj = v.as_object_mut().expect("json! object");
            match &a.content {
                Some(text) => {
                    obj.insert("content".into(), json!(text));
                }
                None => {
                    obj.insert("content".into(), Value::Null);
                }
            }
            if !a.tool_calls.is_empty() {
                let calls: Vec<Value> = a
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                obj.insert("tool_calls".into(), Value::Array(calls));
            }
            v
        }
        Message::Tool {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
    }
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u
                .total_tokens
                .unwrap_or(u.prompt_tokens.saturating_add(u.completion_tokens)),
        }
    }
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireAssistant {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireAssistant,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// Parses the body of a successful non-streamed chat completion.
pub(crate) fn parse_response(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let text = String::from_utf8_lossy(body);
    let parsed: WireResponse = match serde_json::from_slice(body) {
        Ok(p) => p,
        Err(e) => {
            if let Some((message, error_type)) = parse_error_body(&text) {
                return Err(ModelError::provider(message, error_type));
            }
            return Err(ModelError::malformed(format!(
                "invalid chat completion JSON ({e}); body starts with: {:?}",
                truncate(&text, 200)
            )));
        }
    };
    let choice = parsed
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ModelError::malformed("chat completion has no choices"))?;
    let tool_calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let name = c.function.name.ok_or_else(|| {
                ModelError::malformed(format!("tool call #{i} has no function name"))
            })?;
            Ok(ToolCallRequest {
                id: c.id.unwrap_or_else(|| format!("call_{i}")),
                name,
                arguments: c.function.arguments.unwrap_or_default(),
            })
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    let finish_reason = match choice.finish_reason {
        Some(r) => FinishReason::from(r),
        None if !tool_calls.is_empty() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    Ok(ModelResponse {
        message: AssistantMessage {
            content: choice.message.content.or(choice.message.refusal),
            tool_calls,
        },
        finish_reason,
        usage: parsed.usage.map(Usage::from).unwrap_or_default(),
    })
}

// ---------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------

#[derive(Deserialize)]
struct ChunkToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ChunkToolCall>>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    delta: Option<ChunkDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    started: bool,
    /// Argument text received before the call could be announced.
    pending_args: String,
}

/// Turns the `data` of the SSE events of a streamed chat completion (parsed by
/// `eventsource-stream`) into [`ModelStreamEvent`]s.
#[derive(Default)]
pub struct StreamDecoder {
    text: String,
    has_text: bool,
    /// Calls by provider index, in order of first appearance.
    calls: Vec<(usize, PartialCall)>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
}

impl StreamDecoder {
    fn dispatch(&mut self, data: &str, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError> {
        if data.is_empty() {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            self.emit_unstarted(out)?;
            out.push(ModelStreamEvent::Finished(self.response()));
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ModelError::malformed(format!(
                "invalid stream chunk JSON ({e}): {:?}",
                truncate(data, 200)
            ))
        })?;
        if let Some(err) = chunk.error {
            return Err(err.into_error());
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.or(delta.refusal).filter(|t| !t.is_empty()) {
                    self.has_text = true;
                    self.text.push_str(&text);
                    out.push(ModelStreamEvent::TextDelta { delta: text });
                }
                for (pos, tc) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                    self.tool_call_delta(tc, pos, out);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(FinishReason::from(reason));
            }
        }
        if let Some(usage) = chunk.usage {
            let usage = Usage::from(usage);
            self.usage = Some(usage);
            out.push(ModelStreamEvent::Usage(usage));
        }
        Ok(())
    }

    fn tool_call_delta(&mut self, tc: ChunkToolCall, pos: usize, out: &mut Vec<ModelStreamEvent>) {
        // Providers that omit `index` send one complete call per entry.
        let key = tc.index.unwrap_or(self.calls.len() + pos);
        let slot = match self.calls.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.calls.push((key, PartialCall::default()));
                self.calls.len() - 1
            }
        };
        let (name_part, args_part) = match tc.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let call = &mut self.calls[slot].1;
        if let Some(id) = tc.id.filter(|s| !s.is_empty())
            && !call.started
        {
            call.id.push_str(&id);
        }
        // A name may come in several fragments: every one is kept, also one that arrives late.
        if let Some(name) = name_part.filter(|s| !s.is_empty()) {
            call.name.push_str(&name);
        }
        let args = args_part.unwrap_or_default();
        call.arguments.push_str(&args);
        if call.started {
            if !args.is_empty() {
                out.push(ModelStreamEvent::ToolCallArgumentsDelta {
                    index: slot,
                    delta: args,
                });
            }
        } else {
            // Announced once its arguments begin (the name is complete by then) or at the end
            // of the stream, never on the first fragment of its name.
            call.pending_args.push_str(&args);
            if !args.is_empty() && !call.name.is_empty() && !call.id.is_empty() {
                Self::start(slot, call, out);
            }
        }
    }

    fn start(slot: usize, call: &mut PartialCall, out: &mut Vec<ModelStreamEvent>) {
        call.started = true;
        out.push(ModelStreamEvent::ToolCallStarted {
            index: slot,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        let pending = std::mem::take(&mut call.pending_args);
        if !pending.is_empty() {
            out.push(ModelStreamEvent::ToolCallArgumentsDelta {
                index: slot,
                delta: pending,
            });
        }
    }

    /// Announces calls that never got both id and name; a call without a name is an error.
    fn emit_unstarted(&mut self, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError> {
        for (slot, (_, call)) in self.calls.iter_mut().enumerate() {
            if call.started {
                continue;
            }
            if call.name.is_empty() {
                return Err(ModelError::malformed(format!(
                    "streamed tool call #{slot} has no name"
                )));
            }
            if call.id.is_empty() {
                call.id = format!("call_{slot}");
            }
            Self::start(slot, call, out);
        }
        Ok(())
    }

    fn response(&self) -> ModelResponse {
        let tool_calls: Vec<ToolCallRequest> = self
            .calls
            .iter()
            .map(|(_, c)| ToolCallRequest {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        let finish_reason = match &self.finish_reason {
            Some(r) => r.clone(),
            None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        ModelResponse {
            message: AssistantMessage {
                content: self.has_text.then(|| self.text.clone()),
                tool_calls,
            },
            finish_reason,
            usage: self.usage.unwrap_or_default(),
        }
    }
}

impl SseDecoder for StreamDecoder {
    const END_MARKER: &'static str = "data: [DONE]";

    /// One SSE event's data; anything after `[DONE]` is ignored.
    fn on_event(&mut self, data: &str, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        self.dispatch(data, out)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
