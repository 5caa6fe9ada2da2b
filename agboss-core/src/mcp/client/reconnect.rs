//! The bounded reconnection of a streamable HTTP session: rmcp resumes a response stream that
//! broke (the server died, the network dropped) by reconnecting with `Last-Event-ID`; its
//! default policy retries a refused connection without limit, so a call on a dead server
//! waited for its whole time limit. [`BoundedReconnect`] gives up after a few attempts within
//! a window, and the HTTP client bounds each attempt's connect by the same window; the call
//! then fails with [`McpError::ConnectionLost`](super::McpError::ConnectionLost).
use std::time::Duration;

use rmcp::transport::common::client_side_sse::SseRetryPolicy;

/// The wait before the first delayed reconnection; each next one waits twice as long.
const FIRST_DELAY: Duration = Duration::from_millis(250);

/// At most `attempts` reconnections of one broken stream, waiting 250 ms, 500 ms, 1 s, ...
/// between them, as long as those waits add up to no more than `window`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BoundedReconnect {
    pub(crate) attempts: usize,
    pub(crate) window: Duration,
}

fn delay(index: usize) -> Duration {
    FIRST_DELAY.saturating_mul(1 << index.min(20))
}

impl SseRetryPolicy for BoundedReconnect {
    /// `failed` attempts have failed on this stream (0: it ended without an error, nothing
    /// tried yet); rmcp makes the first attempt after an error at once, without asking.
    fn retry(&self, failed: usize) -> Option<Duration> {
        if failed >= self.attempts {
            return None;
        }
        let waited: Duration = (0..=failed).map(delay).sum();
        (waited <= self.window).then(|| delay(failed))
    }
}

/// The HTTP client of a streamable HTTP session: like rmcp's own (no idle pooling, redirects
/// followed only when they keep the method, the body and the origin), with each connect
/// bounded by `connect_timeout`.
pub(crate) fn http_client(connect_timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    crate::tls::ensure_provider();
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        }))
        .build()
}

const MAX_REDIRECTS: usize = 10;

/// The server's answer when it refused the session's credential (HTTP 401).
pub(crate) fn refusal(e: &rmcp::service::ClientInitializeError) -> Option<String> {
    use rmcp::transport::streamable_http_client::AuthRequiredError;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return None;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(current) = cause {
        if let Some(auth) = current.downcast_ref::<AuthRequiredError>() {
            return Some(auth.to_string());
        }
        cause = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_bounded_in_count_and_time() {
        let policy = BoundedReconnect {
            attempts: 3,
            window: Duration::from_secs(5),
        };
        let delays: Vec<_> = (0..5).map(|n| policy.retry(n)).collect();
        assert_eq!(
            delays,
            [
                Some(Duration::from_millis(250)),
                Some(Duration::from_millis(500)),
                Some(Duration::from_millis(1000)),
                None,
                None
            ]
        );
        // A short window stops it before the count does.
        let policy = BoundedReconnect {
            attempts: 10,
            window: Duration::from_millis(800),
        };
        assert_eq!(policy.retry(1), Some(Duration::from_millis(500)));
        assert_eq!(policy.retry(2), None);
        let none = BoundedReconnect {
            attempts: 0,
            window: Duration::from_secs(5),
        };
        assert_eq!(none.retry(0), None);
    }
}
