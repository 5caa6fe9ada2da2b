//! `cargo run --example tenant_order`: the `@ToolInterceptor` reference example, run for real.
//!
//! Shows an allowed call (the internal note redacted by the after-hook), a foreign-tenant call
//! (the interceptor replies to the model instead of running the tool) and an invalid input (the
//! DTO's validation error, with JSON paths).
use agboss_core::error::ToolCallErrorKind;
use agboss_core::prelude::*;
use agboss_e2e::tenant_order::{GetOrderTool, OrderInputDto, TenantOrderToolInterceptor};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = App::builder()
        .name("shop-application")
        .tool_interceptor::<TenantOrderToolInterceptor>()
        .tool::<GetOrderTool>()
        .build()?;

    println!("== 1. tenant acme loads its own order ACME-42 (typed invoke)");
    let record = app
        .tool::<GetOrderTool>()
        .tenant("acme")
        .invoke(OrderInputDto {
            order_id: "ACME-42".into(),
        })
        .await?;
    println!("   {}", serde_json::to_string(&record)?);

    println!("\n== 2. tenant acme asks for OTHER-99, as a model would (JSON arguments)");
    let outcome = app
        .tool::<GetOrderTool>()
        .tenant("acme")
        .call_id("call_7")
        .call(r#"{"orderId":"OTHER-99"}"#)
        .await;
    match outcome {
        CallOutcome::ReplyToModel {
            message,
            interceptor,
        } => println!("   observation for the model (from {interceptor}): {message}"),
        CallOutcome::Ran(rendered) => println!("   ran: {}", rendered.text),
        CallOutcome::Failed(failure) => return Err(failure.into_error().into()),
    }
    println!("   the same call as a direct invoke is an error:");
    let err = app
        .tool::<GetOrderTool>()
        .tenant("acme")
        .invoke(OrderInputDto {
            order_id: "OTHER-99".into(),
        })
        .await
        .unwrap_err();
    println!("   {err}");

    println!("\n== 3. invalid input: the DTO reports every failing field with its JSON path");
    match app
        .tool::<GetOrderTool>()
        .tenant("acme")
        .invoke_json(r#"{"order_id":42}"#)
        .await
    {
        Err(err) if matches!(err.kind(), ToolCallErrorKind::InvalidInput { .. }) => {
            println!("   {err}")
        }
        other => println!("   unexpected: {other:?}"),
    }
    Ok(())
}
