//! `#[mcp_tool(..)]`: parse ([`McpToolArgs`]), check, expand; on error, the user's struct
//! and a fallback `impl Tool`.
//!
//! A remote tool is a `Tool` like any other (same cascade, pipeline, listeners, events): the
//! expansion adds the connection as a hidden field, implements `ToolHandler` as the remote
//! call, and registers the tool with where it lives (`ToolMeta::mcp`).
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Fields, ItemStruct};

use crate::attr::docs::MCP_TOOL_DOC;
use crate::attr::model::McpToolArgs;
use crate::attr::value::paths;
use crate::check::{self, option_tokens, positive};
use crate::component::{
    fallback_construct, finish, meta_list, parse_named, parse_struct, register_init, registered,
    tool_meta_new,
};
use crate::diag::Errors;
use crate::rules::MCP_TOOL;

/// What the checks found valid, for the expansion.
struct Checked {
    max_result_size: Option<u64>,
    max_input_size: Option<u64>,
    timeout_ms: Option<u64>,
}

fn check(item: &ItemStruct, args: &McpToolArgs, errors: &mut Errors) -> Checked {
    let k = &args.keys;
    let max_result_size = check::cascade(MCP_TOOL, &k.cascade, errors);
    let timeout_ms = positive(MCP_TOOL, "timeout_ms", &k.timeout_ms, errors);
    let max_input_size = positive(MCP_TOOL, "max_input_size", &k.max_input_size, errors);
    if !matches!(item.fields, Fields::Unit) {
        errors.push(syn::Error::new_spanned(
            &item.fields,
            "[mcp-tool.unit-struct] an `#[mcp_tool]` is a unit struct (`pub struct GetSumTool;`): the macro adds the connection to its server; remove the fields",
        ));
    }
    for (key, value) in [("server", &k.server), ("remote", &k.remote)] {
        if value.0.value().trim().is_empty() {
            errors.push(syn::Error::new(
                value.0.span(),
                format!(
                    "[mcp-tool.{key}] `{key}` is empty: name the {}, e.g. `{key} = \"{}\"`",
                    if key == "server" {
                        "MCP server (the name its `McpServerConfig` gives it)"
                    } else {
                        "tool as the server lists it"
                    },
                    if key == "server" {
                        "everything"
                    } else {
                        "get-sum"
                    }
                ),
            ));
        }
    }
    Checked {
        max_result_size,
        max_input_size,
        timeout_ms,
    }
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match parse_struct(MCP_TOOL, item, &mut errors) {
        Ok(item) => item,
        Err(out) => return out,
    };
    let args = parse_named::<McpToolArgs>(MCP_TOOL, MCP_TOOL_DOC, attr, &item, &mut errors);
    let checked = args.as_ref().map(|args| check(&item, args, &mut errors));
    let what = registered(&item.ident, "Tool", "ToolMeta");
    let fallback = match &args {
        Some(args) => {
            let (input, output) = io_types(args);
            let construct = fallback_construct();
            let ident = &item.ident;
            let p = quote!(::agboss_core::__private);
            // The handler the expansion would have written: a mistake is one error, not two.
            let handler = quote! {
                impl #p::ToolHandler<#input, #output> for #ident {
                    async fn run(&self, _: #input) -> ::core::result::Result<#output, #p::ToolError> {
                        ::core::unreachable!("an erroneous #[mcp_tool] never runs")
                    }
                }
            };
            let fallback = what.fallback(
                "TOOL",
                quote!(type Input = #input; type Output = #output; #construct),
            );
            // Without agboss-core's `mcp` feature the remote types do not exist: the item's
            // own errors are all there is (no fallback, no second error for the feature).
            quote!(#p::with_mcp! { { #handler #fallback } })
        }
        None => TokenStream::new(),
    };
    let (Some(args), Some(checked)) = (args, checked) else {
        return finish(&item, errors, fallback, TokenStream::new);
    };
    if !errors.is_empty() {
        return finish(&item, errors, fallback, TokenStream::new);
    }
    // `[mcp-tool.feature]`: with agboss-core's `mcp` feature the expansion, without it one
    // error naming the feature (and the user's struct as written, so nothing else cascades).
    let generated = generate(&item, &args, &checked);
    let p = quote!(::agboss_core::__private);
    quote!(#p::if_mcp! { { #generated } else { #item } })
}

/// The input and output types: the DTOs given, else the remote schemas' types.
fn io_types(args: &McpToolArgs) -> (TokenStream, TokenStream) {
    let p = quote!(::agboss_core::__private::mcp);
    let input = match &args.keys.input {
        Some(t) => {
            let t = &t.0;
            quote!(#t)
        }
        None => quote!(#p::McpArguments),
    };
    let output = match &args.keys.output {
        Some(t) => {
            let t = &t.0;
            quote!(#t)
        }
        None => quote!(#p::McpResult),
    };
    (input, output)
}

fn generate(item: &ItemStruct, args: &McpToolArgs, checked: &Checked) -> TokenStream {
    let ident = &item.ident;
    let p = quote!(::agboss_core::__private);
    let k = &args.keys;
    let (input, output) = io_types(args);
    let attach = meta_list(paths(&k.cascade.tool_interceptors), "ToolInterceptor");
    let exclude = meta_list(
        paths(&k.cascade.exclude_tool_interceptors),
        "ToolInterceptor",
    );
    let pii_policies = meta_list(paths(&k.cascade.pii_policies), "PiiPolicy");
    let max = option_tokens(checked.max_result_size, quote!(usize));
    let timeout = option_tokens(checked.timeout_ms, quote!(u64));
    let max_input = option_tokens(checked.max_input_size, quote!(usize));
    let idempotent = k.idempotent.0;
    let approval = match &k.approval {
        Some(channel) => {
            let channel = &channel.0;
            quote!(::core::option::Option::Some(#p::channel_meta::<#channel>()))
        }
        None => quote!(::core::option::Option::None),
    };
    let (server, remote) = (&k.server.0, &k.remote.0);
    let (typed_input, typed_output) = (k.input.is_some(), k.output.is_some());
    // The user's unit struct, with the connection to its server.
    let attrs = &item.attrs;
    let vis = &item.vis;
    let strukt = quote! {
        #(#attrs)*
        #vis struct #ident {
            __agboss_remote: #p::mcp::McpRemote,
        }
    };
    let new = tool_meta_new(args, ident);
    let registration = register_init(
        registered(ident, "Tool", "ToolMeta"),
        quote! {
            #new
            .with_schemas(<#input as #p::Dto>::json_schema, <#output as #p::Dto>::json_schema)
            .with_limits(#max, #max_input, #timeout)
            .with_idempotent(#idempotent)
            .with_approval(#approval, ::core::option::Option::None)
            .with_cascade(#attach, #exclude, #pii_policies)
            .with_mcp({
                // A static: the remote end's name is a `Cow`, which a constant cannot lend.
                static __AGBOSS_REMOTE: #p::mcp::McpToolMeta = #p::mcp::McpToolMeta::new(
                    #server,
                    #remote,
                    #typed_input,
                    #typed_output,
                );
                &__AGBOSS_REMOTE
            })
        },
        quote! {
            type Input = #input;
            type Output = #output;
            fn construct(
                resolver: &#p::Resolver<'_>,
            ) -> ::core::result::Result<Self, #p::DiError> {
                ::core::result::Result::Ok(Self {
                    __agboss_remote: #p::mcp::McpRemote::resolve(
                        resolver,
                        <Self as #p::Tool>::META,
                    )?,
                })
            }
            fn check_input(
                &self,
                input: &#input,
            ) -> ::core::result::Result<(), #p::mcp::ValidationError> {
                self.__agboss_remote.check_input(input)
            }
            fn model_input_schema(&self) -> ::core::option::Option<#p::serde_json::Value> {
                self.__agboss_remote.model_input_schema()
            }
        },
        TokenStream::new(),
    );
    quote! {
        #strukt
        impl #p::ToolHandler<#input, #output> for #ident {
            async fn run(&self, input: #input) -> ::core::result::Result<#output, #p::ToolError> {
                self.__agboss_remote.call::<#input, #output>(input).await
            }
        }
        #registration
    }
}
