//! `#[tool(name, description, input, output, max_result_size, max_input_size, timeout_ms, idempotent,
//! tool_interceptors, exclude_tool_interceptors, pii_policies, deps)]`.
use proc_macro2::TokenStream;
use quote::quote;

use crate::args::{Args, Shape, key};
use crate::component::{
    check_attach_exclude, construct_fn, finish, interceptor_list, meta_list, name_fields,
    parse_struct, register, registered,
};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::{TOOL, check_description, check_names};

const KEYS: &[crate::args::KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("input", Shape::Path, true),
    key("output", Shape::Path, true),
    key("max_result_size", Shape::Int, false),
    key("max_input_size", Shape::Int, false),
    key("timeout_ms", Shape::Int, false),
    key("idempotent", Shape::Flag, false),
    key("approval", Shape::Path, false),
    key("approval_when", Shape::Path, false),
    key("tool_interceptors", Shape::PathList, false),
    key("exclude_tool_interceptors", Shape::PathList, false),
    key("pii_policies", Shape::PathList, false),
    key("deps", Shape::PathList, false),
];

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(TOOL, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = Args::parse("tool", attr, KEYS, &mut errors);
    check_names(TOOL, args.str("name"), &item.ident, &mut errors);
    check_description(TOOL, args.str("description"), &mut errors);
    let max_result_size = parse_positive(
        "tool",
        args.int("max_result_size"),
        "max_result_size",
        &mut errors,
    );
    let timeout_ms = parse_positive("tool", args.int("timeout_ms"), "timeout_ms", &mut errors);
    let max_input_size = parse_positive(
        "tool",
        args.int("max_input_size"),
        "max_input_size",
        &mut errors,
    );
    let deps = Deps::check(&item, args.paths("deps"), &mut errors);
    if args.path("approval_when").is_some() && args.path("approval").is_none() {
        errors.push(syn::Error::new(
            syn::spanned::Spanned::span(args.path("approval_when").expect("checked above")),
            "[tool.approval-when-without-approval] `approval_when` needs `approval = SomeChannel`: \
             name the channel that decides the calls it selects",
        ));
    }
    check_attach_exclude(
        args.paths("tool_interceptors"),
        args.paths("exclude_tool_interceptors"),
        "exclude_tool_interceptors",
        &mut errors,
    );

    finish(&item, errors, || {
        let ident = &item.ident;
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let input = args.path("input").expect("checked");
        let output = args.path("output").expect("checked");
        let attach = interceptor_list(args.paths("tool_interceptors"));
        let exclude = interceptor_list(args.paths("exclude_tool_interceptors"));
        let pii_policies = meta_list(args.paths("pii_policies"), "PiiPolicy");
        let dep_metas = deps.dep_metas();
        let construct = construct_fn(deps.construct(&quote!(Self)));
        let max = option_tokens(max_result_size, quote!(usize));
        let timeout = option_tokens(timeout_ms, quote!(u64));
        let max_input = option_tokens(max_input_size, quote!(usize));
        let idempotent = args.flag("idempotent");
        let approval = match args.path("approval") {
            Some(channel) => quote!(::core::option::Option::Some(#p::channel_meta::<#channel>())),
            None => quote!(::core::option::Option::None),
        };
        // The condition takes the typed input; any other input needs approval (fail closed).
        let approval_when = match args.path("approval_when") {
            Some(f) => quote! {
                ::core::option::Option::Some({
                    fn __agboss_approval_when(input: &dyn ::core::any::Any) -> bool {
                        let check: fn(&#input) -> bool = #f;
                        input.downcast_ref::<#input>().is_none_or(check)
                    }
                    __agboss_approval_when
                })
            },
            None => quote!(::core::option::Option::None),
        };
        register(
            registered(ident, "Tool", "ToolMeta"),
            quote! {
                #named
                input_schema: <#input as #p::Dto>::json_schema,
                output_schema: <#output as #p::Dto>::json_schema,
                max_result_size: #max,
                max_input_size: #max_input,
                timeout_ms: #timeout,
                idempotent: #idempotent,
                approval: #approval,
                approval_when: #approval_when,
                tool_interceptors: #attach,
                exclude_tool_interceptors: #exclude,
                pii_policies: #pii_policies,
                deps: #dep_metas,
                erased: #p::erased_tool::<#ident>,
            },
            quote! {
                type Input = #input;
                type Output = #output;
                #construct
            },
            TokenStream::new(),
        )
    })
}

/// `[<kind>.<key>]`: a positive whole number (`max_result_size`, `timeout_ms`).
pub fn parse_positive(
    kind: &str,
    lit: Option<&syn::LitInt>,
    key: &str,
    errors: &mut Errors,
) -> Option<u64> {
    let lit = lit?;
    match lit.base10_parse::<u64>() {
        Ok(0) | Err(_) => {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "[{kind}.{}] `{key}` must be a positive whole number",
                    key.replace('_', "-")
                ),
            ));
            None
        }
        Ok(v) => Some(v),
    }
}

pub fn option_tokens(value: Option<u64>, ty: TokenStream) -> TokenStream {
    match value {
        Some(v) => {
            let lit = proc_macro2::Literal::u64_unsuffixed(v);
            quote!(::core::option::Option::Some(#lit as #ty))
        }
        None => quote!(::core::option::Option::None),
    }
}
