//! An approval channel behind `dyn` ([`ErasedChannel`]): what a `#[channel]`'s meta builds
//! (opaque to the contract, as a [`Built`]) and what the engine and the app's `decide` run.
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::contract::Built;
use crate::contract::channel::{ApprovalChannel, Approver, Channel};
use crate::contract::handler_error::ChannelError;
use crate::contract::ticket::Ticket;
use crate::di::{DiError, Resolver, Services};

/// An [`ApprovalChannel`] behind `dyn`.
#[doc(hidden)]
pub trait ErasedChannel: Send + Sync {
    fn notify<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, Result<(), ChannelError>>;
    fn authorize<'a>(
        &'a self,
        approver: &'a Approver,
        ticket: &'a Ticket,
    ) -> BoxFuture<'a, Result<bool, ChannelError>>;
}

impl<C: ApprovalChannel> ErasedChannel for C {
    fn notify<'a>(&'a self, ticket: &'a Ticket) -> BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(ApprovalChannel::notify(self, ticket))
    }
    fn authorize<'a>(
        &'a self,
        approver: &'a Approver,
        ticket: &'a Ticket,
    ) -> BoxFuture<'a, Result<bool, ChannelError>> {
        Box::pin(ApprovalChannel::authorize(self, approver, ticket))
    }
}

/// Builds channel `C` against the app's services, behind `dyn` (what `ChannelMeta::build`
/// points at).
#[doc(hidden)]
pub fn build_channel<C: Channel + ApprovalChannel>(services: &Services) -> Result<Built, DiError> {
    let resolver = Resolver::for_services(services);
    let channel: Arc<dyn ErasedChannel> = Arc::new(C::construct(&resolver)?);
    Ok(Built::new(channel))
}

/// The channel a `ChannelMeta::build` built.
pub(crate) fn channel_of(built: Built) -> Result<Arc<dyn ErasedChannel>, DiError> {
    built
        .downcast::<Arc<dyn ErasedChannel>>()
        .ok_or_else(|| DiError::Failed("a channel built no channel of this runtime".into()))
}
