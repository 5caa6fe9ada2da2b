//! Unit tests of the resource server's configuration and refusals.
use super::*;

#[test]
fn urls_must_be_absolute_and_https_off_loopback() {
    let new = |resource: &str| {
        OAuthResourceServer::new(
            resource,
            "https://id.example.com",
            "https://id.example.com/jwks",
        )
    };
    assert!(new("https://mcp.example.com/mcp").is_ok());
    assert!(new("http://127.0.0.1:8080/mcp").is_ok());
    assert!(new("http://[::1]:8080/mcp").is_ok());
    assert!(new("http://localhost/mcp").is_ok());
    for bad in [
        "mcp.example.com/mcp",
        "/mcp",
        "https://mcp.example.com/mcp#f",
        "ftp://x/y",
    ] {
        assert!(
            matches!(new(bad), Err(OAuthConfigError::InvalidUrl { .. })),
            "{bad}"
        );
    }
    assert!(matches!(
        new("http://mcp.example.com/mcp"),
        Err(OAuthConfigError::Insecure { .. })
    ));
    let jwks = OAuthResourceServer::new(
        "https://m.example.com",
        "https://id.example.com",
        "http://id.example.com/jwks",
    );
    assert!(matches!(
        jwks,
        Err(OAuthConfigError::Insecure {
            what: "jwks_uri",
            ..
        })
    ));
}

#[test]
fn the_metadata_url_inserts_the_well_known_path() {
    let at = |resource: &str| {
        OAuthResourceServer::new(
            resource,
            "https://id.example.com",
            "https://id.example.com/jwks",
        )
        .unwrap()
        .metadata_url()
    };
    assert_eq!(
        at("https://m.example.com/mcp/"),
        "https://m.example.com/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        at("https://m.example.com"),
        "https://m.example.com/.well-known/oauth-protected-resource"
    );
    assert_eq!(
        at("http://127.0.0.1:9/a/b"),
        "http://127.0.0.1:9/.well-known/oauth-protected-resource/a/b"
    );
}

#[tokio::test]
async fn malformed_tokens_are_refused_without_fetching_keys() {
    // The JWKS URI is never reached: a token that is not a JWT fails first.
    let oauth = OAuthResourceServer::new(
        "https://m.example.com",
        "https://id.example.com",
        "https://127.0.0.1:1/jwks",
    )
    .unwrap();
    let long = "a".repeat(MAX_TOKEN_BYTES + 1);
    for token in [
        "",
        "x",
        "a.b",
        "a.b.c",
        "e30.e30.e30",
        "\u{0}.\u{1}.\u{2}",
        long.as_str(),
    ] {
        assert!(
            matches!(oauth.validate(token).await, Err(OAuthError::Malformed)),
            "{token:?}"
        );
    }
    // alg none, and HS256: not allowed, whatever the key.
    // base64url of {"alg":"none"} and {"alg":"HS256","kid":"k"}
    for header in ["eyJhbGciOiJub25lIn0", "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsifQ"] {
        let token = format!("{header}.e30.sig");
        let refused = oauth.validate(&token).await;
        assert!(
            matches!(
                refused,
                Err(OAuthError::Malformed | OAuthError::AlgorithmNotAllowed)
            ),
            "{header}: {refused:?}"
        );
    }
}
