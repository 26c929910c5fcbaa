//! The option values made of property paths and numbers, read from their
//! tokens: `$orderby` and `$select` lists, the paths `$expand` and
//! `$apply` name, and non-negative counts (`$top`, `$skip`, `top(n)`).

use crate::odata::query::error::ParseError;
use crate::odata::query::lexer::{tokenize, Token, TokenKind};
use crate::odata::query::syntax::{OrderItem, Path, Select};

pub(crate) fn non_negative(name: &str, value: &str) -> Result<u64, ParseError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::new(name, 0, "must be a non-negative integer"));
    }
    value
        .parse()
        .map_err(|_| ParseError::new(name, 0, "is too large"))
}

/// Reads comma-separated items from `value`'s tokens with `item`, which
/// returns the item or an error; rejects anything after the last item.
pub(crate) fn comma_list<T>(
    value: &str,
    option: &str,
    mut item: impl FnMut(&[Token], &mut usize) -> Result<T, ParseError>,
) -> Result<Vec<T>, ParseError> {
    let tokens = tokenize(value, option)?;
    let mut at = 0;
    let mut out = Vec::new();
    loop {
        out.push(item(&tokens, &mut at)?);
        let tok = &tokens[at.min(tokens.len() - 1)];
        match tok.kind {
            TokenKind::End => return Ok(out),
            TokenKind::Comma => at += 1,
            _ => {
                return Err(ParseError::new(
                    option,
                    tok.start,
                    "expected ',' or the end",
                ))
            }
        }
    }
}

/// A `/`-separated property path starting at `tokens[*at]`.
pub(crate) fn path(tokens: &[Token], at: &mut usize, option: &str) -> Result<Path, ParseError> {
    let mut segments = Vec::new();
    loop {
        let tok = &tokens[(*at).min(tokens.len() - 1)];
        match &tok.kind {
            TokenKind::Ident(name) if segments.is_empty() || !tok.space_before => {
                segments.push(name.clone());
                *at += 1;
            }
            _ => {
                return Err(ParseError::new(
                    option,
                    tok.start,
                    "expected a property name",
                ))
            }
        }
        let next = &tokens[(*at).min(tokens.len() - 1)];
        if next.kind != TokenKind::Slash || next.space_before {
            return Ok(Path(segments));
        }
        *at += 1;
    }
}

pub(crate) fn parse_orderby(value: &str, option: &str) -> Result<Vec<OrderItem>, ParseError> {
    comma_list(value, option, |tokens, at| {
        let path = path(tokens, at, option)?;
        let tok = &tokens[(*at).min(tokens.len() - 1)];
        let descending = match &tok.kind {
            TokenKind::Ident(w) if tok.space_before && (w == "asc" || w == "desc") => {
                *at += 1;
                w == "desc"
            }
            _ => false,
        };
        Ok(OrderItem { path, descending })
    })
}

pub(crate) fn parse_select(value: &str, option: &str) -> Result<Select, ParseError> {
    let items = comma_list(value, option, |tokens, at| {
        let tok = &tokens[(*at).min(tokens.len() - 1)];
        if tok.kind == TokenKind::Star {
            *at += 1;
            return Ok(None);
        }
        path(tokens, at, option).map(Some)
    })?;
    let stars = items.iter().filter(|i| i.is_none()).count();
    if stars > 0 && items.len() > 1 {
        let message = "'*' already selects every property; list nothing beside it";
        return Err(ParseError::new(option, 0, message));
    }
    let paths: Option<Vec<Path>> = items.into_iter().collect();
    Ok(paths.map_or(Select::All, Select::Paths))
}
