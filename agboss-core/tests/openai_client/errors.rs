//! Typed errors: client errors, malformed bodies, provider errors, timeouts, refused connections.

use super::*;

#[tokio::test]
async fn client_error_body_is_surfaced_without_retry() {
    let error_body = json!({"error": {
        "message": "Invalid schema for function 'get-order-tool'",
        "type": "invalid_request_error",
        "param": "tools[0].function.parameters",
        "code": "invalid_function_parameters"
    }});
    let server = MockServer::start(vec![
        Reply::json(400, error_body.clone()),
        Reply::json(200, text_completion("must not be reached")),
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
            assert_eq!(*status, 400);
            assert_eq!(message, "Invalid schema for function 'get-order-tool'");
            assert_eq!(error_type.as_deref(), Some("invalid_request_error"));
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(body).unwrap(),
                error_body
            );
        }
        other => panic!("expected Http error, got {other:?}"),
    }
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("Invalid schema"));
    assert_eq!(
        server.requests().await.len(),
        1,
        "a 400 must not be retried"
    );
}

#[tokio::test]
async fn error_status_on_a_stream_request_fails_before_streaming() {
    let server = MockServer::start(vec![Reply::json(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )])
    .await;
    let err = match model(&server).stream(&hello()).await {
        Err(e) => e,
        Ok(_) => panic!("expected an error"),
    };
    assert!(
        matches!(&err, ModelError::Http { status: 401, message, .. } if message == "Incorrect API key provided"),
        "{err:?}"
    );
    assert_eq!(server.requests().await.len(), 1);
}

#[tokio::test]
async fn malformed_json_body_is_a_typed_error() {
    let server = MockServer::start(vec![
        Reply::raw(200, "{\"choices\": [{\"message\": "),
        Reply::json(200, json!({"id": "x", "choices": []})),
        Reply::json(200, json!({"choices": [{"message": {"content": 5}}]})),
    ])
    .await;
    let m = model(&server);
    for expected in [
        "invalid chat completion JSON",
        "no choices",
        "invalid chat completion JSON",
    ] {
        match m.complete(&hello()).await {
            Err(ModelError::MalformedResponse { detail }) => {
                assert!(detail.contains(expected), "{detail}")
            }
            other => panic!("expected MalformedResponse, got {other:?}"),
        }
    }
    // Malformed answers are not retried.
    assert_eq!(server.requests().await.len(), 3);
}

#[tokio::test]
async fn error_object_in_a_200_body_is_a_provider_error() {
    let server = MockServer::start(vec![Reply::json(
        200,
        json!({"error": {"message": "model overloaded", "type": "server_error"}}),
    )])
    .await;
    let err = model(&server).complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Provider {
            message: "model overloaded".into(),
            error_type: Some("server_error".into())
        }
    );
}

#[tokio::test]
async fn timeout_when_the_server_never_answers() {
    let server = MockServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .api_key(KEY)
        .timeout(Duration::from_millis(200))
        .max_retries(1)
        .backoff_base(Duration::from_millis(1))
        .build()
        .unwrap();
    let err = m.complete(&hello()).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::Timeout {
            after: Duration::from_millis(200)
        }
    );
    assert!(err.is_retryable());
    assert_eq!(server.requests().await.len(), 2, "timeouts are retried");

    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .timeout(Duration::from_millis(200))
        .max_retries(0)
        .build()
        .unwrap();
    let err = match m.stream(&hello()).await {
        Err(e) => e,
        Ok(_) => panic!("expected a timeout"),
    };
    assert!(matches!(err, ModelError::Timeout { .. }), "{err:?}");
    assert_eq!(server.requests().await.len(), 3);
    // Without an API key no Authorization header is sent.
    assert_eq!(server.requests().await[2].header("authorization"), None);
}

#[tokio::test]
async fn stalled_stream_times_out() {
    // Raw socket: wiremock cannot stall a body after its first bytes.
    let server = MockServer::start(vec![Reply::sse(
        [format!(
            "data: {}\n\n",
            chunk(json!({"content": "a"}), None)
        )],
        End::Hang,
    )])
    .await;
    let m = OpenAiCompatibleModel::builder()
        .base_url(server.base_url())
        .timeout(Duration::from_millis(300))
        .max_retries(0)
        .build()
        .unwrap();
    let (events, error) = drain(m.stream(&hello()).await.unwrap()).await;
    assert_eq!(
        events,
        vec![ModelStreamEvent::TextDelta { delta: "a".into() }]
    );
    assert_eq!(
        error,
        Some(ModelError::Timeout {
            after: Duration::from_millis(300)
        })
    );
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let m = OpenAiCompatibleModel::builder()
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .max_retries(0)
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let err = m.complete(&hello()).await.unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
    assert!(err.is_retryable());
}
