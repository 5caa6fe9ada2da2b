//! Human approval channels: [`ApprovalChannel`] (what a `#[channel]` struct implements),
//! [`ChannelMeta`] and the [`Approver`] who decides.
//!
//! A tool names its channel with `#[tool(approval = ManagerChannel)]` (optionally
//! `approval_when = path::to::fn`, a `fn(&Input) -> bool`). A call of it that every
//! `before_tool_call` allowed does not run: a ticket bound to the exact call is written to the
//! thread store, then the channel is told ([`ApprovalChannel::notify`]); the run stops with the
//! pending ticket until someone the channel authorizes ([`ApprovalChannel::authorize`])
//! decides, and the run is resumed.
use std::any::TypeId;
use std::fmt;
use std::future::Future;

use super::built::Built;
use super::ticket::Ticket;
use crate::contract::handler_error::ChannelError;
use crate::di::{DepMeta, DiError, Resolver, Services};

/// Who decides a ticket.
///
/// ```
/// use agboss_core::contract::channel::Approver;
/// let manager = Approver::new("maria").tenant("acme").role("manager");
/// assert!(manager.has_role("manager"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Approver {
    /// The approver's id.
    pub id: String,
    /// The tenant the approver belongs to, if any.
    pub tenant: Option<String>,
    /// The approver's roles.
    pub roles: Vec<String>,
}

impl Approver {
    /// An approver by id.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }
    /// Of this tenant.
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// With this role.
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.roles.push(role.into());
        self
    }
    /// Whether the approver has `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }
}

/// A human decision handed to one invocation of a gated tool (by the engine, when it resumes a
/// run with a decided ticket): the approval point lets the call through only for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalGrant {
    /// Approved for exactly the input of this fingerprint (SHA-256 of its canonical JSON).
    Approved {
        /// The approved input's fingerprint.
        fingerprint: String,
    },
    /// The approver wrote these arguments themselves (an edit): they pass the before chain
    /// again, then run.
    ApproverInput,
}

/// What a `#[channel]` struct implements.
#[diagnostic::on_unimplemented(
    message = "[channel.missing-handler] `{Self}` does not implement `ApprovalChannel`",
    label = "this channel has no `notify` / `authorize`",
    note = "add `impl ApprovalChannel for {Self} {{ async fn notify(&self, ticket: &Ticket) -> Result<(), ChannelError> {{ .. }} async fn authorize(&self, approver: &Approver, ticket: &Ticket) -> Result<bool, ChannelError> {{ .. }} }}`"
)]
pub trait ApprovalChannel: Send + Sync + 'static {
    /// A new ticket was stored: tell a human (a webhook, a queue, a console). An error does not
    /// let the call through: the ticket stays pending and the run still stops for it, with the
    /// error reported.
    fn notify(&self, ticket: &Ticket) -> impl Future<Output = Result<(), ChannelError>> + Send;
    /// Whether `approver` may decide `ticket`. An error or a panic refuses.
    fn authorize(
        &self,
        approver: &Approver,
        ticket: &Ticket,
    ) -> impl Future<Output = Result<bool, ChannelError>> + Send;
}

/// A `#[channel]`: its registration data and constructor (implemented by the macro; the struct
/// implements [`ApprovalChannel`] itself, `[channel.missing-handler]` otherwise).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an approval channel [tool.not-a-channel]",
    label = "expected a `#[channel]` struct",
    note = "`approval = ..` names a struct annotated with `#[channel(name = \"...-channel\", description = \"...\")]`"
)]
pub trait Channel: Sized + Send + Sync + 'static {
    /// Registration data.
    const META: &'static ChannelMeta;
    /// Builds the channel from its dependencies.
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;
}

/// How long a ticket can be decided when the channel sets no `ttl_ms`: 24 hours.
pub const DEFAULT_TICKET_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// What `#[channel]` generates.
pub struct ChannelMeta {
    /// Unique kebab-case name ending in `-channel`.
    pub name: &'static str,
    /// What it is for.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Its dependencies.
    pub deps: &'static [DepMeta],
    /// How long its tickets can be decided, in milliseconds (`None`:
    /// [`DEFAULT_TICKET_TTL_MS`]).
    pub ttl_ms: Option<u64>,
    /// Builds the channel against the app's services, as the runtime runs it (opaque here).
    #[doc(hidden)]
    pub build: fn(&Services) -> Result<Built, DiError>,
}

impl ChannelMeta {
    /// How long its tickets can be decided, in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms.unwrap_or(DEFAULT_TICKET_TTL_MS)
    }
}

impl fmt::Debug for ChannelMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Compile-time check that `C` is a `#[channel]` (for `#[tool(approval = C)]`).
#[doc(hidden)]
pub const fn channel_meta<C: Channel>() -> &'static ChannelMeta {
    C::META
}
