//! What a model reads of a call: the output serialized (declaration order), PII masked value by
//! value, then cut to `max_result_size`; a `reply_to_model` message masked the same way.
//!
//! # Where masking happens
//!
//! On every text a tool call sends to a model, after the after-hooks and the output
//! re-validation:
//!
//! * a result: its JSON document is masked in one pass ([`PiiChain::mask_value`]: every string,
//!   and every integer a detector finds PII in, is masked as a whole value, so a detector always
//!   sees whole values and the document stays valid JSON with its keys in declaration order),
//!   then serialized and cut to `max_result_size`. The byte bound holds on what the model
//!   reads, and a cut can only ever halve a mask, never a value;
//! * a `reply_to_model` message;
//! * an error text reported to the model (a listener's `on_error` report, the agent loop's
//!   error observations: [`ToolCallback::mask_for_model`](crate::callback::ToolCallback::mask_for_model)).
//!
//! A typed direct invoke (`app.tool::<T>().invoke(input)`) returns the typed output unmasked
//! (no model reads it), as it is not truncated either; `invoke_json` and every callback are
//! masked.
use std::borrow::Cow;

use super::pii::PiiChain;
use crate::pii::MaskReport;

/// The marker appended to a truncated result.
pub const TRUNCATION_MARKER: &str = "…[truncated by agboss: result exceeded max_result_size]";

/// Cuts `text` to at most `max` bytes, on a UTF-8 boundary, ending with [`TRUNCATION_MARKER`].
/// Returns whether it cut.
///
/// ```
/// use agboss_core::pipeline::{truncate_result, TRUNCATION_MARKER};
/// let mut text = "x".repeat(200);
/// assert!(truncate_result(&mut text, Some(100)));
/// assert_eq!(text.len(), 100);
/// assert!(text.ends_with(TRUNCATION_MARKER));
/// ```
pub fn truncate_result(text: &mut String, max: Option<usize>) -> bool {
    let Some(max) = max else { return false };
    if text.len() <= max {
        return false;
    }
    let keep = max.saturating_sub(TRUNCATION_MARKER.len());
    let mut cut = keep.min(text.len());
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    if max >= TRUNCATION_MARKER.len() {
        text.push_str(TRUNCATION_MARKER);
    }
    true
}

/// A result as the model reads it: the text, whether it was cut, how many values were masked.
pub(crate) struct RenderedText {
    pub(crate) text: String,
    pub(crate) truncated: bool,
    pub(crate) masked: usize,
}

/// Serializes a result for the model: one masking pass over its JSON document (when the path
/// has PII policies), then the cut to `max` bytes.
pub(crate) fn render_result<O: serde::Serialize>(
    output: &O,
    pii: &PiiChain,
    max: Option<usize>,
) -> Result<RenderedText, serde_json::Error> {
    let (mut text, masked) = if pii.is_empty() {
        (serde_json::to_string(output)?, 0)
    } else {
        let mut report = MaskReport::default();
        // `serde_json::Value` keeps the keys in insertion order (`preserve_order`): the masked
        // document reads exactly like the unmasked one, field for field.
        let mut value = serde_json::to_value(output)?;
        pii.mask_value(&mut value, &mut report);
        (serde_json::to_string(&value)?, report.total())
    };
    let truncated = truncate_result(&mut text, max);
    Ok(RenderedText {
        text,
        truncated,
        masked,
    })
}

/// Masks a `reply_to_model` message; returns it and the number of values masked.
pub(crate) fn mask_message(message: String, pii: &PiiChain) -> (String, usize) {
    if pii.is_empty() {
        return (message, 0);
    }
    let mut report = MaskReport::default();
    let masked = match pii.mask_text(&message, &mut report) {
        Cow::Borrowed(_) => message,
        Cow::Owned(masked) => masked,
    };
    (masked, report.total())
}
