//! Tests of the PII detection and masking engine (`agboss_core::pii`).

use std::borrow::Cow;

use agboss_core::pii::{
    CardDetector, Detector, EmailDetector, IbanDetector, Ipv4Detector, Ipv6Detector, MaskReport,
    MaskStrategy, PhoneDetector, PiiError, PiiMasker, PiiMatch, RegexDetector, SsnDetector,
    builtin_detectors,
};
use proptest::prelude::*;
use serde_json::{Value, json};

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

// ----------------------------------------------------------------------------------------
// Detectors: positives and negatives

#[test]
fn email_detector() {
    let d = EmailDetector;
    for email in [
        "jane.doe@example.com",
        "j+tag@sub.example.co.uk",
        "JOHN_SMITH99@Example.ORG",
        "a@b.io",
        "first-last%x@my-host.example.travel",
    ] {
        assert_finds(&d, &format!("write to {email}, thanks"), email);
        assert_finds(&d, &format!("<{email}>"), email);
    }
    assert_finds(&d, "mailto:jane@example.com.", "jane@example.com");
    // Addresses glued by their domains are one finding.
    assert_finds(&d, "a@b.com@c.org", "a@b.com@c.org");
    assert_finds(&d, "a@b.com.-x@c.org", "a@b.com.-x@c.org");
    for text in [
        "no mail here",
        "user@localhost",
        "@example.com",
        "jane@",
        "jane@example",
        "jane@.com",
        "a @ b.com",
        "price 3@4.50",
        "j***@example.com",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn phone_detector() {
    let d = PhoneDetector;
    for phone in [
        "+1 415 555 2671",
        "+14155552671",
        "+44 20 7946 0958",
        "+49 (0)30 1234567",
        "+33 6 12 34 56 78",
        "(415) 555-2671",
        "415-555-2671",
        "415.555.2671",
        "1-415-555-2671",
        "030 1234 5678",
        "06 12 34 56 78",
        "(020) 7946 0958",
        "0171/1234567",
    ] {
        assert_finds(&d, &format!("call {phone} now"), phone);
    }
    for text in [
        "Order total: 1234567 EUR",
        "in the year 2024",
        "order 4155552671",
        "id 0612345678",
        "amount 12,345,678.90",
        "on 03.04.2024 10 people came",
        "dated 05/01/2024",
        "version 1.2.3.4",
        "SSN 123-45-6789",
        "4155552671234 units",
        "tel415-555-2671",
        "415-555-26711",
        "+1 2",
        "ISBN 978-3-16-148410-0",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn card_detector() {
    let d = CardDetector;
    for card in [
        "4242 4242 4242 4242",
        "4242-4242-4242-4242",
        "4242424242424242",
        "5555555555554444",
        "378282246310005",
        "3782 822463 10005",
        "6011 1111 1111 1117",
        "4000056655665556",
    ] {
        assert_finds(&d, &format!("card: {card}."), card);
    }
    // Markdown emphasis is not glue.
    assert_finds(&d, "**4242 4242 4242 4242**", "4242 4242 4242 4242");
    assert_finds(&d, "*4242424242424242*.", "4242424242424242");
    // What a partial mask keeps does not combine with what follows.
    assert_none(&d, "**************4927 0000 00000");
    // A card followed by an expiry date still is one.
    assert_finds(&d, "4242 4242 4242 4242 12 27", "4242 4242 4242 4242");
    for text in [
        "4242 4242 4242 4241",             // Luhn-invalid
        "4242424242424241",                // Luhn-invalid
        "1234567812345670",                // Luhn-valid, no issuer starts with 1
        "42424242424242421234",            // inside a longer digit run
        "0.4242424242424242",              // a decimal
        "ref4242424242424242",             // glued to a word
        "424242424242",                    // 12 digits
        "4 2 4 2 4 2 4 2 4 2 4 2 4 2 4 2", // not card grouping
        "timestamp 1700000000000",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn iban_detector() {
    let d = IbanDetector;
    for iban in [
        "DE89370400440532013000",
        "DE89 3704 0044 0532 0130 00",
        "GB82 WEST 1234 5698 7654 32",
        "GB82WEST12345698765432",
        "FR1420041010050500013M02606",
        "NL91ABNA0417164300",
        "BE68539007547034",
        "NO9386011117947",
        "de89370400440532013000",
    ] {
        assert_finds(&d, &format!("IBAN: {iban}, bank"), iban);
    }
    // Two IBANs in one run of groups.
    let text = "DE89370400440532013000 NL91ABNA0417164300";
    assert_eq!(
        found(&d, text),
        ["DE89370400440532013000", "NL91ABNA0417164300"]
    );
    for text in [
        "DE89370400440532013001",  // bad checksum
        "DE8937040044053201300",   // too short for DE
        "DE893704004405320130000", // too long for DE (glued digit)
        "XDE89370400440532013000", // glued to a word
        "GB82 WEST 1234 5698 7654 31",
        "AB12 some words here",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ssn_detector() {
    let d = SsnDetector;
    for ssn in ["123-45-6789", "001-01-0001", "665-99-9999", "899-12-3456"] {
        assert_finds(&d, &format!("SSN {ssn}."), ssn);
    }
    for text in [
        "000-12-3456",
        "666-12-3456",
        "900-12-3456",
        "987-65-4321",
        "123-00-4567",
        "123-45-0000",
        "1123-45-6789",
        "123-45-67890",
        "123456789",
        "12-345-6789",
        "x123-45-6789",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ipv4_detector() {
    let d = Ipv4Detector;
    for (text, ip) in [
        ("from 192.168.1.1 to", "192.168.1.1"),
        ("dns 8.8.8.8:53", "8.8.8.8"),
        ("255.255.255.255", "255.255.255.255"),
        ("ip=10.0.0.1.", "10.0.0.1"),
        ("(0.0.0.0)", "0.0.0.0"),
    ] {
        assert_finds(&d, text, ip);
    }
    for text in [
        "256.1.1.1",
        "1.2.3.256",
        "1.2.3.4.5",
        "version 1.2.3",
        "1234.1.1.1",
        "01.02.03.04",
        "v1.2.3.4",
        "1.2.3.4a",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn ipv6_detector() {
    let d = Ipv6Detector;
    for ip in [
        "2001:db8::8a2e:370:7334",
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "fe80::1",
        "::ffff:192.0.2.128",
        "FE80::ABCD:1",
    ] {
        assert_finds(&d, &format!("addr {ip}, ok"), ip);
        assert_finds(&d, &format!("[{ip}]:443"), ip);
    }
    for text in [
        "at 12:30:45",
        "mac 00:1a:2b:3c:4d:5e",
        "::1",
        "::",
        "C++ std::vector",
        "2001:db8::g",
        "1:2:3:4:5:6:7:8:9",
        "coffee::1",
    ] {
        assert_none(&d, text);
    }
}

#[test]
fn builtin_detectors_find_nothing_in_masks() {
    let masks = [
        "[REDACTED:email]",
        "[REDACTED:ipv6]",
        "[card:0123456789ab]",
        "[ipv6:abcdef012345]",
        "[phone:012345678901]",
        "************4242",
        "j***@example.com",
        "***.***.*.1",
        "****:***::1",
        "*******6789",
    ];
    for d in builtin_detectors() {
        for mask in masks {
            assert_none(&*d, mask);
        }
    }
}

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

// ----------------------------------------------------------------------------------------
// Overlaps

#[test]
fn overlapping_matches_longest_wins_and_merge() {
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("short", "abc").unwrap())
        .detector(RegexDetector::new("long", "bcdef").unwrap())
        .build()
        .unwrap();
    // Overlap merged into one span, attributed to the longest finding.
    assert_eq!(m.mask_str("xabcdefx"), "x[REDACTED:long]x");
    let findings = m.detect("xabcdefx");
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].detector, "long");
    assert_eq!(findings[0].range, 1..7);

    // Equal lengths: the earliest start wins.
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("second", "bcde").unwrap())
        .detector(RegexDetector::new("first", "abcd").unwrap())
        .build()
        .unwrap();
    assert_eq!(m.mask_str("xabcdefx"), "x[REDACTED:first]fx");

    // Same range: the detector registered first wins.
    let m = PiiMasker::builder()
        .detector(RegexDetector::new("one", "abc").unwrap())
        .detector(RegexDetector::new("two", "abc").unwrap())
        .build()
        .unwrap();
    let mut report = MaskReport::default();
    assert_eq!(m.mask_str_with_report("abc", &mut report), "[REDACTED:one]");
    assert_eq!(report.count("one"), 1);
    assert_eq!(report.count("two"), 0);

    // Built-ins: an e-mail whose local part is a phone number is one e-mail.
    assert_eq!(
        redactor().mask_str("+14155552671@example.com"),
        "[REDACTED:email]"
    );
    // IPv4 embedded in IPv6: one IPv6.
    assert_eq!(redactor().mask_str("::ffff:192.0.2.128"), "[REDACTED:ipv6]");
}

#[test]
fn adjacent_findings_are_all_masked() {
    let m = redactor();
    // The phone is glued to the e-mail's TLD; once the e-mail is masked, it stands alone.
    assert_eq!(
        m.mask_str("a@b.co+14155552671"),
        "[REDACTED:email][REDACTED:phone]"
    );
    assert_eq!(
        m.mask_str("10.0.0.1,10.0.0.2;jane@example.com"),
        "[REDACTED:ipv4],[REDACTED:ipv4];[REDACTED:email]"
    );
}

// ----------------------------------------------------------------------------------------
// mask_str: borrowing, idempotency, reports, weird input

#[test]
fn mask_str_borrows_without_pii_and_is_idempotent() {
    for m in all_maskers() {
        assert!(matches!(
            m.mask_str("nothing to see, 42 items in 2024"),
            Cow::Borrowed(_)
        ));
        let once = m
            .mask_str("jane@example.com 4242 4242 4242 4242 DE89370400440532013000 ::ffff:1.2.3.4")
            .into_owned();
        assert!(matches!(m.mask_str(&once), Cow::Borrowed(_)), "{once}");
    }
}

#[test]
fn report_counts_per_detector() {
    let m = redactor();
    let mut report = MaskReport::default();
    let text = "a@b.com c@d.org 10.0.0.1 123-45-6789";
    m.mask_str_with_report(text, &mut report);
    assert_eq!(report.count("email"), 2);
    assert_eq!(report.count("ipv4"), 1);
    assert_eq!(report.count("ssn"), 1);
    assert_eq!(report.count("card"), 0);
    assert_eq!(report.total(), 4);
    assert_eq!(
        report.iter().collect::<Vec<_>>(),
        [("email", 2), ("ipv4", 1), ("ssn", 1)]
    );
    // The report never holds the values.
    let serialized = serde_json::to_string(&report).unwrap();
    assert!(!serialized.contains("a@b.com") && !serialized.contains("10.0.0.1"));
    let mut merged = report.clone();
    merged.merge(&report);
    assert_eq!(merged.total(), 8);
    assert!(MaskReport::default().is_empty());
    assert!(m.contains_pii(text));
    assert!(!m.contains_pii("plain"));
}

#[test]
fn weird_unicode_and_huge_inputs() {
    let m = redactor();
    assert_eq!(
        m.mask_str("é🎉 jane@example.com ١٢٣-٤٥-٦٧٨٩ 𝟜𝟚𝟜𝟚 \u{202e}10.0.0.1\u{200d}"),
        "é🎉 [REDACTED:email] ١٢٣-٤٥-٦٧٨٩ 𝟜𝟚𝟜𝟚 \u{202e}[REDACTED:ipv4]\u{200d}"
    );
    // Large adversarial inputs complete (no quadratic blow-up) and never panic.
    for unit in [
        "1 ", "a@", "AB12 ", ":", "1.", "+1 ", "0", "é", "DE89", "4242-",
    ] {
        let text = unit.repeat(200_000 / unit.len());
        let masked = m.mask_str(&text);
        assert!(masked.len() >= text.len() / 4);
    }
    let big = "jane@example.com 4242424242424242 ".repeat(5_000);
    let mut report = MaskReport::default();
    let masked = m.mask_str_with_report(&big, &mut report);
    assert_eq!(report.count("email"), 5_000);
    assert_eq!(report.count("card"), 5_000);
    assert!(!masked.contains("jane@"));
}

// ----------------------------------------------------------------------------------------
// JSON

#[test]
fn mask_json_keeps_structure_and_non_pii_values() {
    let m = redactor();
    let mut doc = json!({
        "jane@example.com": "keys are not masked",
        "user": {
            "name": "Jane",
            "email": "jane@example.com",
            "note": "call me at +1 415 555 2671 or mail j@x.io",
            "age": 41,
            "score": 3.5,
            "active": true,
            "manager": null,
        },
        "cards": [4242424242424242u64, "4242 4242 4242 4242", 1234],
        "phone_number": 14155552671u64,
        "created_ms": 1700000000000u64,
        "order_total": 4242424242424241u64,
        "negative": -4242424242424242i64,
        "nested": [[["10.0.0.1"]], {"deep": {"ok": "fine"}}],
    });
    let untouched = doc["user"]["name"].clone();
    let report = m.mask_json(&mut doc);
    assert_eq!(
        doc,
        json!({
            "jane@example.com": "keys are not masked",
            "user": {
                "name": "Jane",
                "email": "[REDACTED:email]",
                "note": "call me at [REDACTED:phone] or mail [REDACTED:email]",
                "age": 41,
                "score": 3.5,
                "active": true,
                "manager": null,
            },
            "cards": ["[REDACTED:card]", "[REDACTED:card]", 1234],
            "phone_number": "[REDACTED:phone]",
            "created_ms": 1700000000000u64,
            "order_total": 4242424242424241u64,
            "negative": -4242424242424242i64,
            "nested": [[["[REDACTED:ipv4]"]], {"deep": {"ok": "fine"}}],
        })
    );
    assert_eq!(doc["user"]["name"], untouched);
    assert_eq!(report.count("email"), 2);
    assert_eq!(report.count("phone"), 2);
    assert_eq!(report.count("card"), 2);
    assert_eq!(report.count("ipv4"), 1);
    assert_eq!(report.values_masked(), 6);
    // A second pass changes nothing.
    let before = doc.clone();
    assert!(m.mask_json(&mut doc).is_empty());
    assert_eq!(doc, before);
}

#[test]
fn mask_json_untouched_document_is_byte_identical() {
    let text =
        r#"{"b":[1,2.5,-3,1e300,"x",{"c":null}],"a":"plain \u00e9 text","n":18446744073709551615}"#;
    let mut doc: Value = serde_json::from_str(text).unwrap();
    let before = serde_json::to_string(&doc).unwrap();
    let report = redactor().mask_json(&mut doc);
    assert!(report.is_empty());
    assert_eq!(serde_json::to_string(&doc).unwrap(), before);
}

#[test]
fn mask_json_deeply_nested_does_not_overflow() {
    let mut doc = json!("jane@example.com");
    for _ in 0..10_000 {
        doc = Value::Array(vec![doc]);
    }
    let report = redactor().mask_json(&mut doc);
    assert_eq!(report.count("email"), 1);
    let mut inner = &doc;
    while let Value::Array(items) = inner {
        inner = &items[0];
    }
    assert_eq!(inner, "[REDACTED:email]");
    // Dropping a 10 000-deep value recurses in serde_json; unwind it here.
    let mut current = doc;
    while let Value::Array(mut items) = current {
        current = items.pop().unwrap_or(Value::Null);
    }
}

// ----------------------------------------------------------------------------------------
// Property tests

fn luhn_complete(body: &[u8]) -> u8 {
    // Check digit making `body + check` Luhn-valid.
    let mut sum = 0u32;
    for (i, d) in body.iter().rev().enumerate() {
        let mut v = u32::from(*d);
        if i % 2 == 0 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    ((10 - sum % 10) % 10) as u8
}

/// Groups of 4 digits, the remainder (if under 3) merged into the last group.
fn group_card(digits: &str, sep: char) -> String {
    let mut groups: Vec<&str> = Vec::new();
    let mut rest = digits;
    while rest.len() > 4 {
        groups.push(&rest[..4]);
        rest = &rest[4..];
    }
    if rest.len() < 3 {
        let last = groups.pop().unwrap_or("");
        let start = digits.len() - last.len() - rest.len();
        groups.push(&digits[start..]);
    } else {
        groups.push(rest);
    }
    groups.join(&sep.to_string())
}

fn card_strategy() -> impl Strategy<Value = String> {
    (
        2u8..=6,
        prop::collection::vec(0u8..10, 11..=17),
        prop::sample::select(vec![None, Some(' '), Some('-')]),
    )
        .prop_map(|(first, rest, sep)| {
            let mut body = vec![first];
            body.extend(rest);
            let check = luhn_complete(&body);
            body.push(check);
            let digits: String = body.iter().map(|d| char::from(b'0' + d)).collect();
            match sep {
                None => digits,
                Some(sep) => group_card(&digits, sep),
            }
        })
}

fn iban_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            ("DE", 22),
            ("FR", 27),
            ("GB", 22),
            ("NL", 18),
            ("ES", 24),
            ("IT", 27),
            ("BE", 16),
            ("AT", 20),
            ("CH", 21),
            ("PL", 28),
            ("MT", 31),
            ("NO", 15),
        ]),
        prop::collection::vec(
            prop::sample::select(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_vec()),
            30,
        ),
        any::<bool>(),
    )
        .prop_map(|((country, len), chars, grouped)| {
            let bban: String = chars[..len - 4].iter().map(|&c| char::from(c)).collect();
            let rearranged = format!("{bban}{country}00");
            let mut rem = 0u32;
            for c in rearranged.bytes() {
                rem = match c {
                    b'0'..=b'9' => (rem * 10 + u32::from(c - b'0')) % 97,
                    _ => (rem * 100 + u32::from(c - b'A') + 10) % 97,
                };
            }
            let iban = format!("{country}{:02}{bban}", 98 - rem);
            if grouped {
                iban.as_bytes()
                    .chunks(4)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                iban
            }
        })
}

fn ssn_strategy() -> impl Strategy<Value = String> {
    (1u32..900, 1u32..100, 1u32..10_000)
        .prop_filter("area 666", |(a, _, _)| *a != 666)
        .prop_map(|(a, g, s)| format!("{a:03}-{g:02}-{s:04}"))
}

fn email_strategy() -> impl Strategy<Value = String> {
    "[a-z0-9]{1,8}(\\.[a-z0-9_+-]{1,6})?@[a-z0-9]{1,10}(\\.[a-z0-9]{1,6})?\\.[a-z]{2,6}"
}

fn ipv4_strategy() -> impl Strategy<Value = String> {
    any::<[u8; 4]>().prop_map(|o| format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3]))
}

/// `(detector name, valid value)`.
fn pii_value() -> impl Strategy<Value = (&'static str, String)> {
    prop_oneof![
        email_strategy().prop_map(|v| ("email", v)),
        card_strategy().prop_map(|v| ("card", v)),
        iban_strategy().prop_map(|v| ("iban", v)),
        ssn_strategy().prop_map(|v| ("ssn", v)),
        ipv4_strategy().prop_map(|v| ("ipv4", v)),
    ]
}

/// Text made of PII, PII fragments, masks and separators glued together.
fn adversarial_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        pii_value().prop_map(|(_, v)| v),
        "[0-9]{1,5}",
        "[0-9a-fA-F:.]{1,8}",
        "[A-Z]{2}[0-9]{2}",
        prop::sample::select(vec![
            " ",
            "  ",
            ".",
            "-",
            "@",
            "+",
            "+1",
            "0",
            "(",
            ")",
            ":",
            "::",
            "/",
            ",",
            "*",
            "_",
            "é",
            "🎉",
            "\n",
            "[REDACTED:email]",
            "[card:0123456789ab]",
            "4242",
            "DE89",
            "**",
            "***",
            "a@b.c",
            "example.com",
            "ffff",
            "2001:db8",
            "666",
            "-00-",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn arbitrary_text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), adversarial_text()]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Dyadic fractions: exactly representable, so they round-trip through text.
        (-4_000_000i32..4_000_000).prop_map(|i| Value::from(f64::from(i) / 8.0)),
        card_strategy()
            .prop_map(|c| Value::from(c.replace([' ', '-'], "").parse::<u64>().unwrap_or(0))),
        (11_000_000_000u64..999_999_999_999_999).prop_map(Value::from),
        arbitrary_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(arbitrary_text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Same shape: same containers, keys and lengths; scalars unchanged except strings (which
/// stay strings) and non-negative integers (which may become strings).
fn same_shape(before: &Value, after: &Value) -> bool {
    match (before, after) {
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_shape(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_shape(va, vb))
        }
        (Value::String(_), Value::String(_)) => true,
        (Value::Number(n), Value::String(_)) => n.as_u64().is_some(),
        (a, b) => a == b,
    }
}

proptest! {
    // 256 cases by default (PROPTEST_CASES overrides).
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// (a) A valid value embedded in random text never survives masking.
    #[test]
    fn prop_valid_pii_never_survives(
        (kind, value) in pii_value(),
        prefix in "[a-zA-Z ,!?]{0,20}",
        suffix in "[a-zA-Z ,!?]{0,20}",
    ) {
        let text = format!("{prefix} {value} {suffix}");
        for masker in all_maskers() {
            let mut report = MaskReport::default();
            let masked = masker.mask_str_with_report(&text, &mut report);
            prop_assert!(!masked.contains(&value), "{value:?} survived in {masked:?}");
            prop_assert!(report.count(kind) >= 1, "{kind} not reported for {text:?}: {report:?}");
        }
    }

    /// (b) Masking arbitrary text never panics and is idempotent.
    #[test]
    fn prop_masking_is_idempotent(text in arbitrary_text()) {
        for masker in all_maskers() {
            let once = masker.mask_str(&text).into_owned();
            let twice = masker.mask_str(&once);
            prop_assert_eq!(&once, &*twice, "input {:?}", text);
            // Every finding range lands on char boundaries.
            for finding in masker.detect(&text) {
                prop_assert!(text.is_char_boundary(finding.range.start));
                prop_assert!(text.is_char_boundary(finding.range.end));
            }
        }
    }

    /// (c) mask_json keeps valid JSON of the same shape, and is idempotent.
    #[test]
    fn prop_mask_json_keeps_shape(value in json_value()) {
        for masker in all_maskers() {
            let mut masked = value.clone();
            masker.mask_json(&mut masked);
            prop_assert!(same_shape(&value, &masked), "{value} became {masked}");
            let reparsed: Value = serde_json::from_str(&serde_json::to_string(&masked).unwrap()).unwrap();
            prop_assert_eq!(&reparsed, &masked);
            let mut again = masked.clone();
            prop_assert!(masker.mask_json(&mut again).is_empty());
            prop_assert_eq!(&again, &masked);
        }
    }
}
