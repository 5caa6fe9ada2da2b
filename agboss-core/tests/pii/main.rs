//! Tests of the PII detection and masking engine (`agboss_core::pii`).

use std::borrow::Cow;

use agboss_core::pii::{
    CardDetector, Detector, EmailDetector, IbanDetector, Ipv4Detector, Ipv6Detector, MaskReport,
    MaskStrategy, PhoneDetector, PiiError, PiiMasker, PiiMatch, RegexDetector, SsnDetector,
    builtin_detectors,
};
use proptest::prelude::*;
use serde_json::{Value, json};

mod detectors;
mod masking;
mod properties;
mod strategies;

// ----------------------------------------------------------------------------------------
// Helpers

/// The substrings `detector` finds in `text`.
fn found(detector: &dyn Detector, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    detector.find(text, &mut out);
    out.sort();
    out.iter().map(|m| text[m.range()].to_owned()).collect()
}

fn assert_finds(detector: &dyn Detector, text: &str, expected: &str) {
    let got = found(detector, text);
    assert!(
        got.iter().any(|g| g == expected),
        "{} should find {expected:?} in {text:?}, found {got:?}",
        detector.name()
    );
}

fn assert_none(detector: &dyn Detector, text: &str) {
    let got = found(detector, text);
    assert!(
        got.is_empty(),
        "{} should find nothing in {text:?}, found {got:?}",
        detector.name()
    );
}

fn redactor() -> PiiMasker {
    PiiMasker::builtin()
}

fn partial_masker() -> PiiMasker {
    PiiMasker::builder()
        .builtins()
        .default_strategy(MaskStrategy::Partial { keep: 4 })
        .build()
        .unwrap()
}

const KEY: &[u8] = b"test key: not a real secret";

fn hash_masker() -> PiiMasker {
    PiiMasker::builder()
        .builtins()
        .default_strategy(MaskStrategy::Hash)
        .hash_key(KEY)
        .build()
        .unwrap()
}

fn all_maskers() -> [PiiMasker; 3] {
    [redactor(), partial_masker(), hash_masker()]
}
