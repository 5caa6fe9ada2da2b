//! A console served on a free port and a headless Chromium session driving it over WebDriver
//! (`AGBOSS_TEST_WEBDRIVER_URL`, started by `scripts/chromium.sh start`; in CI a missing driver
//! fails the test, elsewhere it is skipped).
use std::net::SocketAddr;
use std::time::Duration;

use agboss_core::App;
use agboss_core::console::{ConsoleExt as _, ConsoleTokens, TOKEN_COOKIE};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// How long a page may take to show what a test waits for.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The driver's URL, or `None` (skipped) outside CI.
pub fn webdriver() -> Option<String> {
    match std::env::var("AGBOSS_TEST_WEBDRIVER_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "AGBOSS_TEST_WEBDRIVER_URL is not set: run `eval \"$(bash scripts/chromium.sh start)\"`"
        ),
        _ => {
            eprintln!("skipped: AGBOSS_TEST_WEBDRIVER_URL is not set (scripts/chromium.sh start)");
            None
        }
    }
}

/// Serves `app`'s console on a free port of 127.0.0.1: its base URL.
pub async fn serve(app: &App, auth: ConsoleTokens) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let router = app.console_router(auth);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// A headless Chromium session, signed in to the console at `base` with `token` (its cookie).
pub async fn browser(webdriver: &str, base: &str, token: &str) -> Client {
    let binary =
        std::env::var("AGBOSS_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": binary,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900"],
        },
    });
    let serde_json::Value::Object(caps) = caps else {
        unreachable!()
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(webdriver)
        .await
        .unwrap_or_else(|e| panic!("no browser session from {webdriver}: {e}"));
    // A cookie is set on the page's origin: first any page of it.
    client
        .goto(&format!("{base}/assets/console.css"))
        .await
        .unwrap();
    let cookie = format!("{TOKEN_COOKIE}={token}; path=/; samesite=strict");
    let set = "document.cookie = arguments[0]";
    client.execute(set, vec![json!(cookie)]).await.unwrap();
    client.goto(base).await.unwrap();
    client
}

/// Waits for an element, with the page's source in the failure.
pub async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    match client
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
    {
        Ok(element) => element,
        Err(e) => {
            let source = client.source().await.unwrap_or_default();
            panic!("no `{css}` within {PATIENCE:?}: {e}\npage:\n{source}")
        }
    }
}

/// Writes a screenshot of the page under `target/` (for the docs): its path.
pub async fn screenshot(client: &Client, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, client.screenshot().await.unwrap()).unwrap();
    path
}

/// The HTTP status of a `POST` the page's own script sends to `path` with `body`.
pub async fn post_from_page(client: &Client, path: &str, body: &str) -> u64 {
    let script = "const done = arguments[arguments.length - 1];
        fetch(arguments[0], { method: 'POST', body: arguments[1],
            headers: { 'content-type': 'application/x-www-form-urlencoded' } })
          .then(r => done(r.status), e => done(String(e)));";
    let status = client
        .execute_async(script, vec![json!(path), json!(body)])
        .await
        .unwrap();
    status
        .as_u64()
        .unwrap_or_else(|| panic!("fetch failed: {status}"))
}

/// Clicks the element `css` selects.
pub async fn click(client: &Client, css: &str) {
    let element = client.find(Locator::Css(css)).await;
    let element = element.unwrap_or_else(|e| panic!("no `{css}`: {e}"));
    element.click().await.unwrap();
}

/// The text of the element `css` selects, once it is there.
pub async fn text_of(client: &Client, css: &str) -> String {
    wait_for(client, css).await.text().await.unwrap()
}

/// Waits until the run's page shows it completed (followed live, then reloaded).
pub async fn completed(client: &Client) {
    wait_for(client, r#"#status[data-status="completed"]"#).await;
}
