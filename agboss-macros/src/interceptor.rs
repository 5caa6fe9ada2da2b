//! `#[tool_interceptor(..)]`: parse ([`InterceptorArgs`]), check, expand; on error, a fallback
//! `impl ToolInterceptor`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemStruct;

use crate::attr::docs::TOOL_INTERCEPTOR_DOC;
use crate::attr::model::InterceptorArgs;
use crate::check::{option_tokens, positive};
use crate::component::{
    construct_fn, fallback_construct, finish, name_fields, parse_named, parse_struct, register,
    registered,
};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::TOOL_INTERCEPTOR;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(TOOL_INTERCEPTOR, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = parse_named::<InterceptorArgs>(
        TOOL_INTERCEPTOR,
        TOOL_INTERCEPTOR_DOC,
        attr,
        &item,
        &mut errors,
    );
    let checked = args.as_ref().map(|args| {
        (
            Deps::check(&item, &args.keys.deps, &mut errors),
            positive(
                TOOL_INTERCEPTOR,
                "timeout_ms",
                &args.keys.timeout_ms,
                &mut errors,
            ),
        )
    });
    let fallback = registered(&item.ident, "ToolInterceptor", "InterceptorMeta")
        .fallback("INTERCEPTOR", fallback_construct());
    let (Some(args), Some((deps, timeout_ms))) = (args, checked) else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    finish(&item, errors, fallback, || {
        generate(&item, &args, &deps, timeout_ms)
    })
}

fn generate(
    item: &ItemStruct,
    args: &InterceptorArgs,
    deps: &Deps,
    timeout_ms: Option<u64>,
) -> TokenStream {
    let ident = &item.ident;
    let named = name_fields(args);
    let dep_metas = deps.dep_metas();
    let construct = deps.construct(&quote!(Self));
    let p = quote!(::agboss_core::__private);
    let timeout = option_tokens(timeout_ms, quote!(u64));
    // `[tool-interceptor.missing-handler]`: one constant assertion at the struct name, whose
    // message names only the user's type.
    let message = format!(
        "[tool-interceptor.missing-handler] `{ident}` implements neither `BeforeToolCall` nor `AfterToolCall`: add `impl BeforeToolCall for {ident}` (`async fn before_tool_call`), `impl AfterToolCall for {ident}` (`async fn after_tool_call`), or both"
    );
    let span = proc_macro2::Span::call_site().located_at(ident.span());
    let handler_check = quote_spanned! {span=>
        const _: () = {
            #[allow(unused_imports)]
            use #p::NoHooks as _;
            if !(#p::Hooks::<#ident>::BEFORE || #p::Hooks::<#ident>::AFTER) {
                ::core::panic!(#message)
            }
        };
    };
    let assertions = deps.assertions();
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
            #handler_check
            #assertions
            fn __agboss_build(
                services: &#p::Services,
            ) -> ::core::result::Result<
                #p::Built,
                #p::DiError,
            > {
                #[allow(unused_imports)]
                use #p::{ViaAfter as _, ViaBefore as _, ViaNoAfter as _, ViaNoBefore as _};
                let before_marker = (&&#p::Probe::<#ident>::new()).before_tag();
                let after_marker = (&&#p::Probe::<#ident>::new()).after_tag();
                #p::TypedInterceptor::<#ident, _, _>::build(services, before_marker, after_marker)
            }
        },
    )
}
