//! Masking and result-size limits: the whole value is masked before a cut, the innermost and the effective limit.

use super::*;
use agboss_core::contract::outcome::Rendered;

#[tokio::test]
async fn masking_happens_on_the_whole_value_so_a_cut_cannot_leak_half_a_value() {
    let app = app();
    // pp-small-tool: 90 bytes, 33 of them kept before the marker; the e-mail straddles the cut.
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-small-tool");
    let out = cb
        .call(inv(&note(&format!(
            "aaaaaaaa jane.doe@example.com {}",
            "b".repeat(100)
        ))))
        .await;
    let CallOutcome::Ran(Rendered {
        text: content,
        truncated,
    }) = out
    else {
        panic!("output")
    };
    assert!(truncated);
    assert_eq!(content.len(), 90, "{content}");
    assert!(!content.contains("jane"), "{content}");
    assert!(content.ends_with(TRUNCATION_MARKER));
    assert!(content.contains(r#""note":"aaaaaaaa [RE"#), "{content}");
}

#[test]
fn max_result_size_innermost_wins() {
    let app = app();
    let support = app.agent_in::<PpCareWorkflow, PpSupportAgent>().unwrap();
    // tool 90, agent 120, workflow 150, application 200.
    assert_eq!(
        support.tool("pp-small-tool").unwrap().max_result_size(),
        Some(90)
    );
    assert_eq!(
        support.tool("pp-big-tool").unwrap().max_result_size(),
        Some(120)
    );
    let plain_in_workflow = app.agent_in::<PpCareWorkflow, PpPlainAgent>().unwrap();
    assert_eq!(
        plain_in_workflow
            .tool("pp-big-tool")
            .unwrap()
            .max_result_size(),
        Some(150)
    );
    let plain_direct = app
        .agents()
        .find(|a| a.meta.name == "pp-plain-agent" && a.workflow().is_none())
        .unwrap();
    assert_eq!(
        plain_direct.tool("pp-big-tool").unwrap().max_result_size(),
        Some(200)
    );
    // The callback's metadata reports the effective limit.
    let cb = agent_tool(&app, true, "pp-support-agent", "pp-big-tool");
    assert_eq!(cb.metadata().max_result_size, Some(120));
}

#[tokio::test]
async fn the_effective_limit_is_the_one_that_truncates() {
    let app = app();
    let long = "x".repeat(500);
    for (workflow, agent, tool, max) in [
        (true, "pp-support-agent", "pp-small-tool", 90),
        (true, "pp-support-agent", "pp-big-tool", 120),
        (true, "pp-plain-agent", "pp-big-tool", 150),
        (false, "pp-plain-agent", "pp-big-tool", 200),
    ] {
        let cb = agent_tool(&app, workflow, agent, tool);
        let out = cb.call(inv(&note(&long))).await;
        let CallOutcome::Ran(Rendered {
            text: content,
            truncated,
        }) = out
        else {
            panic!("output")
        };
        assert!(truncated);
        assert_eq!(content.len(), max, "{agent}/{tool}");
        assert!(content.ends_with(TRUNCATION_MARKER));
    }
}
