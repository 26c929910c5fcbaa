//! From a raw query string to a [`Query`]: splitting on `&`, percent-decoding
//! (`+` is a space), refusing unknown or repeated `$`-options, and handing
//! each option's value to its parser. Non-`$` parameters are kept aside.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

use crate::odata::query::apply::parse_apply;
use crate::odata::query::error::ParseError;
use crate::odata::query::expand::{parse_expand, ExpandBudget};
use crate::odata::query::filter::parse_expr;
use crate::odata::query::items::{non_negative, parse_orderby, parse_select};
use crate::odata::query::search::parse_search_expr;
use crate::odata::query::syntax::{Format, Query};

/// The longest `$skiptoken` accepted, and the longest written; a row whose values make a longer one gets a
/// next link without a token, paged by `$skip` alone.
pub const MAX_SKIPTOKEN_LENGTH: usize = 512;

/// The longest query string accepted, in bytes: as sent (before decoding),
/// and as next links write it (percent-encoded, see
/// [`Query::to_query_string`]) with room for their `$top` and `$skip`.
pub const MAX_QUERY_LENGTH: usize = 8 * 1024;

/// Room kept within [`MAX_QUERY_LENGTH`] for the `$top`, `$skip` and
/// `$skiptoken` a next link writes: each number a `u64` (at most 20 digits)
/// and the token at most [`MAX_SKIPTOKEN_LENGTH`], each after `&` and its
/// name.
const PAGING_ROOM: usize =
    "&$top=".len() + 20 + "&$skip=".len() + 20 + "&$skiptoken=".len() + MAX_SKIPTOKEN_LENGTH;

/// Parses a request's query string (with or without its leading `?`).
///
/// ```
/// use gatehouse::odata::{parse_query, Select};
/// let q = parse_query("$select=id,name&$orderby=name%20desc&$count=true&lang=de").unwrap();
/// assert_eq!(q.select.unwrap().to_string(), "id,name");
/// assert!(q.orderby[0].descending);
/// assert!(q.count);
/// assert_eq!(q.extra, vec![("lang".to_string(), "de".to_string())]);
/// assert_eq!(parse_query("$top=1&$top=2").unwrap_err().message, "repeated query option");
/// ```
pub fn parse_query(raw: &str) -> Result<Query, ParseError> {
    let raw = raw.strip_prefix('?').unwrap_or(raw);
    if raw.len() > MAX_QUERY_LENGTH {
        let msg = format!("query string is longer than {MAX_QUERY_LENGTH} bytes");
        return Err(ParseError::new("", MAX_QUERY_LENGTH, msg));
    }
    let mut query = Query::default();
    let mut seen: Vec<String> = Vec::new();
    let mut budget = ExpandBudget::default();
    for part in raw.split('&').filter(|p| !p.is_empty()) {
        let (raw_name, raw_value) = part.split_once('=').unwrap_or((part, ""));
        let name = decode(raw_name).unwrap_or_else(|| lossy(raw_name));
        if !name.starts_with('$') {
            let value = decode(raw_value).unwrap_or_else(|| lossy(raw_value));
            query.extra.push((name, value));
            continue;
        }
        if seen.contains(&name) {
            return Err(ParseError::new(&name, 0, "repeated query option"));
        }
        let value = decode(raw_value)
            .ok_or_else(|| ParseError::new(&name, 0, "not valid UTF-8 once percent-decoded"))?;
        apply_option(&mut query, &name, &value, None, &mut budget)
            .map_err(|e| e.in_chars(&value))?;
        seen.push(name);
    }
    check_printed_length(&query)?;
    Ok(query)
}

/// Refuses a query whose next links could not be followed. A next link
/// carries the query as [`Query::to_query_string`] prints it, with `$top`,
/// `$skip` and `$skiptoken` of its own, and that can be longer than what was
/// sent: characters sent raw or as `+` print as `%XX` (three bytes for one),
/// an undecodable `%zz` as `%25zz`, and `$search` words side by side print
/// with ` AND ` between them. So the printed form, leaving out the paging
/// options but keeping room for them, must fit in [`MAX_QUERY_LENGTH`] too; then
/// every link written for an accepted query is accepted, and prints the same.
/// The option with the longest printed form is named as the one at fault.
fn check_printed_length(query: &Query) -> Result<(), ParseError> {
    let limit = MAX_QUERY_LENGTH - PAGING_ROOM;
    let parameters = query.encoded_parameters();
    let kept: Vec<&(String, String)> = parameters
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "$top" | "$skip" | "$skiptoken"))
        .collect();
    let separators = kept.len().saturating_sub(1);
    let printed = kept.iter().map(|(_, p)| p.len()).sum::<usize>() + separators;
    if printed <= limit {
        return Ok(());
    }
    let culprit = kept
        .iter()
        .max_by_key(|(_, p)| p.len())
        .map_or("", |(name, _)| name.as_str());
    let message = format!(
        "percent-encoded as next links write it, the query string (without $top, \
         $skip and $skiptoken) is {printed} bytes; at most {limit} are allowed"
    );
    Err(ParseError::new(culprit, 0, message))
}

fn plus_as_space(raw: &str) -> Cow<'_, str> {
    if raw.contains('+') {
        Cow::Owned(raw.replace('+', " "))
    } else {
        Cow::Borrowed(raw)
    }
}

fn decode(raw: &str) -> Option<String> {
    let spaced = plus_as_space(raw);
    percent_decode_str(&spaced)
        .decode_utf8()
        .ok()
        .map(Cow::into_owned)
}

fn lossy(raw: &str) -> String {
    percent_decode_str(&plus_as_space(raw))
        .decode_utf8_lossy()
        .into_owned()
}

/// Sets option `name` of an expanded navigation's `query`, `depth` levels
/// down.
fn nested_option(
    query: &mut Query,
    name: &str,
    value: &str,
    depth: usize,
    budget: &mut ExpandBudget,
) -> Result<(), ParseError> {
    apply_option(query, name, value, Some(depth), budget)
}

/// Sets option `name` of `query` from its decoded `value`. `nested_depth` is
/// `Some(depth)` inside `$expand`, where fewer options are allowed. Errors
/// name `name` and carry byte positions within `value`.
fn apply_option(
    query: &mut Query,
    name: &str,
    value: &str,
    nested_depth: Option<usize>,
    budget: &mut ExpandBudget,
) -> Result<(), ParseError> {
    match name {
        "$top" => query.top = Some(non_negative(name, value)?),
        "$skip" => query.skip = Some(non_negative(name, value)?),
        "$skiptoken" if nested_depth.is_none() => {
            if value.len() > MAX_SKIPTOKEN_LENGTH {
                let message = format!("longer than {MAX_SKIPTOKEN_LENGTH} bytes");
                return Err(ParseError::new(name, 0, message));
            }
            query.skiptoken = Some(value.to_owned());
        }
        "$count" => {
            query.count = match value {
                "true" => true,
                "false" => false,
                _ => return Err(ParseError::new(name, 0, "must be true or false")),
            }
        }
        "$apply" if nested_depth.is_none() => query.apply = Some(parse_apply(value)?),
        "$filter" => query.filter = Some(parse_expr(value, name)?),
        "$search" => query.search = Some(parse_search_expr(value, name)?),
        "$orderby" => query.orderby = parse_orderby(value, name)?,
        "$select" => query.select = Some(parse_select(value, name)?),
        "$expand" => {
            let depth = nested_depth.unwrap_or(0);
            query.expand = parse_expand(value, depth, budget, nested_option)?;
        }
        "$format" if nested_depth.is_none() => {
            let json = value == "json"
                || value == "application/json"
                || value.starts_with("application/json;");
            if !json {
                return Err(ParseError::new(name, 0, "only json is supported"));
            }
            query.format = Some(if asks_ieee754(value) {
                Format::JsonIeee754
            } else {
                Format::Json
            });
        }
        _ if nested_depth.is_some() => {
            return Err(ParseError::new(name, 0, "not allowed inside $expand"));
        }
        _ => return Err(ParseError::new(name, 0, "unknown query option")),
    }
    Ok(())
}

/// Whether a media type (`Accept`, `Content-Type`, `$format`) carries the
/// parameter `IEEE754Compatible=true` (names and values in any case).
pub fn asks_ieee754(media_type: &str) -> bool {
    media_type.split([';', ',']).any(|parameter| {
        parameter.split_once('=').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("IEEE754Compatible")
                && value.trim().trim_matches('"').eq_ignore_ascii_case("true")
        })
    })
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
