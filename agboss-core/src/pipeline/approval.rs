//! The approval point of the guarded pipeline.
//!
//! Per the spec, human approval of a tool call (an approval `#[channel]` on the tool) happens
//! after every `before_tool_call` interceptor allowed the call and before `run`, so
//! unauthorized or malformed calls never wake a human reviewer. [`approval_point`] is called
//! exactly there, on both paths of `super::run::run_guarded` (with and without interceptors).
//! A gated call goes through only with a human decision for it ([`ApprovalGrant`]); otherwise
//! it stops with [`ToolCallErrorKind::ApprovalRequired`](crate::error::ToolCallErrorKind::ApprovalRequired), carrying the canonical JSON of its
//! validated input and that text's SHA-256, from which the engine makes a ticket.
use std::any::Any;

use crate::contract::channel::{ApprovalGrant, ChannelMeta};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::tool::{Tool, ToolMeta};
use crate::stamp::sha256_hex;

/// Lets the call through, or stops it for a human decision.
#[inline]
pub(crate) fn approval_point<T: Tool>(
    meta: &ToolMeta,
    input: &T::Input,
    grant: Option<&ApprovalGrant>,
) -> Result<(), ToolCallError> {
    match meta.approval {
        None => Ok(()),
        Some(channel) => gated::<T>(meta, channel, input, grant),
    }
}

/// The approval point of a tool with an approval channel.
#[inline(never)]
fn gated<T: Tool>(
    meta: &ToolMeta,
    channel: &'static ChannelMeta,
    input: &T::Input,
    grant: Option<&ApprovalGrant>,
) -> Result<(), ToolCallError> {
    if let Some(when) = meta.approval_when
        && !when(input as &dyn Any)
    {
        return Ok(());
    }
    if grant == Some(&ApprovalGrant::ApproverInput) {
        return Ok(());
    }
    let (canonical, fingerprint) = fingerprint(input)?;
    match grant {
        Some(ApprovalGrant::Approved {
            fingerprint: approved,
        }) if *approved == fingerprint => Ok(()),
        _ => Err(ToolCallError::new(
            meta.name.to_string(),
            ToolCallErrorKind::ApprovalRequired {
                channel: channel.name,
                input: canonical,
                fingerprint,
                ticket_id: None,
            },
        )),
    }
}

/// The canonical JSON of a validated input (fields in declaration order, serde's encoding) and
/// its SHA-256, hex.
pub(crate) fn fingerprint<I: serde::Serialize>(
    input: &I,
) -> Result<(String, String), ToolCallError> {
    let canonical = serde_json::to_string(input).map_err(|e| {
        ToolCallError::new(
            "input".to_string(),
            ToolCallErrorKind::Serialize {
                message: e.to_string(),
            },
        )
    })?;
    let fingerprint = sha256_hex(canonical.as_bytes());
    Ok((canonical, fingerprint))
}
