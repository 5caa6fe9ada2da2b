//! The rules of a DTO field's attribute, checked on its parsed [`KindArgs`]:
//! `[dto.constraint-kind]`, `[dto.range]`, `[dto.pattern]`, `[dto.choices]`.
use syn::{Ident, Type};

use super::model::{Kind, KindArgs, error};

/// `[dto.constraint-kind]`: keys of another kind, list keys on a non-list.
pub fn check_keys(
    ident: &Ident,
    kind: Kind,
    list: bool,
    ty: &Type,
    args: &KindArgs,
    acc: &mut darling::error::Accumulator,
) {
    let text_keys = [
        ("min_length", args.min_length.as_ref().map(|v| v.span())),
        ("max_length", args.max_length.as_ref().map(|v| v.span())),
        ("pattern", args.pattern.as_ref().map(|v| v.span())),
        ("choices", args.choices.as_ref().map(|v| v.span())),
    ];
    let number_keys = [
        ("min", args.min.as_ref().map(|v| v.span)),
        ("max", args.max.as_ref().map(|v| v.span)),
    ];
    let mut wrong = Vec::new();
    if kind != Kind::Text {
        wrong.extend(
            text_keys
                .iter()
                .filter_map(|(k, s)| s.map(|s| (*k, s, "#[text]"))),
        );
    }
    if !matches!(kind, Kind::Integer | Kind::Number) {
        wrong.extend(
            number_keys
                .iter()
                .filter_map(|(k, s)| s.map(|s| (*k, s, "#[integer] and #[number]"))),
        );
    }
    for (key, span, owner) in wrong {
        acc.push(error(
            span,
            format_args!(
                "[dto.constraint-kind] `{key}` applies to {owner} fields, not to #[{}] field \
                 `{ident}`; #[{}] accepts: {}",
                kind.name(),
                kind.name(),
                kind.keys(list)
            ),
        ));
    }
    if kind == Kind::Schema {
        for v in [&args.min_items, &args.max_items].into_iter().flatten() {
            acc.push(error(
                v.span(),
                format_args!(
                    "[dto.constraint-kind] #[schema] field `{ident}` takes only a prompt: \
                     schemars describes it and serde checks it; put the rule in its type"
                ),
            ));
        }
        return;
    }
    if !list {
        let ty = crate::diag::type_text(ty);
        for (key, value) in [
            ("min_items", &args.min_items),
            ("max_items", &args.max_items),
        ] {
            if let Some(v) = value {
                acc.push(error(
                    v.span(),
                    format_args!(
                        "[dto.constraint-kind] `{key}` applies to list fields (Vec<_>), and \
                         `{ident}` is a `{ty}`; remove it or make the field a Vec"
                    ),
                ));
            }
        }
    }
}

/// `[dto.range]`, `[dto.pattern]`, `[dto.choices]`, integer literals for `#[integer]`.
pub fn check_values(
    ident: &Ident,
    kind: Kind,
    args: &KindArgs,
    acc: &mut darling::error::Accumulator,
) {
    let range = |acc: &mut darling::error::Accumulator, span, lo: &str, hi: &str, a, b| {
        acc.push(error(
            span,
            format_args!(
                "[dto.range] field `{ident}` has {lo} = {a} above {hi} = {b}; no value could \
                 pass: swap or fix them"
            ),
        ));
    };
    if let (Some(lo), Some(hi)) = (&args.min_length, &args.max_length)
        && **lo > **hi
    {
        range(
            acc,
            hi.span(),
            "min_length",
            "max_length",
            lo.to_string(),
            hi.to_string(),
        );
    }
    if let (Some(lo), Some(hi)) = (&args.min_items, &args.max_items)
        && **lo > **hi
    {
        range(
            acc,
            hi.span(),
            "min_items",
            "max_items",
            lo.to_string(),
            hi.to_string(),
        );
    }
    if kind == Kind::Integer {
        for (key, value) in [("min", &args.min), ("max", &args.max)] {
            if let Some(v) = value
                && v.int.is_none()
            {
                acc.push(error(
                    v.span,
                    format_args!(
                        "[dto.constraint-kind] `{key}` of #[integer] field `{ident}` must be an \
                         integer literal (e.g. {key} = 1); use #[number] for f32/f64 fields"
                    ),
                ));
            }
        }
    }
    if let (Some(lo), Some(hi)) = (&args.min, &args.max) {
        let inverted = match (lo.int, hi.int) {
            (Some(a), Some(b)) => a > b,
            _ => lo.value > hi.value,
        };
        if inverted {
            range(
                acc,
                hi.span,
                "min",
                "max",
                lo.int.map_or(lo.value.to_string(), |v| v.to_string()),
                hi.int.map_or(hi.value.to_string(), |v| v.to_string()),
            );
        }
    }
    if let Some(p) = &args.pattern
        && let Err(e) = regex::Regex::new(p.as_str())
    {
        acc.push(error(
            p.span(),
            format_args!(
                "[dto.pattern] the pattern of field `{ident}` is not a valid regex (syntax of \
                 the `regex` crate): {e}"
            ),
        ));
    }
    if let Some(choices) = &args.choices {
        if choices.is_empty() {
            acc.push(error(
                choices.span(),
                format_args!(
                    "[dto.choices] `choices` of field `{ident}` is empty; list the allowed \
                     texts, e.g. choices = [\"a\", \"b\"]"
                ),
            ));
        }
        for (i, c) in choices.iter().enumerate() {
            if choices[..i].iter().any(|d| d.value() == c.value()) {
                acc.push(error(
                    c.span(),
                    format_args!(
                        "[dto.choices] `choices` of field `{ident}` lists {:?} twice",
                        c.value()
                    ),
                ));
            }
        }
    }
}
