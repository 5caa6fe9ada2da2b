//! Scripted HTTP servers on 127.0.0.1 for the provider tests: replies in order, every request
//! recorded. `wiremock` serves every reply it can express (complete bodies, SSE bodies sent
//! whole, a reply that never comes); a raw HTTP/1.1 socket serves only the cases wiremock
//! cannot express: a body streamed in flushed chunks split at chosen byte boundaries, a
//! connection cut mid-body, and a stream that stalls after its first bytes.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with `Content-Length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A `text/event-stream` response, then the stream ends as `end` says. With `chunked`,
    /// each part is written (and flushed) as one HTTP chunk: the byte boundaries the client
    /// sees are the parts' (a raw socket is needed for that, and for `End::Drop` / `End::Hang`).
    Sse {
        parts: Vec<Vec<u8>>,
        end: End,
        chunked: bool,
    },
    /// Reads the request and never answers.
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Reply::Full {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub fn raw(status: u16, body: &str) -> Self {
        Reply::Full {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Reply::Full { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// An SSE stream whose parts are `data: {event}\n\n` for each event.
    pub fn sse_events(events: &[serde_json::Value], done: bool) -> Self {
        let mut parts: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        if done {
            parts.push("data: [DONE]\n\n".to_owned());
        }
        Reply::sse(parts, End::Terminate)
    }

    /// An SSE stream of Anthropic's typed events: `event: {type}\ndata: {event}\n\n` each.
    pub fn sse_typed_events(events: &[serde_json::Value]) -> Self {
        let parts: Vec<String> = events
            .iter()
            .map(|e| {
                format!(
                    "event: {}\ndata: {e}\n\n",
                    e["type"].as_str().unwrap_or_default()
                )
            })
            .collect();
        Reply::sse(parts, End::Terminate)
    }

    /// An SSE stream of these raw text parts.
    pub fn sse<S: Into<String>>(parts: impl IntoIterator<Item = S>, end: End) -> Self {
        Reply::Sse {
            parts: parts.into_iter().map(|p| p.into().into_bytes()).collect(),
            end,
            chunked: false,
        }
    }

    /// Whether wiremock can serve this reply.
    fn fits_wiremock(&self) -> bool {
        match self {
            Reply::Full { .. } | Reply::Hang => true,
            Reply::Sse { end, chunked, .. } => *end == End::Terminate && !chunked,
        }
    }

    fn template(&self) -> wiremock::ResponseTemplate {
        match self {
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut t = wiremock::ResponseTemplate::new(*status)
                    .set_body_raw(body.clone().into_bytes(), "application/json");
                for (k, v) in headers {
                    t = t.insert_header(k.as_str(), v.as_str());
                }
                t
            }
            Reply::Sse { parts, .. } => wiremock::ResponseTemplate::new(200)
                .set_body_raw(parts.concat(), "text/event-stream"),
            Reply::Hang => wiremock::ResponseTemplate::new(200).set_delay(Duration::from_secs(60)),
        }
    }
}

/// How a streamed reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The final zero-size chunk, then close: a clean end of body.
    Terminate,
    /// Close without the final chunk, like a server dying mid-stream.
    Drop,
    /// Keep the connection open and send nothing more.
    Hang,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Recorded {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

pub enum MockServer {
    Wire(wiremock::MockServer),
    Raw(RawServer),
}

impl MockServer {
    /// Starts a server on an ephemeral port of 127.0.0.1 answering with `replies` in
    /// order (one per request); extra requests get a 418. wiremock when it can serve every
    /// reply, the raw socket otherwise.
    pub async fn start(replies: Vec<Reply>) -> Self {
        if !replies.iter().all(Reply::fits_wiremock) {
            return MockServer::Raw(RawServer::start(replies).await);
        }
        let server = wiremock::MockServer::start().await;
        for reply in &replies {
            wiremock::Mock::given(wiremock::matchers::any())
                .respond_with(reply.template())
                .up_to_n_times(1)
                .mount(&server)
                .await;
        }
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(418).set_body_raw(
                r#"{"error":{"message":"no scripted reply"}}"#,
                "application/json",
            ))
            .with_priority(u8::MAX)
            .mount(&server)
            .await;
        MockServer::Wire(server)
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        match self {
            MockServer::Wire(server) => format!("{}/v1", server.uri()),
            MockServer::Raw(server) => server.base_url(),
        }
    }

    /// Every request received so far, in order.
    pub async fn requests(&self) -> Vec<Recorded> {
        match self {
            MockServer::Wire(server) => server
                .received_requests()
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|r| Recorded {
                    method: r.method.to_string(),
                    path: r.url.path().to_owned(),
                    headers: r
                        .headers
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.as_str().to_ascii_lowercase(),
                                v.to_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect(),
                    body: String::from_utf8_lossy(&r.body).into_owned(),
                })
                .collect(),
            MockServer::Raw(server) => server.requests(),
        }
    }
}

/// The raw HTTP/1.1 server, for what wiremock cannot express.
pub struct RawServer {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RawServer {
    async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let recorded = recorded.clone();
                let replies = replies.clone();
                conns.spawn(async move {
                    handle(stream, recorded, replies).await;
                });
            }
        });
        Self {
            port,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?;
    let mut parts = request_line.split(' ');
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = HashMap::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

async fn handle(
    mut stream: TcpStream,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    recorded.lock().unwrap().push(request);
    let reply = replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Reply::raw(418, r#"{"error":{"message":"no scripted reply"}}"#));
    match reply {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                reason(status),
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            let _ = stream.write_all(out.as_bytes()).await;
            let _ = stream.flush().await;
        }
        Reply::Sse { parts, end, .. } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for part in parts {
                let mut chunk = format!("{:x}\r\n", part.len()).into_bytes();
                chunk.extend_from_slice(&part);
                chunk.extend_from_slice(b"\r\n");
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
                let _ = stream.flush().await;
                // Give the client a chance to read each part separately.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            match end {
                End::Terminate => {
                    let _ = stream.write_all(b"0\r\n\r\n").await;
                    let _ = stream.flush().await;
                }
                End::Drop => {}
                End::Hang => tokio::time::sleep(Duration::from_secs(60)).await,
            }
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    }
    let _ = stream.shutdown().await;
}
