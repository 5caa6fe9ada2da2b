//! `GET /app`: the app's resolved structure ([`App::describe`](crate::App::describe)): every
//! path, each tool's chain in order, where each interceptor came from and where one was
//! excluded. It holds no tenant's data, and is shown to authenticated users only.
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::html::{Page, escape};
use super::state::{Console, Seen};

pub(super) async fn app_page(State(console): State<Arc<Console>>, seen: Seen) -> Response {
    let body = format!(
        r#"<pre class="structure" id="structure">{}</pre>"#,
        escape(&console.app.describe())
    );
    Page {
        base: &seen.base,
        title: &format!("The app `{}`", console.app.name()),
        who: seen.who(),
        body,
    }
    .respond(StatusCode::OK)
}
