//! `#[tool(..)]`: parse ([`ToolArgs`]), check, expand; on error, a fallback `impl Tool`.
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::attr::docs::TOOL_DOC;
use crate::attr::model::ToolArgs;
use crate::attr::value::paths;
use crate::check::{self, option_tokens, positive};
use crate::component::{
    construct_fn, fallback_construct, finish, meta_list, parse_named, parse_struct, register_init,
    registered, tool_meta_new,
};
use crate::deps::Deps;
use crate::diag::Errors;
use crate::rules::TOOL;

/// What the checks found valid, for the expansion.
struct Checked {
    max_result_size: Option<u64>,
    max_input_size: Option<u64>,
    timeout_ms: Option<u64>,
    deps: Deps,
}

fn check(item: &ItemStruct, args: &ToolArgs, errors: &mut Errors) -> Checked {
    let max_result_size = check::cascade(TOOL, &args.keys.cascade, errors);
    let timeout_ms = positive(TOOL, "timeout_ms", &args.keys.timeout_ms, errors);
    let max_input_size = positive(TOOL, "max_input_size", &args.keys.max_input_size, errors);
    let deps = Deps::check(item, &args.keys.deps, errors);
    if let (Some(when), None) = (&args.keys.approval_when, &args.keys.approval) {
        errors.push(syn::Error::new_spanned(
            &when.0,
            "[tool.approval-when-without-approval] `approval_when` needs `approval = SomeChannel`: \
             name the channel that decides the calls it selects",
        ));
    }
    Checked {
        max_result_size,
        max_input_size,
        timeout_ms,
        deps,
    }
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(TOOL, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = parse_named::<ToolArgs>(TOOL, TOOL_DOC, attr, &item, &mut errors);
    let checked = args.as_ref().map(|args| check(&item, args, &mut errors));
    let what = registered(&item.ident, "Tool", "ToolMeta");
    // The fallback needs the input and output types (the `ToolHandler` the user wrote).
    let fallback = match &args {
        Some(args) => {
            let (input, output) = (&args.keys.input.0, &args.keys.output.0);
            let construct = fallback_construct();
            what.fallback(
                "TOOL",
                quote!(type Input = #input; type Output = #output; #construct),
            )
        }
        None => TokenStream::new(),
    };
    let (Some(args), Some(checked)) = (args, checked) else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    finish(&item, errors, fallback, || generate(&item, &args, &checked))
}

fn generate(item: &ItemStruct, args: &ToolArgs, checked: &Checked) -> TokenStream {
    let ident = &item.ident;
    let p = quote!(::agboss_core::__private);
    let (input, output) = (&args.keys.input.0, &args.keys.output.0);
    let c = &args.keys.cascade;
    let attach = meta_list(paths(&c.tool_interceptors), "ToolInterceptor");
    let exclude = meta_list(paths(&c.exclude_tool_interceptors), "ToolInterceptor");
    let pii_policies = meta_list(paths(&c.pii_policies), "PiiPolicy");
    let deps = &checked.deps;
    let dep_metas = deps.dep_metas();
    let construct = construct_fn(deps.construct(&quote!(Self)));
    let max = option_tokens(checked.max_result_size, quote!(usize));
    let timeout = option_tokens(checked.timeout_ms, quote!(u64));
    let max_input = option_tokens(checked.max_input_size, quote!(usize));
    let idempotent = args.keys.idempotent.0;
    let long_running = args.keys.long_running.0;
    let approval = match &args.keys.approval {
        Some(channel) => {
            let channel = &channel.0;
            quote!(::core::option::Option::Some(#p::channel_meta::<#channel>()))
        }
        None => quote!(::core::option::Option::None),
    };
    // The condition takes the typed input; any other input needs approval (fail closed).
    let approval_when = match &args.keys.approval_when {
        Some(f) => {
            let f = &f.0;
            quote! {
                ::core::option::Option::Some({
                    fn __agboss_approval_when(input: &dyn ::core::any::Any) -> bool {
                        let check: fn(&#input) -> bool = #f;
                        input.downcast_ref::<#input>().is_none_or(check)
                    }
                    __agboss_approval_when
                })
            }
        }
        None => quote!(::core::option::Option::None),
    };
    // The META is a constant of its own, registered without naming `<T as Tool>`: a missing
    // `ToolHandler` is then reported once, at the impl.
    let assertions = deps.assertions();
    let new = tool_meta_new(args, ident);
    register_init(
        registered(ident, "Tool", "ToolMeta"),
        quote! {
            #new
            .with_schemas(<#input as #p::Dto>::json_schema, <#output as #p::Dto>::json_schema)
            .with_limits(#max, #max_input, #timeout)
            .with_idempotent(#idempotent)
            .with_long_running(#long_running)
            .with_approval(#approval, #approval_when)
            .with_cascade(#attach, #exclude, #pii_policies)
            .with_deps(#dep_metas)
        },
        quote! {
            type Input = #input;
            type Output = #output;
            #construct
        },
        assertions,
    )
}
