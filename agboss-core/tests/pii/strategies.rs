//! Masking strategies (redact, partial, hash), per-detector strategies, the builder and custom detectors.

use super::*;

// ----------------------------------------------------------------------------------------
// Strategies: exact outputs

#[test]
fn redact_strategy() {
    let m = redactor();
    assert_eq!(
        m.mask_str("Mail jane@example.com or call +1 415 555 2671 (SSN 123-45-6789)."),
        "Mail [REDACTED:email] or call [REDACTED:phone] (SSN [REDACTED:ssn])."
    );
    assert_eq!(
        m.mask_str("IBAN DE89 3704 0044 0532 0130 00; card 4242-4242-4242-4242"),
        "IBAN [REDACTED:iban]; card [REDACTED:card]"
    );
    assert_eq!(
        m.mask_str("hosts 10.0.0.1 and 2001:db8::1"),
        "hosts [REDACTED:ipv4] and [REDACTED:ipv6]"
    );
}

#[test]
fn partial_strategy() {
    let m = partial_masker();
    let cases = [
        ("4242 4242 4242 4242", "************4242"),
        ("4242-4242-4242-4242", "************4242"),
        ("378282246310005", "***********0005"),
        ("jane.doe@example.com", "j***@example.com"),
        ("jane@mail2.example.com", "j***@***.com"),
        ("a@b.com@c.org", "a***@***.org"),
        ("123-45-6789", "*******6789"),
        ("+1 415 555 2671", "***********2671"),
        ("DE89 3704 0044 0532 0130 00", "******************3000"),
        ("192.168.1.77", "***.***.*.77"),
        ("2001:db8::1", "****:***::1"),
    ];
    for (value, masked) in cases {
        assert_eq!(
            m.mask_str(&format!("<{value}>")),
            format!("<{masked}>"),
            "{value}"
        );
    }
    // Never more than half of the value is kept.
    let wide = PiiMasker::builder()
        .detector_with(
            RegexDetector::new("code", r"\bK[0-9]{3}\b").unwrap(),
            MaskStrategy::Partial { keep: 10 },
        )
        .build()
        .unwrap();
    assert_eq!(wide.mask_str("code K123"), "code **23");
    let card = PiiMasker::builder()
        .detector_with(CardDetector, MaskStrategy::Partial { keep: 0 })
        .build()
        .unwrap();
    assert_eq!(card.mask_str("4242424242424242"), "****************");
}

/// HMAC-SHA-256 written independently of the crate, for the documented token definition.
fn reference_token(name: &str, canonical: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut block = [0u8; 64];
    block[..KEY.len()].copy_from_slice(KEY);
    let pad = |b: u8| block.iter().map(|k| k ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(name.as_bytes())
        .chain_update([0u8])
        .chain_update(canonical.as_bytes())
        .finalize();
    let outer = Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    let hex: String = outer[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("[{name}:{hex}]")
}

#[test]
fn hash_strategy() {
    let m = hash_masker();
    assert_eq!(
        m.mask_str("jane@example.com"),
        reference_token("email", "jane@example.com")
    );
    // Canonical forms: one token for every spelling of a value.
    assert_eq!(
        m.mask_str("Jane@Example.COM"),
        m.mask_str("jane@example.com")
    );
    let card = reference_token("card", "4242424242424242");
    assert_eq!(m.mask_str("4242 4242 4242 4242"), card);
    assert_eq!(m.mask_str("4242-4242-4242-4242"), card);
    assert_eq!(
        m.mask_str("de89 3704 0044 0532 0130 00"),
        reference_token("iban", "DE89370400440532013000")
    );
    assert_eq!(
        m.mask_str("2001:0db8:0000::1"),
        reference_token("ipv6", "2001:db8::1")
    );
    // Different values, different tokens; another key, other tokens.
    assert_ne!(
        m.mask_str("jane@example.com"),
        m.mask_str("john@example.com")
    );
    let other = PiiMasker::builder()
        .builtins()
        .default_strategy(MaskStrategy::Hash)
        .hash_key(b"another key".to_vec())
        .build()
        .unwrap();
    assert_ne!(
        other.mask_str("jane@example.com"),
        m.mask_str("jane@example.com")
    );
    // The hash is keyed per detector name too.
    assert_ne!(reference_token("email", "x"), reference_token("phone", "x"));
}

#[test]
fn per_detector_strategies() {
    let m = PiiMasker::builder()
        .builtins()
        .strategy_for("card", MaskStrategy::Partial { keep: 4 })
        .strategy_for("email", MaskStrategy::Hash)
        .hash_key(KEY)
        .build()
        .unwrap();
    assert_eq!(
        m.strategy_of("card"),
        Some(MaskStrategy::Partial { keep: 4 })
    );
    assert_eq!(m.strategy_of("ssn"), Some(MaskStrategy::Redact));
    assert_eq!(m.strategy_of("nope"), None);
    assert_eq!(
        m.mask_str("4242424242424242 jane@example.com 123-45-6789"),
        format!(
            "************4242 {} [REDACTED:ssn]",
            reference_token("email", "jane@example.com")
        )
    );
}

// ----------------------------------------------------------------------------------------
// Builder errors and custom detectors

#[test]
fn builder_errors() {
    assert!(matches!(
        PiiMasker::builder()
            .builtins()
            .default_strategy(MaskStrategy::Hash)
            .build(),
        Err(PiiError::MissingHashKey)
    ));
    assert!(matches!(
        PiiMasker::builder()
            .detector_with(EmailDetector, MaskStrategy::Hash)
            .hash_key(Vec::new())
            .build(),
        Err(PiiError::MissingHashKey)
    ));
    assert!(matches!(
        PiiMasker::builder().builtins().detector(EmailDetector).build(),
        Err(PiiError::DuplicateDetector(name)) if name == "email"
    ));
    assert!(matches!(
        PiiMasker::builder()
            .builtins()
            .strategy_for("mail", MaskStrategy::Redact)
            .build(),
        Err(PiiError::UnknownDetector(name)) if name == "mail"
    ));
    assert!(matches!(
        <dyn Detector>::regex("bad", "(unclosed"),
        Err(PiiError::InvalidRegex { name, .. }) if name == "bad"
    ));
    for name in ["", "has space", "bracket]", "é", &"x".repeat(65)] {
        assert!(
            matches!(RegexDetector::new(name, "x"), Err(PiiError::InvalidName(_))),
            "{name:?}"
        );
    }

    /// A custom detector with a bad name is refused by the builder.
    struct Named(&'static str);
    impl Detector for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn find(&self, _: &str, _: &mut Vec<PiiMatch>) {}
    }
    assert!(matches!(
        PiiMasker::builder().detector(Named("a:b")).build(),
        Err(PiiError::InvalidName(_))
    ));
    assert!(
        PiiMasker::builder()
            .detector(Named("ok.name-1"))
            .build()
            .is_ok()
    );
    // Errors display without panicking and name the detector.
    let err = <dyn Detector>::regex("bad", "(").unwrap_err();
    assert!(err.to_string().contains("`bad`"));
}

#[test]
fn custom_regex_detector() {
    let m = PiiMasker::builder()
        .builtins()
        .detector(<dyn Detector>::regex("employee", r"\bEMP-[0-9]{5}\b").unwrap())
        .detector(<dyn Detector>::regex("empty", r"x*").unwrap())
        .build()
        .unwrap();
    assert_eq!(
        m.mask_str("EMP-12345 and EMP-1234 (too short), EMP-123456"),
        "[REDACTED:employee] and EMP-1234 (too short), EMP-123456"
    );
    // Empty matches are ignored, non-empty ones masked.
    assert_eq!(m.mask_str("axxb"), "a[REDACTED:empty]b");
    assert_eq!(m.mask_str("ab"), "ab");
}

#[test]
fn faulty_custom_detector_cannot_panic() {
    /// Reports ranges that are empty, reversed, out of bounds or inside a char.
    struct Faulty;
    impl Detector for Faulty {
        fn name(&self) -> &str {
            "faulty"
        }
        fn find(&self, text: &str, out: &mut Vec<PiiMatch>) {
            out.extend([
                PiiMatch { start: 3, end: 1 },
                PiiMatch { start: 0, end: 0 },
                PiiMatch::new(0..text.len() + 10),
                PiiMatch::new(1..2),
                PiiMatch::new(usize::MAX - 1..usize::MAX),
            ]);
        }
        fn partial(&self, value: &str, _: usize) -> String {
            value.to_owned() // leaks the value: the masker must redact instead
        }
    }
    let m = PiiMasker::builder()
        .detector_with(Faulty, MaskStrategy::Partial { keep: 1 })
        .build()
        .unwrap();
    assert_eq!(m.mask_str("é"), "é"); // 1..2 is inside 'é'
    assert_eq!(m.mask_str("abc"), "a[REDACTED:faulty]c");
}
