//! `#[tool_interceptor(name, description, deps, timeout_ms)]`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::args::{Args, Shape, key};
use crate::component::{construct_fn, finish, name_fields, parse_struct, register, registered};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{TOOL_INTERCEPTOR, check_description, check_names};
use crate::tool::{option_tokens, parse_positive};

const KEYS: &[crate::args::KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("deps", Shape::PathList, false),
    key("timeout_ms", Shape::Int, false),
];

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(TOOL_INTERCEPTOR, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = Args::parse("tool_interceptor", attr, KEYS, &mut errors);
    check_names(TOOL_INTERCEPTOR, args.str("name"), &item.ident, &mut errors);
    check_description(TOOL_INTERCEPTOR, args.str("description"), &mut errors);
    let deps = Deps::check(&item, args.paths("deps"), &mut errors);
    let timeout_ms = parse_positive(
        "tool-interceptor",
        args.int("timeout_ms"),
        "timeout_ms",
        &mut errors,
    );

    finish(&item, errors, || {
        let ident = &item.ident;
        let named = name_fields(&args);
        let dep_metas = deps.dep_metas();
        let construct = deps.construct(&quote!(Self));
        let p = quote!(::agboss_core::__private);
        let timeout = option_tokens(timeout_ms, quote!(u64));
        // `[tool-interceptor.missing-handler]` points at the struct name: located at the struct name, resolved at the call site (hygiene stays with the bindings).
        let span = proc_macro2::Span::call_site().located_at(ident.span());
        let handler_check = quote_spanned! {span=>
            #p::require_handler::<#ident, _, _>(before_marker, after_marker);
        };
        register(
            registered(ident, "ToolInterceptor", "InterceptorMeta"),
            quote! {
                #named
                deps: #dep_metas,
                timeout_ms: #timeout,
                build: __agboss_build,
            },
            construct_fn(construct),
            quote! {
                fn __agboss_build(
                    services: &#p::Services,
                ) -> ::core::result::Result<
                    #p::Arc<dyn #p::ErasedInterceptor>,
                    #p::DiError,
                > {
                    #[allow(unused_imports)]
                    use #p::{ViaAfter as _, ViaBefore as _, ViaNoAfter as _, ViaNoBefore as _};
                    let before_marker = (&&#p::Probe::<#ident>::new()).before_tag();
                    let after_marker = (&&#p::Probe::<#ident>::new()).after_tag();
                    #handler_check
                    #p::TypedInterceptor::<#ident>::build(
                        services,
                        before_marker.hook::<#ident>(),
                        after_marker.hook::<#ident>(),
                    )
                }
            },
        )
    })
}
