//! PII masking as the pipeline runs it: a policy's masker built from its meta
//! ([`policy_masker`], once per app by the cascade) and the resolved policies of one path
//! ([`PiiChain`]), which [`super::render`] applies to what a model reads.
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::pii_policy::PiiPolicyMeta;
use crate::di::BuildError;
use crate::pii::{MaskReport, PiiMasker, builtin_detectors};

/// Builds the masker of a `#[pii_policy]`.
///
/// ```
/// use agboss_core::{pii_policy, pipeline::pii::policy_masker};
/// use agboss_core::contract::pii_policy::PiiPolicy;
///
/// #[pii_policy(name = "mail-pii-policy", description = "Hides e-mails", detectors = [email])]
/// pub struct MailPiiPolicy;
///
/// let masker = policy_masker(<MailPiiPolicy as PiiPolicy>::META).unwrap();
/// assert!(!masker.mask_str("write to jane@example.com").contains("jane@example.com"));
/// ```
///
/// # Errors
/// An unknown detector name, an invalid custom detector, or a `hash` policy whose key
/// variable is unset or empty.
pub fn policy_masker(meta: &PiiPolicyMeta) -> Result<PiiMasker, BuildError> {
    let invalid =
        |message: String| BuildError::Invalid(format!("PII policy `{}`: {message}", meta.name));
    let mut builder = PiiMasker::builder().default_strategy(meta.strategy);
    let all = builtin_detectors();
    if meta.detectors.is_empty() && meta.custom_detectors.is_empty() {
        for d in all {
            builder = builder.shared_detector(d, None);
        }
    } else {
        for name in meta.detectors {
            let d = all
                .iter()
                .find(|d| d.name() == *name)
                .ok_or_else(|| invalid(format!("unknown detector `{name}`")))?;
            builder = builder.shared_detector(Arc::clone(d), None);
        }
    }
    for make in meta.custom_detectors {
        builder = builder.shared_detector(make(), None);
    }
    if let Some(var) = meta.hash_key_env {
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
