//! What a script sends to the device authorization endpoints, read from
//! its form body (RFC 8628 §3.1 and §3.4, RFC 6749 §3.2), and the errors
//! those endpoints answer (RFC 6749 §5.2, RFC 8628 §3.5): every refusal is
//! one [`OAuthError`], never a panic.

use std::collections::BTreeMap;

/// The grant type of a device code's token request.
pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The scope that reads every set the approver may read.
pub const READ_ALL_SCOPE: &str = "odata:read";

/// The prefix of a scope that reads one set (`odata:read:Items`).
const READ_SET_SCOPE: &str = "odata:read:";

/// The most parameters a body may carry, and the longest value.
const MAX_PARAMETERS: usize = 16;
const MAX_VALUE_BYTES: usize = 2048;

/// The most sets one scope names.
const MAX_SETS: usize = 64;

/// An error of the device authorization endpoints, answered as RFC 6749's
/// JSON (`{"error", "error_description"}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A parameter is missing, repeated, unreadable or too long.
    #[error("{0}")]
    InvalidRequest(&'static str),
    /// The `client_id` is not one of `auth.device_clients`.
    #[error("unknown client")]
    InvalidClient,
    /// The device code is unknown, another client's, or redeemed.
    #[error("the device code is not valid")]
    InvalidGrant,
    /// A grant type other than the device code's.
    #[error("only the device code grant is supported")]
    UnsupportedGrantType,
    /// A scope Gatehouse does not give (or a set it does not serve).
    #[error("unknown scope")]
    InvalidScope,
    /// No answer yet.
    #[error("the user has not answered yet")]
    AuthorizationPending,
    /// Polled faster than the interval.
    #[error("polled too soon; wait the interval, plus five seconds")]
    SlowDown,
    /// The user denied the request.
    #[error("the user denied the request")]
    AccessDenied,
    /// The codes expired before an answer.
    #[error("the device code expired")]
    ExpiredToken,
}

impl OAuthError {
    /// The `error` code on the wire.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::InvalidScope => "invalid_scope",
            Self::AuthorizationPending => "authorization_pending",
            Self::SlowDown => "slow_down",
            Self::AccessDenied => "access_denied",
            Self::ExpiredToken => "expired_token",
        }
    }

    /// The body: `{"error", "error_description"}`.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": self.code(), "error_description": self.to_string()})
    }
}

/// A form body's parameters: each named once, none empty (RFC 6749 §3.1:
/// "parameters sent without a value MUST be treated as if they were
/// omitted"; "request and response parameters MUST NOT be included more
/// than once").
#[derive(Debug, Default)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// Reads a form-urlencoded `body`.
    pub fn parse(body: &str) -> Result<Self, OAuthError> {
        let mut params = BTreeMap::new();
        for (name, value) in url::form_urlencoded::parse(body.as_bytes()) {
            if value.is_empty() {
                continue;
            }
            if value.len() > MAX_VALUE_BYTES || value.chars().any(char::is_control) {
                return Err(OAuthError::InvalidRequest("a parameter is too long or unreadable"));
            }
            if params.len() == MAX_PARAMETERS {
                return Err(OAuthError::InvalidRequest("too many parameters"));
            }
            if params.insert(name.into_owned(), value.into_owned()).is_some() {
                return Err(OAuthError::InvalidRequest("a parameter is repeated"));
            }
        }
        Ok(Self(params))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    fn required(&self, name: &str, missing: &'static str) -> Result<&str, OAuthError> {
        self.get(name).ok_or(OAuthError::InvalidRequest(missing))
    }
}

/// `POST /auth/device/code`: who asks, and for which sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRequest {
    /// The client.
    pub client_id: String,
    /// The sets asked for, when only some (`None`: every set the approver
    /// may read).
    pub sets: Option<Vec<String>>,
}

impl CodeRequest {
    /// Reads `params`: `client_id` (required) and `scope` (absent:
    /// [`READ_ALL_SCOPE`]; else space-separated `odata:read` and
    /// `odata:read:<Set>`).
    pub fn of(params: &Params) -> Result<Self, OAuthError> {
        let client_id = params.required("client_id", "client_id is required")?;
        let sets = match params.get("scope") {
            None => None,
            Some(scope) => scoped_sets(scope)?,
        };
        Ok(Self {
            client_id: client_id.to_owned(),
            sets,
        })
    }
}

/// The sets `scope` names: `None` when it reads every set.
fn scoped_sets(scope: &str) -> Result<Option<Vec<String>>, OAuthError> {
    let mut sets = Vec::new();
    let mut every = false;
    for item in scope.split(' ').filter(|s| !s.is_empty()) {
        if item == READ_ALL_SCOPE {
            every = true;
        } else if let Some(set) = item.strip_prefix(READ_SET_SCOPE).filter(|s| !s.is_empty()) {
            sets.push(set.to_owned());
        } else {
            return Err(OAuthError::InvalidScope);
        }
    }
    if every || sets.is_empty() {
        return Ok(None);
    }
    if sets.len() > MAX_SETS {
        return Err(OAuthError::InvalidScope);
    }
    sets.sort();
    sets.dedup();
    Ok(Some(sets))
}

/// The scope a token reading `sets` is answered with.
pub fn scope_of(sets: Option<&[String]>) -> String {
    match sets {
        None => READ_ALL_SCOPE.to_owned(),
        Some(sets) => sets
            .iter()
            .map(|s| format!("{READ_SET_SCOPE}{s}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// `POST /auth/device/token`: the device code a client polls with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    /// The client.
    pub client_id: String,
    /// The device code, as presented.
    pub device_code: String,
}

impl TokenRequest {
    /// Reads `params`: `grant_type` (the device code's), `device_code` and
    /// `client_id` (public clients identify themselves in the body).
    pub fn of(params: &Params) -> Result<Self, OAuthError> {
        let grant_type = params.required("grant_type", "grant_type is required")?;
        if grant_type != GRANT_TYPE {
            return Err(OAuthError::UnsupportedGrantType);
        }
        let device_code = params.required("device_code", "device_code is required")?;
        let client_id = params.required("client_id", "client_id is required")?;
        Ok(Self {
            client_id: client_id.to_owned(),
            device_code: device_code.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_request(body: &str) -> Result<TokenRequest, OAuthError> {
        TokenRequest::of(&Params::parse(body)?)
    }

    #[test]
    fn a_token_request_names_the_grant_the_code_and_the_client() {
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=abc&client_id=cli";
        assert_eq!(
            token_request(body),
            Ok(TokenRequest {
                client_id: "cli".into(),
                device_code: "abc".into()
            })
        );
        let other = "grant_type=password&device_code=abc&client_id=cli";
        assert_eq!(token_request(other), Err(OAuthError::UnsupportedGrantType));
        let missing = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&client_id=cli";
        assert_eq!(token_request(missing).unwrap_err().code(), "invalid_request");
        let empty = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=&client_id=cli";
        assert_eq!(token_request(empty).unwrap_err().code(), "invalid_request");
        let twice = "client_id=cli&client_id=other";
        assert_eq!(Params::parse(twice).unwrap_err().code(), "invalid_request");
        assert_eq!(Params::parse("a=%00").unwrap_err().code(), "invalid_request");
    }

    #[test]
    fn a_scope_reads_every_set_or_the_sets_it_names() {
        let code = |body: &str| CodeRequest::of(&Params::parse(body).unwrap());
        assert_eq!(code("client_id=cli").unwrap().sets, None);
        assert_eq!(code("client_id=cli&scope=odata%3Aread").unwrap().sets, None);
        let some = code("client_id=cli&scope=odata%3Aread%3AOrders+odata%3Aread%3AItems").unwrap();
        assert_eq!(some.sets, Some(vec!["Items".to_owned(), "Orders".to_owned()]));
        assert_eq!(scope_of(some.sets.as_deref()), "odata:read:Items odata:read:Orders");
        assert_eq!(code("client_id=cli&scope=admin"), Err(OAuthError::InvalidScope));
        assert_eq!(code("client_id=cli&scope=odata%3Aread%3A"), Err(OAuthError::InvalidScope));
        assert_eq!(code("scope=odata%3Aread").unwrap_err().code(), "invalid_request");
    }
}
