//! `#[channel(..)]`: parse ([`ChannelArgs`]), check, expand; on error, a fallback
//! `impl Channel`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::attr::docs::CHANNEL_DOC;
use crate::attr::model::ChannelArgs;
use crate::check::{option_tokens, positive};
use crate::component::{
    construct_fn, fallback_construct, finish, name_fields, parse_named, parse_struct, register,
    registered,
};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::CHANNEL;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(CHANNEL, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = parse_named::<ChannelArgs>(CHANNEL, CHANNEL_DOC, attr, &item, &mut errors);
    let checked = args.as_ref().map(|args| {
        (
            Deps::check(&item, &args.keys.deps, &mut errors),
            positive(CHANNEL, "ttl_ms", &args.keys.ttl_ms, &mut errors),
        )
    });
    let fallback =
        registered(&item.ident, "Channel", "ChannelMeta").fallback("CHANNEL", fallback_construct());
    let (Some(args), Some((deps, ttl_ms))) = (args, checked) else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    finish(&item, errors, fallback, || {
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
        let assertions = deps.assertions();
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
                #assertions
                fn __agboss_build(
                    services: &#p::Services,
                ) -> ::core::result::Result<#p::Built, #p::DiError> {
                    #build
                }
            },
        )
    })
}
