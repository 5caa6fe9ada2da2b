//! Served calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28): a
//! call of a `#[tool(long_running)]`, or one that waits for a human approval, is answered at
//! once with a task the client polls (`tasks/get`) or cancels (`tasks/cancel`), when the
//! client declared the extension.
//!
//! - **Waiting for approval**: the task *is* the approval ticket: its id is the ticket's id,
//!   and its state is read from the app's store on every `tasks/get`, so any instance over the
//!   same store answers it. Pending → `working`; decided and approved → the poll that finds it
//!   claims it (once: the ticket's claim is a compare-and-set) and runs the call on the same
//!   path, in the background, then `completed` with the tool's result; rejected, expired or
//!   superseded → `failed`, the tool never ran. Cancelling a pending one withdraws the ticket
//!   (it can no longer be decided) → `cancelled`.
//! - **Long-running**: the call runs on this instance under rmcp's task manager; `tasks/get`
//!   answers from it, `tasks/cancel` drops the call's future (listeners hear `on_cancelled`).
//!   A task lives an hour: past it an unfinished call is stopped and its task fails.
//!
//! A task is its tenant's: another tenant's `tasks/get` or `tasks/cancel` reads it as unknown
//! (`-32602`), as a task that never existed.
use std::sync::{Arc, Mutex};

use foldhash::HashMap;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions, current_timestamp};
use serde_json::Value;

use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::ToolCallError;

/// How often a client should poll, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// How long a long-running call's task lives, in milliseconds (one hour): past it an unfinished
/// call is stopped and its task fails; a finished one is kept as long again for its pollers.
pub(crate) const TASK_TTL_MS: u64 = 3_600_000;

/// A decided call this poll claimed, to run once: its input (the requested one or the
/// approver's edit), the grant, and the app's claim (its ticket and lease) to finish it with.
pub(crate) struct ClaimedCall {
    pub(crate) tool: String,
    pub(crate) call_id: String,
    pub(crate) input: String,
    pub(crate) grant: ApprovalGrant,
    pub(crate) claim: Box<dyn std::any::Any + Send + Sync>,
}

/// Where a served call's approval ticket stands.
pub(crate) enum ApprovalState {
    /// Nobody decided yet.
    Waiting {
        /// The channel it waits on.
        channel: String,
    },
    /// Approved (or edited), and claimed by this poll: run it now.
    Claimed(ClaimedCall),
    /// Claimed by an earlier poll (of any instance); not finished.
    Running,
    /// The call ran: its result text, or its error text.
    Done(Result<String, String>),
    /// The call never ran and never will: rejected, expired or superseded (why).
    Refused(String),
    /// Withdrawn by its client before a decision.
    Cancelled,
}

/// The app's side of calls that wait for approval: their tickets, in the app's store.
pub(crate) trait ApprovalTasks: Send + Sync + 'static {
    /// Opens the ticket of `tool`'s call that `error` (`ApprovalRequired`) refused; the error
    /// back, with the ticket's id when it was stored.
    fn open<'a>(
        &'a self,
        tool: &'a str,
        tenant: &'a str,
        call_id: &'a str,
        error: ToolCallError,
    ) -> BoxFuture<'a, ToolCallError>;
    /// Where `tenant`'s ticket `ticket_id` of a served tool stands (`None`: no such ticket of
    /// this tenant and these tools; `Err`: the store failed, what for the log); a decided one
    /// is claimed.
    fn poll<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalState>, String>>;
    /// Records a claimed call's result (`Err`: the error text), with the label of its decision
    /// ([`CallDecision::label`](crate::CallDecision::label)), and completes its ticket.
    fn finish(
        &self,
        claimed: ClaimedCall,
        label: &'static str,
        result: Result<String, String>,
    ) -> BoxFuture<'_, ()>;
    /// Withdraws `tenant`'s pending ticket (one decided already goes on); `false` when this
    /// tenant has no such ticket of these tools, `Err` when the store failed.
    fn withdraw<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, String>>;
}

/// The tasks of one server: the app's approvals, and the long-running calls of this instance
/// with their tenants.
#[derive(Clone, Default)]
pub(crate) struct ServedTasks {
    pub(crate) approvals: Option<Arc<dyn ApprovalTasks>>,
    running: TaskManager,
    owners: Arc<Mutex<HashMap<String, String>>>,
}

impl ServedTasks {
    pub(crate) fn new(approvals: Option<Arc<dyn ApprovalTasks>>) -> Self {
        Self {
            approvals,
            ..Self::default()
        }
    }

    /// Runs `call` as a long-running task of `tenant`; its seed state.
    pub(crate) fn spawn(
        &self,
        tenant: &str,
        call: BoxFuture<'static, CallToolResult>,
    ) -> CreateTaskResult {
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = self.running.spawn(options, move |context| {
            Box::pin(async move {
                tokio::select! {
                    biased;
                    () = context.cancelled() => Err(TaskExit::Cancelled),
                    result = call => Ok(result),
                }
            })
        });
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        // The tasks the manager let go (past their time to live) are forgotten here too.
        owners.retain(|id, _| self.running.get_task(id).is_ok());
        owners.insert(task.task_id.clone(), tenant.to_string());
        CreateTaskResult::new(task)
    }

    /// Whether `task_id` is a long-running task of this instance, and `tenant`'s.
    fn owned(&self, tenant: &str, task_id: &str) -> Option<bool> {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        owners.get(task_id).map(|owner| owner == tenant)
    }

    /// `tasks/get` of `tenant`: the task, or `None` when it is unknown to this tenant. A
    /// decided approval is claimed here and its call started with `run`.
    pub(crate) async fn get(
        &self,
        tenant: &str,
        task_id: &str,
        run: impl FnOnce(ClaimedCall) -> BoxFuture<'static, ()>,
    ) -> Result<Option<DetailedTask>, ErrorData> {
        match self.owned(tenant, task_id) {
            Some(true) => return self.running.get_task(task_id).map(Some),
            Some(false) => return Ok(None),
            None => {}
        }
        let Some(approvals) = &self.approvals else {
            return Ok(None);
        };
        let state = match approvals.poll(tenant, task_id).await {
            Ok(Some(state)) => state,
            Ok(None) => return Ok(None),
            Err(error) => {
                tracing::error!(task = task_id, error, "an approval task could not be read");
                return Err(ErrorData::internal_error(
                    "the task's state could not be read; try again",
                    None,
                ));
            }
        };
        let now = current_timestamp();
        let task = Task::new(task_id, TaskStatus::Working, now.clone(), now)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let detailed = match state {
            ApprovalState::Waiting { channel } => DetailedTask::new(
                task.with_status_message(format!("waits for a human approval through `{channel}`")),
                TaskPayload::Working,
            ),
            ApprovalState::Claimed(claimed) => {
                tokio::spawn(run(claimed));
                DetailedTask::new(
                    task.with_status_message("approved: running"),
                    TaskPayload::Working,
                )
            }
            ApprovalState::Running => DetailedTask::new(
                task.with_status_message("approved: running"),
                TaskPayload::Working,
            ),
            ApprovalState::Done(result) => DetailedTask::new(
                task,
                TaskPayload::Completed {
                    result: result_object(&stored_result(result)),
                },
            ),
            ApprovalState::Refused(reason) => DetailedTask::new(
                task.with_status_message(reason.clone()),
                TaskPayload::Failed {
                    error: error_object(&ErrorData::invalid_request(reason, None)),
                },
            ),
            ApprovalState::Cancelled => DetailedTask::new(task, TaskPayload::Cancelled),
        };
        Ok(Some(detailed))
    }

    /// `tasks/cancel` of `tenant`: `false` when the task is unknown to this tenant.
    pub(crate) async fn cancel(&self, tenant: &str, task_id: &str) -> Result<bool, ErrorData> {
        match self.owned(tenant, task_id) {
            Some(true) => return self.running.cancel_task(task_id).map(|()| true),
            Some(false) => return Ok(false),
            None => {}
        }
        let Some(approvals) = &self.approvals else {
            return Ok(false);
        };
        approvals.withdraw(tenant, task_id).await.map_err(|error| {
            tracing::error!(
                task = task_id,
                error,
                "an approval task could not be withdrawn"
            );
            ErrorData::internal_error("the task could not be cancelled; try again", None)
        })
    }
}

/// The seed state of a task that waits for approval: the ticket's id is its handle.
pub(crate) fn approval_task(ticket_id: &str, channel: &str) -> CreateTaskResult {
    let now = current_timestamp();
    CreateTaskResult::new(
        Task::new(ticket_id, TaskStatus::Working, now.clone(), now)
            .with_status_message(format!("waits for a human approval through `{channel}`"))
            .with_poll_interval_ms(POLL_INTERVAL_MS),
    )
}

/// A stored result as the call's result: the text (and, when it is a JSON object, the
/// structured content), or an error result with the error's text.
pub(crate) fn stored_result(result: Result<String, String>) -> CallToolResult {
    match result {
        Ok(text) => {
            let structured = match serde_json::from_str::<Value>(&text) {
                Ok(value @ Value::Object(_)) => Some(value),
                _ => None,
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = structured;
            result
        }
        Err(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
    }
}

fn result_object(result: &CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

fn error_object(error: &ErrorData) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}
