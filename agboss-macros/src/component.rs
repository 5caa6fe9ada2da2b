//! What every component macro shares: reading the struct, its generics (not allowed) and
//! emitting the user's item followed by the generated code or the accumulated errors.
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::attr::docs::MacroDoc;
use crate::diag::Errors;
use crate::rules::{Kind, check_description, check_names};

/// Parses a named component's attribute into `T` and checks the naming rules (also when
/// another key is wrong, so that every error of the attribute is reported at once).
pub fn parse_named<T: darling::FromMeta>(
    kind: Kind,
    doc: MacroDoc,
    attr: TokenStream,
    item: &ItemStruct,
    errors: &mut Errors,
) -> Option<T> {
    let (name, description) = crate::attr::loose_named(&attr);
    let model = crate::attr::parse::<T>(doc, attr, errors);
    check_names(kind, name.as_ref(), &item.ident, errors);
    check_description(kind, description.as_ref(), errors);
    model
}

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

/// The user's item, then the generated code; or, when the item has errors, the errors and a
/// fallback impl of its trait (see [`Registered::fallback`]), so that nothing else cascades.
pub fn finish(
    item: &ItemStruct,
    errors: Errors,
    fallback: TokenStream,
    generated: impl FnOnce() -> TokenStream,
) -> TokenStream {
    if errors.is_empty() {
        let generated = generated();
        quote!(#item #generated)
    } else {
        let errs = errors.to_compile_errors();
        // A generic struct (`[attr.generics]`) cannot get an impl for the bare name.
        let fallback = if item.generics.params.is_empty() {
            fallback
        } else {
            TokenStream::new()
        };
        quote!(#item #errs #fallback)
    }
}

/// `&[<T as Trait>::META, ...]` for a component trait, spanned at each path so that a wrong
/// type reads the trait's own `on_unimplemented` message at the right place.
pub fn meta_list(paths: &[syn::Path], trait_name: &str) -> TokenStream {
    let tr = syn::Ident::new(trait_name, proc_macro2::Span::call_site());
    let items = paths.iter().map(|p| {
        quote::quote_spanned!(syn::spanned::Spanned::span(p)=> <#p as ::agboss_core::__private::#tr>::META)
    });
    quote!(&[#(#items),*])
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

    /// What an item with errors gets instead of its expansion (thiserror's `fallback.rs` is the
    /// model): `impl Trait for T` with the placeholder meta `fallback::<placeholder>` and
    /// `impl_items` (e.g. a `construct` that never runs), never registered. Wherever the type
    /// is named (`tools = [T]`), it still is one, so the item's own errors are all there is.
    pub fn fallback(&self, placeholder: &str, impl_items: TokenStream) -> TokenStream {
        let ident = self.ident;
        let p = quote!(::agboss_core::__private);
        let tr = syn::Ident::new(self.trait_name, proc_macro2::Span::call_site());
        let meta = syn::Ident::new(self.meta_type, proc_macro2::Span::call_site());
        let placeholder = syn::Ident::new(placeholder, proc_macro2::Span::call_site());
        quote! {
            const _: () = {
                impl #p::#tr for #ident {
                    const META: &'static #p::#meta = #p::fallback::#placeholder;
                    #impl_items
                }
            };
        }
    }
}

/// `fn construct` of a fallback impl: never called, the crate does not compile.
pub fn fallback_construct() -> TokenStream {
    let p = quote!(::agboss_core::__private);
    quote! {
        fn construct(
            _: &#p::Resolver<'_>,
        ) -> ::core::result::Result<Self, #p::DiError> {
            ::core::unreachable!()
        }
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
    let meta = syn::Ident::new(what.meta_type, proc_macro2::Span::call_site());
    let type_name = ident.to_string();
    let init = quote! {
        #p::#meta {
            type_name: #type_name,
            type_id: ::core::any::TypeId::of::<#ident>,
            #fields
        }
    };
    register_init(what, init, impl_items, support)
}

/// [`register`] for a meta built by an expression (`ToolMeta::new(..).with_..(..)`, whose
/// struct cannot be written as a literal outside agboss-core).
pub fn register_init(
    what: Registered<'_>,
    init: TokenStream,
    impl_items: TokenStream,
    support: TokenStream,
) -> TokenStream {
    let ident = what.ident;
    let p = quote!(::agboss_core::__private);
    let tr = syn::Ident::new(what.trait_name, proc_macro2::Span::call_site());
    let meta = syn::Ident::new(what.meta_type, proc_macro2::Span::call_site());
    let variant = syn::Ident::new(what.variant, proc_macro2::Span::call_site());
    // The meta is a constant of its own, registered without naming `<T as Trait>`: a trait
    // bound the type misses (`ToolHandler`) is then reported once, at the impl.
    quote! {
        const _: () = {
            #[allow(unused_imports)]
            use #p::NotInjectable as _;
            #support
            const __AGBOSS_META: &'static #p::#meta = &#init;
            impl #p::#tr for #ident {
                const META: &'static #p::#meta = __AGBOSS_META;
                #impl_items
            }
            #p::inventory::submit! {
                #p::Registered {
                    component: #p::Registration::#variant(__AGBOSS_META),
                    module: ::core::module_path!(),
                }
            }
        };
    }
}

/// `ToolMeta::new(name, description, type_name, type_id, erased)`: the start of a tool's meta.
pub fn tool_meta_new<T>(named: &crate::attr::model::Named<T>, ident: &syn::Ident) -> TokenStream {
    let (name, description) = (&named.name.0, &named.description.0);
    let p = quote!(::agboss_core::__private);
    let type_name = ident.to_string();
    quote! {
        #p::ToolMeta::new(
            #name,
            #description,
            #type_name,
            ::core::any::TypeId::of::<#ident>,
            #p::erased_tool::<#ident>,
        )
    }
}

/// `name: "...", description: "...",` of a named component.
pub fn name_fields<T>(named: &crate::attr::model::Named<T>) -> TokenStream {
    let (name, description) = (&named.name.0, &named.description.0);
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
