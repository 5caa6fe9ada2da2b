//! `#[input_guardrail(..)]` and `#[output_guardrail(..)]`: parse ([`InputGuardrailArgs`],
//! [`OutputGuardrailArgs`]), check, expand; on error, a fallback impl of the component trait.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::attr::docs::{INPUT_GUARDRAIL_DOC, MacroDoc, OUTPUT_GUARDRAIL_DOC};
use crate::attr::model::{InputGuardrailArgs, Named, NoKeys, OutputGuardrailArgs};
use crate::attr::value::{Int, PathList};
use crate::check::{option_tokens, positive};
use crate::component::{
    construct_fn, fallback_construct, finish, name_fields, parse_named, parse_struct, register,
    registered,
};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{INPUT_GUARDRAIL, Kind, OUTPUT_GUARDRAIL};

/// The keys both kinds have (`parallel` is `false` for an output guardrail).
struct Args {
    named: Named<NoKeys>,
    deps: Option<PathList>,
    timeout_ms: Option<Int>,
    cheap: bool,
    parallel: bool,
    /// Output guardrails only.
    max_match: Option<Int>,
}

impl From<InputGuardrailArgs> for Args {
    fn from(a: InputGuardrailArgs) -> Self {
        Args {
            named: Named {
                name: a.name,
                description: a.description,
                keys: NoKeys {},
            },
            deps: a.keys.deps,
            timeout_ms: a.keys.timeout_ms,
            cheap: a.keys.cheap.0,
            parallel: a.keys.parallel.0,
            max_match: None,
        }
    }
}

impl From<OutputGuardrailArgs> for Args {
    fn from(a: OutputGuardrailArgs) -> Self {
        Args {
            named: Named {
                name: a.name,
                description: a.description,
                keys: NoKeys {},
            },
            deps: a.keys.deps,
            timeout_ms: a.keys.timeout_ms,
            cheap: a.keys.cheap.0,
            parallel: false,
            max_match: a.keys.max_match,
        }
    }
}

/// The two kinds differ in their trait, their build function and their keys.
struct Side {
    kind: Kind,
    doc: MacroDoc,
    component: &'static str,
    variant: &'static str,
    build: &'static str,
    boundary: &'static str,
}

const INPUT: Side = Side {
    kind: INPUT_GUARDRAIL,
    doc: INPUT_GUARDRAIL_DOC,
    component: "InputGuardrailComponent",
    variant: "InputGuardrail",
    build: "build_input_guardrail",
    boundary: "Input",
};

const OUTPUT: Side = Side {
    kind: OUTPUT_GUARDRAIL,
    doc: OUTPUT_GUARDRAIL_DOC,
    component: "OutputGuardrailComponent",
    variant: "OutputGuardrail",
    build: "build_output_guardrail",
    boundary: "Output",
};

pub fn input(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::<InputGuardrailArgs>(&INPUT, attr, item)
}

pub fn output(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::<OutputGuardrailArgs>(&OUTPUT, attr, item)
}

fn expand<T: darling::FromMeta + Into<Args>>(
    side: &Side,
    attr: TokenStream,
    item: TokenStream,
) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(side.kind, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args: Option<Args> =
        parse_named::<T>(side.kind, side.doc, attr, &item, &mut errors).map(Into::into);
    let checked = args.as_ref().map(|args| {
        (
            Deps::check(&item, &args.deps, &mut errors),
            positive(side.kind, "timeout_ms", &args.timeout_ms, &mut errors),
            positive(side.kind, "max_match", &args.max_match, &mut errors),
        )
    });
    let fallback = registered(&item.ident, side.component, "GuardrailMeta")
        .fallback("GUARDRAIL", fallback_construct());
    let (Some(args), Some((deps, timeout_ms, max_match))) = (args, checked) else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    finish(&item, errors, fallback, || {
        let ident = &item.ident;
        let named = name_fields(&args.named);
        let dep_metas = deps.dep_metas();
        let construct = construct_fn(deps.construct(&quote!(Self)));
        let p = quote!(::agboss_core::__private);
        let timeout = option_tokens(timeout_ms, quote!(u64));
        let max_match = option_tokens(max_match, quote!(usize));
        let (cheap, parallel) = (args.cheap, args.parallel);
        let boundary = syn::Ident::new(side.boundary, proc_macro2::Span::call_site());
        let build_fn = syn::Ident::new(side.build, proc_macro2::Span::call_site());
        // `[input-guardrail.missing-handler]` points at the struct name.
        let span = proc_macro2::Span::call_site().located_at(ident.span());
        let build = quote_spanned! {span=>
            #p::#build_fn::<#ident>(services)
        };
        let assertions = deps.assertions();
        register(
            registered(ident, side.component, "GuardrailMeta").registered_as(side.variant),
            quote! {
                #named
                boundary: #p::Boundary::#boundary,
                deps: #dep_metas,
                timeout_ms: #timeout,
                cheap: #cheap,
                parallel: #parallel,
                max_match: #max_match,
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
