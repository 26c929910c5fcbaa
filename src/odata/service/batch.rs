//! The answers to a batch (`POST /odata/$batch`): its requests, each
//! answered by the same path as a GET sent alone ([`answer`]), as the caller
//! of the batch, and written back in order in the batch's own format. Only
//! one inner answer is held at a time: each is written out before the next
//! is made.

use futures::StreamExt;
use rocket::data::{Data, ToByteUnit};
use rocket::http::uri::Origin;
use rocket::http::{ContentType, Header, Status};
use rocket::response::stream::ByteStream;
use rocket::response::{self, Responder, Response};
use rocket::Request;

use super::read::{answer, numbers_of, Incoming};
use super::reply::{Reply, Rest, Wire, ODATA_VERSION};
use super::state::Service;
use crate::odata::model::scope::Caller;
use crate::odata::plan::error::ODataError;
use crate::odata::service::batch_body::{
    parse_batch, Batch, BatchError, BatchFormat, BatchRequest,
};

/// The largest batch body read; a larger one is refused (400).
pub const MAX_BATCH_BYTES: u64 = 1024 * 1024;

/// The answers to a batch, written as they are made.
pub struct Answers<'r> {
    service: &'r Service,
    caller: Result<Caller, ODataError>,
    batch: Batch,
    boundary: String,
}

impl<'r> Answers<'r> {
    /// Reads the batch `body`, sent with `content_type`: its requests are
    /// answered when the response is written. A body too large or malformed,
    /// or with too many requests, is refused as a whole.
    pub async fn read(
        content_type: Option<&ContentType>,
        incoming: Incoming<'r>,
        body: Data<'_>,
    ) -> Result<Answers<'r>, ODataError> {
        let bytes = body
            .open(MAX_BATCH_BYTES.bytes())
            .into_bytes()
            .await
            .map_err(|e| ODataError::internal(&e))?;
        if !bytes.is_complete() {
            let message = format!("the body is larger than {MAX_BATCH_BYTES} bytes");
            return Err(BatchError::Malformed(message).into());
        }
        let content_type = content_type.map(ToString::to_string).unwrap_or_default();
        let batch = parse_batch(&content_type, &bytes, incoming.service.batch_max)?;
        Ok(Answers {
            service: incoming.service,
            caller: incoming.caller,
            batch,
            boundary: format!("batchresponse_{}", hex::encode(rand::random::<[u8; 16]>())),
        })
    }
}

impl<'r> Responder<'r, 'r> for Answers<'r> {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'r> {
        let Answers {
            service,
            caller,
            batch,
            boundary,
        } = self;
        let content_type = match batch.format {
            BatchFormat::Multipart => format!("multipart/mixed; boundary={boundary}"),
            BatchFormat::Json => "application/json".to_owned(),
        };
        let stream = ByteStream! {
            let mut first = true;
            if batch.format == BatchFormat::Json {
                yield b"{\"responses\":[".to_vec();
            }
            for request in &batch.requests {
                let (wire, rest) = Reply::streamed_of(answer_one(service, &caller, request).await);
                let streams = rest.is_some();
                let (head, tail) = match batch.format {
                    BatchFormat::Multipart => multipart_part(&boundary, request, wire, streams),
                    BatchFormat::Json => json_response(request, wire, std::mem::take(&mut first)),
                };
                yield head;
                if let Some(Rest(mut rest)) = rest {
                    while let Some(piece) = rest.next().await {
                        match piece {
                            Ok(piece) => yield piece,
                            // The part's status is sent: the batch ends
                            // unfinished, which its client sees as broken.
                            Err(_) => return,
                        }
                    }
                }
                yield tail;
            }
            yield match batch.format {
                BatchFormat::Multipart => format!("--{boundary}--\r\n").into_bytes(),
                BatchFormat::Json => b"]}".to_vec(),
            };
        };
        Response::build_from(stream.respond_to(req)?)
            .status(Status::Ok)
            .header(Header::new("Content-Type", content_type))
            .header(Header::new(ODATA_VERSION.0, ODATA_VERSION.1))
            .ok()
    }
}

/// One request of a batch, answered as if it had come alone.
async fn answer_one(
    service: &Service,
    caller: &Result<Caller, ODataError>,
    request: &BatchRequest,
) -> Result<Reply, ODataError> {
    if request.method != "GET" {
        return Err(ODataError::method_not_allowed(&request.method));
    }
    let target = Target::of(&request.url, &service.origin)?;
    let prefer: Vec<&str> = request
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("Prefer"))
        .map(|(_, value)| value.as_str())
        .collect();
    let media_types = request
        .headers
        .iter()
        .filter(|(name, _)| {
            name.eq_ignore_ascii_case("Accept") || name.eq_ignore_ascii_case("Content-Type")
        })
        .map(|(_, value)| value.as_str());
    let incoming = Incoming {
        service,
        query: target.query.as_deref().unwrap_or(""),
        prefer: (!prefer.is_empty()).then(|| prefer.join(",")),
        numbers: numbers_of(media_types),
        caller: caller.clone(),
    };
    let segments: Vec<&str> = target.segments.iter().map(String::as_str).collect();
    answer(&segments, incoming).await
}

/// Where a request of a batch points below `/odata`.
struct Target {
    /// Decoded path segments after `/odata`.
    segments: Vec<String>,
    /// The raw query string.
    query: Option<String>,
}

impl Target {
    /// Reads `url`: relative to the service root (`Items?$top=2`), an
    /// absolute path (`/odata/Items`) or an absolute URL on `origin`.
    fn of(url: &str, origin: &str) -> Result<Target, ODataError> {
        let elsewhere = || ODataError::not_found("the batch names a resource outside this service");
        let path = match url.strip_prefix(origin) {
            Some(path) => path,
            None if url.contains("://") => return Err(elsewhere()),
            None => url,
        };
        let path = match path.strip_prefix('/') {
            Some(absolute) => absolute
                .strip_prefix("odata")
                .filter(|rest| rest.is_empty() || rest.starts_with(['/', '?']))
                .ok_or_else(elsewhere)?
                .to_owned(),
            None => format!("/{path}"),
        };
        let full = format!("/odata{path}");
        let parsed = Origin::parse(&full)
            .map_err(|_| BatchError::Malformed(format!("'{url}' is not a URL")))?;
        Ok(Target {
            segments: parsed
                .path()
                .segments()
                .skip(1)
                .map(str::to_owned)
                .collect(),
            query: parsed.query().map(|q| q.as_str().to_owned()),
        })
    }
}

/// One `application/http` part answering `request`: what goes before the
/// rest of the body (all of it unless `streams`) and what closes the part.
/// A streamed body has no `Content-Length`: the boundary ends it.
fn multipart_part(
    boundary: &str,
    request: &BatchRequest,
    wire: Wire,
    streams: bool,
) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::with_capacity(wire.body.len() + 256);
    out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
    out.extend_from_slice(
        b"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n",
    );
    if let Some(id) = &request.id {
        out.extend_from_slice(format!("Content-ID: {id}\r\n").as_bytes());
    }
    let reason = wire.status.reason().unwrap_or("");
    out.extend_from_slice(format!("\r\nHTTP/1.1 {} {reason}\r\n", wire.status.code).as_bytes());
    for (name, value) in &wire.headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if !streams {
        out.extend_from_slice(format!("Content-Length: {}\r\n", wire.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&wire.body);
    (out, b"\r\n".to_vec())
}

/// One element of `responses` answering `request`, after a comma unless
/// `first`: what goes before the rest of the body and what closes it. A
/// JSON body (every streamed one) is written as it is; any other as a
/// string.
fn json_response(request: &BatchRequest, wire: Wire, first: bool) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::with_capacity(wire.body.len() + 256);
    if !first {
        out.push(b',');
    }
    let headers: serde_json::Map<String, serde_json::Value> = wire
        .headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value.clone().into()))
        .collect();
    let head = serde_json::json!({
        "id": request.id,
        "status": wire.status.code,
        "headers": headers,
    })
    .to_string();
    // `{"headers":…,"id":…,"status":…` and then the body.
    out.extend_from_slice(head.trim_end_matches('}').as_bytes());
    if wire.status != Status::NoContent {
        out.extend_from_slice(b",\"body\":");
        if wire.content_type().starts_with("application/json") {
            out.extend_from_slice(&wire.body);
        } else {
            let text = String::from_utf8_lossy(&wire.body);
            out.extend_from_slice(
                serde_json::Value::from(text.as_ref())
                    .to_string()
                    .as_bytes(),
            );
        }
    }
    (out, b"}".to_vec())
}
