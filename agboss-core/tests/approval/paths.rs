//! Approval on the other paths: direct calls, `describe()`, paused steps, bindings, workflow tool steps.

use super::*;
use agboss_core::CallDecision;
use agboss_core::contract::outcome::FailureKind;
use agboss_core::engine;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn a_direct_call_of_a_gated_tool_gets_a_ticket_and_runs_once_decided() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([]));
    let app = fx.app(&model, "w");
    let handle = || app.tool::<ApRefundTool>().tenant("acme");
    let input = || ApRefundDto {
        order_id: "ACME-42".into(),
        amount_cents: 25_000,
        reason: "broken".into(),
    };
    let err = handle().invoke(input()).await.unwrap_err();
    let ToolCallErrorKind::ApprovalRequired {
        ticket_id: Some(ticket_id),
        fingerprint,
        ..
    } = err.kind()
    else {
        panic!("{err}");
    };
    let (ticket_id, fingerprint) = (ticket_id.clone(), fingerprint.clone());
    assert!(fx.log.refunds().is_empty());
    assert_eq!(fx.log.notified().len(), 1);
    assert_eq!(fx.log.notified()[0].fingerprint, fingerprint);
    // Not another tenant's to decide, nor a clerk's.
    let foreign = app.tool::<ApRefundTool>().tenant("globex");
    assert!(
        foreign
            .resume(Decision::approve(&ticket_id).by(manager()))
            .await
            .is_err()
    );
    let clerk = Decision::approve(&ticket_id).by(Approver::new("tom").tenant("acme"));
    assert!(matches!(
        handle().resume(clerk).await,
        Err(RunError::Unauthorized { .. })
    ));
    assert!(fx.log.refunds().is_empty());

    let done = handle()
        .resume(Decision::approve(&ticket_id).by(manager()))
        .await
        .unwrap();
    assert_eq!(done.done, "refunded 25000 on ACME-42");
    assert_eq!(fx.log.refunds(), vec![25_000]);
    let again = handle()
        .resume(Decision::approve(&ticket_id).by(manager()))
        .await;
    assert!(
        matches!(again, Err(RunError::Store(StoreError::TicketState { .. }))),
        "{again:?}"
    );
    assert_eq!(fx.log.refunds(), vec![25_000], "exactly once");
    assert_eq!(
        fx.store.ticket("acme", &ticket_id).await.unwrap().state,
        TicketState::Completed
    );

    // A rejection is a block naming the channel; nothing runs.
    let ToolCallErrorKind::ApprovalRequired {
        ticket_id: Some(second),
        ..
    } = handle().invoke(input()).await.unwrap_err().into_kind()
    else {
        panic!()
    };
    let err = handle()
        .resume(Decision::reject(&second, "no receipt").by(manager()))
        .await
        .unwrap_err();
    let blocked = err.as_blocked().expect("a rejection blocks");
    assert_eq!(blocked.interceptor, "ap-manager-channel");
    assert!(blocked.text().contains("no receipt"));
    assert_eq!(fx.log.refunds(), vec![25_000]);
}

/// The one-call run of a direct call journals what was decided: the approved call as the
/// call's own decision, a rejected one as a rejection (never as "approved").
#[tokio::test]
async fn a_direct_call_journals_its_decision_approved_or_rejected() {
    use agboss_core::store::{RunStore as _, StepEntry};
    let fx = Fixture::new();
    let app = fx.app(&Arc::new(ScriptedModel::new([])), "w");
    let handle = || app.tool::<ApRefundTool>().tenant("acme");
    let ticket = || async {
        let input = ApRefundDto {
            order_id: "ACME-42".into(),
            amount_cents: 25_000,
            reason: "broken".into(),
        };
        match handle().invoke(input).await.unwrap_err().into_kind() {
            ToolCallErrorKind::ApprovalRequired {
                ticket_id: Some(id),
                ..
            } => fx.store.ticket("acme", &id).await.unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let store = &fx.store;
    let finished = |run_id: String| async move {
        let steps = store.steps("acme", &run_id).await.unwrap();
        steps
            .into_iter()
            .find_map(|s| match s.entry {
                StepEntry::ToolFinished {
                    decision, is_error, ..
                } => Some((decision, is_error)),
                _ => None,
            })
            .expect("the call's end is journaled")
    };

    let approved = ticket().await;
    handle()
        .resume(Decision::approve(&approved.id).by(manager()))
        .await
        .unwrap();
    assert_eq!(
        finished(approved.run_id.clone()).await,
        ("allowed".to_string(), false)
    );

    let rejected = ticket().await;
    handle()
        .resume(Decision::reject(&rejected.id, "no receipt").by(manager()))
        .await
        .unwrap_err();
    assert_eq!(
        finished(rejected.run_id.clone()).await,
        ("rejected_by_approver".to_string(), true)
    );
    assert_eq!(fx.log.refunds(), vec![25_000], "only the approved call ran");
}

#[test]
fn describe_shows_the_channel_of_each_gated_tool() {
    let fx = Fixture::new();
    let app = fx.app(&Arc::new(ScriptedModel::new([])), "w");
    let text = app.describe();
    assert!(
        text.contains("approval: `ap-manager-channel` after every before hook allowed, when its condition holds"),
        "{text}"
    );
    assert!(
        text.contains("approval: `ap-hasty-channel` after every before hook allowed\n"),
        "{text}"
    );
    let lookup = text.split("tool `ap-lookup-tool`").nth(1).unwrap();
    assert!(
        !lookup.split("tool `").next().unwrap().contains("approval:"),
        "{text}"
    );
}

#[tokio::test]
async fn a_paused_agent_step_is_reported_as_paused_with_its_decision() {
    let fx = Fixture::new();
    let model = Arc::new(ScriptedModel::new([refund(50_000, "broken")]));
    let app = fx.app(&model, "w");
    let (events, out) = app
        .stream(target(), "refund", RunContext::new().tenant("acme"))
        .collect_all()
        .await;
    assert!(matches!(
        out.map_err(RunError::from),
        Err(RunError::AwaitingApproval { .. })
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallDecision { decision: CallDecision::AwaitingApproval { channel }, .. }
            if channel == "ap-manager-channel"
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::StepFinished {
            outcome: agboss_core::engine::StepOutcome::Paused { .. },
            ..
        }
    )));
}

#[tokio::test]
async fn an_approval_binds_the_input_it_was_given_for() {
    // The approval point lets a gated call through only for the fingerprint that was approved:
    // a grant for one input does not run another.
    use agboss_core::callback::ToolInvocation;
    use agboss_core::contract::channel::ApprovalGrant;
    let fx = Fixture::new();
    let app = fx.app(&Arc::new(ScriptedModel::new([])), "w");
    let callback = app
        .callbacks()
        .into_iter()
        .find(|c| c.definition().name == "ap-refund-tool")
        .unwrap();
    let approved = r#"{"orderId":"ACME-42","amountCents":50000,"reason":"broken"}"#;
    let other = r#"{"orderId":"ACME-42","amountCents":90000,"reason":"broken"}"#;
    let needs = |args: &'static str, grant: Option<ApprovalGrant>| {
        let callback = Arc::clone(&callback);
        async move {
            let tenant = TenantContext::new("acme");
            let invocation = ToolInvocation::new("c1", args)
                .with_tenant(Some(&tenant))
                .with_approval(grant.as_ref());
            match callback.call(invocation).await {
                CallOutcome::Failed(f) if f.kind() == FailureKind::Approval => {
                    match f.into_error().into_kind() {
                        ToolCallErrorKind::ApprovalRequired { fingerprint, .. } => {
                            Some(fingerprint)
                        }
                        other => panic!("{other:?}"),
                    }
                }
                CallOutcome::Ran(_) => None,
                other => panic!("{other:?}"),
            }
        }
    };
    let fingerprint = needs(approved, None).await.expect("gated");
    let grant = ApprovalGrant::Approved { fingerprint };
    assert!(
        needs(other, Some(grant.clone())).await.is_some(),
        "another input is not approved"
    );
    assert!(fx.log.refunds().is_empty());
    assert_eq!(
        needs(approved, Some(grant)).await,
        None,
        "the approved input runs"
    );
    assert_eq!(fx.log.refunds(), vec![50_000]);
}

/// Pays out once a manager approved (every call is gated).
#[tool(name = "ap-payout-tool", description = "Pays a customer out", input = ApOrderDto,
       output = ApOrderDto, deps = [ApLog], approval = ApManagerChannel)]
pub struct ApPayoutTool {
    log: Arc<ApLog>,
}

impl ToolHandler<ApOrderDto, ApOrderDto> for ApPayoutTool {
    async fn run(&self, input: ApOrderDto) -> Result<ApOrderDto, ToolError> {
        self.log.refunds.lock().unwrap().push(1);
        Ok(input)
    }
}

#[workflow(name = "ap-payout-workflow", description = "Pays out", tools = [ApPayoutTool])]
pub struct ApPayoutWorkflow;

#[tokio::test]
async fn a_workflow_tool_step_of_a_gated_tool_waits_for_its_ticket() {
    let fx = Fixture::new();
    let app = App::builder()
        .workflow::<ApPayoutWorkflow>()
        .provide_arc(Arc::clone(&fx.log))
        .store(fx.store.clone())
        .build()
        .unwrap();
    let flow = || engine::workflow::Flow::new().tool::<ApPayoutTool>();
    let target = || Target::workflow_with::<ApPayoutWorkflow>(flow());
    let ctx = |run: &str| RunContext::new().tenant("acme").run_id(run);
    let input = r#"{"orderId":"ACME-7"}"#;
    let err = app.execute(target(), input, ctx("wf-1")).await.unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &*err else {
        panic!("{err}")
    };
    assert_eq!(tickets[0].tool, "ap-payout-tool");
    assert_eq!(fx.log.notified().len(), 1);
    assert!(fx.log.refunds().is_empty());
    // Still pending: resuming waits again, nothing runs.
    let again = app.execute(target(), input, ctx("wf-1")).await.unwrap_err();
    assert!(
        matches!(*again, RunError::AwaitingApproval { .. }),
        "{again}"
    );
    app.decide("acme", Decision::approve(&tickets[0].id).by(manager()))
        .await
        .unwrap();
    let out = app.execute(target(), input, ctx("wf-1")).await.unwrap();
    assert_eq!(out.text, r#"{"orderId":"ACME-7"}"#);
    assert_eq!(fx.log.refunds(), vec![1], "ran once");
    assert_eq!(
        fx.store.ticket("acme", &tickets[0].id).await.unwrap().state,
        TicketState::Completed
    );

    // A rejection fails the step as a block naming the channel.
    let err = app.execute(target(), input, ctx("wf-2")).await.unwrap_err();
    let RunError::AwaitingApproval { tickets, .. } = &*err else {
        panic!("{err}")
    };
    app.decide(
        "acme",
        Decision::reject(&tickets[0].id, "not today").by(manager()),
    )
    .await
    .unwrap();
    let err = app.execute(target(), input, ctx("wf-2")).await.unwrap_err();
    let blocked = err.as_blocked().expect("a rejected step is blocked");
    assert_eq!(blocked.interceptor, "ap-manager-channel");
    assert_eq!(fx.log.refunds(), vec![1]);
}
