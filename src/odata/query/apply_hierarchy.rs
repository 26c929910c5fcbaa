//! The hierarchy functions of `$apply` as UI5 writes them:
//! `com.sap.vocabularies.Hierarchy.v1.TopLevels(HierarchyNodes=$root/SET,
//! HierarchyQualifier='Q',NodeProperty='P',Levels=n,ExpandLevels=[…])`
//! (named parameters, any order; `ExpandLevels` a JSON array of
//! `{"NodeID","Levels"}`), and `descendants(…)`/`ancestors(…)` (positional:
//! `$root/SET`, the qualifier, the node property, a sequence of `filter`
//! and `search`, then an optional distance and `keep start`). Every error
//! names `$apply` and points into its value.

use std::fmt::{self, Display, Formatter};

use serde_json::Value;

use crate::odata::query::apply_scan::split_top;
use crate::odata::query::error::ParseError;
use crate::odata::query::items::non_negative;
use crate::odata::query::syntax::is_identifier;
use crate::odata::query::syntax::{
    Apply, Direction, ExpandLevel, Related, TopLevels, Transformation,
};

const OPTION: &str = "$apply";

/// The name `TopLevels` is called by.
pub(crate) const TOP_LEVELS: &str = "com.sap.vocabularies.Hierarchy.v1.TopLevels";

/// How many `ExpandLevels` entries one request may carry.
pub const MAX_EXPAND_LEVELS: usize = 1000;

/// The arguments of `TopLevels(…)`, found at byte `at`.
pub(crate) fn top_levels(inner: &str, at: usize) -> Result<Transformation, ParseError> {
    let mut nodes = None;
    let mut qualifier = None;
    let mut node_property = None;
    let mut levels = None;
    let mut expand_levels = Vec::new();
    for (start, part) in parameters(inner) {
        let here = at + start;
        let Some((name, value)) = part.split_once('=') else {
            return Err(ParseError::new(OPTION, here, "expected Name=value"));
        };
        let (name, value) = (name.trim(), value.trim());
        let value_at = here + part.find('=').unwrap_or_default() + 1;
        match name {
            "HierarchyNodes" => nodes = Some(root_set(value, value_at)?),
            "HierarchyQualifier" => qualifier = Some(quoted(value, value_at)?),
            "NodeProperty" => node_property = Some(quoted(value, value_at)?),
            "Levels" => levels = Some(non_negative(OPTION, value)?),
            "ExpandLevels" => expand_levels = expand(value, value_at)?,
            other => {
                let message = format!("the TopLevels parameter {other} is not supported");
                return Err(ParseError::new(OPTION, here, message));
            }
        }
    }
    let missing = |name: &str| ParseError::new(OPTION, at, format!("TopLevels needs {name}"));
    Ok(Transformation::TopLevels(TopLevels {
        nodes: nodes.ok_or_else(|| missing("HierarchyNodes"))?,
        qualifier: qualifier.ok_or_else(|| missing("HierarchyQualifier"))?,
        node_property: node_property.ok_or_else(|| missing("NodeProperty"))?,
        levels,
        expand_levels,
    }))
}

/// The arguments of `descendants(…)` or `ancestors(…)`, found at byte `at`;
/// `sequence` parses the start nodes' sequence (`$apply`'s own parser, one
/// level deeper, from the text and its byte offset in the whole value).
pub(crate) fn related(
    direction: Direction,
    inner: &str,
    at: usize,
    sequence: &mut dyn FnMut(&str, usize) -> Result<Apply, ParseError>,
) -> Result<Transformation, ParseError> {
    let parts = split_top(inner, b',');
    let [(_, root), (_, qualifier), (_, node_property), (start_at, start), rest @ ..] =
        parts.as_slice()
    else {
        let message = "expected $root/SET, the qualifier, the node property and a sequence";
        return Err(ParseError::new(OPTION, at, message));
    };
    let start = sequence(start, at + start_at)?;
    if start
        .0
        .iter()
        .any(|s| !matches!(s, Transformation::Filter(_) | Transformation::Search(_)))
    {
        let message = "the start nodes are picked by filter and search only";
        return Err(ParseError::new(OPTION, at + start_at, message));
    }
    let mut distance = None;
    let mut keep_start = false;
    for (offset, part) in rest {
        match part.trim() {
            "keep start" if !keep_start => keep_start = true,
            number if distance.is_none() && !keep_start => {
                distance = Some(
                    non_negative(OPTION, number)
                        .map_err(|e| e.nested(OPTION, at + offset, "in the distance"))?,
                )
            }
            _ => {
                return Err(ParseError::new(
                    OPTION,
                    at + offset,
                    "expected a distance or keep start",
                ))
            }
        }
    }
    Ok(Transformation::Related(Related {
        direction,
        nodes: root_set(root, at)?,
        qualifier: identifier(qualifier, at)?,
        node_property: identifier(node_property, at)?,
        start,
        distance,
        keep_start,
    }))
}

/// The parts of `TopLevels`' arguments between top-level commas (outside
/// quotes of either kind and any brackets: `ExpandLevels` is JSON), with
/// their byte offsets.
fn parameters(text: &str) -> Vec<(usize, &str)> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut quote) = (0usize, 0, None);
    let mut bytes = text.bytes().enumerate();
    while let Some((pos, b)) = bytes.next() {
        match (quote, b) {
            (Some(b'"'), b'\\') => {
                bytes.next();
            }
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(' | b'[' | b'{') => depth += 1,
            (None, b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            (None, b',') if depth == 0 => {
                parts.push((start, &text[start..pos]));
                start = pos + 1;
            }
            _ => {}
        }
    }
    parts.push((start, &text[start..]));
    parts
}

/// `$root/SET`: the set's name.
fn root_set(value: &str, at: usize) -> Result<String, ParseError> {
    value
        .trim()
        .strip_prefix("$root/")
        .map(str::to_owned)
        .filter(|name| is_identifier(name))
        .ok_or_else(|| ParseError::new(OPTION, at, "expected $root/ and an entity set"))
}

/// `'text'`: the text (`''` for a quote).
fn quoted(value: &str, at: usize) -> Result<String, ParseError> {
    value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map(|v| v.replace("''", "'"))
        .filter(|v| is_identifier(v))
        .ok_or_else(|| ParseError::new(OPTION, at, "expected a quoted name"))
}

/// A bare identifier.
fn identifier(value: &str, at: usize) -> Result<String, ParseError> {
    let value = value.trim();
    match is_identifier(value) {
        true => Ok(value.to_owned()),
        false => Err(ParseError::new(OPTION, at, "expected a name")),
    }
}

/// `ExpandLevels`: `[{"NodeID":…,"Levels":n|null},…]`.
fn expand(value: &str, at: usize) -> Result<Vec<ExpandLevel>, ParseError> {
    let invalid = |why: &str| ParseError::new(OPTION, at, format!("ExpandLevels: {why}"));
    let parsed: Value =
        serde_json::from_str(value).map_err(|_| invalid("expected a JSON array"))?;
    let Value::Array(entries) = parsed else {
        return Err(invalid("expected a JSON array"));
    };
    if entries.len() > MAX_EXPAND_LEVELS {
        return Err(invalid(&format!("more than {MAX_EXPAND_LEVELS} entries")));
    }
    entries
        .into_iter()
        .map(|entry| {
            let node = entry.get("NodeID").cloned().unwrap_or(Value::Null);
            if !(node.is_string() || node.is_i64() || node.is_u64()) {
                return Err(invalid("NodeID must be a string or an integer"));
            }
            let levels = match entry.get("Levels") {
                None | Some(Value::Null) => None,
                Some(n) => Some(
                    n.as_u64()
                        .ok_or_else(|| invalid("Levels must be a count or null"))?,
                ),
            };
            Ok(ExpandLevel { node, levels })
        })
        .collect()
}

impl Display for TopLevels {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{TOP_LEVELS}(HierarchyNodes=$root/{},HierarchyQualifier='{}',NodeProperty='{}'",
            self.nodes, self.qualifier, self.node_property
        )?;
        if let Some(levels) = self.levels {
            write!(f, ",Levels={levels}")?;
        }
        if !self.expand_levels.is_empty() {
            let entries: Vec<Value> = self
                .expand_levels
                .iter()
                .map(|e| serde_json::json!({"NodeID": e.node, "Levels": e.levels}))
                .collect();
            write!(f, ",ExpandLevels={}", Value::Array(entries))?;
        }
        f.write_str(")")
    }
}

impl Display for Related {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let name = match self.direction {
            Direction::Descendants => "descendants",
            Direction::Ancestors => "ancestors",
        };
        write!(
            f,
            "{name}($root/{},{},{},{}",
            self.nodes, self.qualifier, self.node_property, self.start
        )?;
        if let Some(distance) = self.distance {
            write!(f, ",{distance}")?;
        }
        if self.keep_start {
            f.write_str(",keep start")?;
        }
        f.write_str(")")
    }
}
