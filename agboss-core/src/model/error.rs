//! The error type of model calls.

use std::time::Duration;

/// Why a model call failed.
///
/// Every variant owns plain data (no boxed sources) so the error is `Clone` and can be
/// scripted in tests. Use [`ModelError::is_retryable`] to decide whether trying the same
/// request again may succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with a non-success HTTP status (other than 429).
    #[error("model provider returned HTTP {status}: {message}")]
    Http {
        /// HTTP status code.
        status: u16,
        /// `error.message` of the provider's error body, or the raw body when it has none.
        message: String,
        /// `error.type` of the provider's error body, when present.
        error_type: Option<String>,
        /// The raw response body (truncated to a few KiB).
        body: String,
    },
    /// The provider answered 429 Too Many Requests (after all retries).
    #[error(
        "model provider rate limit hit{}{}",
        fmt_message(.message),
        fmt_retry_after(.retry_after)
    )]
    RateLimited {
        /// The delay the provider asked for (`Retry-After`), when given.
        retry_after: Option<Duration>,
        /// `error.message` of the provider's error body (or the raw body when it has none),
        /// when present; part of the error's `Display`.
        message: Option<String>,
    },
    /// The request or the stream did not progress within the configured timeout.
    #[error("model call timed out after {} s", fmt_secs(*.after))]
    Timeout {
        /// The timeout that elapsed.
        after: Duration,
    },
    /// The connection failed (DNS, connect, TLS, reset, …).
    #[error("transport error calling the model provider: {detail}")]
    Transport {
        /// Human-readable cause.
        detail: String,
    },
    /// The provider's answer could not be understood (bad JSON, missing fields).
    #[error("malformed model response: {detail}")]
    MalformedResponse {
        /// What was wrong.
        detail: String,
    },
    /// A response went past a size bound ([`StreamLimits`](crate::model::StreamLimits)): one
    /// event, or the whole streamed body.
    #[error("model response too large: {what} is over its {limit}-byte limit")]
    TooLarge {
        /// `"one event"` or `"the response"`.
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A streamed answer ended before its end marker.
    #[error("model stream truncated: {detail}")]
    StreamTruncated {
        /// Where it stopped.
        detail: String,
    },
    /// The provider reported an error inside an otherwise successful response
    /// (e.g. an `{"error": …}` event in a stream).
    #[error("model provider error: {message}")]
    Provider {
        /// `error.message`.
        message: String,
        /// `error.type`, when present.
        error_type: Option<String>,
    },
    /// The model client is misconfigured (missing API key, bad URL, …).
    #[error("model configuration error: {detail}")]
    Config {
        /// What is wrong.
        detail: String,
    },
    /// A scripted model (see `agboss-testing`) was called more often than scripted.
    #[error("scripted model has no turn left (already served {served} turns)")]
    ScriptExhausted {
        /// Number of turns served before running out.
        served: usize,
    },
    /// Any other failure of a custom [`ChatModel`](super::ChatModel) implementation.
    #[error("model error: {message}")]
    Other {
        /// Human-readable cause.
        message: String,
    },
}

fn fmt_retry_after(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" (retry after {} s)", fmt_secs(*d)),
        None => String::new(),
    }
}

/// Seconds with one decimal (`0.5`, `60.0`): for people, not `Duration`'s `Debug`.
fn fmt_secs(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64())
}

fn fmt_message(message: &Option<String>) -> String {
    match message {
        Some(m) if !m.is_empty() => format!(": {m}"),
        _ => String::new(),
    }
}

impl ModelError {
    /// `true` when sending the same request again may succeed: rate limits, timeouts,
    /// transport failures, truncated streams and HTTP 408/409/5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => matches!(status, 408 | 409) || *status >= 500,
            ModelError::RateLimited { .. }
            | ModelError::Timeout { .. }
            | ModelError::Transport { .. }
            | ModelError::StreamTruncated { .. } => true,
            ModelError::MalformedResponse { .. }
            | ModelError::TooLarge { .. }
            | ModelError::Provider { .. }
            | ModelError::Config { .. }
            | ModelError::ScriptExhausted { .. }
            | ModelError::Other { .. } => false,
        }
    }

    /// Shorthand for [`ModelError::Other`].
    pub fn other(message: impl Into<String>) -> Self {
        ModelError::Other {
            message: message.into(),
        }
    }

    /// [`ModelError::MalformedResponse`], its detail bounded (it may quote the answer).
    #[cfg_attr(not(any(feature = "openai", feature = "anthropic")), allow(dead_code))]
    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        ModelError::MalformedResponse {
            detail: crate::dto::bounded(detail.into()),
        }
    }

    /// [`ModelError::Provider`] with the provider's `error.message` (bounded) and `error.type`.
    #[cfg_attr(not(any(feature = "openai", feature = "anthropic")), allow(dead_code))]
    pub(crate) fn provider(message: Option<String>, error_type: Option<String>) -> Self {
        ModelError::Provider {
            message: crate::dto::bounded(message.unwrap_or_else(|| "unknown error".to_owned())),
            error_type: error_type.map(crate::dto::bounded),
        }
    }

    /// Shorthand for [`ModelError::Config`].
    pub fn config(detail: impl Into<String>) -> Self {
        ModelError::Config {
            detail: detail.into(),
        }
    }
}
