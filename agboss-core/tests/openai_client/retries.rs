//! Retries: 429 and 5xx retried and typed once exhausted, logged without the API key.

use super::*;

#[tokio::test]
async fn retries_after_429_honouring_retry_after() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .with_header("Retry-After", "1"),
        Reply::json(200, text_completion("finally")),
    ])
    .await;
    let started = Instant::now();
    let response = model(&server).complete(&hello()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("finally"));
    assert_eq!(server.requests().await.len(), 2, "one retry expected");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was not honoured ({:?})",
        started.elapsed()
    );
}

#[tokio::test]
async fn rate_limit_after_all_retries_is_typed() {
    let limited = || {
        Reply::json(
            429,
            json!({"error": {"message": "Slow down", "type": "tokens"}}),
        )
        .with_header("Retry-After", "0")
    };
    let server = MockServer::start(vec![limited(), limited(), limited(), limited()]).await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::RateLimited {
            retry_after: Some(Duration::ZERO),
            message: Some("Slow down".into())
        }
    );
    assert!(err.is_retryable());
    // First attempt plus max_retries (2).
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn retries_after_500_then_succeeds() {
    let server = MockServer::start(vec![
        Reply::json(
            500,
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        ),
        Reply::raw(503, "upstream unavailable"),
        Reply::json(200, text_completion("recovered")),
    ])
    .await;
    let response = model(&server).complete(&hello()).await.unwrap();
    assert_eq!(response.message.content.as_deref(), Some("recovered"));
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn server_errors_after_all_retries_surface_the_last_status() {
    let server = MockServer::start(vec![
        Reply::raw(500, "boom"),
        Reply::raw(502, "bad gateway"),
        Reply::raw(503, "still down"),
        Reply::json(200, text_completion("too late")),
    ])
    .await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    match &err {
        ModelError::Http {
            status,
            message,
            error_type,
            body,
        } => {
            assert_eq!(*status, 503);
            assert_eq!(message, "still down");
            assert_eq!(error_type, &None);
            assert_eq!(body, "still down");
        }
        other => panic!("expected Http error, got {other:?}"),
    }
    assert!(err.is_retryable());
    assert_eq!(server.requests().await.len(), 3);
}

/// Captures the `tracing` output of the current thread.
#[derive(Clone, Default)]
struct Capture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn retries_are_logged_without_the_api_key() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // A callsite another test's thread registered first may have cached an interest computed
    // without this thread's subscriber: recompute it now that the subscriber is in place.
    tracing::callsite::rebuild_interest_cache();

    let server = MockServer::start(vec![
        Reply::raw(500, "boom"),
        Reply::json(200, text_completion("ok")),
    ])
    .await;
    model(&server).complete(&hello()).await.unwrap();

    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("sending chat completion request"), "{logs}");
    assert!(logs.contains("retrying chat completion"), "{logs}");
    assert!(!logs.contains(KEY), "API key leaked into logs:\n{logs}");
}

#[tokio::test]
async fn a_rate_limit_says_the_servers_message() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"error": {"message": "Too many tokens per minute", "type": "tokens"}}),
        )
        .with_header("Retry-After", "0"),
    ])
    .await;
    let once = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .max_retries(0)
        .build()
        .unwrap();
    let err = once.complete(&hello()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "model provider rate limit hit: Too many tokens per minute (retry after 0.0 s)"
    );
}
