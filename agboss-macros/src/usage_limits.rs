//! `usage_limits(..)` on `#[agent]`, `#[workflow]` and `#[application]`: every bound a
//! positive whole number (`[usage-limits.positive]`), at least one bound
//! (`[usage-limits.empty]`), no tool twice in `tool_calls_per_tool(..)`
//! (`[usage-limits.duplicate-tool]`); expanded to a `UsageLimitsMeta`.
use proc_macro2::TokenStream;
use quote::quote;

use crate::attr::model::{UsageLimitKeys, UsageLimitsKey};
use crate::diag::Errors;

/// The checked bounds.
#[derive(Default)]
pub struct Checked {
    numbers: [Option<u64>; 5],
    per_tool: Vec<(syn::Path, u64)>,
}

const KEYS: [&str; 5] = [
    "model_requests",
    "input_tokens",
    "output_tokens",
    "tool_calls",
    "cost_micros",
];

fn positive(key: &str, lit: &syn::LitInt, errors: &mut Errors) -> Option<u64> {
    match lit.base10_parse::<u64>() {
        Ok(v) if v > 0 => Some(v),
        _ => {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "[usage-limits.positive] `{key}` in `usage_limits(..)` must be a positive whole number, e.g. `{key} = 10` (a bound of 0 admits no call: remove what it would bound instead)"
                ),
            ));
            None
        }
    }
}

/// Checks `usage_limits(..)`, accumulating every error.
pub fn check(key: &UsageLimitsKey, errors: &mut Errors) -> Checked {
    let Some(spanned) = key else {
        return Checked::default();
    };
    let keys: &UsageLimitKeys = spanned;
    let numbers = [
        &keys.model_requests,
        &keys.input_tokens,
        &keys.output_tokens,
        &keys.tool_calls,
        &keys.cost_micros,
    ];
    let mut checked = Checked::default();
    for (i, (value, key)) in numbers.into_iter().zip(KEYS).enumerate() {
        checked.numbers[i] = value.as_ref().and_then(|v| positive(key, &v.0, errors));
    }
    let entries = keys.tool_calls_per_tool.iter().flat_map(|p| &p.entries);
    for (i, (path, lit)) in entries.clone().enumerate() {
        if entries.clone().take(i).any(|(other, _)| other == path) {
            errors.push(syn::Error::new_spanned(
                path,
                format!(
                    "[usage-limits.duplicate-tool] `{}` is bounded twice in `tool_calls_per_tool(..)`; bound it once",
                    crate::diag::path_text(path)
                ),
            ));
            continue;
        }
        if let Some(max) = positive(&crate::diag::path_text(path), lit, errors) {
            checked.per_tool.push((path.clone(), max));
        }
    }
    if numbers.iter().all(|v| v.is_none()) && keys.tool_calls_per_tool.is_none() {
        errors.push(syn::Error::new(
            spanned.span(),
            "[usage-limits.empty] `usage_limits(..)` sets no bound; add one, e.g. `usage_limits(tool_calls = 10)`, or remove it",
        ));
    }
    checked
}

/// The `UsageLimitsMeta` of checked bounds (each tool spanned at the user's path, so a type
/// that is not a tool reads `[tool.not-a-tool]` there).
pub fn tokens(checked: &Checked) -> TokenStream {
    let p = quote!(::agboss_core::__private);
    let [
        model_requests,
        input_tokens,
        output_tokens,
        tool_calls,
        cost_micros,
    ] = checked
        .numbers
        .map(|v| crate::check::option_tokens(v, quote!(u64)));
    let per_tool = checked.per_tool.iter().map(|(path, max)| {
        let max = proc_macro2::Literal::u64_unsuffixed(*max);
        quote::quote_spanned!(syn::spanned::Spanned::span(path)=>
            (#p::tool_name(<#path as #p::Tool>::META), #max))
    });
    quote! {
        #p::UsageLimitsMeta {
            model_requests: #model_requests,
            input_tokens: #input_tokens,
            output_tokens: #output_tokens,
            tool_calls: #tool_calls,
            tool_calls_per_tool: &[#(#per_tool),*],
            cost_micros: #cost_micros,
        }
    }
}
