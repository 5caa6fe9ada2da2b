//! A remote tool bound to its connected server: how its arguments are checked and sent and
//! how its result becomes the tool's output.
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

use super::McpToolMeta;
use super::accounts::AccountDesk;
use super::connection::{McpRemoteTool, McpServer};
use super::dto::{McpArguments, McpResult};
use super::error::McpError;
use crate::cascade::RemoteServers;
use crate::contract::handler_error::ToolError;
use crate::contract::tool::ToolMeta;
use crate::di::{DiError, Resolver, Services};
use crate::dto::{Dto, FieldError, ValidationError, code};

/// One remote tool of a connected server, as a tool of the app calls it. What `#[mcp_tool]`
/// structs hold; not made by hand.
#[doc(hidden)]
pub struct McpRemote {
    server: McpServer,
    /// Where a missing credential asks to connect the account (an app's service).
    accounts: Option<Arc<AccountDesk>>,
    remote: McpToolMeta,
    timeout: Option<Duration>,
    /// The remote input schema, checked per call (a tool without an input DTO).
    input: Option<Arc<jsonschema::Validator>>,
    input_schema: Value,
    /// The remote output schema, checked on structured results (a tool without an output DTO).
    output: Option<Arc<jsonschema::Validator>>,
}

impl McpRemote {
    /// The remote of `meta` on the app's connected servers (the build checked it exists).
    pub fn resolve(resolver: &Resolver<'_>, meta: &ToolMeta) -> Result<Self, DiError> {
        Self::from_services(resolver.services(), meta)
    }

    pub(crate) fn from_services(services: &Services, meta: &ToolMeta) -> Result<Self, DiError> {
        let missing = |what: String| DiError::Failed(format!("tool `{}`: {what}", meta.name));
        let remote = McpToolMeta::of(meta).ok_or_else(|| missing("not an MCP tool".into()))?;
        let servers = services
            .get::<RemoteServers>()
            .ok_or_else(|| missing("no MCP server is connected to the app".into()))?;
        let server = servers
            .get(remote.server)
            .and_then(|s| s.as_any().downcast_ref::<McpServer>())
            .ok_or_else(|| missing(format!("MCP server `{}` is not connected", remote.server)))?;
        let listed = server
            .tool(&remote.remote)
            .ok_or_else(|| missing(format!("{remote} does not exist")))?;
        let compile = |schema: &Value| {
            jsonschema::validator_for(schema)
                .map(Arc::new)
                .map_err(|e| {
                    missing(format!(
                        "the schema of {remote} is not a valid JSON Schema: {e}"
                    ))
                })
        };
        let input = if remote.typed_input {
            None
        } else {
            Some(compile(&listed.input_schema)?)
        };
        let output = match (&listed.output_schema, remote.typed_output) {
            (Some(schema), false) => Some(compile(schema)?),
            _ => None,
        };
        Ok(Self {
            server: server.clone(),
            accounts: services.get::<AccountDesk>(),
            remote: remote.clone(),
            timeout: meta.timeout_ms.map(Duration::from_millis),
            input,
            input_schema: listed.input_schema.clone(),
            output,
        })
    }

    /// The remote input schema, when the tool has no input DTO (what the model sees).
    pub fn model_input_schema(&self) -> Option<Value> {
        self.input.as_ref().map(|_| self.input_schema.clone())
    }

    /// Checks arguments without an input DTO against the remote input schema.
    pub fn check_input(&self, input: &dyn Any) -> Result<(), ValidationError> {
        let (Some(validator), Some(args)) = (&self.input, input.downcast_ref::<McpArguments>())
        else {
            return Ok(());
        };
        let value = args.as_value();
        if validator.is_valid(value) {
            return Ok(());
        }
        let errors: Vec<FieldError> = validator
            .iter_errors(value)
            .map(|e| {
                FieldError::at(
                    json_path(&e.instance_path.to_string()),
                    code::TYPE,
                    e.to_string(),
                )
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationError::new(McpArguments::DTO_NAME, errors))
        }
    }

    /// One call: the input as the arguments, the result as the output.
    pub async fn call<I: Serialize, O: Dto>(&self, input: I) -> Result<O, ToolError> {
        let arguments = match serde_json::to_value(input) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(ToolError::msg(
                    "the input of an MCP tool must be a JSON object",
                ));
            }
            Err(e) => return Err(ToolError::from(e)),
        };
        let called = self
            .server
            .call_tool(&self.remote.remote, arguments, self.timeout)
            .await;
        let result = match (called, &self.accounts) {
            (Ok(result), _) => result,
            (Err(error), Some(desk)) => {
                let channel = self.server.config().account_channel;
                return Err(desk.on_error(channel, error).await.into());
            }
            (Err(error), None) => return Err(error.into()),
        };
        Ok(self.output::<O>(result)?)
    }

    fn output<O: Dto>(&self, result: CallToolResult) -> Result<O, McpError> {
        let text = text_of(&result.content);
        let invalid = |message: String| McpError::InvalidResult {
            server: self.remote.server,
            tool: self.remote.remote.to_string(),
            message,
        };
        if result.is_error == Some(true) {
            return Err(McpError::ToolFailed {
                server: self.remote.server,
                tool: self.remote.remote.to_string(),
                message: text,
            });
        }
        let value = if self.remote.typed_output {
            // Structured content, else the text as JSON, else the text itself.
            match result.structured_content {
                Some(structured) => structured,
                None => match serde_json::from_str::<Value>(&text) {
                    Ok(json @ Value::Object(_)) => json,
                    _ => Value::Object(Map::from_iter([("text".to_owned(), Value::String(text))])),
                },
            }
        } else {
            if let (Some(validator), Some(structured)) = (&self.output, &result.structured_content)
            {
                let problems: Vec<String> = validator
                    .iter_errors(structured)
                    .map(|e| format!("{} at {}", e, json_path(&e.instance_path.to_string())))
                    .collect();
                if !problems.is_empty() {
                    return Err(invalid(format!(
                        "its structured content does not match its output schema: {}",
                        problems.join("; ")
                    )));
                }
            }
            let out = McpResult {
                text,
                structured: result.structured_content,
            };
            // The output type is `McpResult` itself: no round trip through JSON.
            let mut out = Some(out);
            if let Some(typed) = (&mut out as &mut dyn Any).downcast_mut::<Option<O>>() {
                return typed.take().ok_or_else(|| invalid("no output".into()));
            }
            serde_json::to_value(out).map_err(|e| invalid(e.to_string()))?
        };
        O::from_json_value(&value).map_err(|e| invalid(format!("{e}")))
    }
}

/// The text of a result's content: text blocks as they are, other blocks named.
fn text_of(content: &[ContentBlock]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(content.len());
    for block in content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!("[{}]", i.mime_type)),
            ContentBlock::Audio(a) => parts.push(format!("[{}]", a.mime_type)),
            ContentBlock::Resource(_) => parts.push("[embedded resource]".to_owned()),
            ContentBlock::ResourceLink(r) => parts.push(format!("[resource {}]", r.uri)),
            _ => parts.push("[content]".to_owned()),
        }
    }
    parts.join("\n")
}

/// A JSON pointer (`/a/0/b`) as the DTO errors' path (`$.a[0].b`).
fn json_path(pointer: &str) -> String {
    let mut out = String::from("$");
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.parse::<usize>().is_ok() {
            out.push_str(&format!("[{seg}]"));
        } else {
            out.push('.');
            out.push_str(&seg);
        }
    }
    out
}

/// Whether a DTO's schema fits a remote input schema: every property the remote requires is
/// one the DTO always sends, every property the DTO sends is one the remote accepts, and the
/// JSON types agree (an `integer` fits a `number`), recursively through nested objects.
/// Returns what does not fit.
pub(crate) fn schema_fit(dto: &Value, remote: &Value, at: &str, problems: &mut Vec<String>) {
    let empty = Map::new();
    fn props(s: &Value) -> Option<&Map<String, Value>> {
        s.get("properties").and_then(Value::as_object)
    }
    let required = |s: &Value| -> Vec<String> {
        s.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let dto_props = props(dto).unwrap_or(&empty);
    let remote_props = props(remote).unwrap_or(&empty);
    let dto_required = required(dto);
    for name in required(remote) {
        if !dto_props.contains_key(&name) {
            problems.push(format!(
                "the remote tool requires `{at}{name}`, which the DTO does not have"
            ));
        } else if !dto_required.contains(&name) {
            problems.push(format!(
                "the remote tool requires `{at}{name}`, which the DTO may leave out"
            ));
        }
    }
    let closed = remote.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, schema) in dto_props {
        match remote_props.get(name) {
            None if closed => problems.push(format!(
                "the DTO sends `{at}{name}`, which the remote tool does not accept"
            )),
            None => {}
            Some(theirs) => {
                let (ours, their_types) = (types(schema), types(theirs));
                if let (Some(ours), Some(their_types)) = (&ours, &their_types) {
                    let fits = |t: &String| {
                        their_types.contains(t)
                            || (t == "integer" && their_types.iter().any(|x| x == "number"))
                    };
                    if !ours.iter().filter(|t| *t != "null").all(fits) {
                        problems.push(format!(
                            "`{at}{name}` is {} in the DTO but {} on the remote tool",
                            ours.join("|"),
                            their_types.join("|")
                        ));
                        continue;
                    }
                }
                if ours
                    .as_deref()
                    .is_some_and(|t| t.iter().any(|t| t == "object"))
                {
                    schema_fit(schema, theirs, &format!("{at}{name}."), problems);
                }
            }
        }
    }
}

fn types(schema: &Value) -> Option<Vec<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// Why a listed tool cannot serve a declaration, or nothing.
pub(crate) fn check_declaration(
    meta: &ToolMeta,
    remote: &McpToolMeta,
    listed: Option<&McpRemoteTool>,
    available: impl Iterator<Item = String>,
) -> Result<(), String> {
    let Some(listed) = listed else {
        let mut names: Vec<String> = available.collect();
        names.sort();
        return Err(format!(
            "it has no tool `{}` (it lists: {}); fix `remote = ..`",
            remote.remote,
            names.join(", ")
        ));
    };
    if remote.typed_input {
        let mut problems = Vec::new();
        schema_fit(
            &(meta.input_schema)(),
            &listed.input_schema,
            "",
            &mut problems,
        );
        if !problems.is_empty() {
            return Err(format!(
                "the input DTO does not fit the input schema of `{}`: {}; change the DTO, or leave out `input` to send the remote schema's arguments",
                remote.remote,
                problems.join("; ")
            ));
        }
    }
    Ok(())
}
