//! `#[tool_interceptor(name, description, deps)]`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::args::{Args, Shape, key};
use crate::component::{finish, parse_struct};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{TOOL_INTERCEPTOR, check_description, check_names};

const KEYS: &[crate::args::KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("deps", Shape::PathList, false),
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

    finish(&item, errors, || {
        let ident = &item.ident;
        let name = args.str("name").expect("checked");
        let description = args.str("description").expect("checked");
        let dep_metas = deps.dep_metas();
        let construct = deps.construct(&quote!(Self));
        let type_name = ident.to_string();
        let p = quote!(::agboss_core::__private);
        // Spanned at the struct name: `[tool-interceptor.missing-handler]` points there.
        // Located at the struct name, resolved at the call site (hygiene stays with the bindings).
        let span = proc_macro2::Span::call_site().located_at(ident.span());
        let handler_check = quote_spanned! {span=>
            #p::require_handler::<#ident, _, _>(before_marker, after_marker);
        };
        quote! {
            const _: () = {
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
                impl #p::ToolInterceptor for #ident {
                    const META: &'static #p::InterceptorMeta = &#p::InterceptorMeta {
                        name: #name,
                        description: #description,
                        type_name: #type_name,
                        type_id: ::core::any::TypeId::of::<#ident>,
                        deps: #dep_metas,
                        build: __agboss_build,
                    };
                    fn construct(
                        resolver: &#p::Resolver<'_>,
                    ) -> ::core::result::Result<Self, #p::DiError> {
                        let _ = resolver;
                        ::core::result::Result::Ok(#construct)
                    }
                }
                #p::inventory::submit! {
                    #p::Registration::ToolInterceptor(
                        <#ident as #p::ToolInterceptor>::META
                    )
                }
            };
        }
    })
}
