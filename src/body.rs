//! Request bodies: JSON or form-urlencoded, read into one field bag.
//!
//! Every endpoint takes the same field names in either encoding. [`Input`]
//! reads the body within Rocket's `limits` (`json`, `form`), answers 400
//! `malformed_body` for anything unparsable and 413 over the limit, and hands
//! out fields typed so that validation codes are uniform across endpoints.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::http::Status;
use rocket::request::Request;
use serde_json::Value;

use crate::auth::new_password::NewPasswords;
use crate::domain::{Email, Password};
use crate::error::{AuthError, FieldErrors};

/// The fields of a JSON or form body.
#[derive(Debug, Clone, Default)]
pub struct Input {
    fields: HashMap<String, Value>,
    is_form: bool,
}

/// Why a body could not be read; stored for the catcher.
#[derive(Debug, Clone, Copy)]
pub enum BodyError {
    /// Unparsable body or unsupported content type.
    Malformed,
    /// Body over the configured limit.
    TooLarge,
}

impl From<BodyError> for AuthError {
    fn from(e: BodyError) -> Self {
        match e {
            BodyError::Malformed => AuthError::MalformedBody,
            BodyError::TooLarge => AuthError::PayloadTooLarge,
        }
    }
}

#[rocket::async_trait]
impl<'r> FromData<'r> for Input {
    type Error = BodyError;

    async fn from_data(req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        let ct = req.content_type();
        let (is_form, limit_name) = match ct {
            Some(ct) if ct.is_json() => (false, "json"),
            Some(ct) if ct.is_form() => (true, "form"),
            _ => return fail(req, BodyError::Malformed),
        };
        let limit = req.limits().get(limit_name).unwrap_or(if is_form {
            32.kibibytes()
        } else {
            1.mebibytes()
        });
        let text = match read_text(data, limit).await {
            Ok(text) => text,
            Err(error) => return fail(req, error),
        };
        let parsed = if is_form {
            let input = Self::from_form(&text);
            req.local_cache(|| OldInput::of(&input));
            Some(input)
        } else {
            Self::from_json(&text)
        };
        match parsed {
            Some(input) => Outcome::Success(input),
            None => fail(req, BodyError::Malformed),
        }
    }
}

/// The body as text, whole, within `limit`.
pub(crate) async fn read_text(data: Data<'_>, limit: rocket::data::ByteUnit) -> Result<String, BodyError> {
    match data.open(limit).into_string().await {
        Ok(text) if text.is_complete() => Ok(text.into_inner()),
        Ok(_) => Err(BodyError::TooLarge),
        Err(_) => Err(BodyError::Malformed),
    }
}

/// The fields a screen may show again after a failed form post: never a
/// password or a token.
#[derive(Debug, Clone, Default)]
pub struct OldInput(pub serde_json::Map<String, Value>);

impl OldInput {
    const KEPT: [&'static str; 7] = [
        "email",
        "org_name",
        "billing_email",
        "name",
        "scope",
        "expires_days",
        "user_code",
    ];

    /// The kept fields given once (a repeated one is a list, which no
    /// screen shows again).
    fn of(input: &Input) -> Self {
        let kept = Self::KEPT
            .iter()
            .filter_map(|name| {
                input
                    .fields
                    .get(*name)
                    .filter(|v| v.is_string())
                    .map(|v| ((*name).to_owned(), v.clone()))
            })
            .collect();
        Self(kept)
    }
}

fn fail<'r>(req: &'r Request<'_>, error: BodyError) -> Outcome<'r, Input> {
    req.local_cache(|| Some(error));
    let status = match error {
        BodyError::Malformed => Status::BadRequest,
        BodyError::TooLarge => Status::PayloadTooLarge,
    };
    Outcome::Error((status, error))
}

impl Input {
    /// A form's fields: a key given once is its text, a key repeated (the
    /// checked boxes of one name) the array of its texts, as JSON would
    /// send a list.
    fn from_form(text: &str) -> Self {
        let mut fields = HashMap::new();
        for (key, value) in url::form_urlencoded::parse(text.as_bytes()) {
            let value = Value::String(value.into_owned());
            match fields.entry(key.into_owned()) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(mut slot) => match slot.get_mut() {
                    Value::Array(values) => values.push(value),
                    first => {
                        let first_value = first.take();
                        *first = Value::Array(vec![first_value, value]);
                    }
                },
            }
        }
        Self {
            fields,
            is_form: true,
        }
    }

    fn from_json(text: &str) -> Option<Self> {
        match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(map) => Some(Self {
                fields: map.into_iter().collect(),
                is_form: false,
            }),
            _ => None,
        }
    }

    /// Builds a bag from JSON-like pairs (for the crate's tests and fuzz
    /// targets).
    #[cfg(any(test, feature = "internals"))]
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, Value)>,
        is_form: bool,
    ) -> Self {
        Self {
            fields: pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            is_form,
        }
    }

    /// Whether the body was form-urlencoded (a screen without JavaScript).
    pub fn is_form(&self) -> bool {
        self.is_form
    }

    /// Whether the body carries the field `name` at all, even empty (a
    /// JSON `null` is no field).
    pub fn carries(&self, name: &str) -> bool {
        !matches!(self.fields.get(name), None | Some(Value::Null))
    }

    /// Whether the body names the field `name` at all, even as JSON `null`
    /// (which [`Self::carries`] takes for no field).
    pub fn names(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    /// Whether the field `name` is exactly the text `value` (a form's named
    /// choice, such as `none`).
    pub fn is_text(&self, name: &str, value: &str) -> bool {
        self.fields.get(name).and_then(Value::as_str) == Some(value)
    }

    /// A list of names: a JSON array of strings, or a form field of names
    /// split at commas and spaces. `None` when absent or null; anything
    /// else, or a name with a control character, records `in`.
    pub fn list(&self, name: &str, errors: &mut FieldErrors) -> Option<Vec<String>> {
        let items: Vec<String> = match self.fields.get(name)? {
            Value::Null => return None,
            Value::Array(items) => {
                let texts: Option<Vec<String>> =
                    items.iter().map(|v| v.as_str().map(str::to_owned)).collect();
                match texts {
                    Some(texts) => texts,
                    None => {
                        errors.add(name, "in");
                        return None;
                    }
                }
            }
            Value::String(text) if self.is_form => text
                .split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => {
                errors.add(name, "in");
                return None;
            }
        };
        if items.iter().any(|item| item.chars().any(char::is_control)) {
            errors.add(name, "in");
            return None;
        }
        Some(items)
    }

    /// A text field: `None` when absent, null or empty. A JSON value that is
    /// not a string records `string`; NUL or another control character
    /// records `invalid` (no such text reaches the database).
    pub fn text(&self, name: &str, errors: &mut FieldErrors) -> Option<String> {
        self.string(name, errors, char::is_control)
    }

    /// A JSON object field (a WebAuthn credential): `None` when absent or
    /// null; anything but an object records `object`.
    pub fn object(&self, name: &str, errors: &mut FieldErrors) -> Option<Value> {
        match self.fields.get(name) {
            None | Some(Value::Null) => None,
            Some(value @ Value::Object(_)) => Some(value.clone()),
            Some(_) => {
                errors.add(name, "object");
                None
            }
        }
    }

    /// A required text field; records `required` when absent or blank.
    pub fn required_text(&self, name: &str, errors: &mut FieldErrors) -> Option<String> {
        let before = errors.count(name);
        let text = self.text(name, errors);
        Self::required(name, text, before, errors)
    }

    /// A required password, taken exactly as typed: only NUL is refused
    /// (`invalid`); any other character may be part of a password.
    pub fn required_password(&self, name: &str, errors: &mut FieldErrors) -> Option<String> {
        let before = errors.count(name);
        let text = self.string(name, errors, |c| c == '\0');
        Self::required(name, text, before, errors)
    }

    /// A new password under `rules`, confirmed by
    /// `password_confirmation`: codes go on `password` (`required`,
    /// `confirmed`, the rules' rejection). `hints` are words the password
    /// must not be built on (the address).
    pub fn new_password(
        &self,
        rules: &NewPasswords,
        hints: &[&str],
        errors: &mut FieldErrors,
    ) -> Option<Password> {
        let raw = self.required_password("password", errors)?;
        let confirmation = self.password("password_confirmation", errors);
        if confirmation.as_deref() != Some(raw.as_str()) {
            errors.add("password", "confirmed");
        }
        match rules.check(raw, hints) {
            Ok(password) => Some(password),
            Err(rejection) => {
                errors.add("password", rejection.code());
                None
            }
        }
    }

    /// [`Input::new_password`], or 422 `validation_failed` with the codes
    /// of every field that failed.
    pub fn valid_new_password(
        &self,
        rules: &NewPasswords,
        hints: &[&str],
    ) -> Result<Password, AuthError> {
        let mut errors = FieldErrors::new();
        let password = self.new_password(rules, hints, &mut errors);
        password
            .filter(|_| errors.is_empty())
            .ok_or(AuthError::Validation(errors))
    }

    /// An optional password field (a confirmation), refusing only NUL.
    pub fn password(&self, name: &str, errors: &mut FieldErrors) -> Option<String> {
        self.string(name, errors, |c| c == '\0')
    }

    fn string(
        &self,
        name: &str,
        errors: &mut FieldErrors,
        refused: impl Fn(char) -> bool,
    ) -> Option<String> {
        match self.fields.get(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) if s.chars().any(refused) => {
                errors.add(name, "invalid");
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                errors.add(name, "string");
                None
            }
        }
    }

    /// `text` when it is not blank; else records `required`, unless reading
    /// the field recorded an error already (`before` codes were there then).
    fn required(
        name: &str,
        text: Option<String>,
        before: usize,
        errors: &mut FieldErrors,
    ) -> Option<String> {
        match text {
            Some(s) if !s.trim().is_empty() => Some(s),
            _ => {
                if errors.count(name) == before {
                    errors.add(name, "required");
                }
                None
            }
        }
    }

    /// An optional e-mail address: `None` when absent or blank; records
    /// `email` when present but not an address.
    pub fn email(&self, name: &str, errors: &mut FieldErrors) -> Option<Email> {
        self.text(name, errors)
            .and_then(|raw| Self::parse_email(name, &raw, errors))
    }

    /// A required e-mail address: records `required` when absent or blank,
    /// `email` when not an address.
    pub fn required_email(&self, name: &str, errors: &mut FieldErrors) -> Option<Email> {
        self.required_text(name, errors)
            .and_then(|raw| Self::parse_email(name, &raw, errors))
    }

    fn parse_email(name: &str, raw: &str, errors: &mut FieldErrors) -> Option<Email> {
        let parsed = Email::parse(raw);
        if parsed.is_none() {
            errors.add(name, "email");
        }
        parsed
    }

    /// A boolean: JSON `true`/`false`; forms `on`/`true`/`1` and
    /// `off`/`false`/`0`. Absent is `false`; anything else records `in`.
    pub fn boolean(&self, name: &str, errors: &mut FieldErrors) -> bool {
        match self.fields.get(name) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if self.is_form => match s.as_str() {
                "on" | "true" | "1" => true,
                "" | "off" | "false" | "0" => false,
                _ => {
                    errors.add(name, "in");
                    false
                }
            },
            Some(_) => {
                errors.add(name, "in");
                false
            }
        }
    }

    /// An integer: a JSON number, or decimal digits in a form. Absent is
    /// `None`; anything else records `in`.
    pub fn integer(&self, name: &str, errors: &mut FieldErrors) -> Option<i64> {
        match self.fields.get(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if self.is_form && s.is_empty() => None,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
            Some(Value::String(s)) if self.is_form => match s.parse() {
                Ok(n) => Some(n),
                Err(_) => {
                    errors.add(name, "in");
                    None
                }
            },
            Some(_) => {
                errors.add(name, "in");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_form_key_is_a_list_as_in_json() {
        let input = Input::from_form("sets=Users&name=CI&sets=Organisations&sets=Employees");
        let mut errors = FieldErrors::new();
        assert_eq!(
            input.list("sets", &mut errors),
            Some(vec!["Users".into(), "Organisations".into(), "Employees".into()])
        );
        assert_eq!(input.text("name", &mut errors).as_deref(), Some("CI"));
        assert!(errors.is_empty());
        let once = Input::from_form("sets=Users");
        assert_eq!(once.list("sets", &mut errors), Some(vec!["Users".into()]));
    }

    #[test]
    fn a_repeated_key_read_as_one_value_is_refused_with_its_code() {
        let input = Input::from_form("name=a&name=b&password=x&password=y&n=1&n=2&on=1&on=0");
        let mut errors = FieldErrors::new();
        assert_eq!(input.text("name", &mut errors), None);
        assert_eq!(input.required_text("password", &mut errors), None);
        assert_eq!(input.integer("n", &mut errors), None);
        assert!(!input.boolean("on", &mut errors));
        assert_eq!(errors.count("name"), 1);
        assert_eq!(errors.count("password"), 1);
        assert_eq!(errors.count("n"), 1);
        assert_eq!(errors.count("on"), 1);
        let kept = OldInput::of(&input);
        assert!(!kept.0.contains_key("name"), "a list is not shown again");
    }
}
