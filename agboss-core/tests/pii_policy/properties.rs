//! Property test: masked output never contains a detected value.

use super::*;

// --- Property: masked output never contains a detected value ---------------------------------

fn pii_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}\\.[a-z]{1,8}@[a-z]{2,8}\\.(com|org|io)",
        Just("4242 4242 4242 4242".to_string()),
        Just("5555-5555-5555-4444".to_string()),
        Just("DE89 3704 0044 0532 0130 00".to_string()),
        Just("123-45-6789".to_string()),
        (1u8..=254, 0u8..=255, 0u8..=255, 1u8..=254)
            .prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        Just("2001:db8::8a2e:370:7334".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn masked_output_never_contains_a_detected_value(
        values in proptest::collection::vec(pii_value(), 1..4),
        filler in "[a-z ]{0,20}",
        max in prop_oneof![Just(None), (60usize..200).prop_map(Some)],
    ) {
        let mut builder = App::builder().pii_policy::<PpAllPiiPolicy>().tool::<PpBigTool>();
        if let Some(max) = max {
            builder = builder.max_result_size(max);
        }
        let app = builder.build().unwrap();
        let text = values.join(&format!(" {filler} "));
        let out = futures::executor::block_on(app.tool::<PpBigTool>().invoke_json(&note(&text))).unwrap();
        for v in &values {
            prop_assert!(!out.contains(v.as_str()), "{v} leaked in {out}");
        }
        if let Some(max) = max {
            prop_assert!(out.len() <= max);
        }
    }
}
