//! PII policies: `#[pii_policy(...)]` declares which personal data to mask (detectors of
//! [`crate::pii`]) and how (a [`MaskStrategy`]); `pii_policies = [...]` attaches it at an
//! application, workflow, agent or tool, like interceptors.
//!
//! ```
//! use agboss_core::{pii_policy, tool, App, ToolError, ToolHandler};
//! use agboss_core::dto::Dto;
//!
//! #[pii_policy(name = "contact-pii-policy", description = "Hides e-mails and cards",
//!              detectors = [email, card], strategy = "partial", keep = 4)]
//! pub struct ContactPiiPolicy;
//!
//! #[derive(Dto, Debug, Clone, PartialEq)]
//! pub struct CustomerDto {
//!     #[text(prompt = "Customer e-mail")]
//!     pub email: String,
//!     #[text(prompt = "Card on file")]
//!     pub card: String,
//! }
//!
//! #[tool(name = "customer-tool", description = "Loads a customer", input = CustomerDto,
//!        output = CustomerDto, pii_policies = [ContactPiiPolicy])]
//! pub struct CustomerTool;
//! impl ToolHandler<CustomerDto, CustomerDto> for CustomerTool {
//!     async fn run(&self, input: CustomerDto) -> Result<CustomerDto, ToolError> { Ok(input) }
//! }
//!
//! let app = App::builder().tool::<CustomerTool>().build().unwrap();
//! let out = futures::executor::block_on(app.tool::<CustomerTool>().invoke_json(
//!     r#"{"email":"jane@example.com","card":"4242 4242 4242 4242"}"#,
//! )).unwrap();
//! // Masked value by value; the keys stay in declaration order.
//! assert_eq!(out, r#"{"email":"j***@example.com","card":"************4242"}"#);
//! ```
//!
//! Where and how masking happens is told by [`crate::pipeline::render`].
//!
//! # Cascade
//!
//! Policies of every scope of a path apply, outermost first (each policy once). There is no
//! `exclude_pii_policies`: an inner scope cannot switch off the masking an outer one requires.
//! Maskers are built once, when the app is built (a `hash` policy whose key is missing is a
//! build error), by the pipeline ([`crate::pipeline::pii`]), which also holds a path's
//! resolved [`PiiChain`](crate::pipeline::pii::PiiChain).
//!
//! # Why the meta names `pii` types
//!
//! A policy's data is the user's vocabulary of masking: which [`Detector`]s (the built-in
//! ones by name, custom ones as `fn() -> Arc<dyn Detector>`) and which [`MaskStrategy`]. Those
//! are data and a trait of the leaf [`crate::pii`], which imports nothing of the crate: the
//! contract names them rather than keep a second copy of the vocabulary. Nothing of the
//! runtime (a built masker, a path's chain of them) is named here.
use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

use crate::pii::{Detector, MaskStrategy};

/// Registration data of a `#[pii_policy]`.
pub struct PiiPolicyMeta {
    /// Unique kebab-case name ending in `-pii-policy`.
    pub name: &'static str,
    /// What the policy protects.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Built-in detectors by name (`email`, `phone`, `card`, `iban`, `ssn`, `ipv4`, `ipv6`);
    /// empty with no custom detector means every built-in one.
    pub detectors: &'static [&'static str],
    /// Custom detectors (`custom_detectors = [T]`, `T: Detector + Default`).
    pub custom_detectors: &'static [fn() -> Arc<dyn Detector>],
    /// How findings are masked.
    pub strategy: MaskStrategy,
    /// For `strategy = "hash"`: the environment variable holding the key, read at build.
    pub hash_key_env: Option<&'static str>,
}

impl fmt::Debug for PiiPolicyMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PiiPolicyMeta {
    /// True when both describe the same policy type.
    pub fn same(&self, other: &PiiPolicyMeta) -> bool {
        (self.type_id)() == (other.type_id)()
    }
}

/// Implemented by `#[pii_policy]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a PII policy [pii-policy.not-a-policy]",
    label = "expected a `#[pii_policy]` struct",
    note = "only structs annotated with `#[pii_policy(...)]` can be listed in `pii_policies = [...]`"
)]
pub trait PiiPolicy: 'static {
    /// Registration data.
    const META: &'static PiiPolicyMeta;
}

/// A custom detector of `custom_detectors = [T]` (used by the macro).
#[doc(hidden)]
pub fn custom_detector<T: Detector + Default + 'static>() -> Arc<dyn Detector> {
    Arc::new(T::default())
}
