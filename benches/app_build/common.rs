// What both app-build benches declare their generated components with.
use agboss_core::dto::Dto;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct BenchInputDto {
    #[text(prompt = "Order ID")]
    pub order_id: String,
}

macro_rules! allow_interceptor {
    ($ty:ident, $name:literal) => {
        #[tool_interceptor(name = $name, description = "Allows every call")]
        pub struct $ty;
        impl BeforeToolCall for $ty {
            async fn before_tool_call(
                &self,
                _call: &ToolCallContext<'_>,
            ) -> Result<ToolCallDecision, InterceptorError> {
                Ok(ToolCallDecision::allow())
            }
        }
    };
}

macro_rules! bench_tool {
    ($ty:ident, $name:literal) => {
        #[tool(name = $name, description = "Echoes", input = BenchInputDto, output = BenchInputDto)]
        pub struct $ty;
        impl ToolHandler<BenchInputDto, BenchInputDto> for $ty {
            async fn run(&self, input: BenchInputDto) -> Result<BenchInputDto, ToolError> {
                Ok(input)
            }
        }
    };
}
