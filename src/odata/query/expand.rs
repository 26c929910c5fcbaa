//! The `$expand` parser: comma-separated navigation paths, each optionally
//! followed by `(`nested options separated by `;``)`. Nested values are cut
//! out with a scanner that respects quotes and parentheses, then parsed by
//! the same option parsers as the top level. Depth and item count are bounded.

use crate::odata::query::error::ParseError;
use crate::odata::query::items::path;
use crate::odata::query::lexer::tokenize;
use crate::odata::query::syntax::{ExpandItem, Path, Query};

/// How many levels `$expand` may nest (`a($expand=b($expand=c))` is 3).
pub const MAX_EXPAND_DEPTH: usize = 4;
/// How many navigations one query may expand, all levels together.
pub const MAX_EXPAND_ITEMS: usize = 16;

const OPTION: &str = "$expand";

/// The options an expanded navigation may carry.
const NESTED: [&str; 8] = [
    "$filter", "$select", "$orderby", "$top", "$skip", "$count", "$expand", "$search",
];

/// Sets one option of an expanded navigation's `Query` from its decoded
/// value, `depth` levels inside other expansions: the top level's option
/// parser, handed in so that the nested options are read by the same code.
pub(crate) type NestedOption =
    fn(&mut Query, &str, &str, usize, &mut ExpandBudget) -> Result<(), ParseError>;

/// Counts expanded navigations across a whole query.
#[derive(Debug, Default)]
pub(crate) struct ExpandBudget {
    items: usize,
}

/// Parses an `$expand` value found `depth` levels inside other expansions,
/// each item's options by `option`; errors name `$expand` and carry byte
/// positions within `value`.
pub(crate) fn parse_expand(
    value: &str,
    depth: usize,
    budget: &mut ExpandBudget,
    option: NestedOption,
) -> Result<Vec<ExpandItem>, ParseError> {
    if depth >= MAX_EXPAND_DEPTH {
        let msg = format!("$expand nests more than {MAX_EXPAND_DEPTH} levels");
        return Err(ParseError::new(OPTION, 0, msg));
    }
    let bytes = value.as_bytes();
    let mut items = Vec::new();
    let mut pos = 0;
    loop {
        let start = pos;
        while pos < bytes.len() && !matches!(bytes[pos], b'(' | b',') {
            pos += 1;
        }
        let path = item_path(&value[start..pos], start)?;
        budget.items += 1;
        if budget.items > MAX_EXPAND_ITEMS {
            let msg = format!("more than {MAX_EXPAND_ITEMS} navigations are expanded");
            return Err(ParseError::new(OPTION, start, msg));
        }
        let mut options = Query::default();
        if bytes.get(pos) == Some(&b'(') {
            let nested = Nested {
                depth,
                budget: &mut *budget,
                option,
            };
            pos = nested_options(value, pos, &path, &mut options, nested)?;
        }
        items.push(ExpandItem { path, options });
        match bytes.get(pos) {
            None => return Ok(items),
            Some(b',') => pos += 1,
            Some(_) => return Err(ParseError::new(OPTION, pos, "expected ',' or the end")),
        }
    }
}

fn item_path(text: &str, offset: usize) -> Result<Path, ParseError> {
    let shift = |e: ParseError| e.nested(OPTION, offset, "");
    if text.trim() == "*" {
        return Err(ParseError::new(
            OPTION,
            offset,
            "$expand=* is not supported",
        ));
    }
    let tokens = tokenize(text, OPTION).map_err(shift)?;
    let mut at = 0;
    let path = path(&tokens, &mut at, OPTION).map_err(shift)?;
    match tokens.get(at) {
        Some(tok) if tok.start == text.len() && !tok.space_before => Ok(path),
        Some(tok) => Err(ParseError::new(
            OPTION,
            offset + tok.start,
            "expected '(' or ','",
        )),
        None => Err(ParseError::new(
            OPTION,
            offset,
            "expected a navigation property",
        )),
    }
}

/// Where an item's nested options are read: its depth, the query's budget
/// and the option parser.
struct Nested<'b> {
    depth: usize,
    budget: &'b mut ExpandBudget,
    option: NestedOption,
}

/// Parses `(name=value;...)` starting at the `(` at `open`; returns the
/// position after the closing `)`.
fn nested_options(
    value: &str,
    open: usize,
    path: &Path,
    options: &mut Query,
    nested: Nested<'_>,
) -> Result<usize, ParseError> {
    let Nested {
        depth,
        budget,
        option,
    } = nested;
    let bytes = value.as_bytes();
    let mut seen: Vec<&str> = Vec::new();
    let mut pos = open + 1;
    loop {
        let name_start = pos;
        while pos < bytes.len() && !matches!(bytes[pos], b'=' | b';' | b')') {
            pos += 1;
        }
        if bytes.get(pos) != Some(&b'=') || pos == name_start {
            let msg = format!("expected an option such as $filter=... inside '{path}(...)'");
            return Err(ParseError::new(OPTION, name_start, msg));
        }
        let name = &value[name_start..pos];
        if seen.contains(&name) {
            let msg = format!("repeated {name} inside '{path}(...)'");
            return Err(ParseError::new(OPTION, name_start, msg));
        }
        if !NESTED.contains(&name) {
            let msg = format!("{name} is not allowed inside $expand");
            return Err(ParseError::new(OPTION, name_start, msg));
        }
        seen.push(name);
        let value_start = pos + 1;
        let end = scan_value(bytes, value_start, name == "$search")
            .ok_or_else(|| ParseError::new(OPTION, open, "missing ')'"))?;
        let context = format!("in {name} of '{path}'");
        option(options, name, &value[value_start..end], depth + 1, budget)
            .map_err(|e| e.nested(OPTION, value_start, &context))?;
        pos = end + 1;
        if bytes[end] == b')' {
            return Ok(pos);
        }
    }
}

/// The position of the `;` or `)` ending an option value that starts at
/// `start`, skipping quoted text and balanced parentheses; `None` when the
/// value runs off the end. `$search` quotes with `"` (and `\` escapes),
/// everything else with `'`.
fn scan_value(bytes: &[u8], start: usize, search: bool) -> Option<usize> {
    let quote = if search { b'"' } else { b'\'' };
    let mut depth = 0usize;
    let mut quoted = false;
    let mut pos = start;
    while let Some(&b) = bytes.get(pos) {
        if quoted {
            if search && b == b'\\' {
                pos += 1;
            } else if b == quote {
                quoted = false;
            }
        } else if b == quote {
            quoted = true;
        } else if b == b'(' {
            depth += 1;
        } else if b == b')' {
            if depth == 0 {
                return Some(pos);
            }
            depth -= 1;
        } else if b == b';' && depth == 0 {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::odata::{parse_query, Select};

    fn expand(value: &str) -> Vec<ExpandItem> {
        parse_query(&format!("$expand={value}"))
            .expect("parses")
            .expand
    }

    fn err(value: &str) -> ParseError {
        parse_query(&format!("$expand={value}")).expect_err("refused")
    }

    #[test]
    fn plain_items_and_paths() {
        let items = expand("members,owner/organisation");
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].path.segments(), ["owner", "organisation"]);
        assert_eq!(items[0].options, Query::default());
    }

    #[test]
    fn nested_options_are_parsed() {
        let items = expand(
            "members($filter=name eq 'a;b)';$select=id,name;$orderby=name desc;\
             $top=5;$skip=1;$count=true;$search=\"x)\";$expand=roles($top=1))",
        );
        let o = &items[0].options;
        assert_eq!(
            o.filter.as_ref().map(ToString::to_string).as_deref(),
            Some("name eq 'a;b)'")
        );
        assert_eq!(
            o.select,
            Some(Select::Paths(vec![
                Path::single("id"),
                Path::single("name")
            ]))
        );
        assert!(o.orderby[0].descending);
        assert_eq!((o.top, o.skip, o.count), (Some(5), Some(1), true));
        assert_eq!(
            o.search.as_ref().map(ToString::to_string).as_deref(),
            Some("\"x)\"")
        );
        assert_eq!(o.expand[0].options.top, Some(1));
    }

    #[test]
    fn parentheses_inside_values_are_balanced() {
        let items = expand("a($filter=(x eq 1) and contains(n,'(')),b");
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0]
                .options
                .filter
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("x eq 1 and contains(n,'(')")
        );
    }

    #[test]
    fn errors_name_expand_and_point_into_its_value() {
        let e = err("members($filter=name eq)");
        assert_eq!(e.option, "$expand");
        assert_eq!(e.position, 23);
        assert!(
            e.message.starts_with("in $filter of 'members': "),
            "{}",
            e.message
        );
        let cases = [
            (
                "a($format=json)",
                2,
                "$format is not allowed inside $expand",
            ),
            ("a($top=1;$top=2)", 9, "repeated $top inside 'a(...)'"),
            ("a($top=1", 1, "missing ')'"),
            (
                "a()",
                2,
                "expected an option such as $filter=... inside 'a(...)'",
            ),
            ("a)", 1, "expected '(' or ','"),
            ("a,", 2, "expected a property name"),
            ("*", 0, "$expand=* is not supported"),
            ("a(x=1)", 2, "x is not allowed inside $expand"),
            (
                "a($top=-1)",
                7,
                "in $top of 'a': must be a non-negative integer",
            ),
        ];
        for (value, position, message) in cases {
            let e = err(value);
            assert_eq!(
                (e.position, e.message.as_str()),
                (position, message),
                "{value}"
            );
        }
    }

    #[test]
    fn depth_and_item_count_are_bounded() {
        assert!(parse_query("$expand=a($expand=b($expand=c($expand=d)))").is_ok());
        let e = err("a($expand=b($expand=c($expand=d($expand=e))))");
        assert!(
            e.message.contains("nests more than 4 levels"),
            "{}",
            e.message
        );
        let sixteen = vec!["n"; 16].join(",");
        assert_eq!(expand(&sixteen).len(), 16);
        let e = err(&vec!["n"; 17].join(","));
        assert_eq!(
            (e.position, e.message.as_str()),
            (32, "more than 16 navigations are expanded")
        );
    }
}
