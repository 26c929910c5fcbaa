//! `$skiptoken`: where a next link's page starts, as the order values and
//! key of the last row delivered, signed so that a client can neither alter
//! it nor carry it to another query.
//!
//! A token is the base64url of a JSON array of the values, a `.`, and the
//! base64url of the first 16 bytes of an HMAC-SHA256 over the query's
//! binding (its set, `$filter`, `$search` and `$orderby` as printed) and the
//! array, under a key derived from the application's `secret_key`. The
//! options outside the binding (`$select`, `$expand`, `$count`, `$top`, the
//! page size) may change between pages.
//!
//! ```
//! use gatehouse::odata::{parse_query, EdmType, Literal, SkipTokens};
//! let tokens = SkipTokens::derive(b"an application key of enough bytes");
//! let q = parse_query("$orderby=name").unwrap();
//! let values = [Literal::String("Ann".into()), Literal::Int(7)];
//! let types = [EdmType::String, EdmType::Int32];
//! let token = tokens.seal(&SkipTokens::binding("Users", &q), &values, &types).unwrap();
//! let back = tokens.open(&SkipTokens::binding("Users", &q), &token, &types).unwrap();
//! assert_eq!(back, values);
//! let other = parse_query("$orderby=name desc").unwrap();
//! assert!(tokens.open(&SkipTokens::binding("Users", &other), &token, &types).is_err());
//! ```

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use crate::odata::check::resolve::QueryError;
use crate::odata::model::sets::EdmType;
use crate::odata::query::options::MAX_SKIPTOKEN_LENGTH;
use crate::odata::query::syntax::{Guid, Literal, Query};

/// What the key is derived for.
const PURPOSE: &[u8] = b"gatehouse odata skiptoken v1";

/// Bytes of the signature a token carries.
const TAG_BYTES: usize = 16;

/// Signs and opens `$skiptoken`s. No `Debug` output of the key.
#[derive(Clone)]
pub struct SkipTokens {
    key: [u8; 32],
}

impl std::fmt::Debug for SkipTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SkipTokens(…)")
    }
}

impl SkipTokens {
    /// The token key of `secret_key` (the application's key material).
    pub fn derive(secret_key: &[u8]) -> SkipTokens {
        let mut key = [0u8; 32];
        // 32 bytes is far below HKDF-SHA256's limit of 8,160.
        let _ = Hkdf::<Sha256>::new(None, secret_key).expand(PURPOSE, &mut key);
        SkipTokens { key }
    }

    /// What a token of a request on the collection at `path` is bound to:
    /// the path, `$filter`, `$search` and `$orderby`.
    pub fn binding(path: &str, query: &Query) -> String {
        let mut binding = path.to_owned();
        for (name, value) in query.options() {
            if matches!(name, "$filter" | "$search" | "$orderby") {
                binding.push('\n');
                binding.push_str(name);
                binding.push('=');
                binding.push_str(&value);
            }
        }
        binding
    }

    /// The token for the row with `values` (of `types`) under `binding`;
    /// `None` when it would be longer than [`MAX_SKIPTOKEN_LENGTH`] or a
    /// value does not fit its type.
    pub fn seal(&self, binding: &str, values: &[Literal], types: &[EdmType]) -> Option<String> {
        let json: Vec<Value> = values
            .iter()
            .zip(types)
            .map(|(value, edm)| encode(value, *edm))
            .collect::<Option<_>>()?;
        let payload = serde_json::to_vec(&json).ok()?;
        let token = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(self.tag(binding, &payload))
        );
        (token.len() <= MAX_SKIPTOKEN_LENGTH).then_some(token)
    }

    /// The values `token` carries, one of each of `types`, when it was
    /// sealed under `binding` by this key; 400 with target `$skiptoken`
    /// when altered, made for another query or malformed.
    pub fn open(
        &self,
        binding: &str,
        token: &str,
        types: &[EdmType],
    ) -> Result<Vec<Literal>, QueryError> {
        let refused = |why: &str| {
            QueryError::new(
                "invalid_skiptoken",
                "$skiptoken",
                format!("the $skiptoken {why}; follow the next link as it was sent"),
            )
        };
        let (payload, tag) = token
            .split_once('.')
            .ok_or_else(|| refused("is not one this service writes"))?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| refused("is not one this service writes"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| refused("is not one this service writes"))?;
        if tag.len() != TAG_BYTES {
            return Err(refused("is not one this service writes"));
        }
        let mut mac = self.mac(binding);
        mac.update(&payload);
        mac.verify_truncated_left(&tag)
            .map_err(|_| refused("was altered or belongs to another query"))?;
        let values: Vec<Value> =
            serde_json::from_slice(&payload).map_err(|_| refused("is malformed"))?;
        if values.len() != types.len() {
            return Err(refused("is malformed"));
        }
        values
            .iter()
            .zip(types)
            .map(|(value, edm)| decode(value, *edm).ok_or_else(|| refused("is malformed")))
            .collect()
    }

    fn mac(&self, binding: &str) -> Hmac<Sha256> {
        // HMAC takes a key of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(binding.as_bytes());
        mac.update(&[0]);
        mac
    }

    fn tag(&self, binding: &str, payload: &[u8]) -> Vec<u8> {
        let mut mac = self.mac(binding);
        mac.update(payload);
        mac.finalize().into_bytes()[..TAG_BYTES].to_vec()
    }
}

/// A value as a token writes it: null, a boolean, an integer, or text. An
/// instant is written in RFC 3339 (UTC, `Z`) with every digit of its
/// fraction; a time of day as the text the row's column was read as, which
/// is what SQLite compares.
fn encode(value: &Literal, edm: EdmType) -> Option<Value> {
    Some(match (value, edm) {
        (Literal::Null, _) => Value::Null,
        (Literal::Boolean(b), EdmType::Boolean) => Value::Bool(*b),
        (Literal::Int(n), edm) if edm.is_integer() => Value::from(*n),
        (Literal::Int(n), EdmType::Decimal) => Value::String(n.to_string()),
        (Literal::Decimal(d), EdmType::Decimal) => Value::String(d.clone()),
        (Literal::Double(x), EdmType::Double | EdmType::Decimal) => {
            Value::String(ryu::Buffer::new().format_finite(*x).to_owned())
        }
        (Literal::String(s), EdmType::String) => Value::String(s.clone()),
        (Literal::Guid(_), EdmType::Guid) | (Literal::Date(_), EdmType::Date) => {
            Value::String(value.to_string())
        }
        (Literal::DateTimeOffset(t), EdmType::DateTimeOffset) => {
            Value::String(Literal::DateTimeOffset(t.to_offset(UtcOffset::UTC)).to_string())
        }
        (Literal::String(s), EdmType::TimeOfDay) if is_clock(s) => Value::String(s.clone()),
        _ => return None,
    })
}

/// A value written by [`encode`] for a property of type `edm`.
fn decode(value: &Value, edm: EdmType) -> Option<Literal> {
    Some(match (value, edm) {
        (Value::Null, _) => Literal::Null,
        (Value::Bool(b), EdmType::Boolean) => Literal::Boolean(*b),
        (Value::Number(n), edm) if edm.is_integer() => Literal::Int(n.as_i64()?),
        (Value::String(s), EdmType::Decimal) if decimal(s) => Literal::Decimal(s.clone()),
        (Value::String(s), EdmType::Double) => {
            Literal::Double(s.parse::<f64>().ok().filter(|x| x.is_finite())?)
        }
        (Value::String(s), EdmType::String) => Literal::String(s.clone()),
        (Value::String(s), EdmType::Guid) => {
            Literal::Guid(Guid(u128::from_str_radix(&s.replace('-', ""), 16).ok()?))
        }
        (Value::String(s), EdmType::Date) => {
            let format = time::macros::format_description!("[year]-[month]-[day]");
            Literal::Date(time::Date::parse(s, format).ok()?)
        }
        (Value::String(s), EdmType::DateTimeOffset) if s.ends_with('Z') => {
            Literal::DateTimeOffset(OffsetDateTime::parse(s, &Rfc3339).ok()?)
        }
        (Value::String(s), EdmType::TimeOfDay) if is_clock(s) => Literal::String(s.clone()),
        _ => return None,
    })
}

/// Whether `s` is a time of day as an engine writes one: hours (up to three
/// digits, after a `-` for MySQL's negative times), `:` and minutes, then
/// optionally `:` and seconds with a fraction of up to nine digits.
fn is_clock(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let digits = |part: &str, counts: std::ops::RangeInclusive<usize>| {
        counts.contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit())
    };
    let (clock, fraction) = match s.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (s, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let shape = match parts.as_slice() {
        [h, m] => fraction.is_none() && digits(h, 1..=3) && digits(m, 2..=2),
        [h, m, s] => digits(h, 1..=3) && digits(m, 2..=2) && digits(s, 2..=2),
        _ => false,
    };
    shape && fraction.is_none_or(|f| digits(f, 1..=9))
}

/// Whether `s` is a decimal numeral: digits, at most one point, an optional
/// sign, an optional exponent.
fn decimal(s: &str) -> bool {
    let mantissa = s.split(['e', 'E']).next().unwrap_or("");
    let digits = mantissa.trim_start_matches('-');
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().filter(|b| *b == b'.').count() <= 1
        && s.parse::<f64>().is_ok()
}

#[cfg(test)]
#[path = "skiptoken_tests.rs"]
mod tests;
