//! What the `/odata` routes answer: a body with its content type and the
//! OData headers, or an error in the OData shape
//! `{"error":{"code","message","target"}}`. The one error type of this
//! boundary is [`ODataError`]; database failures become a generic 500 whose
//! detail goes to the log only.

use std::pin::Pin;

use futures::{Stream, StreamExt};
use rocket::http::{ContentType, Header, Status};
use rocket::response::{self, Responder, Response};
use rocket::Request;
use serde_json::json;
use tokio_util::io::StreamReader;

use crate::odata::plan::error::ODataError;
use crate::odata::BatchError;

/// The header every `/odata` response carries.
pub const ODATA_VERSION: (&str, &str) = ("OData-Version", "4.0");

/// A piece of a streamed body, or the failure that ends it.
pub type Chunk = Result<Vec<u8>, ODataError>;

/// How much body a streaming sink gathers before handing it on: a page of
/// up to about 2,000 ordinary rows is read whole before its first byte
/// goes out, so that its database connection is back in the pool before
/// the client is written to; a larger page streams, holding its
/// connection while it does.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// A successful OData response.
#[derive(Debug)]
pub struct Reply {
    /// 200, or 204 for a navigation to no entity.
    pub status: Status,
    /// JSON, XML or plain text.
    pub content_type: ContentType,
    /// The serialized body, or its start when the rest streams.
    pub body: Vec<u8>,
    /// The rest of the body, read from the database as it is sent.
    pub rest: Option<Rest>,
    /// `Preference-Applied`, when a page-size preference was honoured.
    pub preference_applied: Option<String>,
}

/// The rest of a streamed body: its pieces as the database yields them,
/// ending early with the failure that stopped the read.
pub struct Rest(pub Pin<Box<dyn Stream<Item = Chunk> + Send>>);

impl std::fmt::Debug for Rest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rest(…)")
    }
}

impl Reply {
    /// A 200 JSON body.
    pub fn json(body: Vec<u8>) -> Reply {
        Reply {
            status: Status::Ok,
            content_type: ContentType::new("application", "json")
                .with_params([("odata.metadata", "minimal"), ("odata.streaming", "true")]),
            body,
            rest: None,
            preference_applied: None,
        }
    }

    /// Says in a JSON answer's `Content-Type` that its Int64 and Decimal
    /// values are strings (`IEEE754Compatible=true`).
    pub fn say_ieee754_compatible(&mut self) {
        if self.content_type.is_json() {
            self.content_type = ContentType::new("application", "json").with_params([
                ("odata.metadata", "minimal"),
                ("odata.streaming", "true"),
                ("IEEE754Compatible", "true"),
            ]);
        }
    }

    /// The headers the answer carries, `Content-Type` first.
    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![
            ("Content-Type", self.content_type.to_string()),
            (ODATA_VERSION.0, ODATA_VERSION.1.to_owned()),
        ];
        if let Some(applied) = &self.preference_applied {
            headers.push(("Preference-Applied", applied.clone()));
        }
        headers
    }

    /// The answer as it goes on the wire, and the rest of its body when it
    /// streams (the wire then holds the body's start).
    pub fn streamed(self) -> (Wire, Option<Rest>) {
        let wire = Wire {
            status: self.status,
            headers: self.headers(),
            body: self.body,
        };
        (wire, self.rest)
    }

    /// The answer, or its error, as it goes on the wire (see
    /// [`streamed`](Self::streamed)).
    pub fn streamed_of(answer: Result<Reply, ODataError>) -> (Wire, Option<Rest>) {
        match answer {
            Ok(reply) => reply.streamed(),
            Err(error) => (error.wire(), None),
        }
    }
}

/// A response as it goes on the wire: what a request sent alone and the
/// same request inside a batch both answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire {
    /// The status.
    pub status: Status,
    /// The headers, `Content-Type` first.
    pub headers: Vec<(&'static str, String)>,
    /// The body; empty for 204.
    pub body: Vec<u8>,
}

impl Wire {
    /// The value of the `Content-Type` header.
    pub fn content_type(&self) -> &str {
        self.headers
            .iter()
            .find(|(name, _)| *name == "Content-Type")
            .map_or("", |(_, value)| value)
    }
}

impl<'r> Responder<'r, 'static> for Wire {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        let mut response = Response::build();
        response.status(self.status);
        for (name, value) in self.headers {
            response.header(Header::new(name, value));
        }
        let size = self.body.len();
        if self.status != Status::NoContent {
            response.sized_body(size, std::io::Cursor::new(self.body));
        }
        let mut response = response.finalize();
        // One write of the whole page instead of 4 KiB pieces.
        response.set_max_chunk_size(size.max(rocket::response::Body::DEFAULT_MAX_CHUNK));
        Ok(response)
    }
}

impl<'r> Responder<'r, 'static> for Reply {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let headers = self.headers();
        let Some(Rest(rest)) = self.rest else {
            let wire = Wire {
                status: self.status,
                headers,
                body: self.body,
            };
            return wire.respond_to(req);
        };
        let mut response = Response::build();
        response.status(self.status);
        for (name, value) in headers {
            response.header(Header::new(name, value));
        }
        // A failure after the first piece can no longer change the status:
        // the body ends unfinished, which the client sees as a broken
        // transfer rather than a complete document.
        let pieces = futures::stream::once(futures::future::ready(Ok(self.body)))
            .chain(rest)
            .map(|chunk| {
                chunk
                    .map(std::io::Cursor::new)
                    .map_err(|e| std::io::Error::other(e.message))
            });
        response.streamed_body(StreamReader::new(pieces));
        let mut response = response.finalize();
        response.set_max_chunk_size(CHUNK_BYTES + 4096);
        Ok(response)
    }
}

impl ODataError {
    /// The error as it goes on the wire.
    pub fn wire(self) -> Wire {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(target) = self.target {
            error["target"] = json!(target);
        }
        let mut headers = vec![
            ("Content-Type", ContentType::JSON.to_string()),
            (ODATA_VERSION.0, ODATA_VERSION.1.to_owned()),
        ];
        if self.status == Status::ServiceUnavailable && self.code == "server_error" {
            headers.push((
                "Retry-After",
                crate::error::RETRY_WHILE_UNAVAILABLE.to_string(),
            ));
        }
        Wire {
            status: self.status,
            headers,
            body: json!({ "error": error }).to_string().into_bytes(),
        }
    }
}

impl<'r> Responder<'r, 'static> for ODataError {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        self.wire().respond_to(req)
    }
}

impl From<BatchError> for ODataError {
    fn from(e: BatchError) -> ODataError {
        let code = match e {
            BatchError::TooMany(_) => "batch_too_large",
            BatchError::ContentType | BatchError::Malformed(_) => "invalid_batch",
        };
        ODataError::new(Status::BadRequest, code, e.to_string())
    }
}
