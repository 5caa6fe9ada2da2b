//! Export of the spans to an OpenTelemetry collector over OTLP/HTTP (feature `otel`), through
//! `tracing-opentelemetry`.
//!
//! The one-line set-up, at the start of `main` (export to `OTEL_EXPORTER_OTLP_ENDPOINT`, by
//! default `http://localhost:4318`; levels from `RUST_LOG`, by default `agboss_core=info`):
//!
//! ```no_run
//! # fn main() -> Result<(), agboss_core::telemetry::otel::OtelError> {
//! let _otel = agboss_core::telemetry::otel::init_otlp("support-desk")?; // flushes when dropped
//! // … build the app, run agents: every run, model turn and tool call is a span …
//! # Ok(()) }
//! ```
//!
//! Or compose [`layer`] with your own subscriber (a `fmt` layer beside it, say):
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//! # fn main() -> Result<(), agboss_core::telemetry::otel::OtelError> {
//! let provider = agboss_core::telemetry::otel::otlp_tracer_provider("support-desk", None)?;
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::EnvFilter::new("agboss_core=info"))
//!     .with(agboss_core::telemetry::otel::layer(&provider))
//!     .init();
//! // … and `provider.shutdown()` before the process exits.
//! # Ok(()) }
//! ```
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
pub use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing::Subscriber;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Why the OTLP export could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The OTLP exporter could not be built (a bad endpoint, an HTTP client that fails).
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    /// A global `tracing` subscriber was installed already.
    #[error("cannot install the tracing subscriber: {0}")]
    Subscriber(String),
}

/// A tracer provider exporting in batches over OTLP/HTTP (protobuf) to `endpoint` (the full
/// URL of the traces endpoint, e.g. `http://localhost:4318/v1/traces`), or, when `None`, to
/// what the `OTEL_EXPORTER_OTLP_*` environment variables say (default
/// `http://localhost:4318/v1/traces`). Its resource's `service.name` is `service_name`.
///
/// ```no_run
/// let provider = agboss_core::telemetry::otel::otlp_tracer_provider(
///     "support-desk",
///     Some("http://127.0.0.1:4318/v1/traces"),
/// )?;
/// # Ok::<(), agboss_core::telemetry::otel::OtelError>(())
/// ```
pub fn otlp_tracer_provider(
    service_name: impl Into<String>,
    endpoint: Option<&str>,
) -> Result<SdkTracerProvider, OtelError> {
    crate::tls::ensure_provider();
    let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http();
    if let Some(endpoint) = endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    let exporter = builder
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service_name.into())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// The `tracing-opentelemetry` layer exporting the spans through `provider` (any
/// [`SdkTracerProvider`]: OTLP, or the SDK's in-memory exporter in tests).
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
/// let provider = agboss_core::telemetry::otel::SdkTracerProvider::builder().build();
/// let subscriber = tracing_subscriber::registry().with(agboss_core::telemetry::otel::layer(&provider));
/// tracing::subscriber::with_default(subscriber, || tracing::info_span!("chat").in_scope(|| {}));
/// ```
#[must_use]
pub fn layer<S>(
    provider: &SdkTracerProvider,
) -> tracing_opentelemetry::OpenTelemetryLayer<S, Tracer>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    tracing_opentelemetry::layer().with_tracer(provider.tracer("agboss-core"))
}

/// Installs a global subscriber exporting every span over OTLP/HTTP
/// ([`otlp_tracer_provider`] with the environment's endpoint), filtered by `RUST_LOG` (default
/// `agboss_core=info`). Keep the guard alive: dropping it flushes and shuts the export down.
pub fn init_otlp(service_name: impl Into<String>) -> Result<OtelGuard, OtelError> {
    let provider = otlp_tracer_provider(service_name, None)?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("agboss_core=info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(layer(&provider))
        .try_init()
        .map_err(|e| OtelError::Subscriber(e.to_string()))?;
    Ok(OtelGuard { provider })
}

/// Flushes and shuts down the export of [`init_otlp`] when dropped.
#[must_use = "dropping the guard shuts the export down at once"]
#[derive(Debug)]
pub struct OtelGuard {
    provider: SdkTracerProvider,
}

impl OtelGuard {
    /// The provider spans are exported through.
    pub fn provider(&self) -> &SdkTracerProvider {
        &self.provider
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        // Nothing to do about a collector that is gone when the process ends.
        let _ = self.provider.shutdown();
    }
}
