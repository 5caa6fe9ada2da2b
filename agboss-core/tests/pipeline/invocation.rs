//! Invoking tools: typed errors, validation of input and output, wire names, build errors, the registry.

use super::*;
use agboss_core::error::BuildError;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn tool_errors_and_panics_are_typed() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let err = app
        .tool::<EchoTool>()
        .invoke(item("fail"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::ToolFailed { error, .. } if error.to_string() == "disk on fire")
    );
    let err = app
        .tool::<EchoTool>()
        .invoke(item("panic"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::ToolPanicked { message, .. } if message == "tool exploded")
    );
    // After-hooks did not run for failed tools.
    assert!(!rec.log().iter().any(|e| e.starts_with("after:")));
}

#[tokio::test]
async fn input_is_validated_before_any_interceptor() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    let err = app
        .tool::<EchoTool>()
        .invoke_json(r#"{"text": 5}"#)
        .await
        .unwrap_err();
    match err.kind() {
        ToolCallErrorKind::InvalidInput { source, .. } => {
            assert_eq!(source.errors[0].path, "$.text");
        }
        other => panic!("unexpected {other:?}"),
    }
    let long = "x".repeat(41);
    let err = app
        .tool::<EchoTool>()
        .invoke(item(&long))
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }));
    let err = app
        .tool::<EchoTool>()
        .invoke_json("not json")
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }));
    assert!(rec.log().is_empty(), "{:?}", rec.log());
}

#[tokio::test]
async fn output_is_revalidated_after_the_after_hooks() {
    let rec = Arc::new(Recorder::new());
    let app = app(&rec);
    // The tool's own output breaks `length >= 0`.
    let err = app
        .tool::<EchoTool>()
        .invoke(item("bad-output"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::InvalidOutput { source, .. } if source.errors[0].path == "$.length"),
        "{err:?}"
    );
    // An after-hook turns `length` into a string.
    let err = app
        .tool::<EchoTool>()
        .invoke(item("invalid-after"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::InvalidOutput { source, .. } if source.errors[0].path == "$.length"),
        "{err:?}"
    );
}

#[tokio::test]
async fn json_invocation_returns_wire_names() {
    let rec = Arc::new(Recorder::new());
    let out = app(&rec)
        .tool::<EchoTool>()
        .invoke_value(json!({"text": "héllo"}))
        .await
        .unwrap();
    assert_eq!(out, json!({"text": "[outer][inner]héllo", "length": 5}));
}

#[tokio::test]
async fn a_tool_outside_the_app_is_an_error_not_a_panic() {
    let app = App::builder().build().unwrap();
    let err = app.tool::<EchoTool>().invoke(item("hi")).await.unwrap_err();
    assert!(matches!(err.kind(), ToolCallErrorKind::NotInApp));
}

#[test]
fn a_provided_service_missing_is_a_build_error_naming_component_and_type() {
    let err = App::builder().tool::<EchoTool>().build().unwrap_err();
    assert_eq!(
        err,
        BuildError::MissingProvider {
            component: "EchoTool",
            dependency: "Recorder",
            hint: "it is `#[injectable(provided)]`: give the app an instance with `.provide(...)`",
        }
    );
    let text = err.to_string();
    assert!(text.contains("`EchoTool` depends on `Recorder`"), "{text}");
}

#[test]
fn the_registry_lists_components_by_name() {
    assert!(agboss_core::contract::registry::find_tool("echo-tool").is_some());
    assert!(
        agboss_core::contract::registry::find_tool_interceptor("outer-tool-interceptor").is_some()
    );
    assert_eq!(
        agboss_core::contract::registry::find_tool("echo-tool")
            .unwrap()
            .type_name,
        "EchoTool"
    );
    let schema = (agboss_core::contract::registry::find_tool("echo-tool")
        .unwrap()
        .input_schema)();
    assert_eq!(schema["properties"]["text"]["description"], "Item text");
}
