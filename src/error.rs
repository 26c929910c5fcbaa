//! The one error type of the HTTP boundary and its mapping to the wire shapes.
//!
//! Handlers return `Result<_, AuthError>`; [`AuthError`]'s `Responder` is the
//! only place that decides status codes and bodies. A JSON caller gets the JSON
//! shape of DESIGN.md; a form post from a screen gets a 303 back to that screen
//! with the message kept in the session's flash.

use std::collections::BTreeMap;

use rocket::http::{ContentType, Header, Status};
use rocket::request::Request;
use rocket::response::{self, Responder};
use rocket::serde::json::Json;
use serde_json::{json, Value};

use crate::auth::two_factor::TwoFactorError;
use crate::auth::passkeys::PasskeyError;
use crate::auth::second_step::SecondStepError;

use crate::security::loggable;

/// Seconds a client is asked to wait while the database cannot be reached.
pub const RETRY_WHILE_UNAVAILABLE: u64 = 5;

/// Validation codes per field, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `code` against `field`.
    pub fn add(&mut self, field: &str, code: &str) {
        self.0
            .entry(field.to_owned())
            .or_default()
            .push(code.to_owned());
    }

    /// How many codes `field` has.
    pub fn count(&self, field: &str) -> usize {
        self.0.get(field).map_or(0, Vec::len)
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The codes as a JSON object `{field: [codes]}`.
    pub fn to_json(&self) -> Value {
        json!(self.0)
    }

    /// A single-field error set.
    pub fn single(field: &str, code: &str) -> Self {
        let mut errors = Self::new();
        errors.add(field, code);
        errors
    }

    /// `Ok(())` when empty, else a validation error carrying these codes.
    pub fn into_result(self) -> Result<(), AuthError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(AuthError::Validation(self))
        }
    }
}

/// Everything a Gatehouse endpoint can answer besides success.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The body is not valid JSON or form data (400 `malformed_body`).
    #[error("malformed request body")]
    MalformedBody,
    /// A state-changing request from another site (403 `cross_origin`).
    #[error("cross-origin request refused")]
    CrossOrigin,
    /// The body exceeds the configured limit (413).
    #[error("request body too large")]
    PayloadTooLarge,
    /// Missing or malformed fields (422 `validation_failed`).
    #[error("validation failed")]
    Validation(FieldErrors),
    /// Wrong email or password (422 `credentials_do_not_match`).
    #[error("credentials do not match")]
    Credentials,
    /// Too many attempts for this key (429 `auth_throttle`).
    #[error("too many attempts; retry in {retry_after} s")]
    Throttled {
        /// Seconds until the window closes.
        retry_after: u64,
    },
    /// Bad, used or expired reset token, or wrong address (422 `reset_failed`).
    #[error("reset failed")]
    ResetFailed,
    /// The caller is not signed in (401 `unauthenticated`).
    #[error("unauthenticated")]
    Unauthenticated,
    /// The session must choose a new password first: its password was
    /// found in the breached-password file (403 `password_change_required`;
    /// a browser asking for a page goes to the change screen).
    #[error("a new password is required first")]
    PasswordChangeRequired,
    /// A request refused for a reason its code names (422 with `message`:
    /// `oidc_already_linked`, `last_sign_in_method`; `oidc_unavailable` is
    /// 503).
    #[error("refused: {0}")]
    Refused(&'static str),
    /// An account without a password must prove who it is afresh first
    /// (422 `reauth_required` with the ways to do it: `oidc:<name>`).
    #[error("a fresh proof of who this is is required")]
    ReauthRequired {
        /// The ways to give it.
        methods: Vec<String>,
    },
    /// A device-bound session's proof was refused (401
    /// `device_proof_refused`).
    #[error("device proof refused")]
    DeviceProofRefused,
    /// A bound session's sensitive change needs a bound cookie under a
    /// minute old: 307 back to the same request (`device_proof_required`);
    /// the route expires the bound cookie, which a DBSC browser answers by
    /// proving its key first.
    #[error("a fresh device proof is required")]
    DeviceProofRequired,
    /// Nothing of the caller's has this id (404 `not_found`).
    #[error("not found")]
    NotFound,
    /// A wrong or replayed two-factor code (422 `two_factor_failed`).
    #[error("two-factor code not accepted")]
    TwoFactorFailed,
    /// A passkey was not accepted (422 `passkey_failed`).
    #[error("passkey not accepted")]
    PasskeyFailed,
    /// Two-factor sign-in is not in the state the request needs (422 with
    /// the code: `two_factor_already_enabled`, `two_factor_not_enabled`).
    #[error("two-factor sign-in: {0}")]
    TwoFactorState(&'static str),
    /// `POST /auth/intents/<kind>` for a kind that does not exist (404).
    #[error("unknown intent")]
    UnknownIntent,
    /// The host bound no handler for an intent kind answered on a screen
    /// (500 `<kind>_handler_missing`, as `org_setup_handler_missing`).
    #[error("no {handler} is bound")]
    IntentHandlerMissing {
        /// The kind's wire name (`org_setup`).
        kind: &'static str,
        /// The handler trait (`OrgSetupHandler`).
        handler: &'static str,
        /// The `Gatehouse` method that binds one (`org_setup`).
        builder: &'static str,
    },
    /// Sign-in is at capacity: `auth.hash_queue` sign-ins already wait for a
    /// hash (503 `busy`, `Retry-After: 1`).
    #[error("too many sign-ins waiting for a password hash")]
    Busy,
    /// The database could not be reached before the handler ran (503
    /// `server_error` with `Retry-After`); the cause was logged where seen.
    #[error("the database cannot be reached")]
    Unavailable,
    /// A database failure; the detail is logged, never sent. 503 with
    /// `Retry-After` while the database cannot be reached, else 500.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// Any other server-side failure; the detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
}

impl AuthError {
    /// HTTP status of this error.
    pub fn status(&self) -> Status {
        match self {
            Self::MalformedBody => Status::BadRequest,
            Self::CrossOrigin | Self::PasswordChangeRequired => Status::Forbidden,
            Self::PayloadTooLarge => Status::PayloadTooLarge,
            Self::Refused("oidc_unavailable") => Status::ServiceUnavailable,
            Self::Validation(_)
            | Self::Refused(_)
            | Self::ReauthRequired { .. }
            | Self::Credentials
            | Self::ResetFailed
            | Self::TwoFactorFailed
            | Self::PasskeyFailed
            | Self::TwoFactorState(_) => {
                Status::UnprocessableEntity
            }
            Self::Throttled { .. } => Status::TooManyRequests,
            Self::Unauthenticated | Self::DeviceProofRefused => Status::Unauthorized,
            Self::DeviceProofRequired => Status::TemporaryRedirect,
            Self::UnknownIntent | Self::NotFound => Status::NotFound,
            Self::Busy | Self::Unavailable => Status::ServiceUnavailable,
            Self::Database(e) if crate::db::is_unavailable(e) => Status::ServiceUnavailable,
            Self::IntentHandlerMissing { .. } | Self::Database(_) | Self::Internal(_) => {
                Status::InternalServerError
            }
        }
    }

    /// The JSON body of DESIGN.md's wire table.
    pub fn body(&self) -> Value {
        match self {
            Self::MalformedBody => json!({"message": "malformed_body"}),
            Self::CrossOrigin => json!({"message": "cross_origin"}),
            Self::PayloadTooLarge => json!({"message": "payload_too_large"}),
            Self::Validation(errors) => {
                json!({"message": "validation_failed", "errors": errors.to_json()})
            }
            Self::Credentials => json!({
                "message": "credentials_do_not_match",
                "errors": {"email": ["credentials_do_not_match"]}
            }),
            Self::Throttled { retry_after } => json!({
                "message": "auth_throttle",
                "errors": {"email": ["auth_throttle"]},
                "retry_after": retry_after
            }),
            Self::ResetFailed => json!({
                "message": "reset_failed",
                "errors": {"email": ["reset_failed"]}
            }),
            Self::Unauthenticated => json!({"message": "unauthenticated"}),
            Self::DeviceProofRefused => json!({"message": "device_proof_refused"}),
            Self::DeviceProofRequired => json!({"message": "device_proof_required"}),
            Self::PasswordChangeRequired => json!({"message": "password_change_required"}),
            Self::ReauthRequired { methods } => {
                json!({"message": "reauth_required", "methods": methods})
            }
            Self::UnknownIntent => json!({"message": "unknown_intent"}),
            Self::NotFound => json!({"message": "not_found"}),
            Self::TwoFactorState(code) | Self::Refused(code) => json!({"message": code}),
            Self::PasskeyFailed => json!({"message": "passkey_failed"}),
            Self::TwoFactorFailed => json!({
                "message": "two_factor_failed",
                "errors": {"code": ["two_factor_failed"]}
            }),
            Self::IntentHandlerMissing { kind, .. } => {
                json!({"message": format!("{kind}_handler_missing")})
            }
            Self::Busy => json!({"message": "busy"}),
            Self::Database(_) | Self::Internal(_) | Self::Unavailable => {
                json!({"message": "server_error"})
            }
        }
    }
}

impl From<TwoFactorError> for AuthError {
    /// What a route answers when the two-factor store refused.
    fn from(error: TwoFactorError) -> Self {
        match error {
            TwoFactorError::WrongCode => Self::TwoFactorFailed,
            TwoFactorError::NotEnrolled => Self::TwoFactorState("two_factor_not_enabled"),
            TwoFactorError::AlreadyEnabled => Self::TwoFactorState("two_factor_already_enabled"),
            TwoFactorError::Database(e) => Self::Database(e),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<PasskeyError> for AuthError {
    /// What a route answers when a passkey ceremony did not complete.
    fn from(error: PasskeyError) -> Self {
        match error {
            PasskeyError::Off => Self::NotFound,
            PasskeyError::Refused | PasskeyError::CounterWentBack { .. } => Self::PasskeyFailed,
            PasskeyError::Database(e) => Self::Database(e),
            PasskeyError::Record(e) => Self::Internal(e),
        }
    }
}

impl From<SecondStepError> for AuthError {
    /// What a route answers when an answer to the second step could not be
    /// checked.
    fn from(error: SecondStepError) -> Self {
        match error {
            SecondStepError::TwoFactor(e) => e.into(),
            SecondStepError::Passkey(e) => e.into(),
            SecondStepError::Database(e) => Self::Database(e),
        }
    }
}

impl<'r> Responder<'r, 'static> for AuthError {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        match &self {
            Self::Database(e) => {
                tracing::error!(error = %e, path = %loggable(req), "database failure")
            }
            Self::Internal(e) => {
                tracing::error!(error = %e, path = %loggable(req), "internal failure")
            }
            Self::IntentHandlerMissing {
                handler, builder, ..
            } => tracing::error!(
                "POST {}: no {handler} is bound; call Gatehouse::{builder}",
                req.uri().path()
            ),
            _ => {}
        }
        let retry_after = match &self {
            Self::Throttled { retry_after } => Some(*retry_after),
            Self::Busy => Some(1),
            Self::Database(_) | Self::Unavailable
                if self.status() == Status::ServiceUnavailable =>
            {
                Some(RETRY_WHILE_UNAVAILABLE)
            }
            _ => None,
        };
        let mut response = response::Response::build_from(Json(self.body()).respond_to(req)?)
            .status(self.status())
            .header(ContentType::JSON)
            .finalize();
        if let Some(seconds) = retry_after {
            response.set_header(Header::new("Retry-After", seconds.to_string()));
        }
        if let Self::DeviceProofRequired = self {
            response.set_header(Header::new("Location", req.uri().to_string()));
        }
        Ok(response)
    }
}
