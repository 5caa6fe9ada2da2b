//! Guardrails: checks at the outer text boundary of an agent or a router. An
//! [`InputGuardrail`] reads the user's input before the model is called; an [`OutputGuardrail`]
//! reads the final answer before it reaches the caller (and, when streaming, every window of
//! text before it is released). Tool interceptors guard each tool call inside; guardrails guard
//! the text going in and out.
//!
//! A guardrail is a struct annotated with `#[input_guardrail(...)]` or `#[output_guardrail(...)]`
//! that implements the matching trait and returns a [`GuardrailVerdict`]:
//!
//! ```
//! use agboss_core::{
//!     contract::guardrail::GuardrailContext, GuardrailError, contract::guardrail::GuardrailVerdict, contract::guardrail::InputGuardrail, input_guardrail,
//! };
//!
//! /// Refuses the classic prompt-injection opener.
//! #[input_guardrail(
//!     name = "injection-input-guardrail",
//!     description = "Refuses inputs that try to override the instructions",
//!     cheap,
//! )]
//! pub struct InjectionInputGuardrail;
//!
//! impl InputGuardrail for InjectionInputGuardrail {
//!     async fn check_input(
//!         &self,
//!         input: &GuardrailContext<'_>,
//!     ) -> Result<GuardrailVerdict, GuardrailError> {
//!         if input.text().to_lowercase().contains("ignore previous instructions") {
//!             return Ok(GuardrailVerdict::block("prompt injection"));
//!         }
//!         Ok(GuardrailVerdict::pass())
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! Attach them with `input_guardrails = [...]` / `output_guardrails = [...]` on `#[agent]`,
//! `#[router]`, `#[workflow]` and `#[application]` (or
//! [`AppBuilder::input_guardrail`](crate::AppBuilder::input_guardrail)); an inner scope removes
//! an inherited one with `exclude_input_guardrails` / `exclude_output_guardrails`. The cascade
//! is resolved once, when the app is built; [`App::describe`](crate::App::describe) shows it.
use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::time::Duration;

use super::built::Built;
use crate::contract::handler_error::GuardrailError;
use crate::di::{DepMeta, DiError, Resolver, Services, TenantContext};

/// Which side of an agent's or router's text boundary a guardrail guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// The user's input, before the model reads it.
    Input,
    /// The answer, before the caller reads it.
    Output,
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Input => "input",
            Self::Output => "output",
        })
    }
}

/// What a guardrail decides about a text.
///
/// ```
/// use agboss_core::contract::guardrail::GuardrailVerdict;
/// assert!(GuardrailVerdict::pass().is_pass());
/// assert_eq!(GuardrailVerdict::rewrite("[redacted]").label(), "rewrite");
/// assert_eq!(GuardrailVerdict::block("secret").label(), "block");
/// assert_eq!(GuardrailVerdict::respond("I can't help with that.").label(), "respond");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[must_use = "a verdict does nothing unless the guardrail returns it"]
pub enum GuardrailVerdict {
    /// The text goes on unchanged (to the next guardrail, then the model or the caller).
    Pass,
    /// The text goes on replaced by `text` (e.g. redacted); the next guardrail reads the new
    /// text.
    Rewrite {
        /// The replacement.
        text: String,
    },
    /// The step fails with a [`GuardrailBlockedError`](crate::pipeline::guard::GuardrailBlockedError) (a
    /// [`StepFailedError`](crate::StepFailedError), catchable by a flow's `on_error`).
    Block {
        /// Why (for logs and the error).
        reason: String,
    },
    /// The step ends with this fixed answer to the user: on the input side the model is not
    /// called; on the output side the model's answer is replaced.
    Respond {
        /// What the user reads.
        answer: String,
    },
}

impl GuardrailVerdict {
    /// Let the text through.
    pub fn pass() -> Self {
        Self::Pass
    }
    /// Replace the text.
    pub fn rewrite(text: impl Into<String>) -> Self {
        Self::Rewrite { text: text.into() }
    }
    /// Fail the step.
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block {
            reason: reason.into(),
        }
    }
    /// End the step with a fixed answer.
    pub fn respond(answer: impl Into<String>) -> Self {
        Self::Respond {
            answer: answer.into(),
        }
    }
    /// True for `pass()`.
    pub fn is_pass(&self) -> bool {
        matches!(self, Self::Pass)
    }
    /// `pass`, `rewrite`, `block` or `respond`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Rewrite { .. } => "rewrite",
            Self::Block { .. } => "block",
            Self::Respond { .. } => "respond",
        }
    }
}

/// Where, in a streamed answer, the text an output guardrail reads comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextScope {
    /// The whole text: the user's input, or the final answer.
    Whole,
    /// A window of a streamed answer, checked before it is released (it starts with the end of
    /// the text released before it, so a match split across deltas is seen whole).
    Window,
    /// The text of a model turn that ended in tool calls (released to the stream once checked;
    /// not the final answer).
    Interim,
}

/// What a guardrail reads: the text and where it is.
///
/// ```
/// use agboss_core::{contract::guardrail::Boundary, contract::guardrail::GuardrailContext, contract::guardrail::TextScope};
/// let ctx = GuardrailContext::new(Boundary::Input, "support-agent", "hello");
/// assert_eq!(ctx.text(), "hello");
/// assert_eq!(ctx.step(), "support-agent");
/// assert_eq!(ctx.scope(), TextScope::Whole);
/// assert!(ctx.tenant().is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GuardrailContext<'a> {
    boundary: Boundary,
    step: &'a str,
    text: &'a str,
    scope: TextScope,
    tenant: Option<&'a TenantContext>,
}

impl<'a> GuardrailContext<'a> {
    /// A context for `text` at `step`'s `boundary` (a whole text, no tenant).
    pub fn new(boundary: Boundary, step: &'a str, text: &'a str) -> Self {
        Self {
            boundary,
            step,
            text,
            scope: TextScope::Whole,
            tenant: None,
        }
    }
    /// The same context for a window or an interim text.
    pub fn with_scope(mut self, scope: TextScope) -> Self {
        self.scope = scope;
        self
    }
    /// The same context with the run's tenant.
    pub fn with_tenant(mut self, tenant: Option<&'a TenantContext>) -> Self {
        self.tenant = tenant;
        self
    }
    /// Input or output.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }
    /// The agent or router whose boundary this is.
    pub fn step(&self) -> &'a str {
        self.step
    }
    /// The text to check.
    pub fn text(&self) -> &'a str {
        self.text
    }
    /// Whole text, streamed window or interim text.
    pub fn scope(&self) -> TextScope {
        self.scope
    }
    /// The run's tenant, if it has one.
    pub fn tenant(&self) -> Option<&'a TenantContext> {
        self.tenant
    }
}

/// The check of an `#[input_guardrail]`. Returning `Err` (or panicking, or running past the
/// guardrail's time limit) fails the step closed: the model is not called.
#[diagnostic::on_unimplemented(
    message = "[input-guardrail.missing-handler] `{Self}` does not implement `InputGuardrail`",
    label = "this input guardrail has no check",
    note = "add `impl InputGuardrail for {Self} {{ async fn check_input(&self, input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {{ .. }} }}`"
)]
pub trait InputGuardrail: Send + Sync {
    /// Checks the input and decides.
    fn check_input(
        &self,
        input: &GuardrailContext<'_>,
    ) -> impl Future<Output = Result<GuardrailVerdict, GuardrailError>> + Send;
}

/// The check of an `#[output_guardrail]`. Returning `Err` (or panicking, or running past the
/// guardrail's time limit) fails the step closed: nothing more reaches the caller.
#[diagnostic::on_unimplemented(
    message = "[output-guardrail.missing-handler] `{Self}` does not implement `OutputGuardrail`",
    label = "this output guardrail has no check",
    note = "add `impl OutputGuardrail for {Self} {{ async fn check_output(&self, output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {{ .. }} }}`"
)]
pub trait OutputGuardrail: Send + Sync {
    /// Checks the answer (or a window of it) and decides.
    fn check_output(
        &self,
        output: &GuardrailContext<'_>,
    ) -> impl Future<Output = Result<GuardrailVerdict, GuardrailError>> + Send;
}

/// How a streamed answer reaches the caller when output guardrails guard its path.
///
/// ```
/// use agboss_core::contract::guardrail::OutputStreaming;
/// assert_eq!(OutputStreaming::default(), OutputStreaming::Hold);
/// let windows = OutputStreaming::windows(200, 64);
/// assert_eq!(windows, OutputStreaming::Windows { size: 200, overlap: 64 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputStreaming {
    /// Text deltas are held back until the output guardrails have passed the whole answer
    /// (default).
    #[default]
    Hold,
    /// Text deltas are released in windows of at least `size` characters, each checked by the
    /// output guardrails before release together with the last `overlap` characters before it
    /// (and the last `overlap` characters of a window are kept back for the next one), so a
    /// match of up to `overlap` characters split across deltas is always seen whole before any
    /// of it is released. The whole answer is checked again at the end.
    ///
    /// The overlap used is never below the longest `max_match` declared by the output
    /// guardrails of the path (`#[output_guardrail(max_match = 40)]`): `windows(200, 0)` on a
    /// path whose guardrail looks for 40-character locators overlaps by 40. Declare
    /// `max_match` on every output guardrail that looks for bounded patterns; one without it
    /// sees a match across a window boundary only within the configured overlap.
    Windows {
        /// Characters per window (at least 1).
        size: usize,
        /// Characters each window shares with the one before it.
        overlap: usize,
    },
}

impl OutputStreaming {
    /// Windows of `size` characters with `overlap` characters of overlap.
    pub fn windows(size: usize, overlap: usize) -> Self {
        Self::Windows {
            size: size.max(1),
            overlap,
        }
    }
}

/// The time limit of a guardrail's check when neither the guardrail (`timeout_ms`) nor the app
/// ([`AppBuilder::guardrail_timeout`](crate::AppBuilder::guardrail_timeout)) sets one.
pub const DEFAULT_GUARDRAIL_TIMEOUT: Duration = Duration::from_secs(10);

/// Registration data of an `#[input_guardrail]` or `#[output_guardrail]`.
pub struct GuardrailMeta {
    /// Unique kebab-case name ending in `-input-guardrail` / `-output-guardrail`.
    pub name: &'static str,
    /// What it checks.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Input or output.
    pub boundary: Boundary,
    /// Its dependencies (services and `TenantContext`).
    pub deps: &'static [DepMeta],
    /// Time limit of one check in milliseconds (`None`: the app's `guardrail_timeout`).
    pub timeout_ms: Option<u64>,
    /// `cheap`: runs before the guardrails of its boundary that are not (cascade order kept
    /// within each group).
    pub cheap: bool,
    /// `parallel` (input guardrails only): the model's first turn starts while it runs; no tool
    /// call executes and nothing reaches the caller until it has passed.
    pub parallel: bool,
    /// `max_match` (output guardrails only): the longest text, in characters, that one match
    /// of its check spans. Streamed [`OutputStreaming::Windows`] overlap by at least this
    /// much on every path the guardrail guards, so a match split across deltas is always seen
    /// whole before any of it is released. `None`: not declared (the window's own overlap is
    /// all the guardrail gets).
    pub max_match: Option<usize>,
    /// Builds the guardrail against the app's services, as the runtime runs it (opaque here).
    #[doc(hidden)]
    pub build: fn(&Services) -> Result<Built, DiError>,
}

impl GuardrailMeta {
    /// True for the same guardrail type.
    pub fn same(&self, other: &GuardrailMeta) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

impl fmt::Debug for GuardrailMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// What one scope (application, workflow, agent or router) says about guardrails: the
/// `input_guardrails`, `exclude_input_guardrails`, `output_guardrails`,
/// `exclude_output_guardrails` and `mask_answer` keys of its macro.
#[derive(Debug, Clone, Copy)]
pub struct ScopeGuardrails {
    /// Input guardrails attached here.
    pub input: &'static [&'static GuardrailMeta],
    /// Inherited input guardrails removed here (and below).
    pub exclude_input: &'static [&'static GuardrailMeta],
    /// Output guardrails attached here.
    pub output: &'static [&'static GuardrailMeta],
    /// Inherited output guardrails removed here (and below).
    pub exclude_output: &'static [&'static GuardrailMeta],
    /// `mask_answer`: the path's PII policies also mask the final answer (after the output
    /// guardrails). Set at any scope of a path, it holds for the whole path.
    pub mask_answer: bool,
}

impl ScopeGuardrails {
    /// A scope that says nothing about guardrails.
    pub const NONE: Self = Self {
        input: &[],
        exclude_input: &[],
        output: &[],
        exclude_output: &[],
        mask_answer: false,
    };
}

/// Implemented by `#[input_guardrail]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an input guardrail [input-guardrail.not-a-guardrail]",
    label = "expected an `#[input_guardrail]` struct",
    note = "only structs annotated with `#[input_guardrail(...)]` can be listed in `input_guardrails` / `exclude_input_guardrails`"
)]
pub trait InputGuardrailComponent: Send + Sync + Sized + 'static {
    /// Registration data.
    const META: &'static GuardrailMeta;
    /// Builds the guardrail from its dependencies.
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;
}

/// Implemented by `#[output_guardrail]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an output guardrail [output-guardrail.not-a-guardrail]",
    label = "expected an `#[output_guardrail]` struct",
    note = "only structs annotated with `#[output_guardrail(...)]` can be listed in `output_guardrails` / `exclude_output_guardrails`"
)]
pub trait OutputGuardrailComponent: Send + Sync + Sized + 'static {
    /// Registration data.
    const META: &'static GuardrailMeta;
    /// Builds the guardrail from its dependencies.
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError>;
}
