//! The support-desk application: its resolved cascade (snapshot) and its guards at work.
use std::sync::Arc;

use agboss_core::{App, CallDecision, CallOutcome, ToolCallDecision};

use agboss_core::contract::outcome::{FailureKind, Rendered};
use agboss_e2e::support_desk::{
    AuditLog, BillingAgent, OrderStore, SupportClock, SupportDeskApplication, SupportWorkflow,
};

fn app() -> App {
    App::builder()
        .application::<SupportDeskApplication>()
        .build()
        .expect("the support desk builds")
}

#[test]
fn describe_renders_every_path_chain_origin_and_exclusion() {
    insta::assert_snapshot!("support_desk_describe", app().describe());
}

#[tokio::test]
async fn tool_level_guard_replies_to_the_model_and_the_agent_guard_blocks_what_no_manager_may_approve()
 {
    let app = app();
    let billing = app.agent_in::<SupportWorkflow, BillingAgent>().unwrap();
    let lookup = billing.tool("lookup-order-tool").unwrap();
    let tenant = "acme".into();

    let outcome = lookup
        .call("call_1", Some(&tenant), r#"{"orderId":"OTHER-9"}"#)
        .await;
    assert!(
        matches!(
            &outcome,
            CallOutcome::ReplyToModel { message, interceptor: "order-ownership-tool-interceptor" }
                if message == "Order OTHER-9 does not belong to tenant acme. Ask the customer to confirm the order ID."
        ),
        "{outcome:?}"
    );

    // Allowed, and the application-level after-hook hid the e-mail.
    let CallOutcome::Ran(Rendered { text, .. }) = lookup
        .call("call_2", Some(&tenant), r#"{"orderId":"ACME-42"}"#)
        .await
    else {
        panic!("expected the tool to run")
    };
    assert!(
        text.contains(r#""customerEmail":"[email hidden]""#),
        "{text}"
    );

    // The agent guard hard-blocks what no manager may approve: more than was paid...
    let refund = billing.tool("refund-order-tool").unwrap();
    let err = refund
        .call(
            "call_3",
            Some(&tenant),
            r#"{"orderId":"ACME-42","amountCents":50000,"reason":"broken"}"#,
        )
        .await
        .into_result()
        .unwrap_err();
    let blocked = err.as_blocked().unwrap();
    assert_eq!(blocked.interceptor, "refund-limit-tool-interceptor");
    assert!(matches!(blocked.kind, ToolCallDecision::Block { .. }));
    assert_eq!(
        blocked.text(),
        "a refund of 500.00 on ACME-42 is more than the 125.00 left of the 125.00 paid"
    );
    // ... or above the hard cap, even on an order that cost more.
    let err = refund
        .call(
            "call_4",
            Some(&tenant),
            r#"{"orderId":"ACME-7","amountCents":150000,"reason":"scratched"}"#,
        )
        .await
        .into_result()
        .unwrap_err();
    assert_eq!(
        err.as_blocked().unwrap().text(),
        "a refund of 1,500.00 is above the 1,000.00 hard cap, which no manager can lift"
    );
    // Within both limits but above 100.00, the call is not blocked: it waits for a manager (on
    // this bare path there is no run to stop, so it fails as awaiting approval).
    let outcome = refund
        .call(
            "call_5",
            Some(&tenant),
            r#"{"orderId":"ACME-42","amountCents":12500,"reason":"broken"}"#,
        )
        .await;
    let failure = outcome.failure().expect("not run");
    assert_eq!(failure.kind(), FailureKind::Approval, "{outcome:?}");
    assert_eq!(
        outcome.decision(),
        CallDecision::AwaitingApproval {
            channel: "manager-channel".into()
        }
    );

    // The audit interceptor (application level) saw every call it let through, in order.
    let audit = app.services().get::<AuditLog>().unwrap().entries();
    assert_eq!(audit.len(), 6, "{audit:?}");
    assert!(audit[0].starts_with("tool_use call_1 lookup-order-tool"));
    assert!(audit[1].starts_with("tool_use call_2 lookup-order-tool"));
    assert_eq!(audit[2], "tool_result call_2 lookup-order-tool");
    assert!(audit[3].starts_with("tool_use call_3 refund-order-tool"));
    assert!(audit[4].starts_with("tool_use call_4 refund-order-tool"));
    assert!(audit[5].starts_with("tool_use call_5 refund-order-tool"));
    // Nothing was refunded.
    let orders = app.services().get::<OrderStore>().unwrap();
    assert_eq!(orders.refunded("ACME-42") + orders.refunded("ACME-7"), 0);
}

#[tokio::test]
async fn the_workflow_guard_applies_below_the_workflow_except_where_excluded() {
    let app = App::builder()
        .application::<SupportDeskApplication>()
        .provide(SupportClock::at(23))
        .build()
        .unwrap();
    let tenant = "acme".into();
    let shipping = app.workflow_by_name("support-workflow").unwrap().routers[0].routes[1].clone();
    assert_eq!(shipping.meta.name, "shipping-agent");
    let err = shipping
        .tool("lookup-order-tool")
        .unwrap()
        .call("c1", Some(&tenant), r#"{"orderId":"ACME-1"}"#)
        .await
        .into_result()
        .unwrap_err();
    assert_eq!(
        err.as_blocked().unwrap().interceptor,
        "support-hours-tool-interceptor"
    );
    // track-shipment-tool excludes the support-hours guard: it works at 23:00.
    let ok = shipping
        .tool("track-shipment-tool")
        .unwrap()
        .call("c2", Some(&tenant), r#"{"orderId":"ACME-1"}"#)
        .await;
    assert!(matches!(ok, CallOutcome::Ran(_)), "{ok:?}");
    // Direct calls are outside the workflow: no support-hours guard.
    let direct = app
        .tool::<agboss_e2e::support_desk::LookupOrderTool>()
        .tenant("acme")
        .invoke_json(r#"{"orderId":"ACME-1"}"#)
        .await;
    assert!(direct.is_ok(), "{direct:?}");
    let _ = Arc::clone(app.services().get::<SupportClock>().as_ref().unwrap());
}

#[test]
fn no_warning_about_components_of_another_module_of_the_binary() {
    // This binary also holds `tenant_order`'s `get-order-tool` and `TenantOrderToolInterceptor`
    // (the same crate, another module): they are not the support desk's, so nothing is said
    // about them; the support desk itself reaches every component it declares.
    let app = app();
    let warnings: Vec<String> = app.warnings().iter().map(ToString::to_string).collect();
    assert!(warnings.is_empty(), "{warnings:?}");
}
