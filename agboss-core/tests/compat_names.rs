//! The root names of 0.1 (deprecated aliases since 0.2) still compile and mean the same.

/// Code of 0.1 that names the moved items at the root still compiles (with a warning).
#[test]
#[allow(deprecated)]
fn the_names_of_0_1_still_work() {
    use agboss_core::{BlockKind, CallOutcome, FailureKind, Rendered, ToolBlockedError};
    let blocked = ToolBlockedError {
        tool_name: "t".into(),
        call_id: "c1".into(),
        interceptor: "acl-tool-interceptor",
        kind: BlockKind::Block {
            reason: "no".into(),
        },
    };
    assert!(matches!(&blocked.kind, BlockKind::Block { reason } if reason == "no"));
    assert_eq!(blocked.text(), "no");
    let rendered = Rendered {
        text: "ok".into(),
        truncated: false,
    };
    let ran: CallOutcome = CallOutcome::Ran(rendered);
    assert_eq!(ran.model_text(), Some("ok"));
    let failed: CallOutcome = CallOutcome::failed(FailureKind::Blocked, blocked.into());
    assert_eq!(failed.decision().label(), "blocked");
}
