//! Two components of one kind with the same name in one binary: the app refuses to build.
use agboss_core::dto::Dto;
use agboss_core::error::BuildError;
use agboss_core::prelude::*;

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct TextDto {
    #[text(prompt = "Text")]
    pub text: String,
}

#[tool(name = "lookup-tool", description = "First", input = TextDto, output = TextDto)]
pub struct FirstLookupTool;
impl ToolHandler<TextDto, TextDto> for FirstLookupTool {
    async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
        Ok(input)
    }
}

#[tool(name = "lookup-tool", description = "Second", input = TextDto, output = TextDto)]
pub struct SecondLookupTool;
impl ToolHandler<TextDto, TextDto> for SecondLookupTool {
    async fn run(&self, input: TextDto) -> Result<TextDto, ToolError> {
        Ok(input)
    }
}

#[test]
fn duplicate_names_are_a_build_error_naming_both_types() {
    let err = App::builder()
        .tool::<FirstLookupTool>()
        .build()
        .unwrap_err();
    match err {
        BuildError::DuplicateName {
            kind,
            name,
            first,
            second,
        } => {
            assert_eq!(kind, "tool");
            assert_eq!(name, "lookup-tool");
            let mut types = [first, second];
            types.sort();
            assert_eq!(types, ["FirstLookupTool", "SecondLookupTool"]);
        }
        other => panic!("unexpected {other:?}"),
    }
}
