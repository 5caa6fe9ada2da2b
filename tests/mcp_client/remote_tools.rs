//! Declared remote tools: the whole pipeline on direct invokes, remote schemas without DTOs, time limits.

use super::*;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn a_declared_remote_tool_runs_its_whole_pipeline_on_direct_invokes() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);

    let out = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .invoke(SumDto { a: 2.0, b: 3.0 })
        .await
        .unwrap();
    assert_eq!(out.text, "The sum of 2 and 3 is 5.");
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1);

    // The interceptor sends a bad argument back to the model: nothing reaches the server.
    let replied = app
        .tool::<GetSumTool>()
        .tenant("acme")
        .call_typed(SumDto { a: 5000.0, b: 1.0 })
        .await;
    assert!(
        matches!(&replied, CallOutcome::ReplyToModel { message, interceptor: "mcp-acl-tool-interceptor" }
            if message.contains("at most 1000")),
        "{replied:?}"
    );
    // A blocked tenant gets a typed block.
    let blocked = app
        .tool::<GetSumTool>()
        .tenant("evil")
        .invoke(SumDto { a: 1.0, b: 1.0 })
        .await
        .unwrap_err();
    assert_eq!(
        blocked.as_blocked().unwrap().interceptor,
        "mcp-acl-tool-interceptor"
    );
    // No tenant: the interceptor cannot be built for the call, the call fails closed.
    assert!(
        app.tool::<GetSumTool>()
            .invoke(SumDto { a: 1.0, b: 1.0 })
            .await
            .is_err()
    );

    // By name, with the JSON a model sends.
    let text = app
        .tool_by_name("get-sum-tool")
        .unwrap()
        .tenant("acme")
        .invoke_json(r#"{"a": 40, "b": 2}"#)
        .await
        .unwrap();
    assert_eq!(text, r#"{"text":"The sum of 40 and 2 is 42."}"#);
}

#[tokio::test]
async fn without_dtos_the_remote_schemas_check_arguments_before_any_hook_and_results_after() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);
    let echo = || app.tool_by_name("echo-tool").unwrap().tenant("acme");

    // The model sees the remote schema.
    let definition = app
        .bound_tools()
        .find(|t| t.meta().name == "echo-tool")
        .unwrap()
        .definition();
    assert_eq!(definition.parameters["required"], json!(["message"]));

    // A wrong type and a missing argument are rejected before the interceptor runs.
    for bad in [
        r#"{"message": 5}"#,
        r#"{}"#,
        r#"[1]"#,
        r#"{"message": "a", "message": "b"}"#,
    ] {
        let err = echo().invoke_json(bad).await.unwrap_err();
        assert!(
            matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }),
            "{bad}: {err:?}"
        );
    }
    assert_eq!(
        hooks.0.load(Ordering::SeqCst),
        0,
        "no hook ran on invalid arguments"
    );

    // A valid call goes through both hooks (the after-hook upper-cases the text).
    let text = echo().invoke_json(r#"{"message": "hello"}"#).await.unwrap();
    assert_eq!(text, r#"{"text":"ECHO: HELLO"}"#);
    assert_eq!(hooks.0.load(Ordering::SeqCst), 1);

    // Structured content, checked against the remote output schema, and into an output DTO.
    let raw = app
        .tool_by_name("raw-weather-tool")
        .unwrap()
        .invoke_json(r#"{"location": "Chicago"}"#)
        .await
        .unwrap();
    let raw: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert!(raw["structured"]["temperature"].is_number(), "{raw}");
    let weather = app
        .tool::<WeatherTool>()
        .invoke(CityDto {
            location: "New York".into(),
        })
        .await
        .unwrap();
    assert!(!weather.conditions.is_empty());
    // An enum value the remote schema does not have.
    let err = app
        .tool_by_name("raw-weather-tool")
        .unwrap()
        .invoke_json(r#"{"location": "Paris"}"#)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_long_operation_past_the_time_limit_is_a_typed_error_and_the_next_call_works() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let app = app(&server, &hooks);
    let err = app
        .tool_by_name("slow-tool")
        .unwrap()
        .invoke_json(r#"{"duration": 12, "steps": 2}"#)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ToolCallErrorKind::Timeout { .. } | ToolCallErrorKind::ToolFailed { .. }
        ),
        "{err:?}"
    );
    let quick = app
        .tool_by_name("slow-tool")
        .unwrap()
        .invoke_json(r#"{"duration": 0.1, "steps": 1}"#)
        .await
        .unwrap();
    assert!(
        quick.contains("Long running operation completed"),
        "{quick}"
    );
}
