//! `#[injectable]`, `#[injectable(deps = [...])]`, `#[injectable(default)]` (built with
//! `Default::default()`), `#[injectable(provided)]` (the app is handed an instance).
use proc_macro2::TokenStream;
use quote::quote;

use crate::attr::docs::INJECTABLE_DOC;
use crate::attr::model::InjectableArgs;
use crate::attr::value::paths;
use crate::component::{finish, parse_struct, register, registered};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::Kind;

const INJECTABLE: Kind = Kind {
    label: "injectable service",
    attr: "injectable",
    name_suffix: "",
    type_suffix: "",
};

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(INJECTABLE, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    // `#[injectable]` alone takes every default.
    let args = if attr.is_empty() {
        Some(InjectableArgs::default())
    } else {
        crate::attr::parse::<InjectableArgs>(INJECTABLE_DOC, attr, &mut errors)
    };
    let fallback = registered(&item.ident, "Injectable", "InjectableMeta")
        .fallback("INJECTABLE", TokenStream::new());
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    let (provided, default) = (args.provided.0, args.default.0);
    let deps_span = args
        .deps
        .as_ref()
        .map_or_else(proc_macro2::Span::call_site, |d| d.span);
    if provided && default {
        errors.push(syn::Error::new(
            proc_macro2::Span::call_site(),
            "[injectable.construction] choose one of `provided` (the app is handed an instance) and `default` (built with `Default::default()`)",
        ));
    }
    if default && !paths(&args.deps).is_empty() {
        errors.push(syn::Error::new(
            deps_span,
            "[injectable.construction] a `default` service is built with `Default::default()`, so it takes no `deps`; remove one of them",
        ));
    }
    if provided && !paths(&args.deps).is_empty() {
        errors.push(syn::Error::new(
            deps_span,
            "[injectable.provided-deps] a `provided` service is handed to the app ready-made, so it takes no `deps`; remove one of them",
        ));
    }
    let deps = if provided || default {
        None
    } else {
        Some(Deps::check(&item, &args.deps, &mut errors))
    };

    finish(&item, errors, fallback, || {
        let ident = &item.ident;
        let p = quote!(::agboss_core::__private);
        // How the service is built: from its deps, with `Default`, or not at all (`provided`).
        let (dep_metas, value) = match &deps {
            Some(deps) => (deps.dep_metas(), Some(deps.construct(&quote!(#ident)))),
            None if default => (
                quote!(&[]),
                Some(quote!(<#ident as ::core::default::Default>::default())),
            ),
            None => (quote!(&[]), None),
        };
        let construct = match value {
            None => quote!(::core::option::Option::None),
            Some(value) => quote!(::core::option::Option::Some({
                fn __agboss_construct(
                    resolver: &#p::Resolver<'_>,
                ) -> ::core::result::Result<
                    #p::Arc<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync>,
                    #p::DiError,
                > {
                    let _ = resolver;
                    #p::erase_service::<#ident>((|| ::core::result::Result::Ok(#value))())
                }
                __agboss_construct
            })),
        };
        register(
            registered(ident, "Injectable", "InjectableMeta"),
            quote! {
                deps: #dep_metas,
                construct: #construct,
            },
            TokenStream::new(),
            deps.as_ref().map(Deps::assertions).unwrap_or_default(),
        )
    })
}
