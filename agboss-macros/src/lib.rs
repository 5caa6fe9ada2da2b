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
mod mcp_tool;
mod pii_policy;
mod rules;
mod scopes;
mod tool;
mod usage_limits;

/// Derives `agboss_core::dto::Dto`: serde with camelCase wire names, a JSON Schema and
/// validation that reports every failure with its JSON path.
///
/// On a struct with named fields, each field carries one kind attribute: `#[text]`,
/// `#[integer]`, `#[number]`, `#[boolean]`, `#[nested]`, `#[choice]`, `#[json]` or
/// `#[schema]`, with a `prompt` (or a doc comment) and the constraints of its kind. On an enum
/// of unit variants, a string enum that a `#[choice]` field holds.
///
/// See the [`agboss_core::dto`](../agboss_core/dto/index.html) module for every kind and key.
///
/// # Example
///
/// ```
/// use agboss_core::dto::Dto;
///
/// /// How fast to ship.
/// #[derive(Dto, Debug, Clone, Copy, PartialEq)]
/// pub enum Speed {
///     Standard,
///     #[dto(rename = "next-day")]
///     Express,
/// }
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct ShipDto {
///     /// The order's reference.
///     #[text(min_length = 3)]
///     pub order_id: String,
///     #[choice(prompt = "How fast to ship")]
///     pub speed: Speed,
///     /// Items per warehouse.
///     #[integer(min = 1)]
///     pub items: std::collections::BTreeMap<String, u32>,
/// }
///
/// let ship = ShipDto::from_json_str(r#"{"orderId": "A-17", "speed": "next-day", "items": {"b": 2}}"#).unwrap();
/// assert_eq!(ship.speed, Speed::Express);
/// let err = ShipDto::from_json_str(r#"{"orderId": "A", "speed": "now", "items": {"b": 0}}"#).unwrap_err();
/// assert_eq!(err.errors.len(), 3);
/// ```
#[proc_macro_derive(
    Dto,
    attributes(text, integer, number, boolean, nested, choice, json, schema, dto)
)]
pub fn derive_dto(input: TokenStream) -> TokenStream {
    dto::expand(input.into()).into()
}

/// Declares a tool: a struct implementing `ToolHandler<Input, Output>` (`async fn run`), whose
/// every call goes through validation, the interceptors of its path, approval, `run`, output
/// validation, truncation and masking. The struct's name ends in `Tool` and its `name` in
/// `-tool`; each `deps` entry is one field, in order.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/tool.md")]
#[doc = include_str!("../doc/cascade.md")]
///
/// # Example
///
/// ```
/// use agboss_core::dto::Dto;
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct OrderDto {
///     /// The order's reference, e.g. A-17.
///     #[text(min_length = 3)]
///     pub order_id: String,
/// }
/// use agboss_core::prelude::*;
///
/// #[tool(name = "get-order-tool", description = "Loads an order", input = OrderDto,
///        output = OrderDto, timeout_ms = 5000)]
/// pub struct GetOrderTool;
///
/// impl ToolHandler<OrderDto, OrderDto> for GetOrderTool {
///     async fn run(&self, input: OrderDto) -> Result<OrderDto, ToolError> {
///         Ok(input)
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Declares one tool of an MCP server as a first-class tool of the app (feature `mcp` of
/// `agboss_core`): the same naming rules, cascade, pipeline (input validation → before hooks
/// → approval → the remote call → after hooks → output re-validation → truncation → masking),
/// listeners, events and `describe()` entry as a `#[tool]`. The struct is a unit struct (the
/// macro adds its connection) and needs no `ToolHandler`: the call is `tools/call` of
/// `remote` on `server`. At build the server must be connected
/// (`AppBuilder::mcp_server`) and list `remote`, and an `input` DTO must fit its input schema.
///
/// The macro is exported whatever agboss-core's features, so its rules are always checked;
/// without the feature `mcp`, a valid use is the one error `[mcp-tool.feature]` naming it.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/mcp_tool.md")]
#[doc = include_str!("../doc/cascade.md")]
///
/// # Example
///
/// ```
/// use agboss_core::dto::Dto;
/// use agboss_core::mcp_tool;
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct SumDto {
///     #[number(prompt = "First number")]
///     pub a: f64,
///     #[number(prompt = "Second number")]
///     pub b: f64,
/// }
///
/// /// With DTOs: the remote schema must accept `SumDto` at build.
/// #[mcp_tool(name = "get-sum-tool", description = "Adds two numbers", server = "everything",
///            remote = "get-sum", input = SumDto, timeout_ms = 5000)]
/// pub struct GetSumTool;
///
/// /// Without: the remote schemas, checked per call.
/// #[mcp_tool(name = "echo-tool", description = "Echoes a message", server = "everything",
///            remote = "echo")]
/// pub struct EchoTool;
/// ```
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    mcp_tool::expand(attr.into(), item.into()).into()
}

/// Declares a human approval channel: the struct implements
/// `agboss_core::contract::channel::ApprovalChannel` (`notify`, `authorize`;
/// `[channel.missing-handler]` if it does not). Tools name it with
/// `#[tool(approval = ThisChannel)]`.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/channel.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
/// use agboss_core::store::Ticket;
///
/// #[channel(name = "manager-channel", description = "A manager decides", ttl_ms = 3_600_000)]
/// pub struct ManagerChannel;
///
/// impl ApprovalChannel for ManagerChannel {
///     async fn notify(&self, _ticket: &Ticket) -> Result<(), ChannelError> {
///         Ok(())
///     }
///     async fn authorize(&self, _approver: &Approver, _ticket: &Ticket) -> Result<bool, ChannelError> {
///         Ok(true)
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn channel(attr: TokenStream, item: TokenStream) -> TokenStream {
    channel::expand(attr.into(), item.into()).into()
}

/// Declares a tool interceptor: the struct implements `BeforeToolCall`
/// (`async fn before_tool_call`, decides), `AfterToolCall` (`async fn after_tool_call`, sees and
/// may transform the output), or both (`[tool-interceptor.missing-handler]` if neither).
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/tool_interceptor.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[tool_interceptor(name = "audit-tool-interceptor", description = "Audits every call",
///                    deps = [TenantContext], timeout_ms = 2000)]
/// pub struct AuditToolInterceptor {
///     tenant: TenantContext,
/// }
///
/// impl BeforeToolCall for AuditToolInterceptor {
///     async fn before_tool_call(&self, _call: &ToolCallContext<'_>) -> Result<ToolCallDecision, InterceptorError> {
///         let _ = &self.tenant;
///         Ok(ToolCallDecision::allow())
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn tool_interceptor(attr: TokenStream, item: TokenStream) -> TokenStream {
    interceptor::expand(attr.into(), item.into()).into()
}

/// Declares an input guardrail: a check of the user's input at the boundary of an agent or
/// router, before its model is called. The struct implements `agboss_core::contract::guardrail::InputGuardrail`
/// (`[input-guardrail.missing-handler]` if it does not).
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/input_guardrail.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[input_guardrail(name = "injection-input-guardrail", description = "Stops prompt injection", cheap)]
/// pub struct InjectionInputGuardrail;
///
/// impl InputGuardrail for InjectionInputGuardrail {
///     async fn check_input(&self, input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
///         Ok(if input.text().contains("ignore previous instructions") {
///             GuardrailVerdict::block("prompt injection")
///         } else {
///             GuardrailVerdict::pass()
///         })
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn input_guardrail(attr: TokenStream, item: TokenStream) -> TokenStream {
    guardrail::input(attr.into(), item.into()).into()
}

/// Declares an output guardrail: a check of the answer of an agent (or a router's route)
/// before the caller reads it, and of every streamed window before it is released. The
/// struct implements `agboss_core::contract::guardrail::OutputGuardrail` (`[output-guardrail.missing-handler]` if
/// it does not).
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/output_guardrail.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[output_guardrail(name = "secret-output-guardrail", description = "Hides secrets")]
/// pub struct SecretOutputGuardrail;
///
/// impl OutputGuardrail for SecretOutputGuardrail {
///     async fn check_output(&self, output: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
///         let text = output.text();
///         Ok(if text.contains("secret") {
///             GuardrailVerdict::rewrite(text.replace("secret", "[redacted]"))
///         } else {
///             GuardrailVerdict::pass()
///         })
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn output_guardrail(attr: TokenStream, item: TokenStream) -> TokenStream {
    guardrail::output(attr.into(), item.into()).into()
}

/// Declares a PII policy: which personal data to mask in what a tool call sends to a model,
/// and how. Scopes and tools attach it with `pii_policies = [...]`.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/pii_policy.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[pii_policy(name = "contact-pii-policy", description = "Hides e-mails and cards",
///              detectors = [email, card], strategy = "partial", keep = 4)]
/// pub struct ContactPiiPolicy;
/// ```
#[proc_macro_attribute]
pub fn pii_policy(attr: TokenStream, item: TokenStream) -> TokenStream {
    pii_policy::expand(attr.into(), item.into()).into()
}

/// Declares an injectable, app-wide service: one instance per app, built when the app is
/// built (from its `deps`, with `Default`, or handed to the app when `provided`). Components
/// take it as a field `Arc<Service>` (or `Service` when it is `Clone`) listed in their `deps`.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/injectable.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[injectable(default)]
/// #[derive(Default)]
/// pub struct Clock;
///
/// #[injectable(deps = [Clock])]
/// pub struct Orders {
///     clock: std::sync::Arc<Clock>,
/// }
/// ```
#[proc_macro_attribute]
pub fn injectable(attr: TokenStream, item: TokenStream) -> TokenStream {
    injectable::expand(attr.into(), item.into()).into()
}

/// Declares an agent: a model in a tool loop over its tools, a scope of the cascade (what it
/// attaches applies to the tool calls and texts under it).
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/agent.md")]
#[doc = include_str!("../doc/cascade.md")]
#[doc = include_str!("../doc/guardrails.md")]
#[doc = include_str!("../doc/usage_limits.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[agent(name = "billing-agent", description = "Answers billing questions",
///         instructions = "Be brief.", max_turns = 6, tool_errors = "fail-step")]
/// pub struct BillingAgent;
/// ```
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::agent(attr.into(), item.into()).into()
}

/// Declares a router: its model picks one of its agents (`routes`) for an input.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/router.md")]
#[doc = include_str!("../doc/guardrails.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[agent(name = "billing-agent", description = "Answers billing questions")]
/// pub struct BillingAgent;
///
/// #[router(name = "support-router", description = "Routes a request", routes = [BillingAgent],
///          fallback = BillingAgent)]
/// pub struct SupportRouter;
/// ```
#[proc_macro_attribute]
pub fn router(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::router(attr.into(), item.into()).into()
}

/// Declares a workflow: the scope between the application and its agents and routers.
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/workflow.md")]
#[doc = include_str!("../doc/cascade.md")]
#[doc = include_str!("../doc/guardrails.md")]
#[doc = include_str!("../doc/usage_limits.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[agent(name = "billing-agent", description = "Answers billing questions")]
/// pub struct BillingAgent;
///
/// #[workflow(name = "support-workflow", description = "Support", agents = [BillingAgent],
///            max_result_size = 8192)]
/// pub struct SupportWorkflow;
/// ```
#[proc_macro_attribute]
pub fn workflow(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::workflow(attr.into(), item.into()).into()
}

/// Declares the application: the outermost scope (it inherits nothing, so it excludes
/// nothing: `[cascade.nothing-to-exclude]`).
///
/// # Keys
///
/// | key | written as | default | meaning |
/// | --- | --- | --- | --- |
#[doc = include_str!("../doc/named.md")]
#[doc = include_str!("../doc/application.md")]
#[doc = include_str!("../doc/cascade.md")]
#[doc = include_str!("../doc/guardrails.md")]
#[doc = include_str!("../doc/usage_limits.md")]
///
/// # Example
///
/// ```
/// use agboss_core::prelude::*;
///
/// #[agent(name = "billing-agent", description = "Answers billing questions")]
/// pub struct BillingAgent;
///
/// #[workflow(name = "support-workflow", description = "Support", agents = [BillingAgent])]
/// pub struct SupportWorkflow;
///
/// #[application(name = "support-desk-application", description = "The support desk",
///               workflows = [SupportWorkflow])]
/// pub struct SupportDeskApplication;
///
/// let app = App::builder().application::<SupportDeskApplication>().build().unwrap();
/// assert!(app.describe().contains("support-workflow"));
/// ```
#[proc_macro_attribute]
pub fn application(attr: TokenStream, item: TokenStream) -> TokenStream {
    scopes::application(attr.into(), item.into()).into()
}
