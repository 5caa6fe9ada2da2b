//! The input and output of an MCP tool declared without DTOs: the arguments as a JSON object
//! (checked against the remote input schema) and the result's text and structured content.
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};

use crate::dto::{Dto, FieldError, JsonPath, code};

/// The arguments of an MCP tool without an input DTO: a JSON object, checked against the
/// remote tool's input schema before any interceptor runs. A key sent twice is an error, as
/// for every DTO.
///
/// ```
/// use agboss_core::dto::Dto;
/// use agboss_core::mcp::client::McpArguments;
/// let args = McpArguments::from_json_str(r#"{"message": "hi"}"#).unwrap();
/// assert_eq!(args.get("message").unwrap(), "hi");
/// assert!(McpArguments::from_json_str(r#"["not", "an", "object"]"#).is_err());
/// assert!(McpArguments::from_json_str(r#"{"a": 1, "a": 2}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct McpArguments(Value);

impl Default for McpArguments {
    fn default() -> Self {
        Self(Value::Object(Map::new()))
    }
}

impl McpArguments {
    /// The arguments of an object.
    pub fn new(object: Map<String, Value>) -> Self {
        Self(Value::Object(object))
    }
    /// One argument.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
    /// The object, as a JSON value (always an object).
    pub fn as_value(&self) -> &Value {
        &self.0
    }
    /// The object, as a JSON value.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl<'de> Deserialize<'de> for McpArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = McpArguments;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of arguments")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.contains_key(&key) {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                    let value = map.next_value::<Value>()?;
                    out.insert(key, value);
                }
                Ok(McpArguments(Value::Object(out)))
            }
        }
        deserializer.deserialize_map(Object)
    }
}

#[diagnostic::do_not_recommend]
impl Dto for McpArguments {
    const DTO_NAME: &'static str = "McpArguments";
    fn json_schema() -> Value {
        json!({"type": "object"})
    }
    fn validate_into(&self, _path: &mut JsonPath, _errors: &mut Vec<FieldError>) {}
    fn check_json_into(value: &Value, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        if !value.is_object() {
            errors.push(FieldError::new(
                path,
                code::TYPE,
                "the arguments must be a JSON object",
            ));
        }
    }
}

/// The result of an MCP tool without an output DTO: the text of its content (text blocks
/// joined by newlines; other blocks are named, e.g. `[image/png]`) and its structured content,
/// checked against the remote output schema when the tool declares one.
///
/// ```
/// use agboss_core::mcp::client::McpResult;
/// let r = McpResult { text: "The sum of 2 and 3 is 5.".into(), structured: None };
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"text":"The sum of 2 and 3 is 5."}"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpResult {
    /// The content's text.
    pub text: String,
    /// The structured content, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

#[diagnostic::do_not_recommend]
impl Dto for McpResult {
    const DTO_NAME: &'static str = "McpResult";
    fn json_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text the tool returned"},
                "structured": {"description": "The structured content the tool returned"}
            },
            "required": ["text"]
        })
    }
    fn validate_into(&self, _path: &mut JsonPath, _errors: &mut Vec<FieldError>) {}
    fn check_json_into(value: &Value, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        if !value.get("text").is_some_and(Value::is_string) {
            errors.push(FieldError::new(path, code::REQUIRED, "`text` is required"));
        }
    }
}
