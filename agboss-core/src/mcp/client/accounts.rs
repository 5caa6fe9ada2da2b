//! A missing credential asks a human to connect the account
//! ([`McpServerConfig::account_channel`](super::McpServerConfig::account_channel)): the remote
//! tools of a server that names an account channel hand the tenant of a call that found no
//! credential to the app's [`AccountRequests`], which raises (or finds pending) the ticket in
//! the app's store. The app implements it over its runtime, so this module needs nothing above
//! it.
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;

use super::error::McpError;

/// Raises the request to connect `tenant`'s account on `server` on `channel`, or finds the one
/// pending: its ticket id, `None` when none could be stored (logged; the call fails as it
/// would anyway).
pub(crate) trait AccountRequests: Send + Sync {
    fn request<'a>(
        &'a self,
        server: &'static str,
        channel: &'static str,
        tenant: &'a str,
    ) -> BoxFuture<'a, Option<String>>;
}

/// Where a built app puts its [`AccountRequests`] (one of its services, filled once the app is
/// built: the requests need the app's runtime, which holds the services).
#[derive(Default)]
pub(crate) struct AccountDesk(OnceLock<Arc<dyn AccountRequests>>);

impl AccountDesk {
    /// Installs the app's requests (once).
    pub(crate) fn install(&self, requests: Arc<dyn AccountRequests>) {
        let _ = self.0.set(requests);
    }

    /// `error` with the ticket of the request it raises, when it is a missing credential of a
    /// tenant on a server that names an account channel.
    pub(crate) async fn on_error(
        &self,
        channel: Option<&'static str>,
        error: McpError,
    ) -> McpError {
        let (Some(channel), Some(requests)) = (channel, self.0.get()) else {
            return error;
        };
        match error {
            McpError::NoCredential {
                server,
                tenant: Some(tenant),
                ticket: None,
            } => {
                let ticket = requests.request(server, channel, &tenant).await;
                McpError::NoCredential {
                    server,
                    tenant: Some(tenant),
                    ticket,
                }
            }
            other => other,
        }
    }
}
