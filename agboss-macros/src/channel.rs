//! `#[channel(name, description, deps, ttl_ms)]`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::args::{Args, Shape, key};
use crate::component::{construct_fn, finish, name_fields, parse_struct, register, registered};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{CHANNEL, check_description, check_names};
use crate::tool::{option_tokens, parse_positive};

const KEYS: &[crate::args::KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("deps", Shape::PathList, false),
    key("ttl_ms", Shape::Int, false),
];

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(CHANNEL, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = Args::parse("channel", attr, KEYS, &mut errors);
    check_names(CHANNEL, args.str("name"), &item.ident, &mut errors);
    check_description(CHANNEL, args.str("description"), &mut errors);
    let deps = Deps::check(&item, args.paths("deps"), &mut errors);
    let ttl_ms = parse_positive("channel", args.int("ttl_ms"), "ttl_ms", &mut errors);

    finish(&item, errors, || {
        let ident = &item.ident;
        let named = name_fields(&args);
        let dep_metas = deps.dep_metas();
        let construct = construct_fn(deps.construct(&quote!(Self)));
        let p = quote!(::agboss_core::__private);
        let ttl = option_tokens(ttl_ms, quote!(u64));
        // `[channel.missing-handler]` points at the struct name.
        let span = proc_macro2::Span::call_site().located_at(ident.span());
        let build = quote_spanned! {span=>
            #p::build_channel::<#ident>(services)
        };
        register(
            registered(ident, "Channel", "ChannelMeta"),
            quote! {
                #named
                deps: #dep_metas,
                ttl_ms: #ttl,
                build: __agboss_build,
            },
            construct,
            quote! {
                fn __agboss_build(
                    services: &#p::Services,
                ) -> ::core::result::Result<#p::Arc<dyn #p::ErasedChannel>, #p::DiError> {
                    #build
                }
            },
        )
    })
}
