//! Routers: the chosen route runs, deterministic fallback.

use super::*;

#[tokio::test]
async fn a_router_runs_the_route_the_model_chose() {
    let f = fixture([
        Turn::text(" `Billing-Agent`."),
        Turn::text("Your refund is on its way."),
    ]);
    let (events, result) = f
        .app
        .stream(
            Target::router::<DeskRouter>(),
            "I want a refund",
            RunContext::new(),
        )
        .collect_all()
        .await;
    let out = result.unwrap();
    assert_eq!(out.text, "Your refund is on its way.");
    assert_eq!(
        out.routes,
        [("desk-router".to_string(), "billing-agent".to_string())]
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::RouteChosen { route, reason: RouteReason::ModelChoice { .. }, .. } if route == "billing-agent"
    )));
    // The router's request: no tools, the routes listed with their descriptions.
    let routing = &f.model.requests()[0];
    assert!(routing.tools.is_empty());
    let system = routing.messages[0].text().unwrap();
    assert!(system.contains("- billing-agent: Invoices, refunds and payments"));
    assert!(system.contains("- shipping-agent: Deliveries and tracking"));
    assert_eq!(routing.messages[1], Message::user("I want a refund"));
    // The chosen agent got the user's input.
    assert_eq!(
        f.model.requests()[1].messages.last(),
        Some(&Message::user("I want a refund"))
    );
}

#[tokio::test]
async fn a_router_falls_back_deterministically() {
    // An unusable answer: the declared fallback.
    let f = fixture([
        Turn::text("Hmm, hard to say."),
        Turn::text("Tracking says tomorrow."),
    ]);
    let (events, result) = f
        .app
        .stream(Target::router::<DeskRouter>(), "where?", RunContext::new())
        .collect_all()
        .await;
    assert_eq!(result.unwrap().routes[0].1, "shipping-agent");
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::RouteChosen { route, reason: RouteReason::Fallback { why }, .. }
            if route == "shipping-agent" && why.contains("names no single route")
    )));

    // A model error: the first route when no fallback is declared.
    let f = fixture([
        Turn::error(ModelError::other("provider down")),
        Turn::text("Invoice sent."),
    ]);
    let out = f
        .app
        .execute(
            Target::router::<FirstRouter>(),
            "invoice?",
            RunContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.routes[0].1, "billing-agent");
    assert_eq!(out.text, "Invoice sent.");
}
