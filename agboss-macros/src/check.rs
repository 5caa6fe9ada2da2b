//! The validation rules several macros share, in one place: positive whole numbers, lists
//! naming a type twice, a scope attaching and excluding the same component, and the checks of
//! the shared key groups ([`Cascade`], [`Guardrails`]). Each macro's own rules are in its
//! module's `check` function, which calls these.
use quote::quote;

use crate::attr::model::{Cascade, Guardrails};
use crate::attr::value::{Int, PathList, paths};
use crate::diag::Errors;
use crate::rules::Kind;

/// `[<kind>.<key>]`: `key` must be a positive whole number (`max_result_size`, `timeout_ms`,
/// `ttl_ms`, `max_turns`, ...). The value, when valid.
pub fn positive(kind: Kind, key: &str, value: &Option<Int>, errors: &mut Errors) -> Option<u64> {
    let lit = &value.as_ref()?.0;
    match lit.base10_parse::<u64>() {
        Ok(v) if v > 0 => Some(v),
        _ => {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "[{}.{}] `{key}` must be a positive whole number, e.g. `{key} = 1000`",
                    kind.label.replace(' ', "-"),
                    key.replace('_', "-")
                ),
            ));
            None
        }
    }
}

/// `[attr.duplicate-entry]`: a list names the same type twice.
pub fn no_duplicates(key: &str, list: &Option<PathList>, errors: &mut Errors) {
    let paths = paths(list);
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| q == p) {
            errors.push(syn::Error::new_spanned(
                p,
                format!(
                    "[attr.duplicate-entry] `{}` is listed twice in `{key}`; list it once",
                    crate::diag::path_text(p)
                ),
            ));
        }
    }
}

/// `[cascade.attach-and-exclude]`: one scope cannot both attach and exclude a component.
pub fn attach_exclude(
    attach: &Option<PathList>,
    exclude: &Option<PathList>,
    exclude_key: &str,
    errors: &mut Errors,
) {
    for ex in paths(exclude) {
        if paths(attach).iter().any(|a| a == ex) {
            errors.push(syn::Error::new_spanned(
                ex,
                format!(
                    "[cascade.attach-and-exclude] `{}` is both attached and excluded here; `{exclude_key}` removes what an outer scope attached, so keep it in only one list",
                    crate::diag::path_text(ex)
                ),
            ));
        }
    }
}

/// The rules of the cascade keys; the valid `max_result_size`.
pub fn cascade(kind: Kind, c: &Cascade, errors: &mut Errors) -> Option<u64> {
    no_duplicates("tool_interceptors", &c.tool_interceptors, errors);
    no_duplicates(
        "exclude_tool_interceptors",
        &c.exclude_tool_interceptors,
        errors,
    );
    no_duplicates("pii_policies", &c.pii_policies, errors);
    attach_exclude(
        &c.tool_interceptors,
        &c.exclude_tool_interceptors,
        "exclude_tool_interceptors",
        errors,
    );
    positive(kind, "max_result_size", &c.max_result_size, errors)
}

/// The rules of a scope's guardrail keys.
pub fn guardrails<T>(g: &Guardrails<T>, errors: &mut Errors) {
    no_duplicates("input_guardrails", &g.input_guardrails, errors);
    no_duplicates(
        "exclude_input_guardrails",
        &g.exclude_input_guardrails,
        errors,
    );
    no_duplicates("output_guardrails", &g.output_guardrails, errors);
    no_duplicates(
        "exclude_output_guardrails",
        &g.exclude_output_guardrails,
        errors,
    );
    attach_exclude(
        &g.input_guardrails,
        &g.exclude_input_guardrails,
        "exclude_input_guardrails",
        errors,
    );
    attach_exclude(
        &g.output_guardrails,
        &g.exclude_output_guardrails,
        "exclude_output_guardrails",
        errors,
    );
}

/// `Some(value)` tokens of an optional number, typed `ty`.
pub fn option_tokens(value: Option<u64>, ty: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    match value {
        Some(v) => {
            let lit = proc_macro2::Literal::u64_unsuffixed(v);
            quote!(::core::option::Option::Some(#lit as #ty))
        }
        None => quote!(::core::option::Option::None),
    }
}
