//! The one error of the OData boundary ([`ODataError`]): a request the
//! service refuses while it is parsed, checked or planned, with its status,
//! a stable code, a sentence and the option at fault; or a failure while it
//! runs, whose cause goes to the log only. The routes write it in the OData
//! shape `{"error":{"code","message","target"}}`.

use rocket::http::Status;

use crate::odata::model::scope::Caller;

use crate::odata::query::path::PathError;
use crate::odata::{ParseError, QueryError};

/// A request the service refuses, or a failure while answering it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ODataError {
    /// 400, 401, 404 or 500.
    pub status: Status,
    /// A stable, machine-readable code.
    pub code: String,
    /// A sentence for the developer reading it.
    pub message: String,
    /// The query option at fault (`$filter`, `$top`, …), if one is.
    pub target: Option<String>,
}

impl ODataError {
    pub(crate) fn new(status: Status, code: &str, message: impl Into<String>) -> ODataError {
        ODataError {
            status,
            code: code.to_owned(),
            message: message.into(),
            target: None,
        }
    }

    /// 405 for a batch request that is no read.
    pub fn method_not_allowed(method: &str) -> ODataError {
        ODataError::new(
            Status::MethodNotAllowed,
            "method_not_allowed",
            format!("this service only reads: {method} is not answered"),
        )
    }

    /// 403: a browser sent the request from another site's page.
    pub fn cross_origin() -> ODataError {
        ODataError::new(
            Status::Forbidden,
            "cross_origin",
            "requests from other sites' pages are refused",
        )
    }

    /// 404: no such set, entity or navigation.
    pub fn not_found(message: impl Into<String>) -> ODataError {
        ODataError::new(Status::NotFound, "not_found", message)
    }

    /// 401: the set needs a signed-in caller or a valid bearer token.
    pub fn unauthorized() -> ODataError {
        ODataError::new(
            Status::Unauthorized,
            "unauthorized",
            "sign in or send a valid bearer token",
        )
    }

    /// What a caller who may not read a set gets: 401 for a guest (sign in
    /// or send a token), 403 for a signed-in caller — a token given other
    /// sets.
    pub fn not_readable(caller: &Caller) -> ODataError {
        match caller.user_id {
            None => ODataError::unauthorized(),
            Some(_) => ODataError::new(
                Status::Forbidden,
                "forbidden",
                "this token was not given this set",
            ),
        }
    }

    /// 403: the session must choose a new password first (its password is
    /// in the breached-password file).
    pub fn password_change_required() -> ODataError {
        ODataError::new(
            Status::Forbidden,
            "password_change_required",
            "choose a new password first: /login/change-password",
        )
    }

    /// 400 about the key segment of the path.
    pub fn invalid_key(message: impl Into<String>) -> ODataError {
        ODataError::new(Status::BadRequest, "invalid_key", message)
    }

    /// 503: the statement ran past `odata.statement_timeout_ms` and was
    /// cancelled.
    pub fn query_timeout() -> ODataError {
        tracing::warn!("odata statement cancelled: it ran past the statement timeout");
        ODataError::new(
            Status::ServiceUnavailable,
            "query_timeout",
            "the query ran longer than this server allows; narrow it with $filter or $top",
        )
    }

    /// 503: the database cannot be reached right now; the cause is logged.
    pub fn unavailable(cause: &dyn std::fmt::Display) -> ODataError {
        tracing::error!("odata request failed: the database cannot be reached: {cause}");
        ODataError::new(
            Status::ServiceUnavailable,
            "server_error",
            "the database cannot be reached right now; try again shortly",
        )
    }

    /// 400: the query computes a value the database cannot represent (a
    /// data exception, SQLSTATE class 22), without the engine's words.
    pub fn data_exception(cause: &dyn std::fmt::Display) -> ODataError {
        tracing::info!("odata query refused by the database: {cause}");
        ODataError::new(
            Status::BadRequest,
            "invalid_value",
            "the query computes a value the database cannot represent \
             (such as a division by zero or a number out of range)",
        )
    }

    /// The client stopped reading a streamed body (it went away, or took
    /// nothing for too long): the read is abandoned. Nobody receives it.
    pub fn client_gone() -> ODataError {
        tracing::info!("odata read abandoned: the client stopped reading the body");
        ODataError::new(
            Status::RequestTimeout,
            "client_gone",
            "the client stopped reading the answer",
        )
    }

    /// 500 with nothing of the cause; the cause is logged.
    pub fn internal(cause: &dyn std::fmt::Display) -> ODataError {
        tracing::error!("odata request failed: {cause}");
        ODataError::new(
            Status::InternalServerError,
            "internal_error",
            "the request could not be answered",
        )
    }
}

impl From<ParseError> for ODataError {
    fn from(e: ParseError) -> ODataError {
        let target = (!e.option.is_empty()).then(|| e.option.clone());
        ODataError {
            target,
            ..ODataError::new(Status::BadRequest, "invalid_query", e.to_string())
        }
    }
}

impl From<QueryError> for ODataError {
    fn from(e: QueryError) -> ODataError {
        if e.code == "model_error" {
            return ODataError::internal(&e.message);
        }
        if e.code == "unauthorized" {
            return ODataError {
                message: e.message,
                ..ODataError::unauthorized()
            };
        }
        ODataError {
            target: Some(e.target),
            ..ODataError::new(Status::BadRequest, e.code, e.message)
        }
    }
}

impl From<PathError> for ODataError {
    fn from(e: PathError) -> ODataError {
        match e {
            PathError::NotFound => ODataError::not_found("no resource lives at this path"),
            PathError::InvalidKey { message, .. } => ODataError::invalid_key(message),
        }
    }
}

impl From<sqlx::Error> for ODataError {
    fn from(e: sqlx::Error) -> ODataError {
        ODataError::failed(crate::db::failure(&e), &e)
    }
}

impl From<crate::db::ReadError> for ODataError {
    fn from(e: crate::db::ReadError) -> ODataError {
        ODataError::failed(e.failure(), &e)
    }
}

impl ODataError {
    /// The answer to a failed statement: 503 `query_timeout` past the
    /// statement timeout, 503 `server_error` while the database cannot be
    /// reached, 400 `invalid_value` for a data exception (SQLSTATE class
    /// 22: division by zero, a value out of range, a character the engine
    /// cannot store: the query's fault, answered without the engine's
    /// words), else a 500.
    fn failed(failure: crate::db::ReadFailure, cause: &dyn std::fmt::Display) -> ODataError {
        use crate::db::ReadFailure;
        match failure {
            ReadFailure::Timeout => ODataError::query_timeout(),
            ReadFailure::Unavailable => ODataError::unavailable(cause),
            ReadFailure::DataException => ODataError::data_exception(cause),
            ReadFailure::Other => ODataError::internal(cause),
        }
    }
}
