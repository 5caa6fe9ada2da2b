#!/usr/bin/env python3
"""Generates two crates that register the same components against agboss-core, to measure
what the macros cost at compile time (issue 9):

* `macros/`: 100 `#[tool]`s (each with its own `#[derive(Dto)]` input) and 20
  `#[tool_interceptor]`s;
* `hand/`: the same components with hand-written trait impls (`Tool`, `ToolHandler`,
  `ToolInterceptor`, `Dto` on serde-derived structs) and `inventory` entries.

Usage: generate.py OUT_DIR [TOOLS] [INTERCEPTORS]; then `measure.sh OUT_DIR [RUNS]` (see
there). Both crates get the workspace's Cargo.lock.
"""
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cargo_toml(name):
    return f"""[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
agboss-core = {{ path = "{ROOT}/agboss-core" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
inventory = "0.3"
"""


def macros_crate(tools, interceptors):
    out = ["use agboss_core::dto::Dto;", "use agboss_core::*;", ""]
    out.append("""#[derive(Dto, Debug, Clone)]
pub struct Reply {
    #[text(prompt = "What happened")]
    pub text: String,
}
""")
    for i in range(interceptors):
        out.append(f"""#[tool_interceptor(name = "check{i}-tool-interceptor", description = "Checks {i}")]
pub struct Check{i}ToolInterceptor;

impl BeforeToolCall for Check{i}ToolInterceptor {{
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {{
        Ok(ToolCallDecision::allow())
    }}
}}
""")
    for i in range(tools):
        attach = f", tool_interceptors = [Check{i % interceptors}ToolInterceptor]" if interceptors else ""
        out.append(f"""#[derive(Dto, Debug, Clone)]
pub struct Input{i} {{
    #[text(prompt = "The order", min_length = 1)]
    pub order_id: String,
    #[integer(prompt = "How many", min = 1, max = 99)]
    pub quantity: u32,
    #[text(prompt = "A note")]
    pub note: Option<String>,
}}

#[tool(name = "do{i}-tool", description = "Does thing {i}", input = Input{i}, output = Reply{attach})]
pub struct Do{i}Tool;

impl ToolHandler<Input{i}, Reply> for Do{i}Tool {{
    async fn run(&self, input: Input{i}) -> Result<Reply, ToolError> {{
        Ok(Reply {{ text: input.order_id }})
    }}
}}
""")
    return "\n".join(out)


def hand_dto(name, fields):
    """A serde struct with a hand-written `Dto` impl (schema, typed and JSON checks)."""
    decl = "\n".join(f"    #[serde(rename = \"{wire}\"{skip})]\n    pub {f}: {ty}," for f, wire, ty, skip, _ in fields)
    props = "\n".join(
        f"        properties.insert(\"{wire}\".to_owned(), dto::describe(<{ty} as dto::DtoValue>::schema(&{c}), \"{wire}\"));\n"
        f"        if <{ty} as dto::DtoValue>::REQUIRED {{ required.push(Value::from(\"{wire}\")); }}"
        for f, wire, ty, _, c in fields
    )
    validate = "\n".join(f"        dto::validate_member(&self.{f}, \"{wire}\", &{c}, path, errors);" for f, wire, ty, _, c in fields)
    check = "\n".join(f"        dto::check_member::<{ty}>(object, \"{wire}\", &{c}, path, errors);" for f, wire, ty, _, c in fields)
    return f"""#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct {name} {{
{decl}
}}

impl Dto for {name} {{
    const DTO_NAME: &'static str = "{name}";
    fn json_schema() -> Value {{
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
{props}
        dto::object_schema(properties, required)
    }}
    fn validate_into(&self, path: &mut dto::JsonPath, errors: &mut Vec<dto::FieldError>) {{
{validate}
    }}
    fn check_json_into(value: &Value, path: &mut dto::JsonPath, errors: &mut Vec<dto::FieldError>) {{
        let Some(object) = dto::expect_object(value, path, errors) else {{ return }};
{check}
    }}
}}
"""


HAND_HEADER = """use std::any::TypeId;

use agboss_core::__private::dto;
use agboss_core::__private::{
    DiError, InterceptorMeta, Registration, Resolver, Services, Tool, ToolInterceptor, ToolMeta,
    TypedInterceptor, ErasedInterceptor, Arc, Probe, ViaAfter as _, ViaBefore as _,
    ViaNoAfter as _, ViaNoBefore as _, erased_tool,
};
use agboss_core::dto::Dto;
use agboss_core::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const TEXT_MIN1: dto::Constraints = dto::Constraints { min_length: Some(1), ..dto::Constraints::NONE };
const QTY: dto::Constraints = dto::Constraints { min_int: Some(1), max_int: Some(99), ..dto::Constraints::NONE };
const NONE: dto::Constraints = dto::Constraints::NONE;
"""


def hand_crate(tools, interceptors):
    out = [HAND_HEADER]
    out.append(hand_dto("Reply", [("text", "text", "String", "", "NONE")]))
    for i in range(interceptors):
        out.append(f"""pub struct Check{i}ToolInterceptor;

impl BeforeToolCall for Check{i}ToolInterceptor {{
    async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {{
        Ok(ToolCallDecision::allow())
    }}
}}

fn build_check{i}(services: &Services) -> Result<Arc<dyn ErasedInterceptor>, DiError> {{
    let before = (&&Probe::<Check{i}ToolInterceptor>::new()).before_tag();
    let after = (&&Probe::<Check{i}ToolInterceptor>::new()).after_tag();
    TypedInterceptor::<Check{i}ToolInterceptor>::build(
        services,
        before.hook::<Check{i}ToolInterceptor>(),
        after.hook::<Check{i}ToolInterceptor>(),
    )
}}

impl ToolInterceptor for Check{i}ToolInterceptor {{
    const META: &'static InterceptorMeta = &InterceptorMeta {{
        name: "check{i}-tool-interceptor",
        description: "Checks {i}",
        type_name: "Check{i}ToolInterceptor",
        type_id: TypeId::of::<Check{i}ToolInterceptor>,
        deps: &[],
        timeout_ms: None,
        build: build_check{i},
    }};
    fn construct(_: &Resolver<'_>) -> Result<Self, DiError> {{
        Ok(Check{i}ToolInterceptor)
    }}
}}

inventory::submit! {{ Registration::ToolInterceptor(<Check{i}ToolInterceptor as ToolInterceptor>::META) }}
""")
    for i in range(tools):
        attach = f"&[<Check{i % interceptors}ToolInterceptor as ToolInterceptor>::META]" if interceptors else "&[]"
        out.append(hand_dto(f"Input{i}", [
            ("order_id", "orderId", "String", "", "TEXT_MIN1"),
            ("quantity", "quantity", "u32", "", "QTY"),
            ("note", "note", "Option<String>", ", default, skip_serializing_if = \"Option::is_none\"", "NONE"),
        ]))
        out.append(f"""pub struct Do{i}Tool;

impl ToolHandler<Input{i}, Reply> for Do{i}Tool {{
    async fn run(&self, input: Input{i}) -> Result<Reply, ToolError> {{
        Ok(Reply {{ text: input.order_id }})
    }}
}}

impl Tool for Do{i}Tool {{
    type Input = Input{i};
    type Output = Reply;
    const META: &'static ToolMeta = &ToolMeta {{
        name: "do{i}-tool",
        description: "Does thing {i}",
        type_name: "Do{i}Tool",
        type_id: TypeId::of::<Do{i}Tool>,
        input_schema: <Input{i} as Dto>::json_schema,
        output_schema: <Reply as Dto>::json_schema,
        max_result_size: None,
        max_input_size: None,
        timeout_ms: None,
        idempotent: false,
        approval: None,
        approval_when: None,
        tool_interceptors: {attach},
        exclude_tool_interceptors: &[],
        pii_policies: &[],
        deps: &[],
        mcp: None,
        erased: erased_tool::<Do{i}Tool>,
    }};
    fn construct(_: &Resolver<'_>) -> Result<Self, DiError> {{
        Ok(Do{i}Tool)
    }}
}}

inventory::submit! {{ Registration::Tool(<Do{i}Tool as Tool>::META) }}
""")
    return "\n".join(out)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    tools = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    interceptors = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    write(f"{out}/macros/Cargo.toml", cargo_toml("compile-time-macros"))
    write(f"{out}/macros/src/lib.rs", "#![allow(dead_code)]\n" + macros_crate(tools, interceptors))
    write(f"{out}/hand/Cargo.toml", cargo_toml("compile-time-hand"))
    write(f"{out}/hand/src/lib.rs", "#![allow(dead_code, unused_imports)]\n" + hand_crate(tools, interceptors))
    # The workspace's dependency versions, so both crates build the same dependencies.
    for crate in ("macros", "hand"):
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), f"{out}/{crate}/Cargo.lock")
    print(f"generated {out}/macros and {out}/hand ({tools} tools, {interceptors} interceptors)")


if __name__ == "__main__":
    main()
