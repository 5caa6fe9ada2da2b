//! Limits and isolation: truncated results, timeouts, contexts across concurrent calls, the missing tenant.

use super::*;
use agboss_core::error::ToolCallErrorKind;

#[tokio::test]
async fn results_are_truncated_on_a_utf8_boundary_with_a_marker() {
    let app = App::builder().tool::<BigTool>().build().unwrap();
    let text = app
        .tool::<BigTool>()
        .invoke_json(r#"{"text":"é"}"#)
        .await
        .unwrap();
    assert!(text.len() <= 64, "{} bytes", text.len());
    assert!(text.ends_with(TRUNCATION_MARKER), "{text}");
    // A short result is untouched.
    let small = App::builder().tool::<PlainEchoTool>().build().unwrap();
    let text = small
        .tool::<PlainEchoTool>()
        .invoke_json(r#"{"text":"é"}"#)
        .await
        .unwrap();
    assert_eq!(text, r#"{"text":"é","length":1}"#);
}

#[test]
fn truncate_result_keeps_utf8_valid_for_every_cut() {
    let original = "aé😀b".repeat(30);
    for max in 0..original.len() + 2 {
        let mut s = original.clone();
        let cut = agboss_core::pipeline::truncate_result(&mut s, Some(max));
        assert_eq!(cut, original.len() > max);
        if cut && max >= TRUNCATION_MARKER.len() {
            assert!(s.len() <= max);
            assert!(s.ends_with(TRUNCATION_MARKER));
        }
        // `s` is a String: being here means it is valid UTF-8 at every cut.
        assert!(original.starts_with(s.trim_end_matches(TRUNCATION_MARKER)));
    }
}

#[tokio::test]
async fn slow_tools_time_out() {
    let app = App::builder().tool::<SlowTool>().build().unwrap();
    let err = app
        .tool::<SlowTool>()
        .invoke(item("zzz"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ToolCallErrorKind::Timeout { timeout_ms: 50, .. }
        ),
        "{err:?}"
    );
}

/// TARGETS.md: 100k concurrent calls over 1,000 tenants, zero cross-tenant leaks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contexts_never_leak_across_concurrent_calls() {
    let app = App::builder().tool::<WhoamiTool>().build().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..100_000u32 {
        let app = app.clone();
        tasks.spawn(async move {
            let tenant = format!("t{}", i % 1_000);
            let call_id = format!("c{i}");
            let out = app
                .tool::<WhoamiTool>()
                .tenant(tenant.as_str())
                .call_id(&call_id)
                .invoke(item(&i.to_string()))
                .await
                .unwrap();
            out.text == format!("{tenant}|{call_id}|whoami-tool|{i}")
        });
    }
    let mut checked = 0;
    while let Some(ok) = tasks.join_next().await {
        assert!(ok.unwrap(), "a call saw another call's context");
        checked += 1;
    }
    assert_eq!(checked, 100_000);
}

#[tokio::test]
async fn a_missing_tenant_is_a_typed_error() {
    let app = App::builder().tool::<WhoamiTool>().build().unwrap();
    let err = app
        .tool::<WhoamiTool>()
        .invoke(item("x"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ToolCallErrorKind::Dependency { .. }),
        "{err:?}"
    );
}
