#!/usr/bin/env python3
"""Writes the key tables of every macro into README.md from agboss-macros/doc/*.md (the
tables the rustdoc pages include), between `<!-- keys: <macro> -->` and `<!-- /keys -->`.
`cargo test -p agboss-macros` fails when README.md and the doc files disagree."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(ROOT, "agboss-macros", "doc")
# The tables of each macro, in order (as `MacroDoc` in agboss-macros/src/attr/docs.rs).
TABLES = {
    "tool": ["named", "tool", "cascade"],
    "mcp_tool": ["named", "mcp_tool", "cascade"],
    "tool_interceptor": ["named", "tool_interceptor"],
    "channel": ["named", "channel"],
    "input_guardrail": ["named", "input_guardrail"],
    "output_guardrail": ["named", "output_guardrail"],
    "pii_policy": ["named", "pii_policy"],
    "injectable": ["injectable"],
    "agent": ["named", "agent", "cascade", "guardrails"],
    "router": ["named", "router", "guardrails"],
    "workflow": ["named", "workflow", "cascade", "guardrails"],
    "application": ["named", "application", "cascade", "guardrails"],
}
HEADER = "| key | written as | default | meaning |\n| --- | --- | --- | --- |\n"


def block(name):
    rows = "".join(open(os.path.join(DOC, t + ".md")).read() for t in TABLES[name])
    return f"<!-- keys: {name} -->\n{HEADER}{rows}<!-- /keys -->"


def main():
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    text = re.sub(r"<!-- keys: (\w+) -->\n.*?<!-- /keys -->", lambda m: block(m.group(1)), text, flags=re.S)
    open(path, "w").write(text)


if __name__ == "__main__":
    main()
