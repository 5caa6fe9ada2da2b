//! The `@ToolInterceptor` reference page's test, in Rust: same assertions, same messages.
use agboss_core::ToolCallDecision;
use agboss_e2e::tenant_order::{GetOrderTool, OrderRecordDto, TenantOrderToolInterceptor};
use agboss_testing::{TestOptions, test_tool_interceptor};
use serde_json::json;

#[tokio::test]
async fn replies_to_the_model_when_an_order_belongs_to_another_tenant_and_scrubs_internal_note_on_allow()
 {
    let interceptor =
        test_tool_interceptor::<TenantOrderToolInterceptor>(TestOptions::new().tenant("acme"));

    let denied = interceptor
        .before_tool_call::<GetOrderTool>(json!({ "orderId": "OTHER-99" }))
        .await
        .output;
    assert_eq!(
        denied,
        ToolCallDecision::reply_to_model(
            "Order OTHER-99 does not belong to tenant acme. Ask the user to confirm their order ID."
        )
    );

    let allowed = interceptor
        .before_tool_call::<GetOrderTool>(json!({ "orderId": "ACME-42" }))
        .await
        .output;
    assert_eq!(allowed, ToolCallDecision::allow());

    let redacted = interceptor
        .after_tool_call::<GetOrderTool>(
            json!({ "orderId": "ACME-42" }),
            json!({ "orderId": "ACME-42", "amountCents": 12_500, "internalNote": "VIP margin tier A" }),
        )
        .await
        .output;
    assert_eq!(redacted.internal_note, "[REDACTED]");
    assert_eq!(
        redacted,
        OrderRecordDto {
            order_id: "ACME-42".into(),
            amount_cents: 12_500,
            internal_note: "[REDACTED]".into(),
        }
    );
}

#[tokio::test]
async fn after_hook_accepts_the_typed_output_too() {
    let interceptor =
        test_tool_interceptor::<TenantOrderToolInterceptor>(TestOptions::new().tenant("acme"));
    let record = OrderRecordDto {
        order_id: "ACME-42".into(),
        amount_cents: 12_500,
        internal_note: "VIP margin tier A".into(),
    };
    let out = interceptor
        .after_tool_call::<GetOrderTool>(json!({ "orderId": "ACME-42" }), record)
        .await
        .output;
    assert_eq!(out.internal_note, "[REDACTED]");
    assert_eq!(out.amount_cents, 12_500);
}

#[tokio::test]
async fn the_harness_validates_the_input_like_the_pipeline() {
    let interceptor =
        test_tool_interceptor::<TenantOrderToolInterceptor>(TestOptions::new().tenant("acme"));
    let err = interceptor
        .try_before_tool_call::<GetOrderTool>(json!({ "order": "ACME-42" }))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("$.orderId"), "{text}");
}

#[tokio::test]
async fn a_missing_tenant_fails_closed() {
    let interceptor = test_tool_interceptor::<TenantOrderToolInterceptor>(TestOptions::new());
    let err = interceptor
        .try_before_tool_call::<GetOrderTool>(json!({ "orderId": "ACME-42" }))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            agboss_core::error::ToolCallErrorKind::Dependency {
                component: "tenant-order-tool-interceptor",
                ..
            }
        ),
        "{err:?}"
    );
}
