//! The settings every HTTP chat client has, and what `from_env` reads.
use std::time::Duration;

use super::error::ModelError;
use super::sse::StreamLimits;

pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 2;
pub(crate) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
pub(crate) const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The settings every HTTP client's builder has.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) backoff_base: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) limits: StreamLimits,
    pub(crate) streaming: bool,
    pub(crate) client: Option<reqwest::Client>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            max_backoff: DEFAULT_MAX_BACKOFF,
            limits: StreamLimits::default(),
            streaming: true,
            client: None,
        }
    }
}

/// `base` without trailing slashes, if it is an `http(s)://` URL.
pub(crate) fn check_base_url(base: &str) -> Result<&str, ModelError> {
    let base = base.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(base)
        .map_err(|e| ModelError::config(format!("invalid base URL {base:?}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ModelError::config(format!(
            "base URL {base:?} must start with http:// or https://"
        )));
    }
    Ok(base)
}

/// `true` unless `value` says off (`false`, `0`, `no`, `off`).
pub(crate) fn env_flag(value: Option<String>, default: bool) -> bool {
    match value.as_deref().map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if matches!(v.as_str(), "false" | "0" | "no" | "off") => false,
        Some(v) if matches!(v.as_str(), "true" | "1" | "yes" | "on") => true,
        _ => default,
    }
}

/// What a client's `from_env` reads: `{prefix}_BASE_URL`, `{prefix}_API_KEY` (else
/// `key_fallback`), `{prefix}_MODEL`, `{prefix}_STREAM`. A key is required only for the default
/// (hosted) base URL: with a base URL of one's own, a missing key is a keyless local server.
pub(crate) struct EnvConfig {
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) streaming: bool,
}

impl EnvConfig {
    pub(crate) fn read(
        lookup: impl Fn(&str) -> Option<String>,
        prefix: &str,
        key_fallback: &str,
    ) -> Result<Self, ModelError> {
        let get =
            |suffix: &str| lookup(&format!("{prefix}_{suffix}")).filter(|v| !v.trim().is_empty());
        let base_url = get("BASE_URL");
        let api_key =
            get("API_KEY").or_else(|| lookup(key_fallback).filter(|v| !v.trim().is_empty()));
        if api_key.is_none() && base_url.is_none() {
            return Err(ModelError::config(format!(
                "no API key: set {prefix}_API_KEY or {key_fallback} (or {prefix}_BASE_URL for a keyless local server)"
            )));
        }
        Ok(Self {
            base_url,
            api_key,
            model: get("MODEL"),
            streaming: env_flag(get("STREAM"), true),
        })
    }
}
