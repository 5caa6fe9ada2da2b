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

/// `[cascade.attach-and-exclude]`: one scope cannot both attach and exclude a component
/// (`exclude_key` names the list, e.g. `exclude_tool_interceptors`).
pub fn check_attach_exclude(
    attach: &[syn::Path],
    exclude: &[syn::Path],
    exclude_key: &str,
    errors: &mut Errors,
) {
    for ex in exclude {
        if attach.iter().any(|a| a == ex) {
            errors.push(syn::Error::new_spanned(
                ex,
                format!(
                    "[cascade.attach-and-exclude] `{}` is both attached and excluded here; `{exclude_key}` removes what an outer scope attached, so keep it in only one list",
                    quote!(#ex)
                ),
            ));
        }
    }
}

/// The user's struct, the runtime trait it gets and that trait's meta type: what names a kind
/// of component in generated code. The `Registration` variant has the trait's name.
pub struct Registered<'a> {
    ident: &'a syn::Ident,
    trait_name: &'static str,
    meta_type: &'static str,
    variant: &'static str,
}

/// A struct registered as `trait_name` (e.g. `Agent`) with meta type `meta_type` (`AgentMeta`).
pub fn registered<'a>(
    ident: &'a syn::Ident,
    trait_name: &'static str,
    meta_type: &'static str,
) -> Registered<'a> {
    Registered {
        ident,
        trait_name,
        meta_type,
        variant: trait_name,
    }
}

impl Registered<'_> {
    /// The same, registered as `Registration::<variant>` (when it differs from the trait).
    pub fn registered_as(mut self, variant: &'static str) -> Self {
        self.variant = variant;
        self
    }
}

/// What every component macro emits, in one place: `impl Trait for T` with its `META` constant
/// (the type's name and `TypeId` filled in here, the kind's own `fields` after them) and any
/// further `impl_items`, then the `inventory` entry, all in one `const _` block that also holds
/// the `support` items the impl refers to.
pub fn register(
    what: Registered<'_>,
    fields: TokenStream,
    impl_items: TokenStream,
    support: TokenStream,
) -> TokenStream {
    let ident = what.ident;
    let p = quote!(::agboss_core::__private);
    let tr = syn::Ident::new(what.trait_name, proc_macro2::Span::call_site());
    let meta = syn::Ident::new(what.meta_type, proc_macro2::Span::call_site());
    let variant = syn::Ident::new(what.variant, proc_macro2::Span::call_site());
    let type_name = ident.to_string();
    quote! {
        const _: () = {
            #support
            impl #p::#tr for #ident {
                const META: &'static #p::#meta = &#p::#meta {
                    type_name: #type_name,
                    type_id: ::core::any::TypeId::of::<#ident>,
                    #fields
                };
                #impl_items
            }
            #p::inventory::submit! {
                #p::Registered {
                    component: #p::Registration::#variant(<#ident as #p::#tr>::META),
                    module: ::core::module_path!(),
                }
            }
        };
    }
}

/// `name: "...", description: "...",` of a named component (both checked present).
pub fn name_fields(args: &crate::args::Args) -> TokenStream {
    let name = args.str("name").expect("checked: required key");
    let description = args.str("description").expect("checked: required key");
    quote!(name: #name, description: #description,)
}

/// `fn construct(resolver) -> Result<Self, DiError> { Ok(<construct>) }` of a built component.
pub fn construct_fn(construct: TokenStream) -> TokenStream {
    let p = quote!(::agboss_core::__private);
    quote! {
        fn construct(
            resolver: &#p::Resolver<'_>,
        ) -> ::core::result::Result<Self, #p::DiError> {
            let _ = resolver;
            ::core::result::Result::Ok(#construct)
        }
    }
}
