//! PII policies of every scope, outermost first: replies to the model and error texts masked, build errors, app-wide policies.

use super::*;
use agboss_core::contract::outcome::Rendered;

#[tokio::test]
async fn policies_of_every_scope_apply_outermost_first() {
    let app = app();
    let agent = app.agent_in::<PpCareWorkflow, PpSupportAgent>().unwrap();
    let echo = agent.tool("pp-echo-tool").unwrap();
    assert_eq!(
        echo.chain().pii().names(),
        [
            "pp-email-pii-policy",
            "pp-ticket-pii-policy",
            "pp-ip-pii-policy",
            "pp-card-pii-policy"
        ]
    );
    let text = "jane@example.com TCK-1234 card 4242 4242 4242 4242 ip 10.0.0.7";
    let out = echo.call("c", None, &note(text)).await;
    let CallOutcome::Ran(Rendered { text: out, .. }) = out else {
        panic!("ran")
    };
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["note"],
        "[REDACTED:email] [REDACTED:ticket] card ************4242 ip [REDACTED:ipv4]"
    );
    // The typed field keeps its type.
    assert_eq!(value["count"], text.len() as i64);
    // describe() lists each path's policies; the registry knows them by name.
    assert!(
        app.describe().contains(
            "pii policies: pp-email-pii-policy, pp-ticket-pii-policy, pp-ip-pii-policy, pp-card-pii-policy"
        ),
        "{}",
        app.describe()
    );
    assert!(
        agboss_core::contract::registry::all()
            .any(|r| r.kind() == "pii-policy" && r.name() == "pp-card-pii-policy")
    );
    // The direct chain has the application's and the tool's policies only.
    let direct = app.tool_by_name("pp-echo-tool").unwrap();
    let out = direct.invoke_json(&note(text)).await.unwrap();
    assert!(
        out.contains("[REDACTED:email] TCK-1234 card ************4242 ip 10.0.0.7"),
        "{out}"
    );
}

#[tokio::test]
async fn a_reply_to_model_message_is_masked() {
    let app = app();
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
    let out = cb.call(inv(&note("reply:jane@example.com"))).await;
    assert!(
        matches!(
            &out,
            CallOutcome::ReplyToModel { message, interceptor: "pp-reply-tool-interceptor" }
                if message == "Ask [REDACTED:email] to confirm"
        ),
        "{out:?}"
    );
}

#[tokio::test]
async fn error_texts_sent_to_the_model_are_masked() {
    let app = app();
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-echo-tool");
    let err = cb
        .call(inv(&note("fail:10.1.2.3 for jane@example.com")))
        .await
        .into_result()
        .unwrap_err();
    // The typed error is the program's, unmasked; what goes to the model is masked.
    assert!(err.to_string().contains("jane@example.com"));
    assert_eq!(
        cb.mask_for_model(&err.to_string()),
        "tool `pp-echo-tool` failed: cannot reach [REDACTED:ipv4] for [REDACTED:email]"
    );
    // A listener's report goes through the same masking.
    struct Report;
    impl ToolCallListener for Report {
        type Context = ();
        fn on_error(&self, _: &mut (), _: &ToolCallInfo<'_>, e: &ToolCallError) -> Option<String> {
            Some(e.to_string())
        }
    }
    let wrapped = ToolCallListeners::wrap(cb, Report);
    let out = wrapped
        .call(inv(&note("fail:10.1.2.3 for jane@example.com")))
        .await;
    assert_eq!(
        out.model_text().unwrap(),
        "tool `pp-echo-tool` failed: cannot reach [REDACTED:ipv4] for [REDACTED:email]"
    );
}

#[test]
fn a_hash_policy_without_its_key_is_a_build_error() {
    let err = App::builder()
        .pii_policy::<PpHashPiiPolicy>()
        .tool::<PpBigTool>()
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`pp-hash-pii-policy`: the `hash` strategy reads its key from the environment variable `PP_TEST_PII_KEY_UNSET`"),
        "{err}"
    );
}

#[tokio::test]
async fn an_app_builder_policy_applies_to_every_tool() {
    let app = App::builder()
        .pii_policy::<PpAllPiiPolicy>()
        .tool::<PpBigTool>()
        .build()
        .unwrap();
    let out = app
        .tool::<PpBigTool>()
        .invoke_json(&note(
            "call +1 415 555 2671 or mail a@b.io, ssn 123-45-6789",
        ))
        .await
        .unwrap();
    assert_eq!(
        out,
        note("call [REDACTED:phone] or mail [REDACTED:email], ssn [REDACTED:ssn]")
    );
    // The typed direct invoke is not masked (no model reads it).
    let typed = app
        .tool::<PpBigTool>()
        .invoke(PpNoteDto {
            note: "a@b.io".into(),
        })
        .await
        .unwrap();
    assert_eq!(typed.note, "a@b.io");
}
