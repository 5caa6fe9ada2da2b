//! Macros of agboss-rs. Use them through `agboss_core` (it re-exports every one); generated code
//! names the runtime through `::agboss_core::__private` only.
//!
//! Each macro lives in its own module that parses its arguments into a typed model, validates
//! it (accumulating every error of the item, each naming its rule code), then expands. The rules
//! shared by every kind of component (kebab-case names, kind suffixes, descriptions) live in
//! `rules`.
use proc_macro::TokenStream;

mod attr;
mod channel;
mod check;
mod component;
mod deps;
mod diag;
mod dto;
mod guardrail;
mod injectable;
mod interceptor;
mod pii_policy;
mod rules;
mod scopes;
mod tool;

/// Derives `agboss_core::dto::Dto`: serde with camelCase wire names, a JSON Schema and validation.
#[proc_macro_derive(Dto, attributes(text, integer, number, boolean, nested, schema))]
pub fn derive_dto(input: TokenStream) -> TokenStream {
    dto::expand(input.into()).into()
}

/// Declares a tool: `name`, `description`, `input`, `output` (required); `max_result_size`,
/// `max_input_size`, `timeout_ms` (bounds `run`), `idempotent` (a flag: a resumed run may rerun
/// a call whose end was never journaled, with the same idempotency key), `tool_interceptors`,
/// `exclude_tool_interceptors`, `pii_policies`, `deps`. See `agboss_core::contract::tool` and
/// the README.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Declares a human approval channel: `name` (kebab-case, ending in `-channel`), `description`
/// (required); `deps` (services only: a channel is built once per app); `ttl_ms`, how long its
/// tickets can be decided (default 24 h). The struct implements
/// `agboss_core::contract::channel::ApprovalChannel` (`notify`, `authorize`;
/// `[channel.missing-handler]` if it does not). Tools name it with
/// `#[tool(approval = ThisChannel)]`. See `agboss_core::contract::channel` and the README.
#[proc_macro_attribute]
pub fn channel(attr: TokenStream, item: TokenStream) -> TokenStream {
    channel::expand(attr.into(), item.into()).into()
}

/// Declares a tool interceptor: `name`, `description` (required); `deps`; `timeout_ms`, the time
/// limit of each of its hooks (default: the app's `interceptor_timeout`, 10 s), past which the
/// call fails closed. See `agboss_core::contract::interceptor` and the README.
#[proc_macro_attribute]
pub fn tool_interceptor(attr: TokenStream, item: TokenStream) -> TokenStream {
    interceptor::expand(attr.into(), item.into()).into()
}

/// Declares an input guardrail: a check of the user's input at the boundary of an agent or
/// router, before its model is called. Keys: `name` (kebab-case, ending in
/// `-input-guardrail`), `description` (required); `deps` (services and `TenantContext`);
/// `timeout_ms` (time limit of one check, default the app's `guardrail_timeout`, 10 s; past it
/// the step fails closed); `cheap` (a flag: runs before the guardrails of its boundary that are
/// not); `parallel` (a flag: the model's first turn starts while it runs, but no tool call
/// executes and nothing reaches the caller until it passed). The struct implements
/// `agboss_core::InputGuardrail` (`[input-guardrail.missing-handler]` if it does not). See
/// `agboss_core::contract::guardrail`.
#[proc_macro_attribute]
pub fn input_guardrail(attr: TokenStream, item: TokenStream) -> TokenStream {
    guardrail::input(attr.into(), item.into()).into()
}

/// Declares an output guardrail: a check of the answer of an agent (or a router's route)
/// before the caller reads it, and of every streamed window before it is released. Keys:
/// `name` (kebab-case, ending in `-output-guardrail`), `description` (required); `deps`;
/// `timeout_ms`; `cheap` (as for `#[input_guardrail]`). The struct implements
/// `agboss_core::OutputGuardrail` (`[output-guardrail.missing-handler]` if it does not).
#[proc_macro_attribute]
pub fn output_guardrail(attr: TokenStream, item: TokenStream) -> TokenStream {
    guardrail::output(attr.into(), item.into()).into()
}

/// Declares a PII policy: which personal data to mask in what a tool call sends to a model,
/// and how. See `agboss_core::contract::pii_policy` for the options.
#[proc_macro_attribute]
pub fn pii_policy(attr: TokenStream, item: TokenStream) -> TokenStream {
    pii_policy::expand(attr.into(), item.into()).into()
}

/// Declares an injectable, app-wide service.
#[proc_macro_attribute]
pub fn injectable(attr: TokenStream, item: TokenStream) -> TokenStream {
    injectable::expand(attr.into(), item.into()).into()
}

/// Declares an agent: a model in a tool loop over its tools.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::agent(attr.into(), item.into()).into()
}

/// Declares a router: picks one of its agents for an input.
#[proc_macro_attribute]
pub fn router(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::router(attr.into(), item.into()).into()
}

/// Declares a workflow: the scope between the application and its agents.
#[proc_macro_attribute]
pub fn workflow(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::workflow(attr.into(), item.into()).into()
}

/// Declares the application: the outermost scope.
#[proc_macro_attribute]
pub fn application(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::application(attr.into(), item.into()).into()
}
