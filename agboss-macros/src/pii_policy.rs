//! `#[pii_policy(..)]`: parse ([`PiiPolicyArgs`]), check, expand; on error, a fallback
//! `impl PiiPolicy`.
use proc_macro2::TokenStream;
use quote::quote;

use crate::attr::docs::PII_POLICY_DOC;
use crate::attr::model::PiiPolicyArgs;
use crate::attr::value::paths;
use crate::check::no_duplicates;
use crate::component::{finish, name_fields, parse_named, parse_struct, register, registered};
use crate::diag::{Errors, path_text};
use crate::rules::PII_POLICY;

/// The built-in detectors of `agboss_core::pii`.
const BUILTINS: &[&str] = &["email", "phone", "card", "iban", "ssn", "ipv4", "ipv6"];

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(PII_POLICY, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = parse_named::<PiiPolicyArgs>(PII_POLICY, PII_POLICY_DOC, attr, &item, &mut errors);
    let fallback = registered(&item.ident, "PiiPolicy", "PiiPolicyMeta")
        .fallback("PII_POLICY", TokenStream::new());
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    no_duplicates("detectors", &args.keys.detectors, &mut errors);
    no_duplicates("custom_detectors", &args.keys.custom_detectors, &mut errors);

    let mut detectors: Vec<String> = Vec::new();
    for path in paths(&args.keys.detectors) {
        match path.get_ident().map(ToString::to_string) {
            Some(name) if BUILTINS.contains(&name.as_str()) => detectors.push(name),
            _ => errors.push(syn::Error::new_spanned(
                path,
                format!(
                    "[pii-policy.unknown-detector] `{}` is not a built-in detector; the built-in detectors are {}; put your own `Detector + Default` types in `custom_detectors = [...]`",
                    path_text(path),
                    BUILTINS.join(", ")
                ),
            )),
        }
    }
    if let Some(list) = &args.keys.detectors
        && list.paths.is_empty()
        && paths(&args.keys.custom_detectors).is_empty()
    {
        errors.push(syn::Error::new(
            list.span,
            "[pii-policy.no-detectors] the policy detects nothing: list built-in detectors (or leave `detectors` out for all of them), or add `custom_detectors = [...]`",
        ));
    }

    let strategy_lit = args.keys.strategy.as_ref().map(|s| &s.0);
    let strategy = strategy_lit.map(syn::LitStr::value);
    let keep = args.keys.keep.as_ref().map(|k| &k.0);
    let hash_key_env = args.keys.hash_key_env.as_ref().map(|s| &s.0);
    let mut keep_value = 4usize;
    match (strategy.as_deref(), strategy_lit) {
        (None | Some("redact") | Some("partial") | Some("hash"), _) | (_, None) => {}
        (Some(_), Some(lit)) => errors.push(syn::Error::new(
            lit.span(),
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
            strategy_lit.map_or_else(proc_macro2::Span::call_site, syn::LitStr::span),
            "[pii-policy.hash-key] `strategy = \"hash\"` needs `hash_key_env = \"VAR\"`: the environment variable holding the secret key (read when the app is built; keep keys out of the code)",
        )),
        (Some("hash"), Some(_)) | (_, None) => {}
        (_, Some(env)) => errors.push(syn::Error::new(
            env.span(),
            "[pii-policy.hash-key] `hash_key_env` only applies to `strategy = \"hash\"`",
        )),
    }

    finish(&item, errors, fallback, || {
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
        let customs = paths(&args.keys.custom_detectors).iter().map(|path| {
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
