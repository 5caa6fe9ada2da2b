//! [`OutputFormat`]: the answer a request asks for, a JSON object of one schema (a typed
//! output, `#[agent(output = ..)]`). A provider with a structured-output mode uses it (OpenAI's
//! `response_format` `json_schema`, strict; Anthropic a forced tool, [`OUTPUT_TOOL`]); a model
//! without one is told the schema in the prompt (see [`ChatModel::structured_output`]).
//!
//! [`ChatModel::structured_output`]: super::ChatModel::structured_output
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tool a provider without a response format of its own (Anthropic) forces the model to
/// call with its typed answer; the client reads the call back as the answer's text, so no one
/// above the wire ever sees it. Snake case, so no `#[tool]` (kebab case) or MCP tool
/// (`server__remote`) can take its name.
pub const OUTPUT_TOOL: &str = "final_output";

/// The shape a model's final answer must have: a JSON object of [`schema`](Self::schema).
///
/// ```
/// use agboss_core::model::{Message, ModelRequest, OutputFormat};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}},
///                     "required": ["ok"], "additionalProperties": false});
/// let req = ModelRequest::new([Message::user("Is it fine?")])
///     .with_output(OutputFormat::new("VerdictDto", schema.clone()));
/// assert_eq!(req.output.as_ref().unwrap().schema, schema);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputFormat {
    /// The schema's name (a DTO's type name: `[A-Za-z0-9_-]`, what OpenAI's `json_schema.name`
    /// accepts).
    pub name: String,
    /// The JSON Schema of the answer (a DTO's [`json_schema`](crate::dto::Dto::json_schema)).
    pub schema: Value,
}

impl OutputFormat {
    /// An output format from its name and schema.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            schema,
        }
    }

    /// What a model without a structured-output mode is told (a system message): answer with
    /// one JSON object of the schema, nothing else.
    pub fn prompt(&self) -> String {
        format!(
            "Answer with one JSON object and nothing else (no prose, no code fence) that matches \
             this JSON Schema:\n{}",
            self.schema
        )
    }
}
