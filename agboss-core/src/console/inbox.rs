//! The inbox (the tenant's pending tickets), a ticket's page (its edit form), and the
//! decisions: each authenticated, CSRF-checked, scoped by the user's tenant and recorded through
//! [`App::decide`](crate::App::decide); the run is then resumed on this instance.
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::html::{self, Page, csrf_field, escape, relative, segment};
use super::state::{Console, Seen, pairs, store_error, value};
use super::{csrf, edit};

/// Tickets the inbox shows on one page.
pub const INBOX_PAGE: u64 = 25;
use crate::app::Tickets;
use crate::engine::{Decision, RunContext, RunError};
use crate::store::types::now_ms;
use crate::store::{StoreError, Ticket, TicketQuery, TicketState};

fn ticket_url(seen: &Seen, ticket: &Ticket) -> String {
    format!("{}/tickets/{}", seen.base, segment(&ticket.id))
}

/// The approve and reject forms of a pending ticket.
fn decide_forms(seen: &Seen, ticket: &Ticket) -> String {
    let url = ticket_url(seen, ticket);
    let csrf = csrf_field(&seen.csrf);
    format!(
        r#"<form method="post" action="{url}/approve" class="inline">{csrf}<button class="approve">Approve</button></form>
<form method="post" action="{url}/reject" class="inline">{csrf}<input name="message" required placeholder="Why not (the model reads it)" aria-label="Rejection message"><button class="reject">Reject</button></form>"#,
        url = escape(&url),
    )
}

/// `GET /`: the pending tickets, oldest first, a page at a time (`?offset=`, `?channel=`).
pub(super) async fn inbox(State(console): State<Arc<Console>>, seen: Seen, uri: Uri) -> Response {
    let query = pairs(uri.query().unwrap_or_default());
    let offset = value(&query, "offset")
        .and_then(|o| o.parse().ok())
        .unwrap_or(0);
    let mut ticket_query = TicketQuery::new()
        .pending()
        .offset(offset)
        .limit(INBOX_PAGE);
    if let Some(channel) = value(&query, "channel").filter(|c| !c.is_empty()) {
        ticket_query = ticket_query.channel(channel);
    }
    let tickets = console.app.tickets(seen.user.tenant.as_str());
    let page = match tickets.list(&ticket_query).await {
        Ok(page) => page,
        Err(e) => return store_error(&seen, &e),
    };
    let now = now_ms();
    let mut body = String::new();
    if page.tickets.is_empty() && page.unreadable.is_empty() {
        body.push_str(r#"<p id="empty">Nothing waits for a decision.</p>"#);
    } else {
        body.push_str(
            "<table id=\"inbox\"><thead><tr><th>Tool</th><th>Input</th><th>Allowed by</th>\
             <th>Channel</th><th>Age</th><th>Expires</th><th>Decide</th></tr></thead><tbody>",
        );
        for ticket in &page.tickets {
            body.push_str(&row(&seen, &tickets, ticket, now));
        }
        for (id, why) in &page.unreadable {
            body.push_str(&format!(
                r#"<tr class="unreadable"><td colspan="7">Ticket {} cannot be read: {}</td></tr>"#,
                escape(id),
                escape(&why.to_string())
            ));
        }
        body.push_str("</tbody></table>");
    }
    let mut pager = Vec::new();
    if offset > 0 {
        let previous = offset.saturating_sub(INBOX_PAGE);
        pager.push(format!(
            r#"<a href="{}/?offset={previous}">Previous</a>"#,
            escape(&seen.base)
        ));
    }
    if let Some(next) = page.next_offset {
        pager.push(format!(
            r#"<a id="next" href="{}/?offset={next}">Next</a>"#,
            escape(&seen.base)
        ));
    }
    if !pager.is_empty() {
        body.push_str(&format!(r#"<nav class="pager">{}</nav>"#, pager.join(" ")));
    }
    Page {
        base: &seen.base,
        title: "Inbox",
        who: seen.who(),
        body,
    }
    .respond(StatusCode::OK)
}

fn row(seen: &Seen, tickets: &Tickets<'_>, ticket: &Ticket, now: i64) -> String {
    let expired = ticket.state_at(now) == TicketState::Expired;
    let actions = if expired {
        "<span class=\"expired\">expired</span>".to_string()
    } else {
        format!(
            r#"{}<a class="edit" href="{}">Edit…</a>"#,
            decide_forms(seen, ticket),
            escape(&ticket_url(seen, ticket))
        )
    };
    format!(
        r#"<tr class="ticket" id="ticket-{id}" data-ticket="{id}"><td><a href="{url}">{tool}</a><br><a class="run" href="{base}/runs/{run}">run</a></td><td><pre class="input">{input}</pre></td><td class="guards">{guards}</td><td>{channel}</td><td>{age}</td><td>{expires}</td><td class="actions">{actions}</td></tr>"#,
        id = escape(&ticket.id),
        url = escape(&ticket_url(seen, ticket)),
        tool = escape(&ticket.tool),
        base = escape(&seen.base),
        run = escape(&segment(&ticket.run_id)),
        input = escape(&tickets.masked_input(ticket)),
        guards = guards(tickets, ticket),
        channel = escape(&ticket.channel),
        age = escape(&relative(ticket.created_at_ms, now)),
        expires = escape(&relative(ticket.expires_at_ms, now)),
    )
}

/// The interceptors that allowed the call before its approval point, as HTML.
fn guards(tickets: &Tickets<'_>, ticket: &Ticket) -> String {
    match tickets.allowed_by(ticket) {
        None => r#"<span class="unknown">unknown: the app changed since</span>"#.to_string(),
        Some(names) if names.is_empty() => r#"<span class="none">no interceptor</span>"#.into(),
        Some(names) => names
            .iter()
            .map(|n| format!("<code>{}</code>", escape(n)))
            .collect::<Vec<_>>()
            .join("<br>"),
    }
}

/// `GET /tickets/{id}`: one ticket, its decision or its forms.
/// With `?reveal=1`, a user the authenticator allows
/// ([`ConsoleUser::reveal_input`](super::ConsoleUser::reveal_input)) sees the raw input too
/// (logged); for anyone else the parameter changes nothing.
pub(super) async fn ticket_page(
    State(console): State<Arc<Console>>,
    Path(id): Path<String>,
    seen: Seen,
    uri: Uri,
) -> Response {
    let tickets = console.app.tickets(seen.user.tenant.as_str());
    let asked = value(&pairs(uri.query().unwrap_or_default()), "reveal") == Some("1");
    let reveal = asked && seen.user.reveal_input;
    match tickets.get(&id).await {
        Ok(ticket) => {
            if reveal {
                tracing::info!(
                    tenant = %seen.user.tenant, approver = %seen.user.approver.id,
                    ticket = %ticket.id, tool = %ticket.tool,
                    "console: the raw input of a ticket was revealed"
                );
            }
            let view = View {
                refused: None,
                reveal,
            };
            ticket_view(&seen, &tickets, &ticket, &view, StatusCode::OK)
        }
        Err(e) => store_error(&seen, &e),
    }
}

/// What a ticket's page shows beside the ticket.
struct View<'a> {
    /// A refused edit: its form and errors.
    refused: Option<edit::Refused<'a>>,
    /// Show the raw input (the user may, and asked).
    reveal: bool,
}

/// A ticket's page.
fn ticket_view(
    seen: &Seen,
    tickets: &Tickets<'_>,
    ticket: &Ticket,
    view: &View<'_>,
    status: StatusCode,
) -> Response {
    let errors = view.refused.as_ref().map_or(&[][..], |r| r.errors);
    let now = now_ms();
    let state = ticket.state_at(now);
    let masked = tickets.masked_input(ticket);
    let mut body = format!(
        r#"<dl class="ticket" id="ticket-{id}"><dt>Tool</dt><dd>{tool}</dd><dt>Channel</dt><dd>{channel}</dd><dt>State</dt><dd id="state">{state}</dd><dt>Created</dt><dd>{age}</dd><dt>Expires</dt><dd>{expires}</dd><dt>Allowed by</dt><dd class="guards" id="guards">{guards}</dd><dt>Run</dt><dd><a href="{base}/runs/{run}">{run_text}</a></dd>"#,
        id = escape(&ticket.id),
        tool = escape(&ticket.tool),
        channel = escape(&ticket.channel),
        state = state.as_str(),
        age = escape(&relative(ticket.created_at_ms, now)),
        expires = escape(&relative(ticket.expires_at_ms, now)),
        guards = guards(tickets, ticket),
        base = escape(&seen.base),
        run = escape(&segment(&ticket.run_id)),
        run_text = escape(&ticket.run_id),
    );
    if let Some(thread) = &ticket.thread_id {
        body.push_str(&format!(
            r#"<dt>Thread</dt><dd><a href="{}/threads/{}">{}</a></dd>"#,
            escape(&seen.base),
            escape(&segment(thread)),
            escape(thread)
        ));
    }
    if let Some(decision) = &ticket.decision {
        body.push_str(&format!(
            r#"<dt>Decision</dt><dd id="decision">{}</dd>"#,
            html::decision(decision)
        ));
    }
    body.push_str(&format!(
        r#"</dl><h2>Input <small>(masked as the model saw it)</small></h2><pre class="input" id="input">{}</pre>"#,
        escape(&masked)
    ));
    if view.reveal {
        let raw = serde_json::from_str::<Value>(&ticket.input)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| ticket.input.clone());
        body.push_str(&format!(
            r#"<h2>Raw input <small>(unmasked: your viewing is logged)</small></h2><pre class="input raw" id="raw-input">{}</pre>"#,
            escape(&raw)
        ));
    } else if seen.user.reveal_input {
        body.push_str(&format!(
            r#"<p><a class="reveal" id="reveal" href="{}?reveal=1">Reveal the raw input</a></p>"#,
            escape(&ticket_url(seen, ticket))
        ));
    }
    if !errors.is_empty() {
        body.push_str(r#"<div class="errors" id="errors"><p>The edit was refused; the ticket is still pending.</p><ul>"#);
        for (field, why) in errors {
            body.push_str(&format!(
                "<li><code>{}</code> {}</li>",
                escape(field),
                escape(why)
            ));
        }
        body.push_str("</ul></div>");
    }
    if state == TicketState::Pending {
        body.push_str(&decide_forms(seen, ticket));
        if let Some(schema) = tickets.input_schema(ticket) {
            let raw: Value = serde_json::from_str(&ticket.input).unwrap_or(Value::Null);
            let masked: Value = serde_json::from_str(&masked).unwrap_or(Value::Null);
            body.push_str(&format!(
                r#"<h2>Edit</h2><form method="post" action="{}/edit" class="edit" id="edit">{}{}<button class="save">Run with this input</button></form>"#,
                escape(&ticket_url(seen, ticket)),
                csrf_field(&seen.csrf),
                edit::fields(&schema, &raw, &masked, view.refused.as_ref())
            ));
        }
    }
    Page {
        base: &seen.base,
        title: &format!("Ticket of {}", ticket.tool),
        who: seen.who(),
        body,
    }
    .respond(status)
}

/// `POST /tickets/{id}/{approve|reject|edit}`: the same origin, the user's CSRF token, then the
/// decision through `App::decide`; on success the run is resumed here and the browser goes to
/// the run's page.
pub(super) async fn decide(
    State(console): State<Arc<Console>>,
    Path((id, action)): Path<(String, String)>,
    seen: Seen,
    headers: HeaderMap,
    body: String,
) -> Response {
    let form = pairs(&body);
    let token = value(&form, csrf::FIELD)
        .or_else(|| headers.get(csrf::HEADER).and_then(|v| v.to_str().ok()));
    if !csrf::same_origin(&headers) || !csrf::valid(&console.secret, &seen.user, token) {
        return seen.message(
            StatusCode::FORBIDDEN,
            "Refused",
            "This form is not one the console gave you (reload the page and try again).",
        );
    }
    let tickets = console.app.tickets(seen.user.tenant.as_str());
    let approver = seen.user.approver.clone();
    let decision = match action.as_str() {
        "approve" => Decision::approve(&id),
        "reject" => Decision::reject(&id, value(&form, "message").unwrap_or_default()),
        "edit" => {
            let ticket = match tickets.get(&id).await {
                Ok(ticket) => ticket,
                Err(e) => return store_error(&seen, &e),
            };
            let schema = tickets.input_schema(&ticket).unwrap_or(Value::Null);
            let raw: Value = serde_json::from_str(&ticket.input).unwrap_or(Value::Null);
            match edit::input(&schema, &raw, &form) {
                Ok(input) => Decision::edit(&id, input.to_string()),
                Err(errors) => {
                    let view = View {
                        refused: Some(edit::Refused {
                            form: &form,
                            errors: &errors,
                        }),
                        reveal: false,
                    };
                    return ticket_view(
                        &seen,
                        &tickets,
                        &ticket,
                        &view,
                        StatusCode::UNPROCESSABLE_ENTITY,
                    );
                }
            }
        }
        _ => return seen.message(StatusCode::NOT_FOUND, "Not found", "There is nothing here."),
    };
    match tickets.decide(decision.by(approver)).await {
        Ok(decided) => {
            resume(&console, &seen.user.tenant, &decided.run_id);
            let to = format!("{}/runs/{}", seen.base, segment(&decided.run_id));
            (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
        }
        Err(e) => refused_decision(&seen, &tickets, &id, &form, &e).await,
    }
}

/// Why a decision was not recorded, as a page (`form`: what was submitted).
async fn refused_decision(
    seen: &Seen,
    tickets: &Tickets<'_>,
    id: &str,
    form: &[(String, String)],
    e: &RunError,
) -> Response {
    if let RunError::InvalidEdit { source, .. } = e {
        // `$.amountCents` is the form's `amountCents`; `$` (the whole input) stays.
        let errors: Vec<_> = source
            .errors
            .iter()
            .map(|f| {
                let field = f.path.strip_prefix("$.").unwrap_or(&f.path);
                (field.to_string(), f.message.clone())
            })
            .collect();
        let view = View {
            refused: Some(edit::Refused {
                form,
                errors: &errors,
            }),
            reveal: false,
        };
        return match tickets.get(id).await {
            Ok(ticket) => ticket_view(
                seen,
                tickets,
                &ticket,
                &view,
                StatusCode::UNPROCESSABLE_ENTITY,
            ),
            Err(e) => store_error(seen, &e),
        };
    }
    match e {
        RunError::Unauthorized { reason, .. } => seen.message(
            StatusCode::FORBIDDEN,
            "Not yours to decide",
            &format!("You may not decide this ticket: {reason}."),
        ),
        RunError::Store(StoreError::TicketState { .. } | StoreError::TicketExpired { .. }) => {
            seen.message(StatusCode::CONFLICT, "Already settled", &e.to_string())
        }
        RunError::Store(e) => store_error(seen, e),
        other => seen.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Failed",
            &other.to_string(),
        ),
    }
}

/// Resumes the decided ticket's run on this instance, in the background: the run's page
/// follows it. With tickets still pending it stops again; a run another instance holds is left
/// to it.
fn resume(console: &Console, tenant: &str, run_id: &str) {
    let app = console.app.clone();
    let run_id = run_id.to_string();
    let mut ctx = RunContext::new();
    if !tenant.is_empty() {
        ctx = ctx.tenant(tenant);
    }
    tokio::spawn(async move {
        if let Err(e) = app.resume_run(&run_id, ctx).await {
            tracing::debug!(run_id, error = %e, "console: the resumed run stopped");
        }
    });
}
