//! `#[agent]`, `#[router]`, `#[workflow]` and `#[application]`: the scopes of the cascade.
//! Each parses its keys into the shared argument model, applies the shared naming rules,
//! checks its lists, then expands to its trait impl and registration entry.
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::args::{Args, KeySpec, Shape, key};
use crate::component::{
    check_attach_exclude, check_no_duplicates, finish, interceptor_list, meta_list, name_fields,
    parse_struct, register, registered,
};
use crate::diag::Errors;
use crate::rules::{self, Kind, check_description, check_names};

fn common(
    kind: Kind,
    keys: &[KeySpec],
    attr: TokenStream,
    item: TokenStream,
) -> Result<(ItemStruct, Args, Errors), TokenStream> {
    let mut errors = Errors::default();
    let item = parse_struct(kind, item, &mut errors)?;
    let args = Args::parse(kind.attr, attr, keys, &mut errors);
    check_names(kind, args.str("name"), &item.ident, &mut errors);
    check_description(kind, args.str("description"), &mut errors);
    for list in [
        "tools",
        "agents",
        "routers",
        "workflows",
        "routes",
        "tool_interceptors",
        "exclude_tool_interceptors",
        "pii_policies",
        "input_guardrails",
        "exclude_input_guardrails",
        "output_guardrails",
        "exclude_output_guardrails",
    ] {
        check_no_duplicates(list, args.paths(list), &mut errors);
    }
    for (attach, exclude) in [
        ("tool_interceptors", "exclude_tool_interceptors"),
        ("input_guardrails", "exclude_input_guardrails"),
        ("output_guardrails", "exclude_output_guardrails"),
    ] {
        check_attach_exclude(
            args.paths(attach),
            args.paths(exclude),
            exclude,
            &mut errors,
        );
    }
    Ok((item, args, errors))
}

fn positive(args: &Args, key: &str, kind: Kind, errors: &mut Errors) -> TokenStream {
    let Some(lit) = args.int(key) else {
        return quote!(::core::option::Option::None);
    };
    match lit.base10_parse::<u64>() {
        Ok(v) if v > 0 => {
            let lit = proc_macro2::Literal::u64_unsuffixed(v);
            quote!(::core::option::Option::Some(#lit))
        }
        _ => {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "[{}.{}] `{key}` must be a positive whole number",
                    kind.label.replace(' ', "-"),
                    key.replace('_', "-")
                ),
            ));
            quote!(::core::option::Option::None)
        }
    }
}

fn str_or_empty(args: &Args, key: &str) -> TokenStream {
    match args.str(key) {
        Some(s) => quote!(#s),
        None => quote!(""),
    }
}

const AGENT_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("instructions", Shape::Str, false),
    key("tools", Shape::PathList, false),
    key("tool_interceptors", Shape::PathList, false),
    key("exclude_tool_interceptors", Shape::PathList, false),
    key("pii_policies", Shape::PathList, false),
    key("max_turns", Shape::Int, false),
    key("max_parallel_tool_calls", Shape::Int, false),
    key("tool_errors", Shape::Str, false),
    key("max_result_size", Shape::Int, false),
    key("input_guardrails", Shape::PathList, false),
    key("exclude_input_guardrails", Shape::PathList, false),
    key("output_guardrails", Shape::PathList, false),
    key("exclude_output_guardrails", Shape::PathList, false),
    key("mask_answer", Shape::Flag, false),
];

pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::AGENT;
    let (item, args, mut errors) = match common(kind, AGENT_KEYS, attr, item) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let max_turns = positive(&args, "max_turns", kind, &mut errors);
    let max_parallel = positive(&args, "max_parallel_tool_calls", kind, &mut errors);
    let max_result_size = positive(&args, "max_result_size", kind, &mut errors);
    let policy = match args.str("tool_errors").map(|s| (s.value(), s)) {
        None => quote!(Report),
        Some((v, _)) if v == "report" => quote!(Report),
        Some((v, _)) if v == "fail-step" => quote!(FailStep),
        Some((_, lit)) => {
            errors.push(syn::Error::new(
                lit.span(),
                "[agent.tool-errors] `tool_errors` is \"report\" (the model gets a safe error observation) or \"fail-step\" (the step fails)",
            ));
            quote!(Report)
        }
    };
    finish(&item, errors, || {
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let instructions = str_or_empty(&args, "instructions");
        let tools = meta_list(args.paths("tools"), "Tool");
        let cascade = cascade_fields(&args);
        let guardrails = guardrail_fields(&args);
        register(
            registered(&item.ident, "Agent", "AgentMeta"),
            quote! {
                #named
                instructions: #instructions,
                tools: #tools,
                #cascade
                max_turns: #max_turns,
                max_parallel_tool_calls: #max_parallel,
                tool_errors: #p::ToolErrorPolicy::#policy,
                max_result_size: #max_result_size,
                guardrails: #guardrails,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

const ROUTER_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("instructions", Shape::Str, false),
    key("routes", Shape::PathList, true),
    key("fallback", Shape::Path, false),
    key("input_guardrails", Shape::PathList, false),
    key("exclude_input_guardrails", Shape::PathList, false),
    key("output_guardrails", Shape::PathList, false),
    key("exclude_output_guardrails", Shape::PathList, false),
    key("mask_answer", Shape::Flag, false),
];

pub fn router(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::ROUTER;
    let (item, args, mut errors) = match common(kind, ROUTER_KEYS, attr, item) {
        Ok(x) => x,
        Err(out) => return out,
    };
    if let Some(span) = args.paths_span("routes")
        && args.paths("routes").is_empty()
    {
        errors.push(syn::Error::new(
            span,
            "[router.no-routes] a router needs at least one agent in `routes = [...]`",
        ));
    }
    if let Some(fallback) = args.path("fallback")
        && !args.paths("routes").iter().any(|r| r == fallback)
    {
        errors.push(syn::Error::new_spanned(
            fallback,
            "[router.fallback] the fallback must be one of the router's `routes`",
        ));
    }
    finish(&item, errors, || {
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let instructions = str_or_empty(&args, "instructions");
        let routes = meta_list(args.paths("routes"), "Agent");
        let fallback = match args.path("fallback") {
            Some(f) => quote!(::core::option::Option::Some(<#f as #p::Agent>::META)),
            None => quote!(::core::option::Option::None),
        };
        let guardrails = guardrail_fields(&args);
        register(
            registered(&item.ident, "Router", "RouterMeta"),
            quote! {
                #named
                instructions: #instructions,
                routes: #routes,
                fallback: #fallback,
                guardrails: #guardrails,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

const WORKFLOW_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("agents", Shape::PathList, false),
    key("routers", Shape::PathList, false),
    key("tools", Shape::PathList, false),
    key("tool_interceptors", Shape::PathList, false),
    key("exclude_tool_interceptors", Shape::PathList, false),
    key("pii_policies", Shape::PathList, false),
    key("max_result_size", Shape::Int, false),
    key("input_guardrails", Shape::PathList, false),
    key("exclude_input_guardrails", Shape::PathList, false),
    key("output_guardrails", Shape::PathList, false),
    key("exclude_output_guardrails", Shape::PathList, false),
    key("mask_answer", Shape::Flag, false),
];

pub fn workflow(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::WORKFLOW;
    let (item, args, mut errors) = match common(kind, WORKFLOW_KEYS, attr, item) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let max_result_size = positive(&args, "max_result_size", kind, &mut errors);
    finish(&item, errors, || {
        let named = name_fields(&args);
        let members = member_fields(&args);
        let cascade = cascade_fields(&args);
        let guardrails = guardrail_fields(&args);
        register(
            registered(&item.ident, "Workflow", "WorkflowMeta"),
            quote! {
                #named
                #members
                #cascade
                max_result_size: #max_result_size,
                guardrails: #guardrails,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

const APPLICATION_KEYS: &[KeySpec] = &[
    key("name", Shape::Str, true),
    key("description", Shape::Str, true),
    key("workflows", Shape::PathList, false),
    key("agents", Shape::PathList, false),
    key("routers", Shape::PathList, false),
    key("tools", Shape::PathList, false),
    key("tool_interceptors", Shape::PathList, false),
    key("exclude_tool_interceptors", Shape::PathList, false),
    key("pii_policies", Shape::PathList, false),
    key("max_result_size", Shape::Int, false),
    key("input_guardrails", Shape::PathList, false),
    key("exclude_input_guardrails", Shape::PathList, false),
    key("output_guardrails", Shape::PathList, false),
    key("exclude_output_guardrails", Shape::PathList, false),
    key("mask_answer", Shape::Flag, false),
];

pub fn application(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::APPLICATION;
    let (item, args, mut errors) = match common(kind, APPLICATION_KEYS, attr, item) {
        Ok(x) => x,
        Err(out) => return out,
    };
    for list in ["exclude_input_guardrails", "exclude_output_guardrails"] {
        if let Some(span) = args.paths_span(list) {
            errors.push(syn::Error::new(
                span,
                format!("[cascade.nothing-to-exclude] the application is the outermost scope, so it inherits nothing to exclude; remove `{list}` here and exclude at an inner scope (workflow, agent or router)"),
            ));
        }
    }
    if let Some(first) = args.paths("exclude_tool_interceptors").first() {
        errors.push(syn::Error::new_spanned(
            first,
            "[cascade.nothing-to-exclude] the application is the outermost scope, so it inherits nothing to exclude; remove `exclude_tool_interceptors` here and exclude at an inner scope (workflow, agent or tool)",
        ));
    }
    let max_result_size = positive(&args, "max_result_size", kind, &mut errors);
    finish(&item, errors, || {
        let named = name_fields(&args);
        let workflows = meta_list(args.paths("workflows"), "Workflow");
        let members = member_fields(&args);
        let attach = attach_fields(&args);
        let guardrails = guardrail_fields(&args);
        register(
            registered(&item.ident, "Application", "ApplicationMeta"),
            quote! {
                #named
                workflows: #workflows,
                #members
                #attach
                max_result_size: #max_result_size,
                guardrails: #guardrails,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

/// `agents`, `routers`, `tools` of a workflow or application.
fn member_fields(args: &Args) -> TokenStream {
    let agents = meta_list(args.paths("agents"), "Agent");
    let routers = meta_list(args.paths("routers"), "Router");
    let tools = meta_list(args.paths("tools"), "Tool");
    quote!(agents: #agents, routers: #routers, tools: #tools,)
}

/// What a scope attaches: `tool_interceptors` and `pii_policies`.
fn attach_fields(args: &Args) -> TokenStream {
    let attach = interceptor_list(args.paths("tool_interceptors"));
    let pii_policies = meta_list(args.paths("pii_policies"), "PiiPolicy");
    quote!(tool_interceptors: #attach, pii_policies: #pii_policies,)
}

/// What an inner scope attaches and excludes.
fn cascade_fields(args: &Args) -> TokenStream {
    let attach = attach_fields(args);
    let exclude = interceptor_list(args.paths("exclude_tool_interceptors"));
    quote!(#attach exclude_tool_interceptors: #exclude,)
}

/// `ScopeGuardrails { .. }` of a scope: its guardrail lists (each entry spanned at the user's
/// path, so a wrong type reads `[input-guardrail.not-a-guardrail]` at the right place) and
/// `mask_answer`.
fn guardrail_fields(args: &Args) -> TokenStream {
    let p = quote!(::agboss_core::__private);
    let input = meta_list(args.paths("input_guardrails"), "InputGuardrailComponent");
    let exclude_input = meta_list(
        args.paths("exclude_input_guardrails"),
        "InputGuardrailComponent",
    );
    let output = meta_list(args.paths("output_guardrails"), "OutputGuardrailComponent");
    let exclude_output = meta_list(
        args.paths("exclude_output_guardrails"),
        "OutputGuardrailComponent",
    );
    let mask_answer = args.flag("mask_answer");
    quote! {
        #p::ScopeGuardrails {
            input: #input,
            exclude_input: #exclude_input,
            output: #output,
            exclude_output: #exclude_output,
            mask_answer: #mask_answer,
        }
    }
}
