//! The key tables of the macros' documentation (`agboss-macros/doc/*.md`), written once: the
//! macros' rustdoc pages include them (the reference in `agboss_core::guide` links there
//! instead of repeating them), and the parser reads the accepted keys and their examples from
//! them for its messages.

/// A table row: `| `key` | `example` | default | meaning |`.
pub struct KeyDoc {
    pub key: &'static str,
    /// How the key is written, e.g. `timeout_ms = 4096`.
    pub example: &'static str,
}

pub const NAMED: &str = include_str!("../../doc/named.md");
pub const CASCADE: &str = include_str!("../../doc/cascade.md");
pub const GUARDRAILS: &str = include_str!("../../doc/guardrails.md");
pub const TOOL: &str = include_str!("../../doc/tool.md");
pub const MCP_TOOL: &str = include_str!("../../doc/mcp_tool.md");
pub const TOOL_INTERCEPTOR: &str = include_str!("../../doc/tool_interceptor.md");
pub const CHANNEL: &str = include_str!("../../doc/channel.md");
pub const INPUT_GUARDRAIL: &str = include_str!("../../doc/input_guardrail.md");
pub const OUTPUT_GUARDRAIL: &str = include_str!("../../doc/output_guardrail.md");
pub const PII_POLICY: &str = include_str!("../../doc/pii_policy.md");
pub const INJECTABLE: &str = include_str!("../../doc/injectable.md");
pub const AGENT: &str = include_str!("../../doc/agent.md");
pub const ROUTER: &str = include_str!("../../doc/router.md");
pub const WORKFLOW: &str = include_str!("../../doc/workflow.md");
pub const APPLICATION: &str = include_str!("../../doc/application.md");
pub const USAGE_LIMITS: &str = include_str!("../../doc/usage_limits.md");

/// The tables of one attribute macro, in the order its page shows them.
#[derive(Clone, Copy)]
pub struct MacroDoc {
    /// The attribute, e.g. `tool_interceptor`.
    pub attr: &'static str,
    pub tables: &'static [&'static str],
}

pub const TOOL_DOC: MacroDoc = MacroDoc {
    attr: "tool",
    tables: &[NAMED, TOOL, CASCADE],
};
pub const MCP_TOOL_DOC: MacroDoc = MacroDoc {
    attr: "mcp_tool",
    tables: &[NAMED, MCP_TOOL, CASCADE],
};
pub const TOOL_INTERCEPTOR_DOC: MacroDoc = MacroDoc {
    attr: "tool_interceptor",
    tables: &[NAMED, TOOL_INTERCEPTOR],
};
pub const CHANNEL_DOC: MacroDoc = MacroDoc {
    attr: "channel",
    tables: &[NAMED, CHANNEL],
};
pub const INPUT_GUARDRAIL_DOC: MacroDoc = MacroDoc {
    attr: "input_guardrail",
    tables: &[NAMED, INPUT_GUARDRAIL],
};
pub const OUTPUT_GUARDRAIL_DOC: MacroDoc = MacroDoc {
    attr: "output_guardrail",
    tables: &[NAMED, OUTPUT_GUARDRAIL],
};
pub const PII_POLICY_DOC: MacroDoc = MacroDoc {
    attr: "pii_policy",
    tables: &[NAMED, PII_POLICY],
};
pub const INJECTABLE_DOC: MacroDoc = MacroDoc {
    attr: "injectable",
    tables: &[INJECTABLE],
};
pub const AGENT_DOC: MacroDoc = MacroDoc {
    attr: "agent",
    tables: &[NAMED, AGENT, CASCADE, GUARDRAILS, USAGE_LIMITS],
};
pub const ROUTER_DOC: MacroDoc = MacroDoc {
    attr: "router",
    tables: &[NAMED, ROUTER, GUARDRAILS],
};
pub const WORKFLOW_DOC: MacroDoc = MacroDoc {
    attr: "workflow",
    tables: &[NAMED, WORKFLOW, CASCADE, GUARDRAILS, USAGE_LIMITS],
};
pub const APPLICATION_DOC: MacroDoc = MacroDoc {
    attr: "application",
    tables: &[NAMED, APPLICATION, CASCADE, GUARDRAILS, USAGE_LIMITS],
};

/// Every macro's tables (for the tests).
#[cfg(test)]
pub const ALL: &[MacroDoc] = &[
    TOOL_DOC,
    MCP_TOOL_DOC,
    TOOL_INTERCEPTOR_DOC,
    CHANNEL_DOC,
    INPUT_GUARDRAIL_DOC,
    OUTPUT_GUARDRAIL_DOC,
    PII_POLICY_DOC,
    INJECTABLE_DOC,
    AGENT_DOC,
    ROUTER_DOC,
    WORKFLOW_DOC,
    APPLICATION_DOC,
];

impl MacroDoc {
    /// The rows of every table, in order.
    pub fn keys(self) -> Vec<KeyDoc> {
        self.tables.iter().flat_map(|t| rows(t)).collect()
    }

    /// How `key` is written, e.g. `timeout_ms = 4096` (the key itself if it has no row).
    pub fn example(self, key: &str) -> String {
        self.keys()
            .into_iter()
            .find(|k| k.key == key)
            .map_or_else(|| key.to_owned(), |k| k.example.to_owned())
    }
}

fn rows(table: &'static str) -> impl Iterator<Item = KeyDoc> {
    table.lines().filter_map(|line| {
        let mut cells = line.strip_prefix("| `")?.split(" | ");
        let key = cells.next()?.strip_suffix('`')?;
        let example = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
        Some(KeyDoc { key, example })
    })
}

#[cfg(test)]
mod tests {
    use super::ALL;

    /// Every row of every table gives the parser a key and how it is written, and no macro
    /// documents a key twice (its messages name the first row).
    #[test]
    fn every_table_row_gives_a_key_and_its_example() {
        for doc in ALL {
            let rows: usize = doc
                .tables
                .iter()
                .map(|t| t.lines().filter(|l| l.starts_with("| `")).count())
                .sum();
            let keys = doc.keys();
            assert_eq!(
                keys.len(),
                rows,
                "#[{}]: a row the parser cannot read",
                doc.attr
            );
            for (i, k) in keys.iter().enumerate() {
                assert!(
                    !k.example.is_empty(),
                    "#[{}] `{}`: no example",
                    doc.attr,
                    k.key
                );
                assert!(
                    keys[..i].iter().all(|other| other.key != k.key),
                    "#[{}] documents `{}` twice",
                    doc.attr,
                    k.key
                );
            }
        }
    }
}
