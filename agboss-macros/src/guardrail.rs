//! `#[input_guardrail(name, description, deps, timeout_ms, cheap, parallel)]` and
//! `#[output_guardrail(name, description, deps, timeout_ms, cheap)]`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::args::{Args, KeySpec, Shape, key};
use crate::component::{construct_fn, finish, name_fields, parse_struct, register, registered};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{INPUT_GUARDRAIL, Kind, OUTPUT_GUARDRAIL, check_description, check_names};
use crate::tool::{option_tokens, parse_positive};

const INPUT_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("deps", Shape::PathList, false),
    key("timeout_ms", Shape::Int, false),
    key("cheap", Shape::Flag, false),
    key("parallel", Shape::Flag, false),
];

const OUTPUT_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("deps", Shape::PathList, false),
    key("timeout_ms", Shape::Int, false),
    key("cheap", Shape::Flag, false),
];

/// The two kinds differ in their trait, their build function and their keys.
struct Side {
    kind: Kind,
    keys: &'static [KeySpec],
    component: &'static str,
    variant: &'static str,
    build: &'static str,
    boundary: &'static str,
}

const INPUT: Side = Side {
    kind: INPUT_GUARDRAIL,
    keys: INPUT_KEYS,
    component: "InputGuardrailComponent",
    variant: "InputGuardrail",
    build: "build_input_guardrail",
    boundary: "Input",
};

const OUTPUT: Side = Side {
    kind: OUTPUT_GUARDRAIL,
    keys: OUTPUT_KEYS,
    component: "OutputGuardrailComponent",
    variant: "OutputGuardrail",
    build: "build_output_guardrail",
    boundary: "Output",
};

pub fn input(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(&INPUT, attr, item)
}

pub fn output(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(&OUTPUT, attr, item)
}

fn expand(side: &Side, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(side.kind, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = Args::parse(side.kind.attr, attr, side.keys, &mut errors);
    check_names(side.kind, args.str("name"), &item.ident, &mut errors);
    check_description(side.kind, args.str("description"), &mut errors);
    let deps = Deps::check(&item, args.paths("deps"), &mut errors);
    let rule = side.kind.label.replace(' ', "-");
    let timeout_ms = parse_positive(&rule, args.int("timeout_ms"), "timeout_ms", &mut errors);

    finish(&item, errors, || {
        let ident = &item.ident;
        let named = name_fields(&args);
        let dep_metas = deps.dep_metas();
        let construct = construct_fn(deps.construct(&quote!(Self)));
        let p = quote!(::agboss_core::__private);
        let timeout = option_tokens(timeout_ms, quote!(u64));
        let cheap = args.flag("cheap");
        let parallel = args.flag("parallel");
        let boundary = syn::Ident::new(side.boundary, proc_macro2::Span::call_site());
        let build_fn = syn::Ident::new(side.build, proc_macro2::Span::call_site());
        // `[input-guardrail.missing-handler]` points at the struct name.
        let span = proc_macro2::Span::call_site().located_at(ident.span());
        let build = quote_spanned! {span=>
            #p::#build_fn::<#ident>(services)
        };
        register(
            registered(ident, side.component, "GuardrailMeta").registered_as(side.variant),
            quote! {
                #named
                boundary: #p::Boundary::#boundary,
                deps: #dep_metas,
                timeout_ms: #timeout,
                cheap: #cheap,
                parallel: #parallel,
                build: __agboss_build,
            },
            construct,
            quote! {
                fn __agboss_build(
                    services: &#p::Services,
                ) -> ::core::result::Result<#p::Arc<dyn #p::ErasedGuardrail>, #p::DiError> {
                    #build
                }
            },
        )
    })
}
