//! The server's log and traces. The log: `log.format = "text"` (the
//! default) or `"json"`, one JSON object a line with time, level, target,
//! the message and its fields, and inside a request the request's span
//! (`request_id`, `method`, `route`); filtered by `RUST_LOG` (default
//! `info`). With `ops.otlp_endpoint` set, the spans are exported as traces
//! over OTLP/HTTP (protobuf) to `<endpoint>/v1/traces`.

use gatehouse::config::{LogFormat, LogSettings};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use rocket::figment::Figment;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

/// What must be flushed before the process ends: the trace exporter.
pub struct Exporting(Option<SdkTracerProvider>);

impl Exporting {
    /// Sends the spans still buffered.
    pub fn flush(self) {
        if let Some(provider) = self.0 {
            if let Err(e) = provider.shutdown() {
                eprintln!("warning: traces could not be flushed: {e}");
            }
        }
    }
}

/// The OTLP exporter to `endpoint`.
fn tracer_provider(endpoint: &str) -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()
        .map_err(|e| format!("`ops.otlp_endpoint`: {e}"))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("gatehouse").build())
        .build())
}

/// Starts the log (and the trace exporter) `figment`'s `[log]` and
/// `[ops]` keys ask for; an error for a key that does not read.
pub fn init(figment: &Figment) -> Result<Exporting, String> {
    let settings = LogSettings::from_figment(figment).map_err(|e| e.to_string())?;
    let endpoint: Option<String> = figment.extract_inner("ops.otlp_endpoint").ok();
    // Rocket's request lines print every URI as sent, reset tokens
    // included; Gatehouse logs each request itself with them hidden.
    let quiet_rocket = "rocket::server=off"
        .parse()
        .expect("a valid tracing directive");
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        .add_directive(quiet_rocket);
    let log: Box<dyn Layer<Registry> + Send + Sync> = match settings.format {
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
        _ => tracing_subscriber::fmt::layer().boxed(),
    };
    let provider = endpoint.as_deref().map(tracer_provider).transpose()?;
    let traces = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer("gatehouse")));
    let _ = Registry::default()
        .with(log)
        .with(traces)
        .with(filter)
        .try_init();
    Ok(Exporting(provider))
}
