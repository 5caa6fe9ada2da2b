//! What every handler shares: the [`Console`] (the app, the authenticator, the CSRF secret),
//! [`Seen`] (an authenticated request: who, and where the console is mounted), and the small
//! readers and error pages of every page.
use std::sync::Arc;

use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

use super::auth::{ConsoleAuthError, ConsoleRequest, ConsoleUser, DynAuthenticator};
use super::{csrf, html};
use crate::app::App;
use crate::store::StoreError;

/// What every handler shares.
pub(super) struct Console {
    pub(super) app: App,
    pub(super) auth: Box<dyn DynAuthenticator>,
    /// What the CSRF tokens are derived from (random per router).
    pub(super) secret: String,
}

/// An authenticated request: who, and where the console is mounted.
/// Every handler takes a [`Seen`]: the request is authenticated before anything else runs, and
/// refused with its page when it is not.
impl FromRequestParts<Arc<Console>> for Seen {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        console: &Arc<Console>,
    ) -> Result<Self, Self::Rejection> {
        let original = parts
            .extensions
            .get::<OriginalUri>()
            .map_or_else(|| parts.uri.clone(), |o| o.0.clone());
        console
            .authenticate(&parts.headers, &original, &parts.uri)
            .await
            .map_err(|refused| *refused)
    }
}

pub(super) struct Seen {
    pub(super) user: ConsoleUser,
    pub(super) base: String,
    pub(super) csrf: String,
}

impl Seen {
    pub(super) fn who(&self) -> Option<(&str, &str)> {
        Some((&self.user.approver.id, &self.user.tenant))
    }
    /// A message page for this user.
    pub(super) fn message(&self, status: StatusCode, title: &str, message: &str) -> Response {
        html::message_page(&self.base, self.who(), status, title, message)
    }
}

/// The mount point: the original path less the part this router saw.
fn base(original: &Uri, seen: &Uri) -> String {
    let full = original.path();
    let local = seen.path();
    if local == "/" {
        full.trim_end_matches('/').to_string()
    } else {
        full.strip_suffix(local).unwrap_or_default().to_string()
    }
}

impl Console {
    /// Authenticates a request, or the refusal page: an error (or a panic) of the
    /// authenticator refuses.
    pub(super) async fn authenticate(
        &self,
        headers: &HeaderMap,
        original: &Uri,
        uri: &Uri,
    ) -> Result<Seen, Box<Response>> {
        use futures::FutureExt as _;
        let base = base(original, uri);
        let request = ConsoleRequest::new(headers);
        let refused = |status, message: &str| {
            Err(Box::new(html::message_page(
                &base, None, status, "Refused", message,
            )))
        };
        let result = std::panic::AssertUnwindSafe(self.auth.authenticate(&request))
            .catch_unwind()
            .await;
        let user = match result {
            Ok(Ok(user)) => user,
            Ok(Err(ConsoleAuthError::Unavailable(_))) | Err(_) => {
                return refused(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The console cannot check who you are right now.",
                );
            }
            Ok(Err(_)) => return refused(StatusCode::UNAUTHORIZED, "Sign in to use the console."),
        };
        // The approver decides as a member of the user's tenant, whatever the authenticator set.
        let user = ConsoleUser::new(user.tenant.clone(), user.approver)
            .session(user.session)
            .reveal_input(user.reveal_input);
        let csrf = csrf::token(&self.secret, &user);
        Ok(Seen { user, base, csrf })
    }
}

/// The pairs of a query string or a form body.
pub(super) fn pairs(text: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(text.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

pub(super) fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A store error as a page: not found is 404 (another tenant's ticket too), the rest 500.
pub(super) fn store_error(seen: &Seen, e: &StoreError) -> Response {
    match e {
        StoreError::TicketNotFound { .. }
        | StoreError::RunNotFound { .. }
        | StoreError::ThreadNotFound { .. } => {
            seen.message(StatusCode::NOT_FOUND, "Not found", "There is nothing here.")
        }
        StoreError::NotConfigured => seen.message(
            StatusCode::SERVICE_UNAVAILABLE,
            "No store",
            "This app has no store: there are no tickets to decide.",
        ),
        other => seen.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Store error",
            &other.to_string(),
        ),
    }
}
