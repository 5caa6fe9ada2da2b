//! Malformed model output never panics the loop: arbitrary tool names and argument texts (JSON
//! or not, valid for the DTO or not) become observations or typed errors, and the tool only
//! runs on input that passed its DTO.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agboss_core::dto::Dto;
use agboss_core::engine::{RunContext, RunError, Target};
use agboss_core::prelude::*;
use agboss_testing::scripted::{ScriptedModel, Turn};
use proptest::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct FuzzInputDto {
    #[text(prompt = "Order ID", pattern = "^[A-Z]+-[0-9]+$")]
    pub order_id: String,
    #[integer(prompt = "Quantity", min = 1, max = 9)]
    pub quantity: u8,
    #[text(prompt = "Notes", max_length = 20)]
    pub notes: Option<String>,
}

#[injectable(provided)]
pub struct Runs(AtomicUsize);

#[tool(name = "fuzz-tool", description = "Accepts strict input", input = FuzzInputDto,
       output = FuzzInputDto, deps = [Runs])]
pub struct FuzzTool {
    runs: Arc<Runs>,
}

impl ToolHandler<FuzzInputDto, FuzzInputDto> for FuzzTool {
    async fn run(&self, input: FuzzInputDto) -> Result<FuzzInputDto, ToolError> {
        assert!(input.validate().is_ok(), "the tool only sees valid input");
        self.runs.0.fetch_add(1, Ordering::SeqCst);
        Ok(input)
    }
}

#[agent(name = "fuzz-agent", description = "Calls the strict tool", tools = [FuzzTool])]
pub struct FuzzAgent;

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "\\{\"orderId\":\"[A-Z]{1,3}-[0-9]{1,3}\",\"quantity\":[0-9]{1,2}\\}",
        "\\{\"orderId\":[0-9]+\\}",
        "\\{\"quantity\":-?[0-9]{1,4},\"notes\":\".{0,30}\"\\}",
        "[\\[\\]{}\":,a-z0-9 ]{0,40}",
        Just(String::new()),
        Just("null".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn any_model_output_is_an_observation_or_a_typed_error(
        name in prop_oneof![Just("fuzz-tool".to_string()), "[a-z-]{0,12}"],
        args in arguments(),
    ) {
        let runs = Arc::new(Runs(AtomicUsize::new(0)));
        let model = ScriptedModel::new([Turn::raw_tool_call(name.clone(), args.clone()), Turn::text("done")]);
        let app = App::builder()
            .agent::<FuzzAgent>()
            .provide_arc(Arc::clone(&runs))
            .model(model)
            .build()
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = rt.block_on(app.execute(Target::agent::<FuzzAgent>(), "go", RunContext::new()));
        match result.map_err(RunError::from) {
            Ok(out) => prop_assert_eq!(out.text, "done"),
            Err(RunError::Step(step)) => prop_assert!(false, "unexpected step failure: {step}"),
            Err(other) => prop_assert!(false, "unexpected error: {other}"),
        }
        let valid = name == "fuzz-tool"
            && FuzzInputDto::from_json_str(if args.trim().is_empty() { "{}" } else { &args }).is_ok();
        prop_assert_eq!(runs.0.load(Ordering::SeqCst), usize::from(valid));
    }
}

/// The property above is not vacuous: valid arguments do reach the tool, invalid ones do not.
#[tokio::test]
async fn valid_arguments_reach_the_tool_and_invalid_ones_do_not() {
    for (args, expected) in [
        (r#"{"orderId":"AB-1","quantity":3}"#, 1),
        (r#"{"orderId":"AB-1","quantity":0}"#, 0),
        (r#"{"orderId":"ab-1","quantity":3}"#, 0),
        ("not json", 0),
    ] {
        let runs = Arc::new(Runs(AtomicUsize::new(0)));
        let app = App::builder()
            .agent::<FuzzAgent>()
            .provide_arc(Arc::clone(&runs))
            .model(ScriptedModel::new([
                Turn::raw_tool_call("fuzz-tool", args),
                Turn::text("done"),
            ]))
            .build()
            .unwrap();
        let out = app
            .execute(Target::agent::<FuzzAgent>(), "go", RunContext::new())
            .await
            .unwrap();
        assert_eq!(out.text, "done");
        assert_eq!(runs.0.load(Ordering::SeqCst), expected, "{args}");
    }
}
