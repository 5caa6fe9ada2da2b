//! What hooks read: the call ([`ToolCallContext`]), the output on its way through the
//! after-hooks ([`ToolOutput`]) and the two together ([`ToolCallResultContext`]).
use std::any::{Any, TypeId};
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::contract::handler_error::InterceptorError;
use crate::contract::tool::{Tool, ToolMeta};
use crate::di::ExecutionContext;
use crate::dto::{Dto, ValidationError};

/// The input of a call, typed and (lazily) as JSON.
pub(crate) trait ErasedInput: Send + Sync {
    fn json(&self) -> &Value;
    fn typed(&self) -> &dyn Any;
}

/// The validated input: typed, and as JSON built from the typed value on first use. Hooks see
/// exactly what the tool receives (the DTO's fields, unknown members the model sent dropped),
/// never a second reading of the raw text.
pub(crate) struct InputHolder<'a, I> {
    typed: &'a I,
    json: OnceLock<Value>,
}

impl<'a, I: Dto> InputHolder<'a, I> {
    pub(crate) fn new(typed: &'a I) -> Self {
        Self {
            typed,
            json: OnceLock::new(),
        }
    }
}

impl<I: Dto> ErasedInput for InputHolder<'_, I> {
    fn json(&self) -> &Value {
        self.json
            .get_or_init(|| serde_json::to_value(self.typed).unwrap_or(Value::Null))
    }
    fn typed(&self) -> &dyn Any {
        self.typed
    }
}

/// What a `before_tool_call` hook sees: `{ tool, tool_name, call_id, input }`, after the input
/// passed its DTO.
pub struct ToolCallContext<'a> {
    pub(crate) tool: &'a ToolMeta,
    pub(crate) input: &'a dyn ErasedInput,
    pub(crate) execution: &'a ExecutionContext,
}

impl<'a> ToolCallContext<'a> {
    /// The tool's registration data (name, description, schemas), lent for the call.
    pub fn tool(&self) -> &'a ToolMeta {
        self.tool
    }
    /// The tool's registered name, e.g. `get-order-tool`.
    pub fn tool_name(&self) -> &'a str {
        &self.tool.name
    }
    /// True when the call is for tool `T`.
    pub fn is_tool<T: Tool>(&self) -> bool {
        (self.tool.type_id)() == TypeId::of::<T>()
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        self.execution.call_id()
    }
    /// The validated input as JSON, with its wire (camelCase) names.
    pub fn input(&self) -> &Value {
        self.input.json()
    }
    /// The validated input as `T`: the tool's own input type (cloned), or any other DTO decoded
    /// from the JSON input.
    pub fn input_as<T: Dto + Clone>(&self) -> Result<T, ValidationError> {
        match self.input.typed().downcast_ref::<T>() {
            Some(t) => Ok(t.clone()),
            None => T::from_json_value(self.input.json()),
        }
    }
    /// The input by reference, when `T` is the tool's input type.
    pub fn input_ref<T: 'static>(&self) -> Option<&T> {
        self.input.typed().downcast_ref::<T>()
    }
    /// The execution context of the call.
    pub fn execution(&self) -> &ExecutionContext {
        self.execution
    }
}

impl fmt::Debug for ToolCallContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallContext")
            .field("tool_name", &self.tool.name)
            .field("call_id", &self.call_id())
            .field("input", self.input())
            .finish()
    }
}

/// An erased DTO value.
trait ErasedDto: Any + Send + Sync {
    fn to_json(&self) -> Result<Value, serde_json::Error>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn dto_name(&self) -> &'static str;
}

impl<T: Dto> ErasedDto for T {
    fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn dto_name(&self) -> &'static str {
        T::DTO_NAME
    }
}

/// A tool's output on its way through the after-hooks: a typed DTO or JSON.
///
/// Any DTO converts into it (`record.into()`), and so does a `serde_json::Value`. Whatever an
/// after-hook returns is re-validated against the tool's output DTO.
pub struct ToolOutput(OutputRepr);

enum OutputRepr {
    Typed(Box<dyn ErasedDto>),
    Json(Value),
}

impl<T: Dto> From<T> for ToolOutput {
    fn from(value: T) -> Self {
        Self(OutputRepr::Typed(Box::new(value)))
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self(OutputRepr::Json(value))
    }
}

impl fmt::Debug for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            OutputRepr::Typed(t) => write!(f, "ToolOutput<{}>({})", t.dto_name(), self.to_json()),
            OutputRepr::Json(v) => write!(f, "ToolOutput<json>({v})"),
        }
    }
}

impl ToolOutput {
    /// The output as JSON (wire names).
    pub fn to_json(&self) -> Value {
        match &self.0 {
            OutputRepr::Typed(t) => t.to_json().unwrap_or(Value::Null),
            OutputRepr::Json(v) => v.clone(),
        }
    }
    /// A reference to the typed output, when it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        match &self.0 {
            OutputRepr::Typed(t) => t.as_any().downcast_ref::<T>(),
            OutputRepr::Json(_) => None,
        }
    }
    /// The output as `T`: moved out when it is a `T`, otherwise decoded (and validated) from JSON.
    pub fn into_typed<T: Dto>(self) -> Result<T, ValidationError> {
        match self.0 {
            OutputRepr::Typed(t) => {
                if t.as_any().type_id() == TypeId::of::<T>() {
                    match t.into_any().downcast::<T>() {
                        Ok(b) => Ok(*b),
                        Err(_) => Err(ValidationError::single(
                            T::DTO_NAME,
                            "$",
                            "type",
                            "output has an unexpected type",
                        )),
                    }
                } else {
                    let json = t.to_json().map_err(|e| {
                        ValidationError::single(T::DTO_NAME, "$", "json", &e.to_string())
                    })?;
                    T::from_json_value(&json)
                }
            }
            OutputRepr::Json(v) => T::from_json_value(&v),
        }
    }
}

/// What an `after_tool_call` hook sees: `{ tool, tool_name, call_id, input, output }`, after
/// the tool ran (and the inner after-hooks transformed its output).
pub struct ToolCallResultContext<'a> {
    pub(crate) call: ToolCallContext<'a>,
    pub(crate) output: ToolOutput,
}

impl<'a> ToolCallResultContext<'a> {
    /// The tool's registration data, lent for the call.
    pub fn tool(&self) -> &'a ToolMeta {
        self.call.tool
    }
    /// The tool's registered name.
    pub fn tool_name(&self) -> &'a str {
        &self.call.tool.name
    }
    /// True when the call is for tool `T`.
    pub fn is_tool<T: Tool>(&self) -> bool {
        self.call.is_tool::<T>()
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        self.call.call_id()
    }
    /// The validated input as JSON.
    pub fn input(&self) -> &Value {
        self.call.input()
    }
    /// The input as `T` (see [`ToolCallContext::input_as`]).
    pub fn input_as<T: Dto + Clone>(&self) -> Result<T, ValidationError> {
        self.call.input_as::<T>()
    }
    /// The execution context.
    pub fn execution(&self) -> &ExecutionContext {
        self.call.execution
    }
    /// The output so far.
    pub fn output(&self) -> &ToolOutput {
        &self.output
    }
    /// The output as JSON.
    pub fn output_json(&self) -> Value {
        self.output.to_json()
    }
    /// Takes the output as `T` (moved when it is a `T`, otherwise decoded from JSON).
    pub fn into_output<T: Dto>(self) -> Result<T, InterceptorError> {
        self.output
            .into_typed::<T>()
            .map_err(InterceptorError::from)
    }
    /// Returns the output unchanged: `Ok(call.keep())` in a hook that only observes.
    pub fn keep(self) -> ToolOutput {
        self.output
    }
}
