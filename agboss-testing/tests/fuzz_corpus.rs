//! Replays the committed corpus of every fuzz target (`fuzz/corpus/<target>/`) on the stable
//! toolchain, so that `cargo test` runs each reproducer a fuzzer ever needed.
use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("readable"))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus for {target}");
    files
}

fn replay(target: &str, run: fn(&[u8])) {
    for (name, data) in corpus(target) {
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "{target}/{name} panicked");
    }
}

#[test]
fn pipeline_call_corpus() {
    replay("pipeline_call", agboss_testing::fuzz::pipeline_call);
}

#[test]
fn openai_stream_corpus() {
    replay("openai_stream", agboss_testing::fuzz::openai_stream);
}

#[test]
fn agent_turns_corpus() {
    replay("agent_turns", agboss_testing::fuzz::agent_turns);
}
