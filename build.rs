//! Generates the components of the app-build bench (`benches/app_build.rs`): 1,000 tools, 50
//! interceptors, an `#[application]` and agents, as source, so that app builds are measured on
//! real `#[tool]`s. Cheap to run; the code is compiled only by the bench that includes it.
use std::fmt::Write as _;
use std::path::Path;

/// Tool types (every app of the bench uses some of them; 5,000 tool paths are 5 agents of
/// these 1,000 tools: 5,000 distinct tool types would take rustc minutes and ~10 GB to build).
const SHAPE_TOOLS: usize = 1_000;
/// Allowing interceptors of both.
const INTERCEPTORS: usize = 50;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    std::fs::write(out.join("app_build.rs"), shapes()).expect("write");
    println!("cargo::rerun-if-changed=build.rs");
}

fn interceptors(src: &mut String) {
    for i in 0..INTERCEPTORS {
        let _ = writeln!(
            src,
            "allow_interceptor!(I{i}ToolInterceptor, \"i{i}-tool-interceptor\");"
        );
    }
    // Attaches every interceptor at application level.
    src.push_str("pub fn attach_all(b: AppBuilder) -> AppBuilder {\n    b");
    for i in 0..INTERCEPTORS {
        let _ = write!(src, ".tool_interceptor::<I{i}ToolInterceptor>()");
    }
    src.push_str("\n}\n");
}

fn tools(src: &mut String, n: usize) {
    for t in 0..n {
        let _ = writeln!(src, "bench_tool!(T{t}Tool, \"t{t}-tool\");");
    }
    let _ = write!(src, "pub static TOOLS: [&ToolMeta; {n}] = [");
    for t in 0..n {
        let _ = write!(src, "<T{t}Tool as Tool>::META,");
    }
    src.push_str("];\n");
}

fn shapes() -> String {
    let mut src = String::new();
    interceptors(&mut src);
    tools(&mut src, SHAPE_TOOLS);
    let list = |range: std::ops::Range<usize>, f: &dyn Fn(usize) -> String| {
        range.map(f).collect::<Vec<_>>().join(", ")
    };
    // 1,000 tools × 50 interceptors through an `#[application]`.
    let _ = writeln!(
        src,
        "#[application(name = \"bench-application\", description = \"Bench\", tools = [{}], tool_interceptors = [{}])]\npub struct BenchApplication;",
        list(0..SHAPE_TOOLS, &|t| format!("T{t}Tool")),
        list(0..INTERCEPTORS, &|i| format!("I{i}ToolInterceptor")),
    );
    // 10 agents × 100 tools, 25 interceptors at the agents (the other 25 at the application).
    for a in 0..10 {
        let _ = writeln!(
            src,
            "#[agent(name = \"a{a}-agent\", description = \"Bench\", tools = [{}], tool_interceptors = [{}])]\npub struct A{a}Agent;",
            list(a * 100..a * 100 + 100, &|t| format!("T{t}Tool")),
            list(INTERCEPTORS / 2..INTERCEPTORS, &|i| format!(
                "I{i}ToolInterceptor"
            )),
        );
    }
    src.push_str("pub fn agents(b: AppBuilder) -> AppBuilder {\n    b");
    for a in 0..10 {
        let _ = write!(src, ".agent::<A{a}Agent>()");
    }
    for i in 0..INTERCEPTORS / 2 {
        let _ = write!(src, ".tool_interceptor::<I{i}ToolInterceptor>()");
    }
    src.push_str("\n}\n");
    // 5 agents × the 1,000 tools under the 50 application-level interceptors: 5,000 tool paths.
    for a in 0..5 {
        let _ = writeln!(
            src,
            "#[agent(name = \"wide{a}-agent\", description = \"Bench\", tools = [{}])]\npub struct Wide{a}Agent;",
            list(0..SHAPE_TOOLS, &|t| format!("T{t}Tool")),
        );
    }
    src.push_str("pub fn wide_agents(b: AppBuilder) -> AppBuilder {\n    b");
    for a in 0..5 {
        let _ = write!(src, ".agent::<Wide{a}Agent>()");
    }
    src.push_str("\n}\n");
    src
}
