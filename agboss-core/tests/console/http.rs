//! Plain HTTP/1.1 requests to a console (no browser): one connection per request, the user's
//! token as the console's cookie.
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A response: its status and its whole text (head and body).
pub struct Reply {
    pub status: u16,
    pub text: String,
}

impl Reply {
    /// The value of header `name` (lowercase), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        let head = self.text.split("\r\n\r\n").next().unwrap_or_default();
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
    /// The CSRF token of the page's first form.
    pub fn csrf(&self) -> String {
        let at = self.text.find(r#"name="csrf" value=""#).expect("a form") + 19;
        self.text[at..].split('"').next().unwrap().to_string()
    }
}

async fn send(base: &str, request: String) -> Reply {
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    let status = text
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not HTTP: {text}"));
    Reply { status, text }
}

/// `GET path` as the user of `token`.
pub async fn get(base: &str, token: &str, path: &str) -> Reply {
    let host = base.trim_start_matches("http://");
    send(
        base,
        format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nCookie: agboss_console={token}\r\nConnection: close\r\n\r\n"
        ),
    )
    .await
}

/// `POST path` of a form `body` as the user of `token`, from the console's own origin.
pub async fn post(base: &str, token: &str, path: &str, body: &str) -> Reply {
    let host = base.trim_start_matches("http://");
    send(
        base,
        format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {base}\r\nCookie: agboss_console={token}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await
}
