//! What the device authorization endpoints share: the form body a script
//! sends ([`OAuthForm`]) and their answers ([`OAuthReply`]): RFC 6749's
//! JSON, never cached. It declares no route.

use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::http::{Header, Status};
use rocket::request::Request;
use rocket::response::{self, Responder};
use rocket::serde::json::Json;
use serde_json::{json, Value};

use crate::auth::device_grant::{OAuthError, Params};
use crate::body::{read_text, BodyError};
use crate::error::AuthError;

/// A form-urlencoded body's parameters (RFC 6749 §3.2: the token endpoint
/// takes nothing else), within Rocket's `form` limit.
pub struct OAuthForm(pub Params);

#[rocket::async_trait]
impl<'r> FromData<'r> for OAuthForm {
    type Error = OAuthError;

    async fn from_data(req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        let refused = |reason| Outcome::Error((Status::BadRequest, OAuthError::InvalidRequest(reason)));
        if !req.content_type().is_some_and(|ct| ct.is_form()) {
            return refused("the body must be application/x-www-form-urlencoded");
        }
        let limit = req.limits().get("form").unwrap_or(32.kibibytes());
        let text = match read_text(data, limit).await {
            Ok(text) => text,
            Err(BodyError::TooLarge) => return refused("the body is too large"),
            Err(BodyError::Malformed) => return refused("the body is unreadable"),
        };
        match Params::parse(&text) {
            Ok(params) => Outcome::Success(OAuthForm(params)),
            Err(error) => Outcome::Error((Status::BadRequest, error)),
        }
    }
}

/// An answer of the device authorization endpoints.
#[derive(Debug)]
pub enum OAuthReply {
    /// 200 with this JSON.
    Answer(Value),
    /// 400 with RFC 6749's error JSON.
    Refused(OAuthError),
    /// 429 `slow_down` with `Retry-After`: the client address asked for
    /// too many device codes.
    Throttled {
        /// Seconds until the window ends.
        retry_after: u64,
    },
    /// A failure of the server (a database that cannot be reached).
    Failed(AuthError),
}

impl From<OAuthError> for OAuthReply {
    fn from(error: OAuthError) -> Self {
        Self::Refused(error)
    }
}

impl From<AuthError> for OAuthReply {
    fn from(error: AuthError) -> Self {
        Self::Failed(error)
    }
}

impl From<sqlx::Error> for OAuthReply {
    fn from(error: sqlx::Error) -> Self {
        Self::Failed(error.into())
    }
}

impl<'r> Responder<'r, 'static> for OAuthReply {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let (status, body, retry_after) = match self {
            Self::Failed(error) => return error.respond_to(req),
            Self::Answer(body) => (Status::Ok, body, None),
            Self::Refused(error) => (Status::BadRequest, error.body(), None),
            Self::Throttled { retry_after } => (
                Status::TooManyRequests,
                json!({"error": "slow_down",
                       "error_description": "too many device codes from this address; retry later"}),
                Some(retry_after),
            ),
        };
        let mut response = response::Response::build_from(Json(body).respond_to(req)?)
            .status(status)
            .header(Header::new("Cache-Control", "no-store"))
            .header(Header::new("Pragma", "no-cache"))
            .finalize();
        if let Some(seconds) = retry_after {
            response.set_header(Header::new("Retry-After", seconds.to_string()));
        }
        Ok(response)
    }
}
