//! A small CRM desk served over MCP (`examples/mcp_server.rs`, `tests/mcp_server*.rs`,
//! `benches/mcp_server.rs`): a customer lookup, a deletion only some tenants may make and an
//! export that fails with internal details in its error, under a tenant ACL that replies to
//! the model and an e-mail PII policy; `crm-agent` serves the lookup alone, with the phone
//! numbers masked too.
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agboss_core::error::BuildError;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CustomerQueryDto {
    #[text(prompt = "Customer ID, e.g. ACME-7", min_length = 3)]
    pub customer_id: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CustomerRecordDto {
    #[text(prompt = "Customer ID")]
    pub customer_id: String,
    #[text(prompt = "Full name")]
    pub name: String,
    #[text(prompt = "E-mail address")]
    pub email: String,
    #[text(prompt = "Phone number")]
    pub phone: String,
    #[integer(prompt = "Lifetime revenue in cents")]
    pub lifetime_cents: i64,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct DeleteReceiptDto {
    #[text(prompt = "Customer ID")]
    pub customer_id: String,
    #[boolean(prompt = "Whether the customer was deleted")]
    pub deleted: bool,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ExportRequestDto {
    #[text(prompt = "Export format", choices = ["csv", "json"])]
    pub format: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct ExportReceiptDto {
    #[text(prompt = "Where the export is")]
    pub url: String,
}

/// What ran: every tool `run` and every hook, in order (`run:<tool>`, `hook:<interceptor>`),
/// and, for a server in a child process, appended to a file too (one line each).
#[injectable(provided)]
#[derive(Default)]
pub struct CrmRunLog {
    entries: Mutex<Vec<String>>,
    file: Option<PathBuf>,
}

impl CrmRunLog {
    /// A log kept in memory.
    pub fn new() -> Self {
        Self::default()
    }
    /// A log also appended to `file`.
    pub fn to_file(file: impl Into<PathBuf>) -> Self {
        Self {
            entries: Mutex::default(),
            file: Some(file.into()),
        }
    }
    fn record(&self, entry: String) {
        if let Some(path) = &self.file
            && let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(file, "{entry}");
        }
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(entry);
    }
    /// Everything recorded so far.
    pub fn entries(&self) -> Vec<String> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    /// How often `tool`'s `run` ran.
    pub fn runs_of(&self, tool: &str) -> usize {
        let wanted = format!("run:{tool}");
        self.entries().iter().filter(|e| **e == wanted).count()
    }
}

#[tool(name = "get-customer-tool", description = "Loads a customer record by ID",
       input = CustomerQueryDto, output = CustomerRecordDto, deps = [CrmRunLog])]
pub struct GetCustomerTool {
    log: Arc<CrmRunLog>,
}

impl ToolHandler<CustomerQueryDto, CustomerRecordDto> for GetCustomerTool {
    async fn run(&self, input: CustomerQueryDto) -> Result<CustomerRecordDto, ToolError> {
        self.log.record("run:get-customer-tool".into());
        Ok(CustomerRecordDto {
            customer_id: input.customer_id,
            name: "Ann Example".into(),
            email: "ann@example.com".into(),
            phone: "+1 415 555 0100".into(),
            lifetime_cents: 125_000,
        })
    }
}

#[tool(name = "delete-customer-tool", description = "Deletes a customer record",
       input = CustomerQueryDto, output = DeleteReceiptDto, deps = [CrmRunLog],
       tool_interceptors = [DeletionAclToolInterceptor])]
pub struct DeleteCustomerTool {
    log: Arc<CrmRunLog>,
}

impl ToolHandler<CustomerQueryDto, DeleteReceiptDto> for DeleteCustomerTool {
    async fn run(&self, input: CustomerQueryDto) -> Result<DeleteReceiptDto, ToolError> {
        self.log.record("run:delete-customer-tool".into());
        Ok(DeleteReceiptDto {
            customer_id: input.customer_id,
            deleted: true,
        })
    }
}

/// The secret its error carries: it must never reach an MCP client.
pub const EXPORT_FAILURE: &str =
    "connection refused: postgres://crm_admin:s3cret-pw@10.0.0.5:5432/crm";

#[tool(name = "export-customers-tool", description = "Exports every customer of the tenant",
       input = ExportRequestDto, output = ExportReceiptDto, deps = [CrmRunLog])]
pub struct ExportCustomersTool {
    log: Arc<CrmRunLog>,
}

impl ToolHandler<ExportRequestDto, ExportReceiptDto> for ExportCustomersTool {
    async fn run(&self, _input: ExportRequestDto) -> Result<ExportReceiptDto, ToolError> {
        self.log.record("run:export-customers-tool".into());
        Err(ToolError::msg(EXPORT_FAILURE))
    }
}

/// Application level: a customer ID must carry the tenant's prefix (`ACME-7` for `acme`);
/// otherwise the model is asked to correct it.
#[tool_interceptor(name = "customer-ownership-tool-interceptor",
                   description = "Checks that the customer belongs to the calling tenant",
                   deps = [TenantContext, CrmRunLog])]
pub struct CustomerOwnershipToolInterceptor {
    tenant: TenantContext,
    log: Arc<CrmRunLog>,
}

impl BeforeToolCall for CustomerOwnershipToolInterceptor {
    async fn before_tool_call(
        &self,
        call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.log
            .record("hook:customer-ownership-tool-interceptor".into());
        let Some(id) = call.input().get("customerId").and_then(|v| v.as_str()) else {
            return Ok(ToolCallDecision::allow());
        };
        let tenant = self.tenant.tenant_id();
        let prefix = format!("{}-", tenant.to_uppercase());
        Ok(if id.starts_with(&prefix) {
            ToolCallDecision::allow()
        } else {
            ToolCallDecision::reply_to_model(format!(
                "Customer {id} does not belong to tenant {tenant}. Ask the user to confirm the customer ID."
            ))
        })
    }
}

/// The tenants that may delete customers.
pub const DELETING_TENANTS: &[&str] = &["acme"];

/// On the deletion tool: only [`DELETING_TENANTS`] may delete; anyone else is blocked.
#[tool_interceptor(name = "deletion-acl-tool-interceptor",
                   description = "Lets only some tenants delete customers",
                   deps = [TenantContext, CrmRunLog])]
pub struct DeletionAclToolInterceptor {
    tenant: TenantContext,
    log: Arc<CrmRunLog>,
}

impl BeforeToolCall for DeletionAclToolInterceptor {
    async fn before_tool_call(
        &self,
        _call: &ToolCallContext<'_>,
    ) -> Result<ToolCallDecision, InterceptorError> {
        self.log.record("hook:deletion-acl-tool-interceptor".into());
        let tenant = self.tenant.tenant_id();
        Ok(if DELETING_TENANTS.contains(&tenant) {
            ToolCallDecision::allow()
        } else {
            ToolCallDecision::block(format!("Tenant {tenant} may not delete customers."))
        })
    }
}

#[pii_policy(name = "crm-email-pii-policy", description = "Hides e-mail addresses", detectors = [email])]
pub struct CrmEmailPiiPolicy;

#[pii_policy(name = "crm-phone-pii-policy", description = "Hides phone numbers", detectors = [phone])]
pub struct CrmPhonePiiPolicy;

#[agent(name = "crm-agent", description = "Looks customers up",
        instructions = "Answer questions about customers.", tools = [GetCustomerTool],
        pii_policies = [CrmPhonePiiPolicy])]
pub struct CrmAgent;

/// The CRM app, recording into `log`.
pub fn crm_app(log: Arc<CrmRunLog>) -> Result<App, BuildError> {
    App::builder()
        .name("crm-desk")
        .tool_interceptor::<CustomerOwnershipToolInterceptor>()
        .pii_policy::<CrmEmailPiiPolicy>()
        .tool::<GetCustomerTool>()
        .tool::<DeleteCustomerTool>()
        .tool::<ExportCustomersTool>()
        .agent::<CrmAgent>()
        .provide_arc(log)
        .build()
}
