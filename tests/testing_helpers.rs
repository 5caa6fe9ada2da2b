//! The test helpers of `agboss-testing`: service overrides, failures reported as the pipeline
//! reports them, and `test_tool` running one tool through its pipeline.
use agboss_core::ToolCallDecision;
use agboss_core::error::ToolCallErrorKind;
use agboss_e2e::support_desk::{
    FaqQueryDto, SearchFaqTool, SupportClock, SupportHoursToolInterceptor,
};
use agboss_e2e::tenant_order::{GetOrderTool, OrderInputDto, TenantOrderToolInterceptor};
use agboss_testing::{TestOptions, test_tool, test_tool_interceptor};
use serde_json::json;

#[tokio::test]
async fn a_service_override_replaces_the_default_instance() {
    let open = test_tool_interceptor::<SupportHoursToolInterceptor>(TestOptions::new());
    let closed = test_tool_interceptor::<SupportHoursToolInterceptor>(
        TestOptions::new().service(SupportClock::at(23)),
    );
    let input = json!({ "question": "where is my refund?" });
    assert_eq!(
        open.before_tool_call::<SearchFaqTool>(input.clone())
            .await
            .output,
        ToolCallDecision::allow()
    );
    assert_eq!(
        closed.before_tool_call::<SearchFaqTool>(input).await.output,
        ToolCallDecision::block("the support desk is closed (08:00-20:00)")
    );
}

#[tokio::test]
async fn after_hook_output_is_revalidated_by_the_harness() {
    let interceptor =
        test_tool_interceptor::<TenantOrderToolInterceptor>(TestOptions::new().tenant("acme"));
    // A negative amount is fine for the DTO (no constraint), but a wrong type is not.
    let err = interceptor
        .try_after_tool_call::<GetOrderTool>(
            json!({ "orderId": "ACME-42" }),
            json!({ "orderId": "ACME-42", "amountCents": "lots", "internalNote": "x" }),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ToolCallErrorKind::InterceptorFailed {
                interceptor: "tenant-order-tool-interceptor",
                ..
            }
        ),
        "the hook could not read the output as its DTO: {err:?}"
    );
}

#[tokio::test]
async fn test_tool_runs_the_whole_pipeline() {
    let mut tool = test_tool::<GetOrderTool>()
        .tool_interceptor::<TenantOrderToolInterceptor>()
        .tenant("acme");
    let record = tool
        .invoke(OrderInputDto {
            order_id: "ACME-42".into(),
        })
        .await
        .unwrap();
    assert_eq!(record.internal_note, "[REDACTED]");

    let err = tool
        .invoke(OrderInputDto {
            order_id: "OTHER-1".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(
        err.as_blocked().map(|b| &b.kind),
        Some(ToolCallDecision::ReplyToModel { .. })
    ));

    let out = tool
        .invoke_json(json!({ "orderId": "ACME-7" }))
        .await
        .unwrap();
    assert_eq!(out["internalNote"], "[REDACTED]");
    assert_eq!(out["amountCents"], 12_500);

    let err = tool.invoke_json(json!({})).await.unwrap_err();
    assert!(matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }));
}

#[tokio::test]
async fn test_tool_without_interceptors_and_truncation() {
    let mut faq = test_tool::<SearchFaqTool>();
    let answer = faq
        .invoke(FaqQueryDto {
            question: "refund?".into(),
        })
        .await
        .unwrap();
    assert!(answer.answer.starts_with("Refunds"));
}
