//! The agents, the router, the workflow and the application.
use agboss_core::prelude::*;

use super::*;

/// Handles money questions.
#[agent(name = "billing-agent", description = "Answers billing questions and issues refunds",
        instructions = "You are the billing desk. Look orders up before refunding; never refund more than was paid. Refunds above 100.00 wait for a manager's approval.",
        tools = [LookupOrderTool, RefundOrderTool],
        tool_interceptors = [RefundLimitToolInterceptor], max_turns = 6)]
pub struct BillingAgent;

/// Handles delivery questions; hands money questions to [`BillingAgent`].
#[agent(name = "shipping-agent", description = "Answers questions about deliveries",
        instructions = "You are the shipping desk. Look the order up, then track its parcel. Hand refunds to the billing desk.",
        tools = [LookupOrderTool, TrackShipmentTool], handoffs = [BillingAgent], max_turns = 6)]
pub struct ShippingAgent;

/// Files the conversation's case note for the CRM: a typed [`CaseNoteDto`], not free text.
#[agent(name = "case-note-agent", description = "Writes the case note of a conversation",
        instructions = "Read the conversation and write its case note for the CRM.",
        output = CaseNoteDto, max_turns = 3)]
pub struct CaseNoteAgent;

/// Sends each request to billing or shipping.
#[router(name = "support-router", description = "Routes a customer request to billing or shipping",
         routes = [BillingAgent, ShippingAgent], fallback = BillingAgent)]
pub struct SupportRouter;

/// The support workflow.
#[workflow(name = "support-workflow", description = "Routes a request and answers it",
           routers = [SupportRouter], agents = [CaseNoteAgent], tools = [SearchFaqTool],
           tool_interceptors = [SupportHoursToolInterceptor])]
pub struct SupportWorkflow;

/// The application.
#[application(name = "support-desk-application", description = "A multi-tenant customer support desk",
              workflows = [SupportWorkflow], tools = [SearchFaqTool],
              tool_interceptors = [AuditToolInterceptor, PiiRedactionToolInterceptor],
              input_guardrails = [PromptInjectionInputGuardrail],
              output_guardrails = [InternalNoteOutputGuardrail])]
pub struct SupportDeskApplication;
