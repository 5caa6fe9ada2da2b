//! What listeners see: raw and masked input, field order of masked results, the decision behind each outcome.

use super::*;
use agboss_core::contract::outcome::FailureKind;

// --- Defect 3: listeners see the masked input ---------------------------------------------------

#[tokio::test]
async fn listeners_get_the_raw_and_the_masked_input() {
    let (result, _, listener, _) = run_mode("mail jane@example.com", RunContext::new()).await;
    assert_eq!(result.unwrap(), "done");
    let seen = listener.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        r#"input {"mode":"mail jane@example.com"} | masked {"mode":"mail [REDACTED:email]"}"#
    );
}

// --- Defect 4: what the model reads keeps its shape -----------------------------------------------

#[tokio::test]
async fn a_masked_result_keeps_the_declaration_order_of_its_fields() {
    let app = App::builder()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let plain = app
        .tool::<FcTool>()
        .invoke_json(r#"{"mode":"nothing personal"}"#)
        .await
        .unwrap();
    assert_eq!(
        plain,
        r#"{"zeta":"z","middle":"nothing personal","alpha":"a"}"#
    );
    let masked = app
        .tool::<FcTool>()
        .invoke_json(r#"{"mode":"jane@example.com"}"#)
        .await
        .unwrap();
    assert_eq!(
        masked,
        r#"{"zeta":"z","middle":"[REDACTED:email]","alpha":"a"}"#
    );
}

// --- One outcome type, with its decision; error sources ------------------------------------------

#[tokio::test]
async fn every_outcome_names_its_decision_where_it_was_taken() {
    let app = App::builder()
        .tool_interceptor::<FcGuardToolInterceptor>()
        .tool::<FcTool>()
        .provide(FcRuns::default())
        .build()
        .unwrap();
    let call = |args: &'static str| {
        let app = app.clone();
        async move { app.tool::<FcTool>().call(args).await }
    };
    assert!(matches!(
        call(r#"{"mode":"ok"}"#).await,
        CallOutcome::Ran(_)
    ));
    let rejected = call(r#"{"mode":1}"#).await;
    assert_eq!(rejected.failure().unwrap().kind(), FailureKind::Rejected);
    assert!(matches!(rejected.decision(), CallDecision::Rejected { .. }));
    let not_json = call("not json").await;
    assert_eq!(not_json.failure().unwrap().kind(), FailureKind::Rejected);
    assert!(
        not_json
            .error()
            .unwrap()
            .to_string()
            .contains("not valid JSON"),
        "{not_json:?}"
    );
    let failed = call(r#"{"mode":"tool-fails"}"#).await;
    assert_eq!(failed.failure().unwrap().kind(), FailureKind::Tool);
    assert_eq!(failed.decision(), CallDecision::Allowed);
    let guard = call(r#"{"mode":"guard-errs"}"#).await;
    assert_eq!(guard.failure().unwrap().kind(), FailureKind::Guard);
    assert!(guard.fails_closed());
}
