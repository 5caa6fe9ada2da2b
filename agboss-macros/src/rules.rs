//! The naming rules shared by every component macro, in one place:
//! `[name.kebab-case]`, `[name.kind-suffix]` and `[description.empty]`.
use syn::{Ident, LitStr};

use crate::diag::Errors;

/// A kind of component and its naming convention.
#[derive(Clone, Copy)]
pub struct Kind {
    /// As written in messages: `tool`, `tool interceptor`...
    pub label: &'static str,
    /// The attribute: `tool`, `tool_interceptor`...
    pub attr: &'static str,
    /// Required suffix of the registered name: `-tool`.
    pub name_suffix: &'static str,
    /// Required suffix of the struct: `Tool`.
    pub type_suffix: &'static str,
}

pub const TOOL: Kind = Kind {
    label: "tool",
    attr: "tool",
    name_suffix: "-tool",
    type_suffix: "Tool",
};
pub const MCP_TOOL: Kind = Kind {
    label: "mcp tool",
    attr: "mcp_tool",
    name_suffix: "-tool",
    type_suffix: "Tool",
};
pub const TOOL_INTERCEPTOR: Kind = Kind {
    label: "tool interceptor",
    attr: "tool_interceptor",
    name_suffix: "-tool-interceptor",
    type_suffix: "ToolInterceptor",
};

pub const CHANNEL: Kind = Kind {
    label: "channel",
    attr: "channel",
    name_suffix: "-channel",
    type_suffix: "Channel",
};

pub const INPUT_GUARDRAIL: Kind = Kind {
    label: "input guardrail",
    attr: "input_guardrail",
    name_suffix: "-input-guardrail",
    type_suffix: "InputGuardrail",
};

pub const OUTPUT_GUARDRAIL: Kind = Kind {
    label: "output guardrail",
    attr: "output_guardrail",
    name_suffix: "-output-guardrail",
    type_suffix: "OutputGuardrail",
};

pub const PII_POLICY: Kind = Kind {
    label: "PII policy",
    attr: "pii_policy",
    name_suffix: "-pii-policy",
    type_suffix: "PiiPolicy",
};

pub const AGENT: Kind = Kind {
    label: "agent",
    attr: "agent",
    name_suffix: "-agent",
    type_suffix: "Agent",
};
pub const ROUTER: Kind = Kind {
    label: "router",
    attr: "router",
    name_suffix: "-router",
    type_suffix: "Router",
};
pub const WORKFLOW: Kind = Kind {
    label: "workflow",
    attr: "workflow",
    name_suffix: "-workflow",
    type_suffix: "Workflow",
};
pub const APPLICATION: Kind = Kind {
    label: "application",
    attr: "application",
    name_suffix: "-application",
    type_suffix: "Application",
};

/// True for `lower-kebab-case`: lowercase ASCII letters and digits in dash-separated words,
/// starting with a letter.
pub fn is_kebab_case(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// Suggests a kebab-case name for `name`.
fn kebab_suggestion(name: &str, kind: Kind) -> String {
    let mut out = String::new();
    let mut prev_dash = true;
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !prev_dash {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_dash = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_dash = false;
        } else if !prev_dash {
            out.push('-');
            prev_dash = true;
        }
    }
    // Drop trailing words of the suffix already there (`audit-interceptor` → `audit`), then
    // append the whole suffix.
    // Suffix words of every kind (and the usual abbreviations) are dropped too: `support-agent`
    // as a router name suggests `support-router`.
    const SUFFIX_WORDS: &[&str] = &[
        "tool",
        "interceptor",
        "agent",
        "router",
        "workflow",
        "flow",
        "application",
        "app",
        "pii",
        "policy",
    ];
    let suffix_words: Vec<&str> = SUFFIX_WORDS.to_vec();
    let mut words: Vec<&str> = out.split('-').filter(|w| !w.is_empty()).collect();
    while words.len() > 1 && words.last().is_some_and(|w| suffix_words.contains(w)) {
        words.pop();
    }
    format!("{}{}", words.join("-"), kind.name_suffix)
}

/// Suggests a struct name with the kind's suffix (`AuditInterceptor` → `AuditToolInterceptor`).
fn type_suggestion(name: &str, kind: Kind) -> String {
    let mut words: Vec<String> = Vec::new();
    for c in kind.type_suffix.chars() {
        if c.is_ascii_uppercase() || words.is_empty() {
            words.push(String::new());
        }
        words.last_mut().expect("pushed").push(c);
    }
    let mut base = name;
    for k in (1..=words.len()).rev() {
        let tail: String = words[words.len() - k..].concat();
        if let Some(stripped) = name.strip_suffix(&tail)
            && !stripped.is_empty()
        {
            base = stripped;
            break;
        }
    }
    if base == name {
        // Another kind's suffix (`SupportFlow` as a workflow): replace it.
        for other in [
            "ToolInterceptor",
            "Tool",
            "Interceptor",
            "Agent",
            "Router",
            "Workflow",
            "Flow",
            "Application",
            "App",
            "PiiPolicy",
            "Policy",
        ] {
            if let Some(stripped) = name.strip_suffix(other)
                && !stripped.is_empty()
            {
                base = stripped;
                break;
            }
        }
    }
    format!("{base}{}", kind.type_suffix)
}

/// Checks the registered name and the struct name of a component.
pub fn check_names(kind: Kind, name: Option<&LitStr>, ident: &Ident, errors: &mut Errors) {
    if let Some(name) = name {
        let value = name.value();
        if !is_kebab_case(&value) {
            errors.push(syn::Error::new(
                name.span(),
                format!(
                    "[name.kebab-case] {} name `{value}` must be lower kebab-case (lowercase letters and digits between dashes), e.g. `{}`",
                    kind.label,
                    kebab_suggestion(&value, kind)
                ),
            ));
        } else if !value.ends_with(kind.name_suffix) || value == kind.name_suffix[1..] {
            errors.push(syn::Error::new(
                name.span(),
                format!(
                    "[name.kind-suffix] {} name `{value}` must end with `{}`, e.g. `{}`",
                    kind.label,
                    kind.name_suffix,
                    kebab_suggestion(&value, kind)
                ),
            ));
        }
    }
    let type_name = ident.to_string();
    if !type_name.ends_with(kind.type_suffix) || type_name == kind.type_suffix {
        errors.push(syn::Error::new(
            ident.span(),
            format!(
                "[name.kind-suffix] a `#[{}]` struct's name must end with `{}`: rename `{type_name}` to e.g. `{}`",
                kind.attr,
                kind.type_suffix,
                type_suggestion(&type_name, kind)
            ),
        ));
    }
}

/// Checks that a description is not empty.
pub fn check_description(kind: Kind, description: Option<&LitStr>, errors: &mut Errors) {
    if let Some(d) = description
        && d.value().trim().is_empty()
    {
        errors.push(syn::Error::new(
            d.span(),
            format!(
                "[description.empty] {} {} needs a non-empty description of its responsibility",
                if kind.label.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                kind.label
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case() {
        assert!(is_kebab_case("get-order-tool"));
        assert!(is_kebab_case("v2-tool"));
        assert!(!is_kebab_case("GetOrder-tool"));
        assert!(!is_kebab_case("get_order_tool"));
        assert!(!is_kebab_case("get--order"));
        assert!(!is_kebab_case("-get"));
        assert!(!is_kebab_case("2-get"));
        assert!(!is_kebab_case(""));
    }

    #[test]
    fn suggestion() {
        assert_eq!(kebab_suggestion("GetOrder", TOOL), "get-order-tool");
        assert_eq!(kebab_suggestion("get_order_tool", TOOL), "get-order-tool");
        assert_eq!(
            kebab_suggestion("tenant", TOOL_INTERCEPTOR),
            "tenant-tool-interceptor"
        );
        assert_eq!(
            kebab_suggestion("audit-interceptor", TOOL_INTERCEPTOR),
            "audit-tool-interceptor"
        );
        assert_eq!(
            type_suggestion("AuditInterceptor", TOOL_INTERCEPTOR),
            "AuditToolInterceptor"
        );
        assert_eq!(type_suggestion("GetOrder", TOOL), "GetOrderTool");
        assert_eq!(type_suggestion("SupportFlow", WORKFLOW), "SupportWorkflow");
        assert_eq!(kebab_suggestion("support-agent", ROUTER), "support-router");
        assert_eq!(
            kebab_suggestion("shop-app", APPLICATION),
            "shop-application"
        );
    }
}
