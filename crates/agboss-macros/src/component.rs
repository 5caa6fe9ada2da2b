//! What every component macro shares: reading the struct, its generics (not allowed) and
//! emitting the user's item followed by the generated code or the accumulated errors.
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::diag::Errors;
use crate::rules::Kind;

/// Parses the annotated item as a struct, or reports `[attr.not-a-struct]`.
pub fn parse_struct(
    kind: Kind,
    item: TokenStream,
    errors: &mut Errors,
) -> Result<ItemStruct, TokenStream> {
    match syn::parse2::<ItemStruct>(item.clone()) {
        Ok(s) => {
            if !s.generics.params.is_empty() {
                errors.push(syn::Error::new_spanned(
                    &s.generics,
                    format!(
                        "[attr.generics] a `#[{}]` struct cannot be generic: the framework builds it by itself; use a concrete struct",
                        kind.attr
                    ),
                ));
            }
            Ok(s)
        }
        Err(_) => {
            let err = syn::Error::new(
                proc_macro2::Span::call_site(),
                format!(
                    "[attr.not-a-struct] `#[{}]` goes on a struct, e.g. `pub struct My{};`",
                    kind.attr, kind.type_suffix
                ),
            );
            let mut out = item;
            out.extend(err.to_compile_error());
            Err(out)
        }
    }
}

/// The user's item, then the generated code, or the errors (the item is kept either way).
pub fn finish(
    item: &ItemStruct,
    errors: Errors,
    generated: impl FnOnce() -> TokenStream,
) -> TokenStream {
    if errors.is_empty() {
        let generated = generated();
        quote!(#item #generated)
    } else {
        let errs = errors.to_compile_errors();
        quote!(#item #errs)
    }
}

/// `&[<A as ToolInterceptor>::META, ...]`, each spanned at the user's path so that a
/// non-interceptor reads `[tool-interceptor.not-an-interceptor]` at the right place.
pub fn interceptor_list(paths: &[syn::Path]) -> TokenStream {
    let items = paths.iter().map(|p| {
        quote::quote_spanned!(syn::spanned::Spanned::span(p)=> <#p as ::agboss_core::__private::ToolInterceptor>::META)
    });
    quote!(&[#(#items),*])
}

/// `&[<T as Trait>::META, ...]` for any component trait, spanned at each path so that a wrong
/// type reads the trait's own `on_unimplemented` message at the right place.
pub fn meta_list(paths: &[syn::Path], trait_name: &str) -> TokenStream {
    let tr = syn::Ident::new(trait_name, proc_macro2::Span::call_site());
    let items = paths.iter().map(|p| {
        quote::quote_spanned!(syn::spanned::Spanned::span(p)=> <#p as ::agboss_core::__private::#tr>::META)
    });
    quote!(&[#(#items),*])
}

/// `[attr.duplicate-entry]`: a list names the same type twice.
pub fn check_no_duplicates(key: &str, paths: &[syn::Path], errors: &mut Errors) {
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| q == p) {
            errors.push(syn::Error::new_spanned(
                p,
                format!(
                    "[attr.duplicate-entry] `{}` is listed twice in `{key}`; list it once",
                    quote!(#p)
                ),
            ));
        }
    }
}

/// `[cascade.attach-and-exclude]`: one scope cannot both attach and exclude an interceptor.
pub fn check_attach_exclude(attach: &[syn::Path], exclude: &[syn::Path], errors: &mut Errors) {
    for ex in exclude {
        if attach.iter().any(|a| a == ex) {
            errors.push(syn::Error::new_spanned(
                ex,
                format!(
                    "[cascade.attach-and-exclude] `{}` is both attached and excluded here; `exclude_tool_interceptors` removes an interceptor inherited from an outer scope, so keep it in only one list",
                    quote!(#ex)
                ),
            ));
        }
    }
}
