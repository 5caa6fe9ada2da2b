//! `#[agent]`, `#[router]`, `#[workflow]` and `#[application]`: the scopes of the cascade.
//! Each parses its keys into its model (the shared [`Cascade`] and [`Guardrails`] groups
//! flattened in), checks them (the shared rules of `check`, then its own), then expands to its
//! trait impl and registration entry; on error, a fallback impl.
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::attr::docs::{AGENT_DOC, APPLICATION_DOC, MacroDoc, ROUTER_DOC, WORKFLOW_DOC};
use crate::attr::model::{
    AgentArgs, AgentKeys, ApplicationArgs, Cascade, Guardrails, RouterArgs, WorkflowArgs,
};
use crate::attr::value::{PathList, Str, paths};
use crate::check::{self, positive};
use crate::component::{
    finish, meta_list, name_fields, parse_named, parse_struct, register, registered,
};
use crate::diag::Errors;
use crate::rules::{self, Kind};

/// `Option<n>` tokens of a checked number.
fn option(value: Option<u64>) -> TokenStream {
    match value {
        Some(v) => {
            let lit = proc_macro2::Literal::u64_unsuffixed(v);
            quote!(::core::option::Option::Some(#lit))
        }
        None => quote!(::core::option::Option::None),
    }
}

fn str_or_empty(s: &Option<Str>) -> TokenStream {
    match s {
        Some(s) => {
            let s = &s.0;
            quote!(#s)
        }
        None => quote!(""),
    }
}

/// Parses a scope: the item, its model, the fallback of its trait.
fn parse_scope<T: darling::FromMeta>(
    kind: Kind,
    doc: MacroDoc,
    trait_name: &'static str,
    meta_type: &'static str,
    placeholder: &str,
    attr: TokenStream,
    item: TokenStream,
) -> Result<(ItemStruct, Option<T>, Errors, TokenStream), TokenStream> {
    let mut errors = Errors::default();
    let item = parse_struct(kind, item, &mut errors)?;
    let args = parse_named::<T>(kind, doc, attr, &item, &mut errors);
    let fallback =
        registered(&item.ident, trait_name, meta_type).fallback(placeholder, TokenStream::new());
    Ok((item, args, errors, fallback))
}

pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::AGENT;
    let (item, args, mut errors, fallback) = match parse_scope::<AgentArgs>(
        kind,
        AGENT_DOC,
        "Agent",
        "AgentMeta",
        "AGENT",
        attr,
        item,
    ) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    check::no_duplicates("tools", &args.keys.tools, &mut errors);
    let max_result_size = check::cascade(kind, &args.keys.scope.rest, &mut errors);
    check::guardrails(&args.keys.scope, &mut errors);
    let max_turns = positive(kind, "max_turns", &args.keys.max_turns, &mut errors);
    let max_parallel = positive(
        kind,
        "max_parallel_tool_calls",
        &args.keys.max_parallel_tool_calls,
        &mut errors,
    );
    let policy = match args.keys.tool_errors.as_ref().map(|s| (s.0.value(), &s.0)) {
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
    let output_retries = output_retries(&args.keys, &mut errors);
    check::no_duplicates("handoffs", &args.keys.handoffs, &mut errors);
    not_self(
        &item.ident,
        &args.keys.handoffs,
        "handoff-self",
        "cannot hand its run to itself: list other agents in `handoffs = [..]`",
        &mut errors,
    );
    check::no_duplicates("agent_tools", &args.keys.agent_tools, &mut errors);
    not_self(
        &item.ident,
        &args.keys.agent_tools,
        "agent-tool-self",
        "cannot be a tool of itself: list other agents in `agent_tools = [..]`",
        &mut errors,
    );
    let limits = crate::usage_limits::check(&args.keys.usage_limits, &mut errors);
    finish(&item, errors, fallback, || {
        let usage_limits = crate::usage_limits::tokens(&limits);
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let instructions = str_or_empty(&args.keys.instructions);
        let tools = meta_list(paths(&args.keys.tools), "Tool");
        // Functions, not the metas themselves: two agents may hand off to each other.
        let handoffs = paths(&args.keys.handoffs).iter().map(|a| {
            quote::quote_spanned!(syn::spanned::Spanned::span(a)=> #p::agent_meta::<#a> as fn() -> &'static #p::AgentMeta)
        });
        let handoffs = quote!(&[#(#handoffs),*]);
        let agent_tools = paths(&args.keys.agent_tools).iter().map(|a| {
            quote::quote_spanned!(syn::spanned::Spanned::span(a)=> #p::agent_meta::<#a> as fn() -> &'static #p::AgentMeta)
        });
        let agent_tools = quote!(&[#(#agent_tools),*]);
        let ask_approval = match &args.keys.ask_approval {
            Some(channel) => {
                let channel = &channel.0;
                quote!(::core::option::Option::Some(#p::channel_meta::<#channel>()))
            }
            None => quote!(::core::option::Option::None),
        };
        let output = match &args.keys.output {
            Some(dto) => {
                let dto = &dto.0;
                quote!(::core::option::Option::Some(#p::AgentOutput::of::<#dto>()))
            }
            None => quote!(::core::option::Option::None),
        };
        let output_retries = option(output_retries);
        let mcp_servers = str_list(&args.keys.mcp_servers);
        let cascade = cascade_fields(&args.keys.scope.rest);
        let guardrails = guardrail_fields(&args.keys.scope);
        let (max_turns, max_parallel) = (option(max_turns), option(max_parallel));
        let max_result_size = option(max_result_size);
        register(
            registered(&item.ident, "Agent", "AgentMeta"),
            quote! {
                #named
                instructions: #instructions,
                tools: #tools,
                mcp_servers: #mcp_servers,
                #cascade
                max_turns: #max_turns,
                max_parallel_tool_calls: #max_parallel,
                tool_errors: #p::ToolErrorPolicy::#policy,
                max_result_size: #max_result_size,
                guardrails: #guardrails,
                output: #output,
                output_retries: #output_retries,
                handoffs: #handoffs,
                agent_tools: #agent_tools,
                ask_approval: #ask_approval,
                usage_limits: #usage_limits,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

/// `handoffs` and `agent_tools`: never the agent itself (`[agent.handoff-self]`: the run
/// would only hand itself over until the bound stops it; `[agent.agent-tool-self]`: its every
/// call would start the same agent again, until the nesting bound stops it).
fn not_self(
    ident: &syn::Ident,
    list: &Option<PathList>,
    rule: &str,
    what: &str,
    errors: &mut Errors,
) {
    for path in paths(list) {
        if path.is_ident("Self") || path.segments.last().is_some_and(|s| s.ident == *ident) {
            errors.push(syn::Error::new_spanned(
                path,
                format!("[agent.{rule}] `{ident}` {what}"),
            ));
        }
    }
}

/// `output_retries`: a whole number (`[agent.output-retries]`), on an agent with an
/// `output` (`[agent.output-retries-without-output]`).
fn output_retries(keys: &AgentKeys, errors: &mut Errors) -> Option<u64> {
    let lit = &keys.output_retries.as_ref()?.0;
    if keys.output.is_none() {
        errors.push(syn::Error::new(
            lit.span(),
            "[agent.output-retries-without-output] `output_retries` bounds the corrections of a typed answer: add `output = SomeDto` or remove it",
        ));
        return None;
    }
    match lit.base10_parse::<u32>() {
        Ok(v) => Some(u64::from(v)),
        Err(_) => {
            errors.push(syn::Error::new(
                lit.span(),
                "[agent.output-retries] `output_retries` is a whole number, e.g. `output_retries = 2` (0: no correction)",
            ));
            None
        }
    }
}

pub fn router(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::ROUTER;
    let (item, args, mut errors, fallback) = match parse_scope::<RouterArgs>(
        kind,
        ROUTER_DOC,
        "Router",
        "RouterMeta",
        "ROUTER",
        attr,
        item,
    ) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    let routes = Some(args.keys.routes.clone());
    check::no_duplicates("routes", &routes, &mut errors);
    check::guardrails(&args.keys.scope, &mut errors);
    if args.keys.routes.paths.is_empty() {
        errors.push(syn::Error::new(
            args.keys.routes.span,
            "[router.no-routes] a router needs at least one agent in `routes = [...]`",
        ));
    }
    if let Some(fallback) = &args.keys.fallback
        && !args.keys.routes.paths.contains(&fallback.0)
    {
        errors.push(syn::Error::new_spanned(
            &fallback.0,
            "[router.fallback] the fallback must be one of the router's `routes`",
        ));
    }
    finish(&item, errors, fallback, || {
        let p = quote!(::agboss_core::__private);
        let named = name_fields(&args);
        let instructions = str_or_empty(&args.keys.instructions);
        let routes = meta_list(&args.keys.routes.paths, "Agent");
        let fallback = match &args.keys.fallback {
            Some(f) => {
                let f = &f.0;
                quote!(::core::option::Option::Some(<#f as #p::Agent>::META))
            }
            None => quote!(::core::option::Option::None),
        };
        let guardrails = guardrail_fields(&args.keys.scope);
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

/// The member lists of a workflow or application: no type twice.
fn check_members(lists: &[(&str, &Option<PathList>)], errors: &mut Errors) {
    for (key, list) in lists {
        check::no_duplicates(key, list, errors);
    }
}

pub fn workflow(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::WORKFLOW;
    let (item, args, mut errors, fallback) = match parse_scope::<WorkflowArgs>(
        kind,
        WORKFLOW_DOC,
        "Workflow",
        "WorkflowMeta",
        "WORKFLOW",
        attr,
        item,
    ) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    check_members(
        &[
            ("agents", &args.keys.agents),
            ("routers", &args.keys.routers),
            ("tools", &args.keys.tools),
        ],
        &mut errors,
    );
    let max_result_size = check::cascade(kind, &args.keys.scope.rest, &mut errors);
    check::guardrails(&args.keys.scope, &mut errors);
    let limits = crate::usage_limits::check(&args.keys.usage_limits, &mut errors);
    finish(&item, errors, fallback, || {
        let usage_limits = crate::usage_limits::tokens(&limits);
        let named = name_fields(&args);
        let members = member_fields(&args.keys.agents, &args.keys.routers, &args.keys.tools);
        let cascade = cascade_fields(&args.keys.scope.rest);
        let guardrails = guardrail_fields(&args.keys.scope);
        let max_result_size = option(max_result_size);
        register(
            registered(&item.ident, "Workflow", "WorkflowMeta"),
            quote! {
                #named
                #members
                #cascade
                max_result_size: #max_result_size,
                guardrails: #guardrails,
                usage_limits: #usage_limits,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

pub fn application(attr: TokenStream, item: TokenStream) -> TokenStream {
    let kind = rules::APPLICATION;
    let (item, args, mut errors, fallback) = match parse_scope::<ApplicationArgs>(
        kind,
        APPLICATION_DOC,
        "Application",
        "ApplicationMeta",
        "APPLICATION",
        attr,
        item,
    ) {
        Ok(x) => x,
        Err(out) => return out,
    };
    let Some(args) = args else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    check_members(
        &[
            ("workflows", &args.keys.workflows),
            ("agents", &args.keys.agents),
            ("routers", &args.keys.routers),
            ("tools", &args.keys.tools),
        ],
        &mut errors,
    );
    let max_result_size = check::cascade(kind, &args.keys.scope.rest, &mut errors);
    check::guardrails(&args.keys.scope, &mut errors);
    let g = &args.keys.scope;
    for (list, key) in [
        (&g.exclude_input_guardrails, "exclude_input_guardrails"),
        (&g.exclude_output_guardrails, "exclude_output_guardrails"),
    ] {
        if let Some(list) = list {
            errors.push(syn::Error::new(
                list.span,
                format!("[cascade.nothing-to-exclude] the application is the outermost scope, so it inherits nothing to exclude; remove `{key}` here and exclude at an inner scope (workflow, agent or router)"),
            ));
        }
    }
    if let Some(first) = paths(&args.keys.scope.rest.exclude_tool_interceptors).first() {
        errors.push(syn::Error::new_spanned(
            first,
            "[cascade.nothing-to-exclude] the application is the outermost scope, so it inherits nothing to exclude; remove `exclude_tool_interceptors` here and exclude at an inner scope (workflow, agent or tool)",
        ));
    }
    let limits = crate::usage_limits::check(&args.keys.usage_limits, &mut errors);
    finish(&item, errors, fallback, || {
        let usage_limits = crate::usage_limits::tokens(&limits);
        let named = name_fields(&args);
        let workflows = meta_list(paths(&args.keys.workflows), "Workflow");
        let members = member_fields(&args.keys.agents, &args.keys.routers, &args.keys.tools);
        let mcp_servers = str_list(&args.keys.mcp_servers);
        let attach = attach_fields(&args.keys.scope.rest);
        let guardrails = guardrail_fields(&args.keys.scope);
        let max_result_size = option(max_result_size);
        register(
            registered(&item.ident, "Application", "ApplicationMeta"),
            quote! {
                #named
                workflows: #workflows,
                #members
                mcp_servers: #mcp_servers,
                #attach
                max_result_size: #max_result_size,
                guardrails: #guardrails,
                usage_limits: #usage_limits,
            },
            TokenStream::new(),
            TokenStream::new(),
        )
    })
}

/// `agents`, `routers`, `tools` of a workflow or application.
fn member_fields(
    agents: &Option<PathList>,
    routers: &Option<PathList>,
    tools: &Option<PathList>,
) -> TokenStream {
    let agents = meta_list(paths(agents), "Agent");
    let routers = meta_list(paths(routers), "Router");
    let tools = meta_list(paths(tools), "Tool");
    quote!(agents: #agents, routers: #routers, tools: #tools,)
}

/// What a scope attaches: `tool_interceptors` and `pii_policies`.
fn attach_fields(c: &Cascade) -> TokenStream {
    let attach = meta_list(paths(&c.tool_interceptors), "ToolInterceptor");
    let pii_policies = meta_list(paths(&c.pii_policies), "PiiPolicy");
    quote!(tool_interceptors: #attach, pii_policies: #pii_policies,)
}

/// What an inner scope attaches and excludes.
fn cascade_fields(c: &Cascade) -> TokenStream {
    let attach = attach_fields(c);
    let exclude = meta_list(paths(&c.exclude_tool_interceptors), "ToolInterceptor");
    quote!(#attach exclude_tool_interceptors: #exclude,)
}

/// `ScopeGuardrails { .. }` of a scope: its guardrail lists (each entry spanned at the user's
/// path, so a wrong type reads `[input-guardrail.not-a-guardrail]` at the right place) and
/// `mask_answer`.
fn guardrail_fields<T>(g: &Guardrails<T>) -> TokenStream {
    let p = quote!(::agboss_core::__private);
    let input = meta_list(paths(&g.input_guardrails), "InputGuardrailComponent");
    let exclude_input = meta_list(
        paths(&g.exclude_input_guardrails),
        "InputGuardrailComponent",
    );
    let output = meta_list(paths(&g.output_guardrails), "OutputGuardrailComponent");
    let exclude_output = meta_list(
        paths(&g.exclude_output_guardrails),
        "OutputGuardrailComponent",
    );
    let mask_answer = g.mask_answer.0;
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

/// `&["a", "b"]` of an optional string list.
fn str_list(list: &Option<crate::attr::value::StrList>) -> TokenStream {
    let items = list.iter().flat_map(|l| &l.items);
    quote!(&[#(#items),*])
}
