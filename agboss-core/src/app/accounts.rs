//! The app's side of account requests (feature `mcp`): the remote servers that name an account
//! channel ([`McpServerConfig::account_channel`](crate::mcp::client::McpServerConfig::account_channel))
//! are checked at build, their channels built with the app's, and a missing credential's
//! request is raised in the app's store through the engine's one-call tickets
//! ([`crate::engine::account`]).
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;

use crate::cascade::{Blueprint, RemoteServers};
use crate::contract::channel::ChannelMeta;
use crate::di::BuildError;
use crate::engine::Runtime;
use crate::engine::account;
use crate::engine::ticket::tell_channel;
use crate::mcp::client::{AccountDesk, AccountRequests};

/// The account channels of an app's servers, checked, and the desk their tools ask through.
pub(super) struct Accounts {
    pub(super) channels: Vec<&'static ChannelMeta>,
    desk: Option<Arc<AccountDesk>>,
}

/// Checks every server's account channel (a registered `#[channel]`, a server with per-tenant
/// credentials, an app with a store) and puts the desk among the services.
pub(super) fn prepare(
    bp: &mut Blueprint,
    servers: &RemoteServers,
    has_store: bool,
) -> Result<Accounts, BuildError> {
    let mut channels: Vec<&'static ChannelMeta> = Vec::new();
    for server in servers.iter() {
        let Some((name, per_tenant)) = server.account_channel() else {
            continue;
        };
        let refuse = |problem: String| BuildError::Mcp {
            server: server.name(),
            tool: None,
            problem,
        };
        let meta = account::channel_meta(name).ok_or_else(|| {
            refuse(format!(
                "its account channel `{name}` is not a `#[channel]` of this program; name a `#[channel(name = \"{name}\", ..)]` struct"
            ))
        })?;
        if !per_tenant {
            return Err(refuse(format!(
                "it names the account channel `{name}` but takes no per-tenant credentials; add `.credentials(..)` to its config"
            )));
        }
        if !has_store {
            return Err(refuse(format!(
                "its account channel `{name}` keeps its tickets in the app's store; add `.store(..)` to the builder"
            )));
        }
        if !channels.iter().any(|c| c.name == meta.name) {
            // Its dependencies, as a gated tool's channel gets them.
            bp.services.ensure(meta.name, meta.deps, &mut Vec::new())?;
            channels.push(meta);
        }
    }
    let desk = (!channels.is_empty()).then(|| {
        let desk = Arc::new(AccountDesk::default());
        bp.services.insert(Arc::clone(&desk));
        desk
    });
    Ok(Accounts { channels, desk })
}

impl Accounts {
    /// Hands the built app's runtime to the desk (weakly: the runtime holds the desk).
    pub(super) fn install(&self, rt: &Arc<Runtime>) {
        if let Some(desk) = &self.desk {
            desk.install(Arc::new(StoreAccounts {
                rt: Arc::downgrade(rt),
                raising: tokio::sync::Mutex::new(()),
            }));
        }
    }
}

/// Account requests in the app's store.
struct StoreAccounts {
    rt: Weak<Runtime>,
    /// One request raised at a time, so repeated calls raise one ticket.
    raising: tokio::sync::Mutex<()>,
}

impl AccountRequests for StoreAccounts {
    fn request<'a>(
        &'a self,
        server: &'static str,
        channel: &'static str,
        tenant: &'a str,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let rt = self.rt.upgrade()?;
            let meta = account::channel_meta(channel)?;
            let _one = self.raising.lock().await;
            match account::request(&rt, server, meta, tenant).await {
                Ok((ticket, new)) => {
                    if new {
                        // A failure to tell leaves it pending (logged).
                        let _ = tell_channel(&rt, &ticket).await;
                    }
                    Some(ticket.id)
                }
                Err(error) => {
                    tracing::error!(server, tenant, %error, "no request to connect the account was stored");
                    None
                }
            }
        })
    }
}
