//! The outcome vocabulary: stored labels, who decided, sizes on the call path.
use super::*;
use crate::contract::handler_error::ToolError;

/// The labels are stored (journal rows, span attributes): they are the strings of 0.1.
#[test]
fn labels_are_the_stored_strings() {
    let decisions = [
        (CallDecision::Allowed, "allowed"),
        (
            CallDecision::ReplyToModel {
                interceptor: "i".into(),
                message: "m".into(),
            },
            "replied_to_model",
        ),
        (
            CallDecision::Blocked {
                interceptor: "i".into(),
                reason: "r".into(),
            },
            "blocked",
        ),
        (
            CallDecision::GuardFailed { error: "e".into() },
            "guard_failed",
        ),
        (CallDecision::Rejected { reason: "r".into() }, "rejected"),
        (
            CallDecision::AwaitingApproval {
                channel: "c".into(),
            },
            "awaiting_approval",
        ),
    ];
    for (decision, label) in decisions {
        assert_eq!(decision.label(), label);
    }
}

/// The call path's types do not grow (64-bit figures of 0.1).
#[test]
#[cfg(target_pointer_width = "64")]
fn the_call_path_stays_small() {
    use std::mem::size_of;
    assert!(size_of::<CallOutcome<Rendered>>() <= 40);
    assert!(size_of::<CallOutcome<()>>() <= 40);
    assert!(size_of::<ToolCallError>() <= 112);
    assert!(size_of::<Result<(), ToolCallError>>() <= 112);
    assert!(size_of::<CallFailure>() <= 144);
}

#[test]
fn who_decided() {
    let blocked: CallOutcome<()> = CallOutcome::failed(
        FailureKind::Blocked,
        ToolBlockedError {
            tool_name: "t".into(),
            call_id: "c1".into(),
            interceptor: "acl-tool-interceptor",
            kind: ToolCallDecision::block("no"),
        }
        .into(),
    );
    assert_eq!(blocked.decided_by(), Some("acl-tool-interceptor"));
    assert_eq!(
        blocked.decision().decided_by(),
        Some("acl-tool-interceptor")
    );
    let tool: CallOutcome<()> = CallOutcome::failed(
        FailureKind::Tool,
        ToolCallError::new(
            "t",
            ToolCallErrorKind::ToolFailed {
                error: ToolError::msg("x"),
            },
        ),
    );
    assert_eq!(tool.decided_by(), None);
    assert_eq!(tool.decision(), CallDecision::Allowed);
    let err = blocked.into_result().unwrap_err();
    assert_eq!(err.tool_name(), "t");
    assert!(err.into_blocked().is_ok());
}
