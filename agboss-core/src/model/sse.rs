//! Server-sent events of streaming providers: bytes → events, parsed by `eventsource-stream2`
//! (LF, CR and CRLF line ends, comments, multi-line `data:`, any split of the bytes), with the
//! transport's errors kept as [`ModelError`]s. A leading BOM is stripped here, before the
//! parser, so that one split across chunks is stripped too (the parser only sees a BOM that
//! arrives whole in the first chunk).
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use eventsource_stream2::{Event, EventStreamError, Eventsource as _};
use futures::{Stream, StreamExt as _};

use super::error::ModelError;

type Events = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<ModelError>>> + Send>>;

/// Bounds of one streamed response, each a typed error when passed: a server that sends
/// keep-alives forever, valid deltas without an end, or megabytes without a line end cannot hold
/// a run or grow memory without bound.
///
/// ```
/// use std::time::Duration;
/// use agboss_core::model::StreamLimits;
/// let limits = StreamLimits { deadline: Duration::from_secs(120), ..StreamLimits::default() };
/// assert_eq!(limits.max_event_bytes, 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The whole response, from the request to its end marker (default 10 min); past it the
    /// stream fails with [`ModelError::Timeout`]. The per-chunk timeout still applies inside.
    pub deadline: std::time::Duration,
    /// Bytes of one event, its lines included (default 1 MiB): [`ModelError::TooLarge`].
    pub max_event_bytes: usize,
    /// Bytes of the whole streamed body (default 32 MiB): [`ModelError::TooLarge`].
    pub max_response_bytes: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            deadline: std::time::Duration::from_secs(600),
            max_event_bytes: 1 << 20,
            max_response_bytes: 32 << 20,
        }
    }
}

/// The events of one streamed response.
pub(crate) struct SseStream {
    events: Events,
    /// Whether the bytes so far end inside an event (SSE discards such an event at the end).
    mid_event: Arc<AtomicBool>,
}

impl SseStream {
    /// Parses `bytes` as an event stream, within the size bounds of `limits`.
    pub(crate) fn new<S, B>(bytes: S, limits: StreamLimits) -> Self
    where
        S: Stream<Item = Result<B, ModelError>> + Send + 'static,
        B: AsRef<[u8]> + Send + 'static,
    {
        let mid_event = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&mid_event);
        let mut tail = Tail::default();
        let mut bom = Bom::default();
        // A last line end at the end of the body: a stream whose last event ends in bare CRs
        // (`\r\r`) is complete, but a parser cannot know that a trailing CR is not the first
        // half of a CRLF until it sees the next byte, or this one.
        let end = futures::stream::once(async { Ok(b"\n".to_vec()) });
        let bytes = bytes
            .map(move |chunk| chunk.map(|chunk| bom.strip(chunk.as_ref())))
            .chain(end)
            .map(move |chunk| {
                let chunk = chunk?;
                tail.feed(&chunk);
                seen.store(tail.in_event, Ordering::Relaxed);
                if tail.total > limits.max_response_bytes {
                    return Err(ModelError::TooLarge {
                        what: "the response",
                        limit: limits.max_response_bytes,
                    });
                }
                if tail.event_bytes > limits.max_event_bytes {
                    return Err(ModelError::TooLarge {
                        what: "one event",
                        limit: limits.max_event_bytes,
                    });
                }
                Ok(chunk)
            });
        Self {
            events: Box::pin(bytes.eventsource()),
            mid_event,
        }
    }

    /// True when the bytes received so far end inside an unfinished event.
    pub(crate) fn ended_mid_event(&self) -> bool {
        self.mid_event.load(Ordering::Relaxed)
    }
}

impl Stream for SseStream {
    type Item = Result<Event, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx).map(|item| {
            item.map(|event| {
                event.map_err(|error: EventStreamError<ModelError>| {
                    let detail = format!("stream is not valid UTF-8: {error}");
                    error
                        .into_transport()
                        .unwrap_or(ModelError::MalformedResponse { detail })
                })
            })
        })
    }
}

/// Strips the optional UTF-8 BOM at the very start of a stream, also when it arrives in pieces.
#[derive(Default)]
struct Bom {
    /// The stream's first bytes while they may still be a BOM.
    held: Vec<u8>,
    decided: bool,
}

impl Bom {
    const BYTES: [u8; 3] = [0xEF, 0xBB, 0xBF];

    fn strip(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.decided {
            return chunk.to_vec();
        }
        self.held.extend_from_slice(chunk);
        let n = self.held.len().min(3);
        if self.held[..n] != Self::BYTES[..n] {
            self.decided = true;
            return std::mem::take(&mut self.held);
        }
        if n < 3 {
            return Vec::new(); // still maybe a BOM: wait for more bytes
        }
        self.decided = true;
        self.held.split_off(3)
    }
}

/// Where the bytes so far end: inside an event, or at an event boundary (a blank line). Only
/// line ends are looked at (LF, CR, CRLF), so it costs one pass over each chunk.
#[derive(Default)]
struct Tail {
    in_event: bool,
    /// Bytes since the last event boundary.
    event_bytes: usize,
    /// Bytes so far.
    total: usize,
    /// The last byte ended a line (`\r` or `\n`).
    line_ended: bool,
    /// The last byte was `\r` (a following `\n` belongs to the same line end).
    after_cr: bool,
}

impl Tail {
    fn feed(&mut self, bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len());
        for &b in bytes {
            self.event_bytes += 1;
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    if self.line_ended {
                        // A blank line: the event (if any) is dispatched.
                        self.in_event = false;
                        self.event_bytes = 0;
                    }
                    self.line_ended = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.in_event = true;
                    self.line_ended = false;
                    self.after_cr = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_counts_the_bytes_of_the_event_in_progress() {
        let mut tail = Tail::default();
        tail.feed(b"data: a\n\ndata: bc");
        assert_eq!(tail.event_bytes, 8);
        assert_eq!(tail.total, 17);
    }

    fn tail_of(chunks: &[&str]) -> bool {
        let mut tail = Tail::default();
        for c in chunks {
            tail.feed(c.as_bytes());
        }
        tail.in_event
    }

    #[test]
    fn a_bom_is_stripped_once_even_in_pieces() {
        let mut bom = Bom::default();
        assert_eq!(bom.strip(&[0xEF]), b"");
        assert_eq!(bom.strip(&[0xBB]), b"");
        assert_eq!(bom.strip(&[0xBF, b'd']), b"d");
        assert_eq!(bom.strip(&[0xEF, 0xBB, 0xBF]), [0xEF, 0xBB, 0xBF]);
        let mut plain = Bom::default();
        assert_eq!(plain.strip(b"da"), b"da");
        let mut near = Bom::default();
        assert_eq!(near.strip(&[0xEF]), b"");
        assert_eq!(near.strip(b"x"), [0xEF, b'x']);
    }

    #[test]
    fn the_tail_knows_an_event_boundary_in_every_line_ending() {
        assert!(!tail_of(&["data: a\n\n"]));
        assert!(!tail_of(&["data: a\r\n\r\n"]));
        assert!(!tail_of(&["data: a\r\r"]));
        assert!(!tail_of(&["data: a\r", "\n\r", "\n"]));
        assert!(tail_of(&["data: a\n"]));
        assert!(tail_of(&["data: a\r\n"]));
        assert!(tail_of(&["data: a\n\ndata: {\"id\""]));
        assert!(!tail_of(&[]));
    }
}
