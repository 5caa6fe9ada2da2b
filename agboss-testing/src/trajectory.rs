//! A run's trajectory: the ordered moves it made (tool calls, routes, handoffs, refused calls,
//! rejected typed answers, final answers, and those of the runs nested in its agent tools), read from its events, to assert on as a whole.
use std::fmt;

use agboss_core::engine::RunEvent;

/// One move of a run, in the order the run made it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Move {
    /// `step` asked for a call of `tool` (whatever its guards then decided).
    Tool {
        /// The agent (or workflow tool step).
        step: String,
        /// The tool.
        tool: String,
    },
    /// A router chose a route.
    Route {
        /// The router.
        router: String,
        /// The chosen agent.
        route: String,
    },
    /// An agent handed the rest of the run to another.
    Handoff {
        /// The agent that handed over.
        from: String,
        /// The agent that goes on.
        to: String,
    },
    /// A typed answer of `step` failed its validation and went back as a correction.
    OutputRejected {
        /// The agent.
        step: String,
    },
    /// A usage limit refused a call of `step`.
    LimitExceeded {
        /// The agent, router or tool step.
        step: String,
    },
    /// `step` gave its final answer.
    Answer {
        /// The agent.
        step: String,
    },
    /// A move of a run nested in an agent tool's call (`#[agent(agent_tools = [..])]`).
    Nested(Box<Move>),
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool { step, tool } => write!(f, "{step} → {tool}"),
            Self::Route { router, route } => write!(f, "{router} ⇢ {route}"),
            Self::Handoff { from, to } => write!(f, "{from} ⇉ {to}"),
            Self::OutputRejected { step } => write!(f, "{step} ✗ output"),
            Self::LimitExceeded { step } => write!(f, "{step} ⛔ limit"),
            Self::Answer { step } => write!(f, "{step} ✎"),
            Self::Nested(inner) => write!(f, "↳ {inner}"),
        }
    }
}

/// The moves of a run, in order, from its events (`app.stream(..).collect_all()`).
///
/// ```
/// use agboss_core::prelude::*;
/// use agboss_testing::scripted::{ScriptedModel, Turn};
/// use agboss_testing::trajectory::{assert_trajectory, trajectory, Move};
/// use serde_json::json;
///
/// #[derive(Dto, Debug, Clone, PartialEq)]
/// pub struct SkuDto {
///     #[text(prompt = "A SKU")]
///     pub sku: String,
/// }
///
/// #[tool(name = "stock-tool", description = "Stock of a SKU", input = SkuDto, output = SkuDto)]
/// pub struct StockTool;
/// impl ToolHandler<SkuDto, SkuDto> for StockTool {
///     async fn run(&self, input: SkuDto) -> Result<SkuDto, ToolError> {
///         Ok(input)
///     }
/// }
///
/// #[agent(name = "stock-agent", description = "Checks stock", tools = [StockTool])]
/// pub struct StockAgent;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::tool_call("stock-tool", json!({"sku": "S-1"})),
///     Turn::text("In stock."),
/// ]);
/// let app = App::builder().agent::<StockAgent>().model(model).build().unwrap();
/// let (events, _) = app.stream(Target::agent::<StockAgent>(), "S-1?", RunContext::new()).collect_all().await;
/// assert_eq!(trajectory(&events)[0], Move::Tool { step: "stock-agent".into(), tool: "stock-tool".into() });
/// assert_trajectory(&events, &["stock-agent → stock-tool", "stock-agent ✎"]);
/// # });
/// ```
pub fn trajectory(events: &[RunEvent]) -> Vec<Move> {
    events.iter().filter_map(one_move).collect()
}

/// The move an event is, if it is one (an event of a nested run: its move, nested).
fn one_move(event: &RunEvent) -> Option<Move> {
    match event {
        RunEvent::ToolCallRequested { step, tool, .. } => Some(Move::Tool {
            step: step.clone(),
            tool: tool.clone(),
        }),
        RunEvent::RouteChosen { router, route, .. } => Some(Move::Route {
            router: router.clone(),
            route: route.clone(),
        }),
        RunEvent::Handoff { from, to, .. } => Some(Move::Handoff {
            from: from.clone(),
            to: to.clone(),
        }),
        RunEvent::OutputRejected { step, .. } => Some(Move::OutputRejected { step: step.clone() }),
        RunEvent::UsageLimitExceeded { step, .. } => {
            Some(Move::LimitExceeded { step: step.clone() })
        }
        RunEvent::FinalAnswer { step, .. } => Some(Move::Answer { step: step.clone() }),
        RunEvent::Nested { event, .. } => one_move(event).map(|m| Move::Nested(Box::new(m))),
        _ => None,
    }
}

/// Asserts a run's moves, each written as its `Display` (`"agent → tool"`, `"router ⇢ agent"`,
/// `"agent ⇉ other-agent"` (a handoff), `"↳ agent → tool"` (a move of a run nested in an agent
/// tool's call),
/// `"agent ✗ output"`, `"agent ⛔ limit"`, `"agent ✎"`); the panic message shows both lists.
#[track_caller]
pub fn assert_trajectory(events: &[RunEvent], expected: &[&str]) {
    let actual: Vec<String> = trajectory(events).iter().map(Move::to_string).collect();
    assert_eq!(
        actual, expected,
        "the run's trajectory (left) is not the expected one (right)"
    );
}
