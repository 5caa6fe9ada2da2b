//! The guardrails of a path, resolved once at build: each boundary's chain (outer to inner,
//! `cheap` ones first), exclusions applied like the interceptors' (an exclusion removes an
//! inherited guardrail for its scope and everything below it; a guardrail attached at several
//! scopes runs once, at its outermost place), and the PII chain that masks the final answer
//! when a scope of the path sets `mask_answer`.
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Pool, ScopeSpec};
use crate::contract::guardrail::{Boundary, GuardrailMeta, ScopeGuardrails};
use crate::contract::scope::ScopeRef;
use crate::di::BuildError;
use crate::di::{DepKind, Services};
use crate::pipeline::pii::PiiChain;
use crate::pipeline::{ErasedGuardrail, guardrail_of};

/// What one scope attaches and excludes, per boundary (the builder's lists for the
/// application, a macro's [`ScopeGuardrails`] for the others).
#[derive(Debug, Clone, Default)]
pub(crate) struct GuardSpec {
    /// `input_guardrails = [...]`.
    pub input: Vec<&'static GuardrailMeta>,
    /// `exclude_input_guardrails = [...]`.
    pub exclude_input: Vec<&'static GuardrailMeta>,
    /// `output_guardrails = [...]`.
    pub output: Vec<&'static GuardrailMeta>,
    /// `exclude_output_guardrails = [...]`.
    pub exclude_output: Vec<&'static GuardrailMeta>,
    /// `mask_answer`.
    pub mask_answer: bool,
}

impl From<&ScopeGuardrails> for GuardSpec {
    fn from(g: &ScopeGuardrails) -> Self {
        Self {
            input: g.input.to_vec(),
            exclude_input: g.exclude_input.to_vec(),
            output: g.output.to_vec(),
            exclude_output: g.exclude_output.to_vec(),
            mask_answer: g.mask_answer,
        }
    }
}

impl GuardSpec {
    fn lists(&self, boundary: Boundary) -> (&[&'static GuardrailMeta], &[&'static GuardrailMeta]) {
        match boundary {
            Boundary::Input => (&self.input, &self.exclude_input),
            Boundary::Output => (&self.output, &self.exclude_output),
        }
    }
}

/// One guardrail of a boundary: its app instance, where it was attached, its time limit.
#[derive(Clone)]
pub struct GuardrailEntry {
    /// Its registration data.
    pub meta: &'static GuardrailMeta,
    /// The scope that attached it (the outermost, when several did).
    pub attached_at: ScopeRef,
    pub(crate) guard: Arc<dyn ErasedGuardrail>,
    pub(crate) timeout: Duration,
}

impl fmt::Debug for GuardrailEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (from {})", self.meta.name, self.attached_at)
    }
}

/// The guardrails of one boundary of a path, in the order they run: `cheap` ones first, each
/// group in cascade order (outer to inner).
#[derive(Clone, Default)]
pub struct GuardrailChain {
    entries: Arc<[GuardrailEntry]>,
}

impl fmt::Debug for GuardrailChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter()).finish()
    }
}

impl GuardrailChain {
    /// True when no guardrail guards this boundary.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The guardrails in the order they run.
    pub fn entries(&self) -> &[GuardrailEntry] {
        &self.entries
    }
    /// Their names, in the order they run.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.meta.name).collect()
    }
    /// True when it holds a guardrail of the same type as `meta`.
    pub fn contains(&self, meta: &GuardrailMeta) -> bool {
        self.entries.iter().any(|e| e.meta.same(meta))
    }
}

/// Both boundaries of a path.
#[derive(Clone, Default)]
pub struct Guardrails {
    /// What checks the input before the model reads it.
    pub input: GuardrailChain,
    /// What checks the answer before the caller reads it.
    pub output: GuardrailChain,
    /// The PII policies that mask the final answer (`mask_answer` on a scope of the path).
    pub answer_pii: Option<PiiChain>,
}

impl fmt::Debug for Guardrails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guardrails")
            .field("input", &self.input)
            .field("output", &self.output)
            .field("answer_pii", &self.answer_pii)
            .finish()
    }
}

impl Guardrails {
    /// True when nothing guards the text boundary of the path.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.output.is_empty() && self.answer_pii.is_none()
    }
}

/// An exclusion seen while resolving guardrails: where, what, and whether it removed anything.
pub(crate) type GuardExclusion = (ScopeRef, &'static GuardrailMeta, bool);

impl Pool {
    /// The app's instance of a guardrail, built on first use.
    pub(super) fn guardrail(
        &mut self,
        meta: &'static GuardrailMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedGuardrail>, BuildError> {
        let id = (meta.type_id)();
        if let Some(g) = self.guards.get(&id) {
            return Ok(Arc::clone(g));
        }
        if let Some(dep) = meta
            .deps
            .iter()
            .find(|d| matches!(d.kind, DepKind::Execution))
        {
            return Err(BuildError::Invalid(format!(
                "guardrail `{}` depends on `{}`, which exists only during a tool call; a guardrail may depend on services and `TenantContext`",
                meta.name, dep.type_name
            )));
        }
        services.ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        let built = (meta.build)(services).and_then(guardrail_of).map_err(|e| {
            BuildError::ServiceConstruction {
                service: meta.type_name,
                message: e.to_string(),
            }
        })?;
        self.guards.insert(id, Arc::clone(&built));
        Ok(built)
    }

    /// Resolves the guardrails of a path (outermost scope first); every exclusion is added to
    /// `exclusions` with whether it removed something.
    pub(crate) fn guardrails(
        &mut self,
        scopes: &[ScopeSpec],
        services: &mut Services,
        exclusions: &mut Vec<GuardExclusion>,
    ) -> Result<Guardrails, BuildError> {
        let input = self.boundary(Boundary::Input, scopes, services, exclusions)?;
        let output = self.boundary(Boundary::Output, scopes, services, exclusions)?;
        let answer_pii = if scopes.iter().any(|s| s.guardrails.mask_answer) {
            let chain = self.pii(scopes.iter().map(|s| s.pii_policies.as_slice()))?;
            (!chain.is_empty()).then_some(chain)
        } else {
            None
        };
        Ok(Guardrails {
            input,
            output,
            answer_pii,
        })
    }

    fn boundary(
        &mut self,
        boundary: Boundary,
        scopes: &[ScopeSpec],
        services: &mut Services,
        exclusions: &mut Vec<GuardExclusion>,
    ) -> Result<GuardrailChain, BuildError> {
        let mut entries: Vec<(&'static GuardrailMeta, ScopeRef)> = Vec::new();
        for spec in scopes {
            let (attach, exclude) = spec.guardrails.lists(boundary);
            for ex in exclude {
                let before = entries.len();
                entries.retain(|(m, _)| !m.same(ex));
                let used = entries.len() != before;
                match exclusions
                    .iter_mut()
                    .find(|(at, m, _)| *at == spec.scope && m.same(ex))
                {
                    Some(entry) => entry.2 |= used,
                    None => exclusions.push((spec.scope, ex, used)),
                }
            }
            for at in attach {
                if !entries.iter().any(|(m, _)| m.same(at)) {
                    entries.push((at, spec.scope));
                }
            }
        }
        // Cheap ones first; a stable sort keeps cascade order within each group.
        entries.sort_by_key(|(m, _)| !m.cheap);
        let mut built = Vec::with_capacity(entries.len());
        for (meta, attached_at) in entries {
            let guard = self.guardrail(meta, services)?;
            let timeout = meta
                .timeout_ms
                .map_or(self.guardrail_timeout, Duration::from_millis);
            built.push(GuardrailEntry {
                meta,
                attached_at,
                guard,
                timeout,
            });
        }
        Ok(GuardrailChain {
            entries: built.into(),
        })
    }
}
