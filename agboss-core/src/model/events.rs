//! The response side of a streamed call: the SSE events of a 2xx answer, within the
//! per-chunk timeout and the [`StreamLimits`], decoded by a provider's [`SseDecoder`] into
//! [`ModelStreamEvent`]s.
use std::collections::VecDeque;
use std::time::Duration;

use futures::StreamExt as _;

use super::error::ModelError;
use super::http::error_chain;
use super::settings::HttpSettings;
use super::sse::{SseStream, StreamLimits};
use super::stream::ModelStream;
use super::types::ModelStreamEvent;

/// Turns the `data` of a provider's SSE events into [`ModelStreamEvent`]s.
pub trait SseDecoder: Send + 'static {
    /// What ends a complete stream, for the error of one cut before it (`data: [DONE]`).
    const END_MARKER: &'static str;
    /// One event's data; appends the resulting events to `out`.
    fn on_event(&mut self, data: &str, out: &mut Vec<ModelStreamEvent>) -> Result<(), ModelError>;
    /// `true` once the end marker was seen.
    fn is_done(&self) -> bool;
    /// At the end of the body: an error unless the stream ended properly (`mid_event`: the
    /// body ended inside an event, which SSE discards).
    fn finish(&self, mid_event: bool) -> Result<(), ModelError> {
        if self.is_done() {
            return Ok(());
        }
        let detail = if mid_event {
            "connection closed in the middle of an event".to_owned()
        } else {
            format!("connection closed before `{}`", Self::END_MARKER)
        };
        Err(ModelError::StreamTruncated { detail })
    }
}

struct StreamState<D> {
    events: SseStream,
    /// When the whole response must have ended.
    deadline: tokio::time::Instant,
    limits: StreamLimits,
    decoder: D,
    pending: VecDeque<ModelStreamEvent>,
    /// Set after the last item (event or error) was handed out.
    finished: bool,
    timeout: Duration,
    what: &'static str,
}

async fn next_event<D: SseDecoder>(
    mut state: StreamState<D>,
) -> Option<(Result<ModelStreamEvent, ModelError>, StreamState<D>)> {
    loop {
        if let Some(event) = state.pending.pop_front() {
            return Some((Ok(event), state));
        }
        if state.finished || state.decoder.is_done() {
            return None;
        }
        // The per-chunk timeout, but never past the whole response's deadline.
        let chunk_deadline = (tokio::time::Instant::now() + state.timeout).min(state.deadline);
        let next = match tokio::time::timeout_at(chunk_deadline, state.events.next()).await {
            Err(_) => Err(ModelError::Timeout {
                after: if chunk_deadline == state.deadline {
                    state.limits.deadline
                } else {
                    state.timeout
                },
            }),
            Ok(None) => {
                // End of body: fine only after the end marker (then `finish` is Ok).
                state.finished = true;
                let mid_event = state.events.ended_mid_event();
                state.decoder.finish(mid_event).map(|()| Vec::new())
            }
            Ok(Some(Err(error))) => Err(error),
            Ok(Some(Ok(event))) => {
                let mut out = Vec::new();
                state.decoder.on_event(&event.data, &mut out).map(|()| out)
            }
        };
        match next {
            // No complete event yet: read more (the loop re-checks `finished`).
            Ok(events) => state.pending.extend(events),
            Err(error) => {
                let what = state.what;
                tracing::debug!(error = %error, "{what} stream failed");
                state.finished = true;
                return Some((Err(error), state));
            }
        }
    }
}

/// A transport error of a streamed body: a timeout, or the connection lost.
fn transport_error(e: &reqwest::Error, timeout: Duration) -> ModelError {
    if e.is_timeout() {
        ModelError::Timeout { after: timeout }
    } else {
        ModelError::StreamTruncated {
            detail: format!("connection lost mid-stream: {}", error_chain(e)),
        }
    }
}

/// The events of a 2xx streamed answer, decoded by `decoder`, within the per-chunk timeout
/// and the [`StreamLimits`] of `settings`; `what` names the call in logs.
pub(crate) fn event_stream<D: SseDecoder>(
    response: reqwest::Response,
    decoder: D,
    settings: &HttpSettings,
    what: &'static str,
) -> ModelStream {
    let timeout = settings.timeout;
    let limits = settings.limits;
    let bytes = response
        .bytes_stream()
        .map(move |chunk| chunk.map_err(|e| transport_error(&e, timeout)));
    let state = StreamState {
        events: SseStream::new(bytes, limits),
        deadline: tokio::time::Instant::now() + limits.deadline,
        limits,
        decoder,
        pending: VecDeque::new(),
        finished: false,
        timeout,
        what,
    };
    Box::pin(futures::stream::unfold(state, next_event))
}
