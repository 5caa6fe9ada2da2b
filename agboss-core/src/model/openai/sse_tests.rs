//! The streamed chat completion through the SSE parser and the decoder, byte by byte: every line
//! ending, comments, multi-line data, a BOM, and every split of the bytes give the same events.
use crate::model::error::ModelError;
use crate::model::types::ModelStreamEvent;

/// Decodes `chunks` as one streamed body: the events, then the end-of-body result.
fn decode(chunks: Vec<Vec<u8>>) -> (Vec<ModelStreamEvent>, Result<(), ModelError>) {
    super::decode_openai_chunks(chunks)
}

fn one(body: &str) -> (Vec<ModelStreamEvent>, Result<(), ModelError>) {
    decode(vec![body.as_bytes().to_vec()])
}

const TEXT_AND_CALL: [&str; 4] = [
    r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get-order-tool","arguments":"{\"orderId\":"}}]}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ACME-42\"}"}}]},"finish_reason":"tool_calls"}]}"#,
];

fn body(line_end: &str) -> String {
    let mut out = String::new();
    for data in TEXT_AND_CALL {
        out.push_str(&format!("data: {data}{line_end}{line_end}"));
    }
    out.push_str(&format!("data: [DONE]{line_end}{line_end}"));
    out
}

fn expected() -> Vec<ModelStreamEvent> {
    let (events, end) = one(&body("\n"));
    end.expect("a complete stream");
    events
}

#[test]
fn the_reference_stream_decodes_to_text_a_call_and_the_finished_response() {
    let events = expected();
    assert!(matches!(&events[0], ModelStreamEvent::TextDelta { delta } if delta == "Hel"));
    let ModelStreamEvent::Finished(response) = events.last().unwrap() else {
        panic!("{events:?}")
    };
    assert_eq!(response.message.content.as_deref(), Some("Hello"));
    assert_eq!(response.message.tool_calls.len(), 1);
    assert_eq!(response.message.tool_calls[0].name, "get-order-tool");
    assert_eq!(
        response.message.tool_calls[0].arguments,
        r#"{"orderId":"ACME-42"}"#
    );
}

#[test]
fn crlf_and_bare_cr_line_endings_decode_the_same() {
    for line_end in ["\r\n", "\r"] {
        let (events, end) = one(&body(line_end));
        end.unwrap_or_else(|e| panic!("{line_end:?}: {e}"));
        assert_eq!(events, expected(), "{line_end:?}");
    }
}

#[test]
fn comments_and_keep_alives_are_ignored() {
    let with_comments = format!(
        ": keep-alive\n\n:ping\n{}",
        body("\n").replace("\n\ndata", "\n\n: tick\n\ndata")
    );
    let (events, end) = one(&with_comments);
    end.unwrap();
    assert_eq!(events, expected());
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    // One JSON chunk spread over three `data:` lines of one event.
    let chunk = "data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"Hi\"}\ndata: }]}\n\ndata: [DONE]\n\n";
    let (events, end) = one(chunk);
    end.unwrap();
    assert!(
        matches!(&events[0], ModelStreamEvent::TextDelta { delta } if delta == "Hi"),
        "{events:?}"
    );
}

#[test]
fn a_leading_bom_is_skipped() {
    let (events, end) = one(&format!("\u{feff}{}", body("\n")));
    end.unwrap();
    assert_eq!(events, expected());
}

#[test]
fn events_split_at_every_byte_decode_the_same() {
    for line_end in ["\n", "\r\n", "\r"] {
        let bytes = format!("\u{feff}{}", body(line_end)).into_bytes();
        for cut in 1..bytes.len() {
            let (events, end) = decode(vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()]);
            end.unwrap_or_else(|e| panic!("{line_end:?} cut at {cut}: {e}"));
            assert_eq!(events, expected(), "{line_end:?} cut at {cut}");
        }
        // And one byte per chunk.
        let (events, end) = decode(bytes.iter().map(|b| vec![*b]).collect());
        end.unwrap();
        assert_eq!(events, expected(), "{line_end:?} byte by byte");
    }
}

#[test]
fn a_body_that_ends_inside_an_event_or_before_done_is_truncated() {
    let (_, end) =
        one("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"id\"");
    assert!(
        matches!(end, Err(ModelError::StreamTruncated { detail }) if detail.contains("middle of an event"))
    );
    let (events, end) =
        one("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n");
    assert_eq!(events.len(), 1);
    assert!(
        matches!(end, Err(ModelError::StreamTruncated { detail }) if detail.contains("[DONE]"))
    );
}

#[test]
fn bytes_that_are_not_utf8_are_a_typed_error() {
    let (_, end) = decode(vec![b"data: \xff\xfe\n\n".to_vec()]);
    assert!(
        matches!(end, Err(ModelError::MalformedResponse { .. })),
        "{end:?}"
    );
}
