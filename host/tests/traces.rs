//! JSON logs and traces of a real `gatehouse serve`. With `log.format =
//! "json"` every line inside a request carries its `X-Request-Id`.
//! Traces over OTLP/HTTP: a real `gatehouse serve` with `ops.otlp_endpoint`
//! set exports its spans to a receiver in this test, which decodes them
//! with the official OpenTelemetry protobuf definitions
//! (`opentelemetry-proto`): the request's span takes its trace from the
//! `traceparent` it was sent, each SQL statement and the password hash are
//! its children, and no span holds the address or the password sent.

mod common;

use std::fs::File;
use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{add_user, TestDb, PASSWORD};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use rocket::data::{Data, ToByteUnit};
use rocket::{post, routes, State};

const EMAIL: &str = "ada@example.org";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// The spans received so far.
type Received = Arc<Mutex<Vec<Span>>>;

#[post("/v1/traces", data = "<body>")]
async fn traces(body: Data<'_>, received: &State<Received>) -> &'static str {
    let bytes = body
        .open(16.mebibytes())
        .into_bytes()
        .await
        .expect("the body reads");
    let request = ExportTraceServiceRequest::decode(bytes.as_slice()).expect("OTLP protobuf");
    let mut spans = received.lock().expect("the spans");
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            spans.extend(scope.spans);
        }
    }
    ""
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A running `gatehouse serve`, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `gatehouse serve` on a free port over `db`, with `env` added, its
/// standard output in `db`'s folder (`serve.log`), once it answers
/// `/login`; answers it and its base URL.
async fn serve(db: &TestDb, env: &[(&str, String)]) -> (Server, String) {
    let (mut command, base) = common::serve_command(db);
    command
        .stdout(Stdio::from(
            File::create(db.dir().join("serve.log")).expect("a log"),
        ))
        .stderr(Stdio::from(
            File::create(db.dir().join("serve.err")).expect("a log"),
        ));
    for (key, value) in env {
        command.env(key, value);
    }
    let server = Server(command.spawn().expect("gatehouse serve starts"));
    let ready = common::launched(&base, "/login").await;
    assert!(ready, "the server did not start");
    (server, base)
}

/// The span `name` of the trace `trace_id` once the receiver has it; fails
/// after `deadline`.
async fn arrived(received: &Received, trace_id: &[u8], name: &str, deadline: Instant) -> Span {
    loop {
        let found = received
            .lock()
            .expect("the spans")
            .iter()
            .find(|s| s.trace_id == trace_id && s.name == name)
            .cloned();
        if let Some(span) = found {
            return span;
        }
        assert!(Instant::now() < deadline, "no span {name} arrived");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span
        .attributes
        .iter()
        .find(|a| a.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        Any::StringValue(s) => Some(s.clone()),
        Any::IntValue(n) => Some(n.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_and_its_statements_are_exported_in_the_callers_trace() {
    let db = TestDb::new().await;
    common::cli(&db, &["migrate"], None).assert_success();
    add_user(&db, EMAIL, "Ada", PASSWORD);

    let received: Received = Arc::default();
    let receiver_port = free_port();
    let receiver = rocket::custom(
        rocket::Config::figment()
            .merge(("port", receiver_port))
            .merge(("address", "127.0.0.1"))
            .merge(("log_level", "off")),
    )
    .manage(received.clone())
    .mount("/", routes![traces]);
    tokio::spawn(receiver.launch());

    let (_server, base) = serve(
        &db,
        &[
            (
                "ROCKET_OPS",
                format!("{{otlp_endpoint=\"http://127.0.0.1:{receiver_port}\"}}"),
            ),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ],
    )
    .await;
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let answer = http
        .post(format!("{base}/auth/login"))
        .header("traceparent", format!("00-{TRACE_ID}-{PARENT_ID}-01"))
        .json(&serde_json::json!({"email": EMAIL, "password": "not the password"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(answer.status(), reqwest::StatusCode::UNPROCESSABLE_ENTITY);

    let trace_id = hex::decode(TRACE_ID).expect("hex");
    let request = arrived(&received, &trace_id, "POST /auth/login", deadline).await;
    assert_eq!(request.parent_span_id, hex::decode(PARENT_ID).expect("hex"));
    assert_eq!(
        attribute(&request, "http.response.status_code").as_deref(),
        Some("422")
    );
    assert!(attribute(&request, "request_id").is_some_and(|id| !id.is_empty()));

    // Its children arrive with it or soon after.
    let children = loop {
        let spans = received.lock().expect("the spans").clone();
        let children: Vec<Span> = spans
            .into_iter()
            .filter(|s| s.trace_id == trace_id && s.parent_span_id == request.span_id)
            .collect();
        let statements = children.iter().filter(|s| s.name == "db.statement").count();
        let hashed = children.iter().any(|s| s.name == "password.hash");
        if statements >= 1 && hashed {
            break children;
        }
        assert!(
            Instant::now() < deadline,
            "no statement or hash span under the request: {children:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let statement = children
        .iter()
        .find(|s| s.name == "db.statement")
        .expect("a statement");
    let system = attribute(statement, "db.system.name").expect("db.system.name");
    assert!(
        ["sqlite", "postgresql", "mysql"].contains(&system.as_str()),
        "{system}"
    );
    let text = attribute(statement, "db.query.text").expect("db.query.text");
    let kind = attribute(statement, "db.operation.name").expect("db.operation.name");
    assert!(
        text.trim_start().to_ascii_uppercase().starts_with(&kind),
        "{kind}: {text}"
    );

    // A host's own page, mounted through `gatehouse::traced`, is a request
    // span of the caller's trace too.
    let page = http
        .get(format!("{base}/terms"))
        .header("traceparent", format!("00-{TRACE_ID}-{PARENT_ID}-01"))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(page.status(), reqwest::StatusCode::OK);
    let span = arrived(&received, &trace_id, "GET /terms", deadline).await;
    assert_eq!(
        attribute(&span, "http.response.status_code").as_deref(),
        Some("200")
    );

    let everything = format!("{:?}", received.lock().expect("the spans"));
    for secret in [EMAIL, "not the password", PASSWORD] {
        assert!(!everything.contains(secret), "a span holds {secret:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn json_logs_carry_the_request_id_on_every_line_of_a_request() {
    let db = TestDb::new().await;
    common::cli(&db, &["migrate"], None).assert_success();
    add_user(&db, EMAIL, "Ada", PASSWORD);
    let (_server, base) = serve(&db, &[("ROCKET_LOG", "{format=\"json\"}".to_owned())]).await;
    let log = db.dir().join("serve.log");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = "json-log-check.1";
    let answer = http
        .post(format!("{base}/auth/login"))
        .header("X-Request-Id", id)
        .json(&serde_json::json!({"email": EMAIL, "password": "not the password"}))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(answer.status(), reqwest::StatusCode::UNPROCESSABLE_ENTITY);
    // The request's own line and the sign-in's failed event, each a JSON
    // object carrying the id.
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        let done = lines
            .iter()
            .any(|l| l["request_id"] == id && l["status"] == 422);
        if done {
            break lines;
        }
        assert!(Instant::now() < deadline, "no request line:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let request = lines
        .iter()
        .find(|l| l["request_id"] == id)
        .expect("the request's line");
    assert_eq!(request["target"], "gatehouse::request");
    assert_eq!(request["route"], "/auth/login");
    assert!(request["duration_ms"].as_f64().is_some(), "{request}");
    assert!(
        request["timestamp"].is_string() && request["level"] == "INFO",
        "{request}"
    );
    let failed = lines
        .iter()
        .find(|l| l["event"] == "Failed")
        .expect("the failed sign-in's line");
    assert_eq!(failed["span"]["request_id"], id, "{failed}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains(EMAIL) && !text.contains("not the password"));
}
