//! The console (feature `console`): a web page for the people in the loop, served by the app
//! on axum. [`ConsoleExt::console_router`] is an [`axum::Router`] to mount in your own server,
//! [`ConsoleExt::serve_console`] serves it alone. Pages:
//!
//! - **the inbox** (`/`): the tenant's pending tickets, oldest first and paged, with the tool,
//!   the input masked as the call's path masks it for the model, the channel, the age and the
//!   expiry; approve, reject with a message, or edit (`/tickets/{id}`: a form built from the
//!   tool's input schema, validated against its input DTO when it is decided: a field error
//!   leaves the ticket pending). A decision goes through [`App::decide`] (the channel's
//!   approver check) and the run is resumed on this instance;
//! - **a run** (`/runs/{id}`): its journaled steps, live over server-sent events while it runs
//!   (read from the store, so a run of any instance is followed), and its tickets;
//! - **a thread** (`/threads/{id}`): its messages;
//! - **the app** (`/app`): [`App::describe`]'s tree of paths and chains, with where each
//!   interceptor came from and where one was excluded.
//!
//! Security as for the MCP server: every request is authenticated first
//! ([`ConsoleAuthenticator`]; an error is a refusal), every read and decision is scoped by the
//! user's tenant (another tenant's ticket, run or thread is not found, also by URL), every state
//! change carries a CSRF token bound to the user's session and is refused from another
//! `Origin`, every text that is not the console's own is HTML-escaped, and the responses carry
//! a content security policy that runs only the console's embedded script. Server-rendered
//! HTML, its CSS and script embedded in the binary: no build step.
//!
//! See the [console guide](crate::guide::console).
mod auth;
mod csrf;
mod edit;
mod html;
mod inbox;
mod runs;
mod state;
mod structure;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};

pub use auth::{
    ConsoleAuthError, ConsoleAuthenticator, ConsoleRequest, ConsoleTokens, ConsoleUser,
    TOKEN_COOKIE,
};
pub use inbox::INBOX_PAGE;

use crate::app::App;
use state::Console;

/// The console of an app: `app.console_router(auth)` and `app.serve_console(addr, auth)`.
///
/// ```
/// use agboss_core::App;
/// use agboss_core::Approver;
/// use agboss_core::console::{ConsoleExt as _, ConsoleTokens, ConsoleUser};
/// use agboss_core::store::MemoryStore;
///
/// let app = App::builder().store(MemoryStore::new()).build().unwrap();
/// let auth = ConsoleTokens::new()
///     .token("t-maria", ConsoleUser::new("acme", Approver::new("maria").role("manager")));
/// // Mounted under `/console` of your own server:
/// let router: axum::Router = axum::Router::new().nest("/console", app.console_router(auth));
/// # let _ = router;
/// ```
pub trait ConsoleExt {
    /// The console as a router to mount (`Router::nest("/console", ..)`, or at the root): its
    /// links follow the mount point.
    fn console_router(&self, auth: impl ConsoleAuthenticator) -> Router;

    /// Serves the console alone on `addr` until the server fails (the simple case).
    ///
    /// ```no_run
    /// # async fn f(app: agboss_core::App, auth: agboss_core::console::ConsoleTokens) -> std::io::Result<()> {
    /// use agboss_core::console::ConsoleExt as _;
    /// app.serve_console("127.0.0.1:8080".parse().unwrap(), auth).await?;
    /// # Ok(()) }
    /// ```
    fn serve_console(
        &self,
        addr: SocketAddr,
        auth: impl ConsoleAuthenticator,
    ) -> impl std::future::Future<Output = std::io::Result<()>> + Send;
}

impl ConsoleExt for App {
    fn console_router(&self, auth: impl ConsoleAuthenticator) -> Router {
        let console = Arc::new(Console {
            app: self.clone(),
            auth: Box::new(auth),
            secret: crate::store::types::random_id("console"),
        });
        Router::new()
            .route("/", get(inbox::inbox))
            .route("/tickets/{id}", get(inbox::ticket_page))
            .route("/tickets/{id}/{action}", post(inbox::decide))
            .route("/runs/{id}", get(runs::run_page))
            .route("/runs/{id}/events", get(runs::run_events))
            .route("/threads/{id}", get(runs::thread_page))
            .route("/app", get(structure::app_page))
            .route("/assets/console.css", get(css))
            .route("/assets/console.js", get(js))
            .with_state(console)
    }

    async fn serve_console(
        &self,
        addr: SocketAddr,
        auth: impl ConsoleAuthenticator,
    ) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        axum::serve(listener, self.console_router(auth)).await
    }
}

async fn css() -> Response {
    html::with_headers(
        StatusCode::OK,
        "text/css; charset=utf-8",
        include_str!("assets/console.css").to_string(),
    )
}

async fn js() -> Response {
    html::with_headers(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        include_str!("assets/console.js").to_string(),
    )
}
