//! `App::describe()`: the resolved structure as text, for people and snapshot tests.
use std::fmt::Write as _;

use super::Resolved;
use super::bound::{BoundTool, ResolvedAgent, ResolvedRouter};
use super::guardrails::Guardrails;
use crate::contract::usage_limits::UsageLimits;
use crate::pipeline::Chain;

pub(crate) fn render(inner: &Resolved) -> String {
    let mut out = String::new();
    match inner.application {
        Some(meta) => {
            let _ = writeln!(out, "application `{}` ({})", meta.name, meta.type_name);
        }
        None => {
            let _ = writeln!(out, "application `{}`", inner.name);
        }
    }
    render_guard_names(&mut out, "input guardrails", &inner.app_guardrails.input, 2);
    render_guard_names(
        &mut out,
        "output guardrails",
        &inner.app_guardrails.output,
        2,
    );
    // Agents and routers directly under the application: routes are listed under their router.
    let routed: Vec<*const ResolvedAgent> = inner
        .routers
        .iter()
        .flat_map(|r| r.routes.iter().map(std::sync::Arc::as_ptr))
        .collect();
    render_limits(&mut out, &inner.usage_limits, 2);
    for wf in &inner.workflows {
        let _ = writeln!(out, "  workflow `{}`", wf.meta.name);
        render_limits(&mut out, &wf.usage_limits, 4);
        for router in &wf.routers {
            render_router(&mut out, router, 4);
        }
        for agent in &wf.agents {
            render_agent(&mut out, agent, 4);
        }
        for tool in &wf.tools {
            let _ = writeln!(out, "    step");
            render_tool(&mut out, tool, 6);
        }
    }
    for router in inner
        .routers
        .iter()
        .filter(|r| r.routes.first().is_none_or(|a| a.workflow().is_none()))
    {
        render_router(&mut out, router, 2);
    }
    for agent in inner
        .agents
        .iter()
        .filter(|a| a.workflow().is_none() && !routed.contains(&std::sync::Arc::as_ptr(a)))
    {
        render_agent(&mut out, agent, 2);
    }
    let _ = writeln!(out, "  direct calls (app.tool::<T>().invoke)");
    for tool in &inner.tools {
        render_tool(&mut out, tool, 4);
    }
    if !inner.warnings.is_empty() {
        let _ = writeln!(out, "warnings");
        for w in &inner.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    out
}

/// The usage limits in force on a path (the strictest of the app's and every scope's), if any.
fn render_limits(out: &mut String, limits: &UsageLimits, indent: usize) {
    if !limits.is_unbounded() {
        let _ = writeln!(out, "{}usage limits: {limits}", " ".repeat(indent));
    }
}

fn render_router(out: &mut String, router: &ResolvedRouter, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}router `{}`", router.meta.name);
    // A router's answer is its route's: the output guardrails are listed under each route.
    let input_only = Guardrails {
        input: router.guardrails.input.clone(),
        ..Guardrails::default()
    };
    render_guardrails(out, &input_only, indent + 2);
    for agent in &router.routes {
        render_agent(out, agent, indent + 2);
    }
}

fn render_agent(out: &mut String, agent: &ResolvedAgent, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}agent `{}`", agent.meta.name);
    if let Some(output) = &agent.meta.output {
        let _ = writeln!(out, "{pad}  answers a typed `{}`", output.dto);
    }
    for target in agent.meta.handoffs.iter().map(|t| t()) {
        let _ = writeln!(out, "{pad}  hands off to `{}`", target.name);
    }
    render_limits(out, &agent.usage_limits, indent + 2);
    for asked in agent.meta.agent_tools.iter().map(|a| a()) {
        let _ = writeln!(out, "{pad}  asks `{}` as a tool", asked.name);
    }
    render_guardrails(out, &agent.guardrails, indent + 2);
    for tool in &agent.tools {
        render_tool(out, tool, indent + 2);
    }
}

/// A path's text boundary: each guardrail in the order it runs, with the scope that attached it.
fn render_guardrails(out: &mut String, guardrails: &Guardrails, indent: usize) {
    let pad = " ".repeat(indent);
    for (label, chain) in [
        ("input guardrails", &guardrails.input),
        ("output guardrails", &guardrails.output),
    ] {
        if chain.is_empty() {
            continue;
        }
        let entries: Vec<String> = chain
            .entries()
            .iter()
            .map(|e| {
                let mut flags = Vec::new();
                if e.meta.cheap {
                    flags.push("cheap");
                }
                if e.meta.parallel {
                    flags.push("parallel");
                }
                let flags = if flags.is_empty() {
                    String::new()
                } else {
                    format!(", {}", flags.join(", "))
                };
                format!("{} [{}{flags}]", e.meta.name, e.attached_at)
            })
            .collect();
        let _ = writeln!(out, "{pad}{label}: {}", entries.join(" -> "));
    }
    if let Some(pii) = &guardrails.answer_pii {
        let _ = writeln!(out, "{pad}answer masked by: {}", pii.names().join(", "));
    }
}

fn render_guard_names(
    out: &mut String,
    label: &str,
    metas: &[&'static crate::contract::guardrail::GuardrailMeta],
    indent: usize,
) {
    if !metas.is_empty() {
        let names: Vec<&str> = metas.iter().map(|m| m.name).collect();
        let _ = writeln!(out, "{}{label}: {}", " ".repeat(indent), names.join(", "));
    }
}

pub(super) fn render_tool(out: &mut String, tool: &BoundTool, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = write!(out, "{pad}tool `{}`", tool.meta.name);
    if let Some(max) = tool.max_result_size {
        let _ = write!(out, " (max_result_size {max})");
    }
    let _ = writeln!(out);
    render_chain(out, &tool.chain, indent + 2);
    if let Some(channel) = tool.meta.approval {
        let when = if tool.meta.approval_when.is_some() {
            ", when its condition holds"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{pad}  approval: `{}` after every before hook allowed{when}",
            channel.name
        );
    }
}

fn render_chain(out: &mut String, chain: &Chain, indent: usize) {
    let pad = " ".repeat(indent);
    if chain.entries.is_empty() {
        let _ = writeln!(out, "{pad}(no interceptors)");
    }
    for (i, entry) in chain.entries.iter().enumerate() {
        let _ = writeln!(
            out,
            "{pad}{}. {}  [{}]",
            i + 1,
            entry.interceptor.name,
            entry.origin
        );
    }
    let before = chain.before_order();
    let after = chain.after_order();
    if !chain.entries.is_empty() {
        let _ = writeln!(
            out,
            "{pad}before: {}",
            if before.is_empty() {
                "-".to_string()
            } else {
                before.join(" -> ")
            }
        );
        let _ = writeln!(
            out,
            "{pad}after:  {}",
            if after.is_empty() {
                "-".to_string()
            } else {
                after.join(" -> ")
            }
        );
    }
    let pii = chain.pii().names();
    if !pii.is_empty() {
        let _ = writeln!(out, "{pad}pii policies: {}", pii.join(", "));
    }
    for ex in &chain.exclusions {
        let _ = writeln!(
            out,
            "{pad}excluded: {}  [attached at {}, excluded at {}]",
            ex.interceptor.name, ex.attached_at, ex.excluded_at
        );
    }
}
