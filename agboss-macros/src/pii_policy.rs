//! `#[pii_policy(name, description, detectors, custom_detectors, strategy, keep, hash_key_env)]`.
use proc_macro2::TokenStream;
use quote::quote;

use crate::args::{Args, Shape, key};
use crate::component::{
    check_no_duplicates, finish, name_fields, parse_struct, register, registered,
};
use crate::diag::Errors;
use crate::rules::{PII_POLICY, check_description, check_names};

const KEYS: &[crate::args::KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("detectors", Shape::PathList, false),
    key("custom_detectors", Shape::PathList, false),
    key("strategy", Shape::Str, false),
    key("keep", Shape::Int, false),
    key("hash_key_env", Shape::Str, false),
];

/// The built-in detectors of `agboss_core::pii`.
const BUILTINS: &[&str] = &["email", "phone", "card", "iban", "ssn", "ipv4", "ipv6"];

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(PII_POLICY, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = Args::parse("pii_policy", attr, KEYS, &mut errors);
    check_names(PII_POLICY, args.str("name"), &item.ident, &mut errors);
    check_description(PII_POLICY, args.str("description"), &mut errors);
    check_no_duplicates("detectors", args.paths("detectors"), &mut errors);
    check_no_duplicates(
        "custom_detectors",
        args.paths("custom_detectors"),
        &mut errors,
    );

    let mut detectors: Vec<String> = Vec::new();
    for path in args.paths("detectors") {
        match path.get_ident().map(ToString::to_string) {
            Some(name) if BUILTINS.contains(&name.as_str()) => detectors.push(name),
            _ => errors.push(syn::Error::new_spanned(
                path,
                format!(
                    "[pii-policy.unknown-detector] `{}` is not a built-in detector; the built-in detectors are {}; put your own `Detector + Default` types in `custom_detectors = [...]`",
                    quote!(#path),
                    BUILTINS.join(", ")
                ),
            )),
        }
    }
    if let Some(span) = args.paths_span("detectors")
        && args.paths("detectors").is_empty()
        && args.paths("custom_detectors").is_empty()
    {
        errors.push(syn::Error::new(
            span,
            "[pii-policy.no-detectors] the policy detects nothing: list built-in detectors (or leave `detectors` out for all of them), or add `custom_detectors = [...]`",
        ));
    }

    let strategy_lit = args.str("strategy");
    let strategy = strategy_lit.map(|s| s.value());
    let keep = args.int("keep");
    let hash_key_env = args.str("hash_key_env");
    let mut keep_value = 4usize;
    match strategy.as_deref() {
        None | Some("redact") | Some("partial") | Some("hash") => {}
        Some(_) => errors.push(syn::Error::new(
            strategy_lit.expect("some").span(),
            "[pii-policy.strategy] `strategy` is \"redact\" (`[REDACTED:email]`, the default), \"partial\" (keeps a little of the value, `keep` characters) or \"hash\" (a keyed token, needs `hash_key_env`)",
        )),
    }
    if let Some(keep) = keep {
        if strategy.as_deref() != Some("partial") {
            errors.push(syn::Error::new(
                keep.span(),
                "[pii-policy.keep] `keep` only applies to `strategy = \"partial\"`",
            ));
        } else {
            match keep.base10_parse::<usize>() {
                Ok(v) => keep_value = v,
                Err(_) => errors.push(syn::Error::new(
                    keep.span(),
                    "[pii-policy.keep] `keep` must be a whole number of characters",
                )),
            }
        }
    }
    match (strategy.as_deref(), hash_key_env) {
        (Some("hash"), None) => errors.push(syn::Error::new(
            strategy_lit.expect("some").span(),
            "[pii-policy.hash-key] `strategy = \"hash\"` needs `hash_key_env = \"VAR\"`: the environment variable holding the secret key (read when the app is built; keep keys out of the code)",
        )),
        (Some("hash"), Some(_)) | (_, None) => {}
        (_, Some(env)) => errors.push(syn::Error::new(
            env.span(),
            "[pii-policy.hash-key] `hash_key_env` only applies to `strategy = \"hash\"`",
        )),
    }

    finish(&item, errors, || {
        let ident = &item.ident;
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let strategy = match strategy.as_deref() {
            Some("partial") => {
                let keep = proc_macro2::Literal::usize_unsuffixed(keep_value);
                quote!(#p::MaskStrategy::Partial { keep: #keep })
            }
            Some("hash") => quote!(#p::MaskStrategy::Hash),
            _ => quote!(#p::MaskStrategy::Redact),
        };
        let hash_key_env = match hash_key_env {
            Some(env) => quote!(::core::option::Option::Some(#env)),
            None => quote!(::core::option::Option::None),
        };
        let customs = args.paths("custom_detectors").iter().map(|path| {
            quote::quote_spanned!(syn::spanned::Spanned::span(path)=> #p::custom_detector::<#path>)
        });
        register(
            registered(ident, "PiiPolicy", "PiiPolicyMeta"),
            quote! {
                #named
                detectors: &[#(#detectors),*],
                custom_detectors: &[#(#customs),*],
                strategy: #strategy,
                hash_key_env: #hash_key_env,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}
