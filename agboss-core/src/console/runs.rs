//! A run's page (its journaled steps and tickets), followed live over server-sent events while
//! it runs, and a thread's page (its messages). Everything is read from the store under the
//! user's tenant, so a run of any instance is followed, and another tenant's is not found.
//! Tool-call arguments are not shown (the inbox shows a gated call's input, masked); the
//! observations are what the model read, masked by the path's policies already.
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};

use super::html::{self, Page, escape, segment};
use super::state::{Console, Seen, pairs, store_error};
use crate::app::RunUpdate;
use crate::model::{AssistantMessage, Message};
use crate::store::{JournalStep, RunStatus, StepEntry};

/// How often a live run page reads the journal again.
const POLL: Duration = Duration::from_millis(250);
/// Characters of a text shown in a step, at most.
const SHOWN: usize = 2_000;

fn cut(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn assistant(message: &AssistantMessage) -> String {
    let mut out = String::new();
    if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
        out.push_str(&format!(r#"<p class="text">{}</p>"#, escape(&cut(text))));
    }
    for call in &message.tool_calls {
        out.push_str(&format!(
            r#"<p class="call">calls <code>{}</code> <small>({})</small></p>"#,
            escape(&call.name),
            escape(&call.id)
        ));
    }
    out
}

/// One journal step as a list item.
fn step(seen: &Seen, step: &JournalStep) -> String {
    let (kind, html) = match &step.entry {
        StepEntry::ModelTurn {
            step: who, message, ..
        } => (
            "model",
            format!("<b>{}</b> {}", escape(who), assistant(message)),
        ),
        StepEntry::ToolStarted { tool, call_id, .. } => (
            "started",
            format!(
                "<code>{}</code> started <small>({})</small>",
                escape(tool),
                escape(call_id)
            ),
        ),
        StepEntry::ToolFinished {
            tool,
            decision,
            content,
            is_error,
            ..
        } => (
            if *is_error { "error" } else { "finished" },
            format!(
                r#"<code>{}</code> {} <pre class="observation">{}</pre>"#,
                escape(tool),
                escape(decision),
                escape(&cut(content))
            ),
        ),
        StepEntry::ApprovalRequested {
            tool, ticket_id, ..
        } => (
            "approval",
            format!(
                r#"<code>{}</code> waits for approval: <a href="{}/tickets/{}">ticket</a>"#,
                escape(tool),
                escape(&seen.base),
                escape(&segment(ticket_id))
            ),
        ),
        StepEntry::Answer { text, .. } => ("answer", format!("answer: {}", escape(&cut(text)))),
        StepEntry::ToolAbandoned { note, .. } => {
            ("abandoned", format!("abandoned: {}", escape(note)))
        }
    };
    format!(
        r#"<li class="step step-{kind}" data-seq="{}">{html}</li>"#,
        step.seq
    )
}

/// `GET /runs/{id}`: the run, its steps and tickets; live while it runs.
pub(super) async fn run_page(
    State(console): State<Arc<Console>>,
    Path(id): Path<String>,
    seen: Seen,
) -> Response {
    let runs = console.app.runs(seen.user.tenant.as_str());
    let (run, steps, tickets) =
        match futures::try_join!(runs.get(&id), runs.steps(&id), runs.tickets(&id)) {
            Ok(found) => found,
            Err(e) => return store_error(&seen, &e),
        };
    let base = escape(&seen.base);
    let mut body = format!(
        r#"<dl class="run"><dt>Run</dt><dd id="run-id">{}</dd><dt>Target</dt><dd>{}</dd><dt>Status</dt><dd id="status" data-status="{status}">{status}</dd>"#,
        escape(&run.run_id),
        escape(&run.target),
        status = run.status.as_str(),
    );
    if let Some(thread) = &run.thread_id {
        body.push_str(&format!(
            r#"<dt>Thread</dt><dd><a href="{base}/threads/{}">{}</a></dd>"#,
            escape(&segment(thread)),
            escape(thread)
        ));
    }
    if let Some(output) = &run.output {
        body.push_str(&format!(
            r#"<dt>Answer</dt><dd id="output">{}</dd>"#,
            escape(&cut(output))
        ));
    }
    if let Some(error) = &run.error {
        body.push_str(&format!(
            r#"<dt>Error</dt><dd id="error">{}</dd>"#,
            escape(&cut(error))
        ));
    }
    body.push_str("</dl>");
    if !tickets.is_empty() {
        body.push_str("<h2>Tickets</h2><ul class=\"tickets\">");
        for t in &tickets {
            let decided = t
                .decision
                .as_ref()
                .map_or_else(String::new, |d| format!(" · {}", html::decision(d)));
            body.push_str(&format!(
                r#"<li><a href="{base}/tickets/{}">{}</a> via {}: {}{decided}</li>"#,
                escape(&segment(&t.id)),
                escape(&t.tool),
                escape(&t.channel),
                t.state_at(crate::store::types::now_ms()).as_str()
            ));
        }
        body.push_str("</ul>");
    }
    body.push_str(r#"<h2>Steps</h2><ol id="steps">"#);
    for s in &steps {
        body.push_str(&step(&seen, s));
    }
    body.push_str("</ol>");
    if run.status == RunStatus::Running {
        body.push_str(&format!(
            r#"<p id="live" data-events="{base}/runs/{}/events?after={}">Following the run live…</p>"#,
            escape(&segment(&id)),
            steps.len()
        ));
    }
    let title = format!("Run of {}", run.target);
    Page {
        base: &seen.base,
        title: &title,
        who: seen.who(),
        body,
    }
    .respond(StatusCode::OK)
}

/// `GET /runs/{id}/events?after=n`: the run's steps from position `n` as `step` events (their
/// HTML), as they are journaled, then one `end` event with the run's status.
pub(super) async fn run_events(
    State(console): State<Arc<Console>>,
    Path(id): Path<String>,
    seen: Seen,
    uri: Uri,
) -> Response {
    let runs = console.app.runs(seen.user.tenant.as_str());
    if let Err(e) = runs.get(&id).await {
        return store_error(&seen, &e);
    }
    let after = pairs(uri.query().unwrap_or_default())
        .into_iter()
        .find(|(k, _)| k == "after")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let updates = runs.follow(id).after(after).poll_every(POLL).into_stream();
    let events = futures::StreamExt::map(updates, move |update| {
        Ok::<_, Infallible>(match update {
            Ok(RunUpdate::Step(s)) => Event::default().event("step").data(step(&seen, &s)),
            Ok(RunUpdate::Ended(run)) => Event::default().event("end").data(run.status.as_str()),
            Err(e) => Event::default().event("end").data(format!("error: {e}")),
        })
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// `GET /threads/{id}`: a thread's messages in order.
pub(super) async fn thread_page(
    State(console): State<Arc<Console>>,
    Path(id): Path<String>,
    seen: Seen,
) -> Response {
    let threads = console.app.threads(seen.user.tenant.as_str());
    let (info, messages) = match futures::try_join!(threads.get(&id), threads.messages(&id)) {
        Ok(found) => found,
        Err(e) => return store_error(&seen, &e),
    };
    let mut body = String::from(r#"<ol class="messages" id="messages">"#);
    let mut last_run = None;
    for m in &messages {
        let (role, html) = match &m.message {
            Message::System { .. } => continue,
            Message::User { content } => ("user", escape(&cut(content))),
            Message::Assistant(message) => ("assistant", assistant(message)),
            Message::Tool { content, .. } => {
                ("tool", format!("<pre>{}</pre>", escape(&cut(content))))
            }
        };
        // A link to the run where a run starts (a run's messages follow one another).
        let run = if last_run == Some(m.run_id.as_str()) {
            String::new()
        } else {
            format!(
                r#"<a class="run" href="{}/runs/{}">run {}</a>"#,
                escape(&seen.base),
                escape(&segment(&m.run_id)),
                escape(&m.run_id)
            )
        };
        last_run = Some(m.run_id.as_str());
        body.push_str(&format!(
            r#"<li class="message message-{role}">{run}<b>{role}</b> {html}</li>"#
        ));
    }
    body.push_str("</ol>");
    let title = info.title.unwrap_or_else(|| format!("Thread {}", info.id));
    Page {
        base: &seen.base,
        title: &title,
        who: seen.who(),
        body,
    }
    .respond(StatusCode::OK)
}
