//! The `$apply` parser (OData Data Aggregation Extension 4.0): a sequence
//! of transformations separated by `/` — `filter(…)`, `search(…)`,
//! `groupby((paths)[,sequence])`, `aggregate(…)`, `orderby(…)`, `top(n)`,
//! `skip(n)` and `concat(sequence,…)` — each argument cut out with a scanner
//! that respects quotes and parentheses, then read by the same parsers as
//! the query options of the same name. Nesting and size are bounded; every
//! error names `$apply` and points into its value. Printing gives the
//! canonical text, which parses to the same tree.

use std::fmt::{self, Display, Formatter};

use crate::odata::query::apply_hierarchy::{related, top_levels, TOP_LEVELS};
use crate::odata::query::apply_scan::{closing, split_top};
use crate::odata::query::error::ParseError;
use crate::odata::query::filter::parse_expr;
use crate::odata::query::items::{non_negative, parse_orderby, path};
use crate::odata::query::lexer::{tokenize, TokenKind};
use crate::odata::query::search::parse_search_expr;
use crate::odata::query::syntax::{
    Aggregate, AggregateExpr, Apply, Direction, Method, Path, Transformation,
};

const OPTION: &str = "$apply";

/// How deeply `concat` and `groupby` may nest sequences.
pub const MAX_APPLY_DEPTH: usize = 4;
/// How many transformations one `$apply` may hold, all levels together.
pub const MAX_TRANSFORMATIONS: usize = 32;

/// The aggregation method called `name`.
fn method_of(name: &str) -> Option<Method> {
    [
        Method::Sum,
        Method::Min,
        Method::Max,
        Method::Average,
        Method::CountDistinct,
    ]
    .into_iter()
    .find(|m| m.name() == name)
}

/// Counts transformations across one `$apply`.
#[derive(Default)]
struct Budget {
    transformations: usize,
}

/// Parses a `$apply` value; errors name `$apply` and carry byte positions
/// within `value`.
///
/// ```
/// use gatehouse::odata::parse_query;
/// let q = parse_query("$apply=groupby((category),aggregate(price with sum as Total))").unwrap();
/// assert_eq!(
///     q.apply.unwrap().to_string(),
///     "groupby((category),aggregate(price with sum as Total))"
/// );
/// ```
pub(crate) fn parse_apply(value: &str) -> Result<Apply, ParseError> {
    sequence(value, 0, 0, &mut Budget::default())
}

/// A `/`-separated sequence in `text`, found at byte `offset` of the whole
/// value, `depth` levels inside `concat`, `groupby` or a hierarchy
/// function.
fn sequence(
    text: &str,
    offset: usize,
    depth: usize,
    budget: &mut Budget,
) -> Result<Apply, ParseError> {
    if depth > MAX_APPLY_DEPTH {
        let message = format!("nests more than {MAX_APPLY_DEPTH} levels");
        return Err(ParseError::new(OPTION, offset, message));
    }
    let mut steps = Vec::new();
    for (start, part) in split_top(text, b'/') {
        steps.push(transformation(part, offset + start, depth, budget)?);
    }
    Ok(Apply(steps))
}

/// One `name(arguments)` at byte `offset`.
fn transformation(
    text: &str,
    offset: usize,
    depth: usize,
    budget: &mut Budget,
) -> Result<Transformation, ParseError> {
    budget.transformations += 1;
    if budget.transformations > MAX_TRANSFORMATIONS {
        let message = format!("more than {MAX_TRANSFORMATIONS} transformations");
        return Err(ParseError::new(OPTION, offset, message));
    }
    let lead = text.len() - text.trim_start().len();
    let (text, offset) = (text.trim(), offset + lead);
    if text == "identity" {
        return Ok(Transformation::Identity);
    }
    let Some(open) = text.find('(') else {
        return Err(ParseError::new(
            OPTION,
            offset,
            "expected a transformation such as groupby(...)",
        ));
    };
    let name = &text[..open];
    if !text.ends_with(')') || closing(text, open) != Some(text.len() - 1) {
        return Err(ParseError::new(OPTION, offset + open, "missing ')'"));
    }
    let inner = &text[open + 1..text.len() - 1];
    let at = offset + open + 1;
    let context = format!("in {name}(...)");
    let nested = |e: ParseError| e.nested(OPTION, at, &context);
    match name {
        "filter" => parse_expr(inner, OPTION)
            .map(Transformation::Filter)
            .map_err(nested),
        "search" => parse_search_expr(inner, OPTION)
            .map(Transformation::Search)
            .map_err(nested),
        "orderby" => parse_orderby(inner, OPTION)
            .map(Transformation::OrderBy)
            .map_err(nested),
        "top" => non_negative(OPTION, inner)
            .map(Transformation::Top)
            .map_err(nested),
        "skip" => non_negative(OPTION, inner)
            .map(Transformation::Skip)
            .map_err(nested),
        "aggregate" => aggregates(inner, at).map(Transformation::Aggregate),
        TOP_LEVELS => top_levels(inner, at),
        "descendants" | "ancestors" => {
            let direction = match name {
                "descendants" => Direction::Descendants,
                _ => Direction::Ancestors,
            };
            let mut start = |text: &str, offset: usize| sequence(text, offset, depth + 1, budget);
            related(direction, inner, at, &mut start)
        }
        "groupby" => groupby(inner, at, depth, budget),
        "concat" => {
            let branches = split_top(inner, b',')
                .into_iter()
                .map(|(start, part)| sequence(part, at + start, depth + 1, budget))
                .collect::<Result<Vec<_>, _>>()?;
            if branches.len() < 2 {
                return Err(ParseError::new(
                    OPTION,
                    at,
                    "concat needs two or more sequences",
                ));
            }
            Ok(Transformation::Concat(branches))
        }
        "" => Err(ParseError::new(
            OPTION,
            offset,
            "expected a transformation name",
        )),
        other => Err(ParseError::new(
            OPTION,
            offset,
            format!("the transformation {other} is not supported"),
        )),
    }
}

/// `(paths)` and, after a comma, the sequence applied to each group.
fn groupby(
    inner: &str,
    at: usize,
    depth: usize,
    budget: &mut Budget,
) -> Result<Transformation, ParseError> {
    let lead = inner.len() - inner.trim_start().len();
    let bytes = inner.as_bytes();
    if bytes.get(lead) != Some(&b'(') {
        return Err(ParseError::new(
            OPTION,
            at + lead,
            "expected '(' and the grouping properties",
        ));
    }
    let close =
        closing(inner, lead).ok_or_else(|| ParseError::new(OPTION, at + lead, "missing ')'"))?;
    let list = &inner[lead + 1..close];
    let paths = path_list(list, at + lead + 1)?;
    let rest = &inner[close + 1..];
    let rest_lead = rest.len() - rest.trim_start().len();
    let then = match rest.trim_start().strip_prefix(',') {
        None if rest.trim().is_empty() => None,
        None => {
            return Err(ParseError::new(
                OPTION,
                at + close + 1 + rest_lead,
                "expected ',' or ')'",
            ))
        }
        Some(sequence_text) => {
            let start = at + close + 1 + rest_lead + 1;
            Some(sequence(sequence_text, start, depth + 1, budget)?)
        }
    };
    Ok(Transformation::GroupBy { paths, then })
}

/// Comma-separated property paths.
fn path_list(text: &str, at: usize) -> Result<Vec<Path>, ParseError> {
    let shift = |e: ParseError| e.nested(OPTION, at, "in groupby(...)");
    let tokens = tokenize(text, OPTION).map_err(shift)?;
    let mut pos = 0;
    let mut paths = Vec::new();
    loop {
        if let (Some(TokenKind::Ident(name)), Some(TokenKind::Open)) = (
            tokens.get(pos).map(|t| &t.kind),
            tokens.get(pos + 1).map(|t| &t.kind),
        ) {
            // rollup(...), or any other grouping function: named, not
            // taken for a path that lost its way.
            let message = format!("the grouping {name}(...) is not supported: group by properties");
            return Err(ParseError::new(OPTION, at + tokens[pos].start, message));
        }
        paths.push(path(&tokens, &mut pos, OPTION).map_err(shift)?);
        let tok = &tokens[pos.min(tokens.len() - 1)];
        match tok.kind {
            TokenKind::End => return Ok(paths),
            TokenKind::Comma => pos += 1,
            _ => {
                return Err(ParseError::new(
                    OPTION,
                    at + tok.start,
                    "expected ',' or ')'",
                ))
            }
        }
    }
}

/// `aggregate`'s comma-separated items: `path with method as Alias` or
/// `$count as Alias`.
fn aggregates(inner: &str, at: usize) -> Result<Vec<Aggregate>, ParseError> {
    let mut out: Vec<Aggregate> = Vec::new();
    for (start, item) in split_top(inner, b',') {
        let aggregate = aggregate(item, at + start)?;
        if out.iter().any(|a| a.alias == aggregate.alias) {
            let message = format!("the alias {} is used twice", aggregate.alias);
            return Err(ParseError::new(OPTION, at + start, message));
        }
        out.push(aggregate);
    }
    Ok(out)
}

fn aggregate(item: &str, at: usize) -> Result<Aggregate, ParseError> {
    let words: Vec<(usize, &str)> = words(item);
    let expected = "expected 'property with method as Alias' or '$count as Alias'";
    let fail = |position: usize, message: &str| ParseError::new(OPTION, at + position, message);
    match words.as_slice() {
        [(_, "$count"), (_, "as"), (p, alias)] => Ok(Aggregate {
            expr: AggregateExpr::Count,
            alias: identifier(alias).ok_or_else(|| fail(*p, "expected an alias"))?,
        }),
        [(p0, path_text), (_, "with"), (p2, method), (_, "as"), (p4, alias)] => {
            let path =
                property_path(path_text).ok_or_else(|| fail(*p0, "expected a property path"))?;
            let method = method_of(method).ok_or_else(|| {
                fail(
                    *p2,
                    &format!("the aggregation method {method} is not supported (sum, min, max, average, countdistinct)"),
                )
            })?;
            let alias = identifier(alias).ok_or_else(|| fail(*p4, "expected an alias"))?;
            Ok(Aggregate {
                expr: AggregateExpr::Method { path, method },
                alias,
            })
        }
        [(p, _), (_, "with"), ..] | [(p, _), (_, "as"), ..] => Err(fail(*p, expected)),
        [(p, word)] if property_path(word).is_some() => Err(fail(
            *p,
            "custom aggregates are not supported: name a method with 'with'",
        )),
        [(p, _), ..] => Err(fail(*p, expected)),
        [] => Err(fail(0, expected)),
    }
}

/// The whitespace-separated words of `text` with their byte offsets.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

fn identifier(word: &str) -> Option<String> {
    let mut chars = word.chars();
    let first = chars.next()?;
    let ok = (first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && word.chars().count() <= 128;
    ok.then(|| word.to_owned())
}

fn property_path(word: &str) -> Option<Path> {
    let segments: Option<Vec<String>> = word.split('/').map(identifier).collect();
    segments.map(Path)
}

impl Display for Apply {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

impl Display for Transformation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let list = |f: &mut Formatter<'_>, items: &[String]| f.write_str(&items.join(","));
        match self {
            Self::Filter(expr) => write!(f, "filter({expr})"),
            Self::Search(expr) => write!(f, "search({expr})"),
            Self::GroupBy { paths, then } => {
                f.write_str("groupby((")?;
                list(
                    f,
                    &paths.iter().map(ToString::to_string).collect::<Vec<_>>(),
                )?;
                f.write_str(")")?;
                if let Some(then) = then {
                    write!(f, ",{then}")?;
                }
                f.write_str(")")
            }
            Self::Aggregate(items) => {
                f.write_str("aggregate(")?;
                list(
                    f,
                    &items.iter().map(ToString::to_string).collect::<Vec<_>>(),
                )?;
                f.write_str(")")
            }
            Self::OrderBy(items) => {
                f.write_str("orderby(")?;
                list(
                    f,
                    &items.iter().map(ToString::to_string).collect::<Vec<_>>(),
                )?;
                f.write_str(")")
            }
            Self::Top(n) => write!(f, "top({n})"),
            Self::Identity => f.write_str("identity"),
            Self::Skip(n) => write!(f, "skip({n})"),
            Self::TopLevels(top) => write!(f, "{top}"),
            Self::Related(related) => write!(f, "{related}"),
            Self::Concat(branches) => {
                f.write_str("concat(")?;
                list(
                    f,
                    &branches.iter().map(ToString::to_string).collect::<Vec<_>>(),
                )?;
                f.write_str(")")
            }
        }
    }
}

impl Display for Aggregate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.expr {
            AggregateExpr::Count => write!(f, "$count as {}", self.alias),
            AggregateExpr::Method { path, method } => {
                write!(f, "{path} with {} as {}", method.name(), self.alias)
            }
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
