//! Reading an OData batch request body into the requests it carries: the
//! pure first step of `POST /odata/$batch`. Both formats are read:
//! multipart/mixed (OData 4.0 Part 1 §11.7), each `application/http` part
//! holding one request and a nested `multipart/mixed` part being a change
//! set; and JSON (OData 4.01 §19), `{"requests":[{"id","method","url",
//! "headers"}]}`. Multipart framing is parsed by `multer`, each request line
//! and its headers by `httparse`; what the requests ask is answered later,
//! one by one, by the same steps as a request sent alone.
//!
//! ```
//! use gatehouse::odata::{parse_batch, BatchFormat};
//! let body = "--b\r\nContent-Type: application/http\r\nContent-ID: 1\r\n\r\n\
//!             GET Items?$top=2 HTTP/1.1\r\nAccept: application/json\r\n\r\n\r\n--b--\r\n";
//! let batch = parse_batch("multipart/mixed; boundary=b", body.as_bytes(), 100).unwrap();
//! assert_eq!(batch.format, BatchFormat::Multipart);
//! assert_eq!(batch.requests[0].url, "Items?$top=2");
//! assert_eq!(batch.requests[0].id.as_deref(), Some("1"));
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// How a batch was sent, and so how it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchFormat {
    /// `multipart/mixed`.
    Multipart,
    /// `application/json`.
    Json,
}

/// One request of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRequest {
    /// The multipart part's `Content-ID`, or the JSON request's `id`.
    pub id: Option<String>,
    /// The method, upper-case (`GET`); a change set reads as `CHANGESET`.
    pub method: String,
    /// The URL as written: relative to the service root, an absolute path
    /// or an absolute URL.
    pub url: String,
    /// The request's own headers, in order.
    pub headers: Vec<(String, String)>,
}

impl BatchRequest {
    /// The first value of header `name` (any case).
    #[cfg(test)]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A batch body read into its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The format the batch came in.
    pub format: BatchFormat,
    /// The requests, in order.
    pub requests: Vec<BatchRequest>,
}

/// Why a batch body cannot be read; answered 400 as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// Neither `multipart/mixed` with a boundary nor `application/json`.
    #[error("a batch is multipart/mixed with a boundary, or application/json")]
    ContentType,
    /// The body does not follow the format.
    #[error("the batch body is malformed: {0}")]
    Malformed(String),
    /// More requests than allowed.
    #[error("a batch holds at most {0} requests")]
    TooMany(usize),
}

/// The method a change set is read as: a change set is never a read.
pub const CHANGESET: &str = "CHANGESET";

/// Reads `body`, sent with `content_type`, into at most `max` requests.
pub fn parse_batch(content_type: &str, body: &[u8], max: usize) -> Result<Batch, BatchError> {
    let mime: mime::Mime = content_type.parse().map_err(|_| BatchError::ContentType)?;
    let requests = match (mime.type_(), mime.subtype()) {
        (mime::MULTIPART, subtype) if subtype == "mixed" => {
            let boundary = mime
                .get_param(mime::BOUNDARY)
                .ok_or(BatchError::ContentType)?;
            let requests = multipart(boundary.as_str(), body, max)?;
            return Ok(Batch {
                format: BatchFormat::Multipart,
                requests,
            });
        }
        (mime::APPLICATION, mime::JSON) => json(body, max)?,
        _ => return Err(BatchError::ContentType),
    };
    Ok(Batch {
        format: BatchFormat::Json,
        requests,
    })
}

fn malformed(what: impl std::fmt::Display) -> BatchError {
    BatchError::Malformed(what.to_string())
}

/// The parts of a multipart batch. The body is already in memory: `multer`
/// reads it as a one-chunk stream, which never waits.
fn multipart(boundary: &str, body: &[u8], max: usize) -> Result<Vec<BatchRequest>, BatchError> {
    let chunk: Result<Vec<u8>, std::io::Error> = Ok(body.to_vec());
    let mut parts = multer::Multipart::new(futures::stream::once(async { chunk }), boundary);
    futures::executor::block_on(async {
        let mut requests = Vec::new();
        while let Some(part) = parts.next_field().await.map_err(malformed)? {
            if requests.len() == max {
                return Err(BatchError::TooMany(max));
            }
            let id = part
                .headers()
                .get("content-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let kind = part.content_type();
            let changeset = kind.is_some_and(|m| m.type_() == mime::MULTIPART);
            let http =
                kind.is_some_and(|m| m.type_() == mime::APPLICATION && m.subtype() == "http");
            if !changeset && !http {
                return Err(malformed("each part is application/http or a change set"));
            }
            let bytes = part.bytes().await.map_err(malformed)?;
            requests.push(match changeset {
                true => BatchRequest {
                    id,
                    method: CHANGESET.to_owned(),
                    url: String::new(),
                    headers: Vec::new(),
                },
                false => http_request(id, &bytes)?,
            });
        }
        Ok(requests)
    })
}

/// The request line and headers of an `application/http` part.
fn http_request(id: Option<String>, bytes: &[u8]) -> Result<BatchRequest, BatchError> {
    let mut head = bytes.to_vec();
    // A request without a body may end right after its last header.
    let ends = |end: &[u8]| head.windows(end.len()).any(|w| w == end);
    if !ends(b"\r\n\r\n") && !ends(b"\n\n") {
        head.extend_from_slice(b"\r\n\r\n");
    }
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut slots);
    if request.parse(&head).map_err(malformed)?.is_partial() {
        return Err(malformed("a request in the batch ends inside its head"));
    }
    let (Some(method), Some(url)) = (request.method, request.path) else {
        return Err(malformed("a request in the batch has no request line"));
    };
    let headers = request
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(h.value).into_owned();
            (h.name.to_owned(), value)
        })
        .collect();
    Ok(BatchRequest {
        id,
        method: method.to_ascii_uppercase(),
        url: url.to_owned(),
        headers,
    })
}

#[derive(Deserialize)]
struct JsonBatch {
    requests: Vec<JsonRequest>,
}

#[derive(Deserialize)]
struct JsonRequest {
    id: String,
    method: String,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

fn json(body: &[u8], max: usize) -> Result<Vec<BatchRequest>, BatchError> {
    let batch: JsonBatch = serde_json::from_slice(body).map_err(|e| {
        // serde's message names the field and position, never our internals.
        malformed(e)
    })?;
    if batch.requests.len() > max {
        return Err(BatchError::TooMany(max));
    }
    Ok(batch
        .requests
        .into_iter()
        .map(|r| BatchRequest {
            id: Some(r.id),
            method: r.method.to_ascii_uppercase(),
            url: r.url,
            headers: r.headers.into_iter().collect(),
        })
        .collect())
}

#[cfg(test)]
#[path = "batch_body_tests.rs"]
mod tests;
