//! Helpers to turn responses into event streams and back.

use std::pin::Pin;

use futures::{Stream, StreamExt};

use super::error::ModelError;
use super::types::{ModelResponse, ModelStreamEvent, Usage};

/// A stream of [`ModelStreamEvent`]s. A successful stream ends with
/// [`ModelStreamEvent::Finished`]; an `Err` item ends it early.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelStreamEvent, ModelError>> + Send>>;

/// Splits `text` into pieces of at most `chunk_chars` characters (`0`: one piece).
fn split_chars(text: &str, chunk_chars: usize) -> Vec<String> {
    if chunk_chars == 0 || text.is_empty() {
        return vec![text.to_owned()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(chunk_chars)
        .map(|c| c.iter().collect())
        .collect()
}

/// The events a provider would stream for `response`, ending with
/// [`ModelStreamEvent::Finished`].
///
/// Text and each call's arguments are cut into deltas of at most `chunk_chars`
/// characters (`0`: one delta each). A usage event is emitted when the usage is not
/// all zeros.
pub fn response_events(response: &ModelResponse, chunk_chars: usize) -> Vec<ModelStreamEvent> {
    events_of(response.clone(), chunk_chars)
}

/// [`response_events`] of an owned response (not copied into its `Finished` event).
fn events_of(response: ModelResponse, chunk_chars: usize) -> Vec<ModelStreamEvent> {
    let mut events = Vec::new();
    if let Some(text) = response
        .message
        .content
        .as_deref()
        .filter(|t| !t.is_empty())
    {
        for delta in split_chars(text, chunk_chars) {
            events.push(ModelStreamEvent::TextDelta { delta });
        }
    }
    for (index, call) in response.message.tool_calls.iter().enumerate() {
        events.push(ModelStreamEvent::ToolCallStarted {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        if !call.arguments.is_empty() {
            for delta in split_chars(&call.arguments, chunk_chars) {
                events.push(ModelStreamEvent::ToolCallArgumentsDelta { index, delta });
            }
        }
    }
    if response.usage != Usage::default() {
        events.push(ModelStreamEvent::Usage(response.usage));
    }
    events.push(ModelStreamEvent::Finished(response));
    events
}

/// A [`ModelStream`] replaying [`response_events`]`(&response, chunk_chars)`.
pub fn stream_from_response(response: ModelResponse, chunk_chars: usize) -> ModelStream {
    let events = events_of(response, chunk_chars);
    Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
}

/// Drains a [`ModelStream`] and returns the response of its
/// [`Finished`](ModelStreamEvent::Finished) event.
///
/// Returns the first error of the stream, or [`ModelError::StreamTruncated`] when it
/// ends without a `Finished` event.
pub async fn collect_stream(mut stream: ModelStream) -> Result<ModelResponse, ModelError> {
    while let Some(event) = stream.next().await {
        if let ModelStreamEvent::Finished(response) = event? {
            return Ok(response);
        }
    }
    Err(ModelError::StreamTruncated {
        detail: "stream ended without a Finished event".to_owned(),
    })
}
