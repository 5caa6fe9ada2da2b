//! Property tests: valid PII never survives masking, JSON keeps its shape.

use super::*;

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
