//! The masker: runs detectors, resolves overlaps, applies strategies, walks JSON.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

use super::mask_key::HmacKey;
use super::{Detector, PiiError, PiiMatch, builtin_detectors, is_valid_detector_name};

/// How a finding is masked. See the [module documentation](super) for the exact output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MaskStrategy {
    /// `[REDACTED:<detector>]`.
    #[default]
    Redact,
    /// [`Detector::partial`]: keeps a small, detector-specific part of the value (at most
    /// `keep` characters of it, never more than half), e.g. `************4242`.
    Partial {
        /// How many trailing characters (digits for cards) to keep.
        keep: usize,
    },
    /// `[<detector>:<12 hex digits>]`: keyed HMAC-SHA-256 of the canonical value, stable
    /// for a given key (see [`PiiMaskerBuilder::hash_key`]).
    Hash,
}

/// What a masking pass found: the number of findings per detector and of JSON values
/// changed. It never holds the raw values, so it can be logged or attached to an audit
/// trail as is.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MaskReport {
    counts: BTreeMap<String, usize>,
    values_masked: usize,
}

impl MaskReport {
    /// Findings masked for the detector `name`.
    pub fn count(&self, name: &str) -> usize {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// Findings masked, all detectors together.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }

    /// Whether nothing was masked.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// JSON values (strings, numbers) that were changed by [`PiiMasker::mask_json`].
    pub fn values_masked(&self) -> usize {
        self.values_masked
    }

    /// `(detector, findings)` pairs, by detector name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        self.counts.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Adds the counts of `other` to `self`.
    pub fn merge(&mut self, other: &MaskReport) {
        for (name, n) in &other.counts {
            *self.counts.entry(name.clone()).or_default() += n;
        }
        self.values_masked += other.values_masked;
    }

    fn add(&mut self, name: &str) {
        match self.counts.get_mut(name) {
            Some(n) => *n += 1,
            None => {
                self.counts.insert(name.to_owned(), 1);
            }
        }
    }
}

/// A resolved finding of [`PiiMasker::detect`]: a byte range of the text and the detector
/// it is attributed to (after overlapping findings were merged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<'m> {
    /// Name of the detector.
    pub detector: &'m str,
    /// Byte range in the scanned text.
    pub range: Range<usize>,
}

#[derive(Clone)]
struct Entry {
    detector: Arc<dyn Detector>,
    strategy: Option<MaskStrategy>,
}

/// Masks PII in strings and JSON documents with a list of detectors, each with its
/// [`MaskStrategy`] (or the masker's default strategy).
///
/// Build one with [`PiiMasker::builder`] (or [`PiiMasker::builtin`]); it is cheap to clone
/// and `Send + Sync`. Masking never fails and never panics.
#[derive(Clone)]
pub struct PiiMasker {
    entries: Vec<Entry>,
    default_strategy: MaskStrategy,
    key: Option<HmacKey>,
}

impl fmt::Debug for PiiMasker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PiiMasker")
            .field(
                "detectors",
                &self
                    .entries
                    .iter()
                    .map(|e| (e.detector.name(), e.strategy))
                    .collect::<Vec<_>>(),
            )
            .field("default_strategy", &self.default_strategy)
            .field("hash_key", &self.key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Builder of a [`PiiMasker`].
#[derive(Default)]
pub struct PiiMaskerBuilder {
    entries: Vec<Entry>,
    overrides: Vec<(String, MaskStrategy)>,
    default_strategy: MaskStrategy,
    key: Option<Vec<u8>>,
}

impl fmt::Debug for PiiMaskerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PiiMaskerBuilder")
            .field(
                "detectors",
                &self
                    .entries
                    .iter()
                    .map(|e| e.detector.name())
                    .collect::<Vec<_>>(),
            )
            .field("default_strategy", &self.default_strategy)
            .finish_non_exhaustive()
    }
}

impl PiiMaskerBuilder {
    /// Adds a detector masked with the default strategy.
    pub fn detector(self, detector: impl Detector + 'static) -> Self {
        self.push(Arc::new(detector), None)
    }

    /// Adds a detector with its own strategy.
    pub fn detector_with(self, detector: impl Detector + 'static, strategy: MaskStrategy) -> Self {
        self.push(Arc::new(detector), Some(strategy))
    }

    /// Adds a shared detector; `strategy: None` means the default strategy.
    pub fn shared_detector(
        self,
        detector: Arc<dyn Detector>,
        strategy: Option<MaskStrategy>,
    ) -> Self {
        self.push(detector, strategy)
    }

    /// Adds every built-in detector (see [`builtin_detectors`]) with the default strategy.
    pub fn builtins(mut self) -> Self {
        for detector in builtin_detectors() {
            self = self.push(detector, None);
        }
        self
    }

    /// Sets the strategy of the detector named `name`, added before or after this call.
    pub fn strategy_for(mut self, name: &str, strategy: MaskStrategy) -> Self {
        self.overrides.push((name.to_owned(), strategy));
        self
    }

    /// The strategy of detectors added without one (default: [`MaskStrategy::Redact`]).
    pub fn default_strategy(mut self, strategy: MaskStrategy) -> Self {
        self.default_strategy = strategy;
        self
    }

    /// The secret key of [`MaskStrategy::Hash`] (required by it). Keep it out of the code
    /// (configuration, secret store) and stable: tokens change with the key.
    pub fn hash_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.key = Some(key.into());
        self
    }

    fn push(mut self, detector: Arc<dyn Detector>, strategy: Option<MaskStrategy>) -> Self {
        self.entries.push(Entry { detector, strategy });
        self
    }

    /// Builds the masker.
    ///
    /// # Errors
    /// [`PiiError::InvalidName`] and [`PiiError::DuplicateDetector`] for detector names,
    /// [`PiiError::UnknownDetector`] for a [`strategy_for`](Self::strategy_for) naming no
    /// detector, [`PiiError::MissingHashKey`] if [`MaskStrategy::Hash`] is used without a
    /// non-empty key.
    pub fn build(self) -> Result<PiiMasker, PiiError> {
        let mut entries = self.entries;
        let mut names = HashSet::new();
        for entry in &entries {
            let name = entry.detector.name();
            if !is_valid_detector_name(name) {
                return Err(PiiError::InvalidName(name.to_owned()));
            }
            if !names.insert(name.to_owned()) {
                return Err(PiiError::DuplicateDetector(name.to_owned()));
            }
        }
        for (name, strategy) in self.overrides {
            let entry = entries
                .iter_mut()
                .find(|e| e.detector.name() == name)
                .ok_or(PiiError::UnknownDetector(name))?;
            entry.strategy = Some(strategy);
        }
        let uses_hash = entries
            .iter()
            .any(|e| e.strategy.unwrap_or(self.default_strategy) == MaskStrategy::Hash);
        let key = match self.key {
            Some(key) if !key.is_empty() => Some(HmacKey::new(&key)),
            _ if uses_hash => return Err(PiiError::MissingHashKey),
            _ => None,
        };
        Ok(PiiMasker {
            entries,
            default_strategy: self.default_strategy,
            key,
        })
    }
}

/// A merged span of overlapping findings and the entry it is attributed to.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    /// (start, end, entry index) of the winning finding.
    best: (usize, usize, usize),
}

/// Rounds of re-scanning a masked output (see the module documentation).
const MAX_ROUNDS: usize = 8;

impl PiiMasker {
    /// A builder with no detector and the [`MaskStrategy::Redact`] default.
    pub fn builder() -> PiiMaskerBuilder {
        PiiMaskerBuilder::default()
    }

    /// Every built-in detector, redacting (`[REDACTED:<name>]`).
    pub fn builtin() -> Self {
        Self {
            entries: builtin_detectors()
                .into_iter()
                .map(|detector| Entry {
                    detector,
                    strategy: None,
                })
                .collect(),
            default_strategy: MaskStrategy::Redact,
            key: None,
        }
    }

    /// Names of the detectors, in registration order.
    pub fn detector_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.detector.name())
    }

    /// The strategy applied to the findings of the detector `name`.
    pub fn strategy_of(&self, name: &str) -> Option<MaskStrategy> {
        self.entries
            .iter()
            .find(|e| e.detector.name() == name)
            .map(|e| e.strategy.unwrap_or(self.default_strategy))
    }

    /// The resolved findings in `text` (overlaps merged, sorted by position), without
    /// masking anything.
    pub fn detect(&self, text: &str) -> Vec<Finding<'_>> {
        self.spans(text, false, &[])
            .into_iter()
            .map(|s| Finding {
                detector: self.entries[s.best.2].detector.name(),
                range: s.start..s.end,
            })
            .collect()
    }

    /// Whether any detector finds something in `text`.
    pub fn contains_pii(&self, text: &str) -> bool {
        !self.spans(text, false, &[]).is_empty()
    }

    /// `text` with every finding masked; borrowed when nothing was found.
    pub fn mask_str<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.mask_text(text, false, &mut MaskReport::default())
    }

    /// Like [`mask_str`](Self::mask_str), counting the findings into `report`.
    pub fn mask_str_with_report<'t>(&self, text: &'t str, report: &mut MaskReport) -> Cow<'t, str> {
        self.mask_text(text, false, report)
    }

    /// Masks, in place, every string of `value` (object values and array items at any
    /// depth; object keys are left untouched), and every non-negative integer whose decimal
    /// form a detector finds PII in (it becomes a masked string). Everything else is left
    /// byte-identical, so the document stays valid JSON with the same shape.
    pub fn mask_json(&self, value: &mut Value) -> MaskReport {
        let mut report = MaskReport::default();
        self.mask_json_with_report(value, &mut report);
        report
    }

    /// Like [`mask_json`](Self::mask_json), counting into `report`.
    pub fn mask_json_with_report(&self, value: &mut Value, report: &mut MaskReport) {
        // Iterative walk: no recursion, so no stack overflow on deeply nested values.
        let mut stack: Vec<&mut Value> = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => stack.extend(map.iter_mut().map(|(_, v)| v)),
                Value::String(s) => {
                    if let Cow::Owned(masked) = self.mask_text(s, false, report) {
                        *s = masked;
                        report.values_masked += 1;
                    }
                }
                Value::Number(n) => {
                    let Some(u) = n.as_u64() else { continue };
                    let digits = u.to_string();
                    if let Cow::Owned(masked) = self.mask_text(&digits, true, report) {
                        *value = Value::String(masked);
                        report.values_masked += 1;
                    }
                }
                Value::Null | Value::Bool(_) => {}
            }
        }
    }

    fn mask_text<'t>(&self, text: &'t str, number: bool, report: &mut MaskReport) -> Cow<'t, str> {
        let mut current = Cow::Borrowed(text);
        // Byte ranges of `current` written by this call, never re-scanned.
        let mut protected: Vec<(usize, usize)> = Vec::new();
        for round in 0..MAX_ROUNDS {
            let spans = self.spans(&current, number && round == 0, &protected);
            if spans.is_empty() {
                break;
            }
            let (next, next_protected) = self.apply(&current, &spans, &protected, report);
            current = Cow::Owned(next);
            protected = next_protected;
        }
        current
    }

    /// Findings of every detector, outside `protected`, merged into disjoint spans sorted
    /// by position.
    fn spans(&self, text: &str, number: bool, protected: &[(usize, usize)]) -> Vec<Span> {
        let mut raw: Vec<(usize, usize, usize)> = Vec::new();
        let mut found = Vec::new();
        for (idx, entry) in self.entries.iter().enumerate() {
            found.clear();
            if number {
                entry.detector.find_in_number(text, &mut found);
            } else {
                entry.detector.find(text, &mut found);
            }
            raw.extend(
                found
                    .iter()
                    .filter(|m| m.is_valid_in(text) && !overlaps(protected, m))
                    .map(|m| (m.start, m.end, idx)),
            );
        }
        if raw.is_empty() {
            return Vec::new();
        }
        raw.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut spans: Vec<Span> = Vec::new();
        for m in raw {
            match spans.last_mut() {
                Some(span) if m.0 < span.end => {
                    span.end = span.end.max(m.1);
                    // Longest wins; ties go to the earlier start, then the earlier
                    // detector, which the sort order already put first.
                    if m.1 - m.0 > span.best.1 - span.best.0 {
                        span.best = m;
                    }
                }
                _ => spans.push(Span {
                    start: m.0,
                    end: m.1,
                    best: m,
                }),
            }
        }
        spans
    }

    /// Replaces `spans` in `text`; returns the new text and its protected ranges (the old
    /// ones, moved, and the new masks).
    fn apply(
        &self,
        text: &str,
        spans: &[Span],
        protected: &[(usize, usize)],
        report: &mut MaskReport,
    ) -> (String, Vec<(usize, usize)>) {
        let mut out = String::with_capacity(text.len() + 16 * spans.len());
        let mut new_protected = Vec::with_capacity(protected.len() + spans.len());
        let mut copied = 0;
        let mut old = protected.iter().peekable();
        for span in spans {
            while let Some(&(s, e)) = old.next_if(|p| p.0 < span.start) {
                new_protected.push((out.len() + s - copied, out.len() + e - copied));
            }
            out.push_str(&text[copied..span.start]);
            let entry = &self.entries[span.best.2];
            report.add(entry.detector.name());
            let mask_start = out.len();
            self.write_mask(entry, &text[span.start..span.end], &mut out);
            new_protected.push((mask_start, out.len()));
            copied = span.end;
        }
        for &(s, e) in old {
            new_protected.push((out.len() + s - copied, out.len() + e - copied));
        }
        out.push_str(&text[copied..]);
        (out, new_protected)
    }

    fn write_mask(&self, entry: &Entry, value: &str, out: &mut String) {
        let name = entry.detector.name();
        match entry.strategy.unwrap_or(self.default_strategy) {
            MaskStrategy::Partial { keep } => {
                let partial = entry.detector.partial(value, keep);
                // A custom `partial` must not give the value back.
                if !partial.is_empty() && !partial.contains(value) {
                    out.push_str(&partial);
                    return;
                }
            }
            MaskStrategy::Hash => {
                if let Some(key) = &self.key {
                    let canonical = entry.detector.canonical(value);
                    let mac = key.mac(&[name.as_bytes(), &[0], canonical.as_bytes()]);
                    out.push('[');
                    out.push_str(name);
                    out.push(':');
                    for b in &mac[..6] {
                        out.push(char::from(HEX[usize::from(b >> 4)]));
                        out.push(char::from(HEX[usize::from(b & 0xf)]));
                    }
                    out.push(']');
                    return;
                }
            }
            MaskStrategy::Redact => {}
        }
        out.push_str("[REDACTED:");
        out.push_str(name);
        out.push(']');
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether `m` overlaps one of the sorted, disjoint `protected` ranges.
fn overlaps(protected: &[(usize, usize)], m: &PiiMatch) -> bool {
    let i = protected.partition_point(|p| p.1 <= m.start);
    protected.get(i).is_some_and(|p| p.0 < m.end)
}
