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
//! build error).
use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::di::BuildError;
use crate::pii::{Detector, MaskReport, MaskStrategy, PiiMasker, builtin_detectors};

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

    /// Builds the policy's masker.
    ///
    /// # Errors
    /// An unknown detector name, an invalid custom detector, or a `hash` policy whose key
    /// variable is unset or empty.
    pub fn masker(&self) -> Result<PiiMasker, BuildError> {
        let invalid =
            |message: String| BuildError::Invalid(format!("PII policy `{}`: {message}", self.name));
        let mut builder = PiiMasker::builder().default_strategy(self.strategy);
        let all = builtin_detectors();
        if self.detectors.is_empty() && self.custom_detectors.is_empty() {
            for d in all {
                builder = builder.shared_detector(d, None);
            }
        } else {
            for name in self.detectors {
                let d = all
                    .iter()
                    .find(|d| d.name() == *name)
                    .ok_or_else(|| invalid(format!("unknown detector `{name}`")))?;
                builder = builder.shared_detector(Arc::clone(d), None);
            }
        }
        for make in self.custom_detectors {
            builder = builder.shared_detector(make(), None);
        }
        if let Some(var) = self.hash_key_env {
            match std::env::var(var) {
                Ok(key) if !key.is_empty() => builder = builder.hash_key(key.into_bytes()),
                _ => {
                    return Err(invalid(format!(
                        "the `hash` strategy reads its key from the environment variable `{var}`, which is unset or empty"
                    )));
                }
            }
        }
        builder.build().map_err(|e| invalid(e.to_string()))
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

/// The resolved PII policies of one path, outermost first, with their built maskers.
#[derive(Clone, Default)]
pub struct PiiChain {
    policies: Vec<(&'static PiiPolicyMeta, Arc<PiiMasker>)>,
}

impl fmt::Debug for PiiChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl PiiChain {
    /// The chain of these policies, outermost first (built by the cascade).
    pub(crate) fn from_policies(policies: Vec<(&'static PiiPolicyMeta, Arc<PiiMasker>)>) -> Self {
        Self { policies }
    }
    /// True when no policy applies.
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }
    /// The names of the policies, outermost first.
    pub fn names(&self) -> Vec<&'static str> {
        self.policies.iter().map(|(m, _)| m.name).collect()
    }
    /// Masks a text with every policy.
    pub fn mask_text<'t>(&self, text: &'t str, report: &mut MaskReport) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (_, masker) in &self.policies {
            if let Cow::Owned(masked) = masker.mask_str_with_report(&out, report) {
                out = Cow::Owned(masked);
            }
        }
        out
    }
    /// Masks every string of a JSON document with every policy.
    pub fn mask_value(&self, value: &mut Value, report: &mut MaskReport) {
        for (_, masker) in &self.policies {
            masker.mask_json_with_report(value, report);
        }
    }
}

/// A custom detector of `custom_detectors = [T]` (used by the macro).
#[doc(hidden)]
pub fn custom_detector<T: Detector + Default + 'static>() -> Arc<dyn Detector> {
    Arc::new(T::default())
}
