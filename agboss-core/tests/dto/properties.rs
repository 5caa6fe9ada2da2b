//! Property tests: arbitrary strings never panic.

use super::*;

// ---------------------------------------------------------------------------------------------
// never panics

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[A-Za-z0-9 ÄSKU-]{0,14}".prop_map(Value::from),
        prop_oneof![Just("SKU-1"), Just("standard"), Just("DE"), Just("A-17")]
            .prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("orderId".to_owned()),
        Just("shippingSpeed".to_owned()),
        Just("lines".to_owned()),
        Just("discountPct".to_owned()),
        Just("giftWrap".to_owned()),
        Just("tags".to_owned()),
        Just("priority".to_owned()),
        Just("billing".to_owned()),
        Just("sku".to_owned()),
        Just("quantity".to_owned()),
        Just("streetLine".to_owned()),
        Just("country".to_owned()),
        Just("byte".to_owned()),
        Just("ratio".to_owned()),
        "[a-z]{1,6}",
    ];
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..9)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Decoding either succeeds with a value that validates, or fails with at least one error,
/// each with a path starting at `$`.
fn check_outcome<T: Dto>(result: Result<T, ValidationError>) {
    match result {
        Ok(value) => assert_eq!(value.validate(), Ok(())),
        Err(err) => {
            assert!(!err.errors.is_empty());
            for e in &err.errors {
                assert!(e.path.starts_with('$'), "{e:?}");
                assert!(!e.message.is_empty());
            }
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check_outcome(CreateOrder::from_json_str(&s));
        check_outcome(Small::from_json_str(&s));
    }

    #[test]
    fn arbitrary_json_never_panics(v in arb_json()) {
        check_outcome(CreateOrder::from_json_value(&v));
        check_outcome(OrderLine::from_json_value(&v));
        check_outcome(Small::from_json_value(&v));
        let text = v.to_string();
        check_outcome(CreateOrder::from_json_str(&text));
        check_outcome(Address::from_json_str(&text));
        // Text and value decoding agree.
        prop_assert_eq!(
            CreateOrder::from_json_str(&text).map_err(|e| paths(&e).iter().map(|(p, c)| format!("{p} {c}")).collect::<Vec<_>>()),
            CreateOrder::from_json_value(&v).map_err(|e| paths(&e).iter().map(|(p, c)| format!("{p} {c}")).collect::<Vec<_>>())
        );
    }

    #[test]
    fn valid_orders_round_trip(
        id in "[A-Z]{3,12}",
        qty in 1u32..=99,
        n in 1usize..=3,
        gift in any::<bool>(),
        priority in -5i64..,
    ) {
        let original = CreateOrder {
            order_id: id,
            shipping_speed: "standard".into(),
            lines: (0..n).map(|i| OrderLine { sku: format!("SKU-{i}"), quantity: qty }).collect(),
            discount_pct: None,
            gift_wrap: gift,
            tags: None,
            priority,
            billing: None,
        };
        let text = serde_json::to_string(&original).unwrap();
        prop_assert_eq!(CreateOrder::from_json_str(&text).unwrap(), original);
    }
}
