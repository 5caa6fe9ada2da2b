//! The tools a server exposes ([`ServedTools`]): each callback with its MCP definition, built
//! once.
use std::fmt;
use std::sync::Arc;

use foldhash::HashMap;
use rmcp::model::Tool;
use serde_json::{Map, Value};

use crate::callback::SharedToolCallback;
use crate::cascade::BoundTool;

/// One served tool: its callback and its MCP definition (built once).
pub(crate) struct Served {
    pub(crate) callback: SharedToolCallback,
    /// Whether `tools/list` declares an output schema: then every successful result carries
    /// structured content that matches it.
    pub(crate) has_output_schema: bool,
    /// `#[tool(long_running)]` without an approval channel: served as a task.
    pub(crate) long_running: bool,
}

/// The tools a server exposes, with their MCP definitions built once.
pub(crate) struct ServedTools {
    pub(crate) tools: Vec<Served>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) listed: Arc<[Tool]>,
}

impl fmt::Debug for ServedTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| &t.callback.definition().name))
            .finish()
    }
}

impl ServedTools {
    /// The callbacks to serve; `bound` are the app's tools on the same path, which tell whose
    /// results keep their output DTO's shape (no PII policy can turn a number into a mask, no
    /// `max_result_size` can cut the JSON): only those declare an output schema. A name served
    /// twice is refused (`Err(name)`).
    pub(crate) fn new<'b>(
        callbacks: Vec<SharedToolCallback>,
        bound: impl IntoIterator<Item = &'b BoundTool>,
    ) -> Result<Self, String> {
        let keeps_shape: HashMap<&'b str, &'b BoundTool> = bound
            .into_iter()
            .filter(|b| b.chain().pii().is_empty() && b.max_result_size().is_none())
            .map(|b| (&*b.meta().name, b))
            .collect();
        let mut tools = Vec::with_capacity(callbacks.len());
        let mut by_name = HashMap::default();
        let mut listed = Vec::with_capacity(callbacks.len());
        for callback in callbacks {
            let definition = callback.definition();
            if by_name
                .insert(definition.name.clone(), tools.len())
                .is_some()
            {
                return Err(definition.name.clone());
            }
            let input_schema = match &definition.parameters {
                Value::Object(map) => map.clone(),
                _ => Map::from_iter([("type".to_string(), Value::from("object"))]),
            };
            let mut tool = Tool::new(
                definition.name.clone(),
                definition.description.clone(),
                Arc::new(input_schema),
            );
            let output_schema = keeps_shape
                .get(definition.name.as_str())
                .filter(|b| {
                    callback
                        .metadata()
                        .tool
                        .as_deref()
                        .is_some_and(|m| std::ptr::eq(m, b.meta()))
                })
                .and_then(|b| match (b.meta().output_schema)() {
                    Value::Object(map) if map.get("type") == Some(&Value::from("object")) => {
                        Some(map)
                    }
                    _ => None,
                });
            let has_output_schema = output_schema.is_some();
            if let Some(schema) = output_schema {
                tool = tool.with_raw_output_schema(Arc::new(schema));
            }
            listed.push(tool);
            let long_running = callback
                .metadata()
                .tool
                .as_deref()
                .is_some_and(|m| m.long_running && m.approval.is_none());
            tools.push(Served {
                callback,
                has_output_schema,
                long_running,
            });
        }
        Ok(Self {
            tools,
            by_name,
            listed: listed.into(),
        })
    }

    /// The served tools' names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .map(|t| t.callback.definition().name.as_str())
    }
}
