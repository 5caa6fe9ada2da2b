//! The errors a component's handlers return: [`ToolError`] (a tool's `run`),
//! [`InterceptorError`] (a `before_tool_call` / `after_tool_call`), [`GuardrailError`] (a
//! guardrail's check) and [`ChannelError`] (an approval channel). Each takes any
//! `std::error::Error` with `?`, or a message ([`ToolError::msg`]); the runtime reports it as
//! the `source()` of the error it raises.
use std::fmt;

/// A boxed error, what [`ToolError`] and [`InterceptorError`] carry.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

macro_rules! handler_error {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name(BoxError);

        impl $name {
            /// An error with a plain message.
            pub fn msg(message: impl Into<String>) -> Self {
                Self(message.into().into())
            }
            /// The underlying error.
            pub fn source_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
                &*self.0
            }
            /// Unwraps the underlying error.
            pub fn into_inner(self) -> BoxError {
                self.0
            }
        }

        impl<E: std::error::Error + Send + Sync + 'static> From<E> for $name {
            fn from(err: E) -> Self {
                Self(Box::new(err))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl std::ops::Deref for $name {
            type Target = dyn std::error::Error + Send + Sync + 'static;
            fn deref(&self) -> &Self::Target {
                &*self.0
            }
        }

        impl AsRef<dyn std::error::Error + Send + Sync + 'static> for $name {
            fn as_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
                &*self.0
            }
        }

        impl From<$name> for BoxError {
            fn from(err: $name) -> Self {
                err.0
            }
        }
    };
}

handler_error! {
    /// The error a tool's `run` returns. Any `std::error::Error` converts into it with `?`;
    /// [`ToolError::msg`] makes one from a message.
    ///
    /// Like `anyhow::Error` and `Box<dyn Error>`, it is not itself a `std::error::Error` (that
    /// impl would collide with the blanket `From` that makes `?` work on every error); it
    /// dereferences to `dyn Error + Send + Sync`, converts into a [`BoxError`], and is the
    /// [`source()`](std::error::Error::source) of a [`ToolCallError`](crate::ToolCallError) of kind
    /// [`ToolFailed`](crate::error::ToolCallErrorKind::ToolFailed):
    ///
    /// ```
    /// use std::error::Error as _;
    /// use agboss_core::error::ToolCallErrorKind;
    /// use agboss_core::{ToolCallError, ToolError};
    /// let io = std::io::Error::other("disk on fire");
    /// let err = ToolCallError::new("save-tool", ToolCallErrorKind::ToolFailed { error: ToolError::from(io) });
    /// assert_eq!(err.source().unwrap().to_string(), "disk on fire");
    /// let tool_error = ToolError::msg("late");
    /// let as_dyn: &(dyn std::error::Error + Send + Sync) = &*tool_error;
    /// assert_eq!(as_dyn.to_string(), "late");
    /// ```
    ToolError
}

handler_error! {
    /// The error a `before_tool_call` / `after_tool_call` hook returns. The call fails closed:
    /// the tool does not run (or its output is discarded). Like [`ToolError`], it dereferences
    /// to `dyn Error + Send + Sync` and is the `source()` of
    /// [`ToolCallErrorKind::InterceptorFailed`](crate::error::ToolCallErrorKind::InterceptorFailed).
    InterceptorError
}

handler_error! {
    /// The error an input or output guardrail's check returns. The step fails closed with a
    /// [`GuardrailBlockedError`](crate::error::GuardrailBlockedError) of kind
    /// [`GuardrailBlockKind::Failed`](crate::error::GuardrailBlockKind::Failed). Like [`ToolError`], it
    /// dereferences to `dyn Error + Send + Sync`.
    GuardrailError
}

handler_error! {
    /// The error an approval channel's `notify` or `authorize` returns. It never lets a call
    /// through: a failed `notify` leaves the ticket pending, a failed `authorize` refuses the
    /// approver. Like [`ToolError`], it dereferences to `dyn Error + Send + Sync`.
    ChannelError
}

/// Why an authenticator refused a request (the MCP server's `McpAuthenticator`, the console's
/// `ConsoleAuthenticator`):
/// each front end maps it to its HTTP status and says no more than that.
///
/// ```
/// use agboss_core::error::AuthError;
/// let refused = AuthError::InvalidCredentials;
/// assert_eq!(refused.to_string(), "the credentials are not valid");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The request carries no credentials.
    #[error("the request carries no credentials")]
    MissingCredentials,
    /// The credentials are not valid.
    #[error("the credentials are not valid")]
    InvalidCredentials,
    /// The authenticator could not decide (its identity provider is down, say): refused.
    #[error("the authenticator could not decide")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}
