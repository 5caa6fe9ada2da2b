//! Routers: ask the model to choose one route, fall back deterministically, run the route.
//!
//! The router's model gets a request without tools: a system message with the router's
//! instructions and the routes (name: description), and the user's input. Its answer is parsed
//! leniently ([`parse_route`]): the exact name, the name in quotes, backticks or a sentence,
//! the name without its `-agent` suffix, or a JSON object `{"route": "..."}`. When the answer
//! names no route, names several, or the model fails, the router uses its `fallback` (or its
//! first route). A [`RunEvent::RouteChosen`] says which route and why.
use super::agent_loop::run_route;
use super::events::{RouteReason, RunEvent, StepKind, StepOutcome};
use super::gate::OutputGate;
use super::guardrails::{Checked, check_text};
use super::model_turn::call_model;
use super::output::Stats;
use super::run_error::RunError;
use super::state::RunState;
use crate::cascade::ResolvedRouter;
use crate::contract::guardrail::{Boundary, TextScope};
use crate::model::{Message, ModelRequest};

/// Finds the route an answer names. `None` when it names none, or several.
///
/// ```
/// use agboss_core::engine::parse_route;
/// let routes = ["billing-agent", "shipping-agent"];
/// assert_eq!(parse_route("billing-agent", &routes), Some(0));
/// assert_eq!(parse_route(" `Shipping-Agent`.", &routes), Some(1));
/// assert_eq!(parse_route("I'd pick shipping", &routes), Some(1));
/// assert_eq!(parse_route(r#"{"route": "billing-agent"}"#, &routes), Some(0));
/// assert_eq!(parse_route("no idea", &routes), None);
/// assert_eq!(parse_route("billing-agent or shipping-agent", &routes), None);
/// ```
pub fn parse_route(answer: &str, routes: &[&str]) -> Option<usize> {
    let mut answer = answer.trim().to_string();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&answer)
        && let Some(name) = ["route", "name", "agent"]
            .iter()
            .find_map(|k| map.get(*k).and_then(|v| v.as_str()))
    {
        answer = name.to_string();
    }
    let clean = answer
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let lower: Vec<String> = routes.iter().map(|r| r.to_lowercase()).collect();
    if let Some(i) = lower.iter().position(|r| *r == clean) {
        return Some(i);
    }
    let short: Vec<&str> = lower
        .iter()
        .map(|r| r.strip_suffix("-agent").unwrap_or(r))
        .collect();
    if let Some(i) = short.iter().position(|r| *r == clean) {
        return Some(i);
    }
    let text = answer.to_lowercase();
    let contains_word = |needle: &str| {
        text.match_indices(needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-'));
            boundary(before) && boundary(after)
        })
    };
    let full: Vec<usize> = (0..lower.len())
        .filter(|i| contains_word(&lower[*i]))
        .collect();
    let hits = if full.is_empty() {
        (0..short.len())
            .filter(|i| contains_word(short[*i]))
            .collect()
    } else {
        full
    };
    match hits.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

pub(crate) async fn run_router(
    run: &RunState,
    router: &ResolvedRouter,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    let name = router.meta.name;
    run.emit(|| RunEvent::StepStarted {
        step: name.to_string(),
        kind: StepKind::Router,
        input: input.clone(),
    });
    // The router's input boundary (application → [workflow →] router) before the route
    // is chosen; parallel guardrails run like blocking ones here (the router's model call
    // is a short one).
    // (The run's own target: its guardrails ran before the run was stored.)
    let entries = if run.input_checked() {
        &[][..]
    } else {
        router.guardrails.input.entries()
    };
    let checked =
        match check_text(run, name, Boundary::Input, entries, input, TextScope::Whole).await {
            Ok(checked) => checked,
            Err(err) => {
                let failed: Result<String, RunError> = Err(err);
                run.emit(|| RunEvent::StepFinished {
                    step: name.to_string(),
                    kind: StepKind::Router,
                    outcome: StepOutcome::of(&failed),
                });
                return failed;
            }
        };
    let input = match checked {
        Checked::Go(text) => text,
        Checked::Respond(answer) => {
            run.emit(|| RunEvent::FinalAnswer {
                step: name.to_string(),
                text: answer.clone(),
            });
            run.emit(|| RunEvent::StepFinished {
                step: name.to_string(),
                kind: StepKind::Router,
                outcome: StepOutcome::Succeeded,
            });
            return Ok(answer);
        }
    };
    let (index, reason) = match choose_route(run, router, &input, stats).await {
        Ok(choice) => choice,
        Err(err) => {
            run.emit(|| RunEvent::StepFinished {
                step: name.to_string(),
                kind: StepKind::Router,
                outcome: StepOutcome::Failed {
                    error: err.to_string(),
                },
            });
            return Err(err);
        }
    };
    let route = &router.routes[index];
    tracing::debug!(
        router = name,
        route = route.meta.name,
        ?reason,
        "route chosen"
    );
    stats
        .routes
        .push((name.to_string(), route.meta.name.to_string()));
    run.emit(|| RunEvent::RouteChosen {
        router: name.to_string(),
        route: route.meta.name.to_string(),
        reason,
    });
    run.emit(|| RunEvent::StepFinished {
        step: name.to_string(),
        kind: StepKind::Router,
        outcome: StepOutcome::Succeeded,
    });
    run_route(run, route, Some(&router.guardrails.input), input, stats).await
}

/// The route index and why. Only cancellation is an error: anything else falls back.
async fn choose_route(
    run: &RunState,
    router: &ResolvedRouter,
    input: &str,
    stats: &mut Stats,
) -> Result<(usize, RouteReason), RunError> {
    let meta = router.meta;
    let fallback_index = meta
        .fallback
        .and_then(|f| router.routes.iter().position(|r| r.meta.name == f.name))
        .unwrap_or(0);
    let fallback = |why: String| Ok((fallback_index, RouteReason::Fallback { why }));
    if router.routes.len() == 1 {
        return fallback("the router has a single route".to_string());
    }
    let Some(model) = run.rt().model_for(meta.name).cloned() else {
        return fallback("no chat model for the router".to_string());
    };
    let mut system = String::new();
    if !meta.instructions.is_empty() {
        system.push_str(meta.instructions);
        system.push_str("\n\n");
    }
    system.push_str("Choose the one route that should handle the user's message. Routes:\n");
    for r in &router.routes {
        system.push_str(&format!("- {}: {}\n", r.meta.name, r.meta.description));
    }
    system.push_str("Answer with the route's name only.");
    let req = ModelRequest::new([Message::system(system), Message::user(input)]);
    let names: Vec<&str> = router.routes.iter().map(|r| r.meta.name).collect();
    match call_model(
        run,
        meta.name,
        &model,
        &req,
        stats,
        false,
        None,
        &mut OutputGate::open(),
    )
    .await
    {
        Ok((_, response)) => {
            let answer = response.message.content.unwrap_or_default();
            match parse_route(&answer, &names) {
                Some(i) => Ok((i, RouteReason::ModelChoice { answer })),
                None => fallback(format!(
                    "the model's answer {answer:?} names no single route"
                )),
            }
        }
        Err(
            err @ (RunError::Cancelled
            | RunError::Store(_)
            | RunError::JournalMismatch { .. }
            | RunError::UsageLimit(_)),
        ) => Err(err),
        Err(err) => {
            tracing::warn!(router = meta.name, error = %err, "router model failed; using the fallback route");
            fallback(format!("the model failed: {err}"))
        }
    }
}
