//! A hierarchy's `$apply` as one recursive statement (`WITH RECURSIVE`) on
//! every engine, read as a derived set: the set's own properties and the
//! computed ones, in preorder (`LimitedRank`), so that `$select`, `$count`,
//! `$top`/`$skip` and server paging apply to it as to any set's rows.
//!
//! The caller's scope restricts the nodes first (`gh_scoped`; the table
//! itself when the set has none): by default a node whose parent is outside
//! it is a root; with `roots = "null_parent"` only a node without a parent
//! is, found through the parent column's index. The tree is walked down
//! from the roots (or from the start nodes of `descendants`) through the
//! parent column, each row carrying the node's columns, its depth and how
//! many levels below it are shown (`Levels` and `ExpandLevels`), so that
//! nothing after the walk joins the set again. Each node gets a path that
//! sorts in preorder: when siblings are in key order and the key is an
//! integer, its ancestors' keys and its own as fixed-width digits, made
//! by the walk itself; otherwise the nodes shown are then ranked among
//! their siblings (by the `orderby` given, then the key) and walked again,
//! each level's rank as eight digits. A node's shown descendants are
//! counted from the paths (each path's prefixes name its ancestors). Only
//! nodes reached from a root are read: a cycle in the
//! data has no root and is never followed; the depth is bounded by
//! [`MAX_DEPTH`]. Everything here was checked (`check::apply`): only the
//! statement is written.

use crate::config::Roots;
use crate::db::{Bind, Dialect, SqlType};
use crate::odata::check::apply::{CheckedHierarchy, Restriction, TreeShape};
use crate::odata::check::resolve::QueryError;
use crate::odata::check::scopes::Scopes;
use crate::odata::model::sets::{Derived, EdmType, EntitySet, Hierarchy, Property};
use crate::odata::query::syntax::{ExpandLevel, OrderItem, Path};
use crate::odata::sql::expr::Writer;
use crate::odata::sql::select::search_condition;

/// The deepest level read below a root (or a start node).
pub const MAX_DEPTH: u32 = 1000;

/// Levels shown below a node when every level is (`Levels` left out, or an
/// `ExpandLevels` entry's `null`).
const ALL: i64 = 1_000_000_000;

/// The rows a checked hierarchy `$apply` makes, as a derived set, and
/// their order (preorder: `LimitedRank`).
pub(crate) fn derive<'a>(
    tree: &CheckedHierarchy<'a>,
    scopes: &'a Scopes<'a>,
    dialect: Dialect,
) -> Result<(EntitySet, Vec<OrderItem>), QueryError> {
    let (text, binds) = Statement::new(tree, scopes, dialect).text()?;
    // The scope is applied inside the statement, before the tree is made.
    let mut rows = tree.set.clone();
    rows.hierarchy = None;
    rows.scope = None;
    for (name, edm_type) in Hierarchy::COMPUTED {
        rows.properties.push(Property {
            name: name.to_owned(),
            column: name.to_owned(),
            edm_type,
            nullable: true,
        });
    }
    rows.derived = Some(Derived::statement(text, binds));
    let order = vec![OrderItem {
        path: Path::single("LimitedRank"),
        descending: false,
    }];
    Ok((rows, order))
}

/// The pieces of a set's recursive statement.
struct Statement<'t, 'a> {
    /// What the statement shows.
    tree: &'t CheckedHierarchy<'a>,
    dialect: Dialect,
    /// The writer of its expressions, holding its binds.
    w: Writer<'a>,
    /// The key and parent columns, quoted.
    key: String,
    parent: String,
}

impl<'t, 'a> Statement<'t, 'a> {
    /// The pieces of `tree`'s statement for the caller of `scopes`.
    fn new(tree: &'t CheckedHierarchy<'a>, scopes: &'a Scopes<'a>, dialect: Dialect) -> Self {
        Self {
            tree,
            dialect,
            w: Writer::new(tree.set, dialect).with_scopes(Some(scopes)),
            key: dialect.quote(&tree.key.column),
            parent: dialect.quote(tree.parent),
        }
    }

    /// The recursive CTE `name`: the walk from each node of `source` that
    /// `start` (a condition over alias `t0`) holds for up through its
    /// ancestors in `source`, one row per start node and node reached,
    /// `gh_up` steps above it, bounded by [`MAX_DEPTH`].
    fn rootward(&self, name: &str, source: &str, start: &str) -> String {
        let (key, parent) = (&self.key, &self.parent);
        let t0 = self.w.root_alias();
        format!(
            "{name} (gh_start, gh_key, gh_parent, gh_up) AS (\
             SELECT {t0}.{key}, {t0}.{key}, {t0}.{parent}, 0 FROM {source} AS {t0} WHERE {start} \
             UNION ALL SELECT u.gh_start, p.{key}, p.{parent}, u.gh_up + 1 FROM {name} u JOIN {source} p ON p.{key} = u.gh_parent \
             WHERE u.gh_up < {MAX_DEPTH})"
        )
    }

    /// Whether a node whose parent's key is `parent` is a root of the
    /// nodes of `source`: it has no parent, or ([`Roots::MissingParent`])
    /// none among them. A null parent alone is found through the parent
    /// column's index; a missing one needs every node looked at when all
    /// roots are sought, and one probe of the key per node when a few
    /// nodes are asked about (`few`).
    fn root(&self, source: &str, parent: &str, few: bool) -> String {
        let key = &self.key;
        match (self.tree.roots, few) {
            (Roots::NullParent, _) => format!("{parent} IS NULL"),
            (Roots::MissingParent, false) => format!(
                "{parent} IS NULL OR NOT EXISTS (SELECT 1 FROM {source} k WHERE k.{key} = {parent})"
            ),
            (Roots::MissingParent, true) => {
                format!("{parent} IS NULL OR {}", Self::absent(source, key, parent))
            }
        }
    }

    /// Whether no node of `source` has `value` in `column`: one probe of
    /// the column's index for each row asking, written as a value rather
    /// than `NOT EXISTS` so that no planner reads every node to hash them
    /// instead (PostgreSQL does when it expects many rows to ask).
    fn absent(source: &str, column: &str, value: &str) -> String {
        format!("(SELECT 1 FROM {source} k WHERE k.{column} = {value} LIMIT 1) IS NULL")
    }

    /// The levels shown below a node whose key is `key` when `otherwise`
    /// would be: its `ExpandLevels` entry, if it has one.
    fn open(&mut self, expand: &[ExpandLevel], key: &str, otherwise: &str) -> String {
        if expand.is_empty() {
            return otherwise.to_owned();
        }
        let mut arms = String::new();
        for entry in expand {
            let value = self.node_value(&entry.node);
            let levels = self.levels(entry.levels, 0);
            arms.push_str(&format!(" WHEN {key} = {value} THEN {levels}"));
        }
        format!("CASE{arms} ELSE {otherwise} END")
    }

    /// A request's number of levels (`None`: all), less `less`, bound.
    fn levels(&mut self, levels: Option<u64>, less: i64) -> String {
        let levels = levels.map_or(ALL, |n| i64::try_from(n).unwrap_or(ALL).min(ALL));
        let placeholder = self.w.bind(Bind::Int(levels - less));
        self.dialect.int_param(&placeholder)
    }

    /// An `ExpandLevels` node value bound as the key's type.
    fn node_value(&mut self, node: &serde_json::Value) -> String {
        let integer_key = matches!(
            self.tree.key.edm_type,
            EdmType::Int16 | EdmType::Int32 | EdmType::Int64
        );
        let bind = match node {
            serde_json::Value::Number(n) if integer_key => {
                Bind::Int(n.as_i64().unwrap_or_default())
            }
            serde_json::Value::String(s) if integer_key => match s.parse::<i64>() {
                Ok(n) => Bind::Int(n),
                Err(_) => Bind::Text(s.clone()),
            },
            serde_json::Value::String(s) => Bind::Text(s.clone()),
            other => Bind::Text(other.to_string()),
        };
        self.w.bind(bind)
    }

    /// The condition `picked` (a `filter`/`search` sequence) makes over
    /// `t0`: the searches, then the filters.
    fn picked(&mut self, picked: &Restriction<'a>) -> Result<String, QueryError> {
        let mut wheres = Vec::new();
        for search in &picked.searches {
            wheres.push(search_condition(&mut self.w, &picked.searched, search));
        }
        let all: Vec<_> = picked.filters.iter().collect();
        wheres.extend(self.w.condition(&all)?);
        Ok(match wheres.is_empty() {
            true => "1 = 1".to_owned(),
            false => wheres.join(" AND "),
        })
    }

    /// The siblings' order, for `ROW_NUMBER()`, over alias `t0`.
    fn sibling_order(&self) -> String {
        let t0 = self.w.root_alias();
        let mut terms = Vec::new();
        for (property, descending) in &self.tree.order {
            let expr = self.w.property(&t0, property);
            terms.push(
                self.dialect
                    .order_term(&expr, *descending, property.nullable),
            );
        }
        terms.push(format!("{t0}.{}", self.key));
        terms.join(", ")
    }

    /// Whether siblings are in key order and the key an integer: then
    /// whether it is 64-bit (`Some(true)`) or narrower.
    fn key_width(&self) -> Option<bool> {
        let key_order = match self.tree.order.as_slice() {
            [] => true,
            [(property, false)] => property.name == self.tree.key.name,
            _ => false,
        };
        match self.tree.key.edm_type {
            EdmType::Int16 | EdmType::Int32 if key_order => Some(false),
            EdmType::Int64 if key_order => Some(true),
            _ => None,
        }
    }

    /// The most levels a node's path can have: bounded by the levels shown
    /// (a `TopLevels`' `Levels` and the `ExpandLevels` beyond them, a
    /// `descendants`' distance and its start nodes' level) when every one
    /// is, else by [`MAX_DEPTH`]. MariaDB sizes the path column by it,
    /// and keeps each row of the walk at that size.
    fn path_levels(&self) -> u32 {
        let most = u64::from(MAX_DEPTH) + 2;
        let shown = match &self.tree.shape {
            TreeShape::TopLevels { levels, expand } => expand.iter().fold(*levels, |sum, entry| {
                sum.zip(entry.levels)
                    .map(|(sum, more)| sum.saturating_add(more))
            }),
            TreeShape::Descendants { distance, .. } => distance.map(|n| n.saturating_add(1)),
        };
        u32::try_from(shown.unwrap_or(most).clamp(1, most)).unwrap_or(MAX_DEPTH + 2)
    }

    /// Whether only the first level is shown: a `TopLevels` of one level
    /// with no node expanded, or a `descendants` of distance 1.
    fn one_level_shown(&self) -> bool {
        match &self.tree.shape {
            TreeShape::TopLevels { levels, expand } => {
                *levels == Some(1) && expand.iter().all(|entry| entry.levels == Some(0))
            }
            TreeShape::Descendants { distance, .. } => *distance == Some(1),
        }
    }

    /// The digits of one level of a path by keys.
    fn digits(wide: bool) -> u32 {
        if wide {
            20
        } else {
            10
        }
    }

    /// The statement and its binds.
    fn text(mut self) -> Result<(String, Vec<Bind>), QueryError> {
        let tree = self.tree;
        let d = self.dialect;
        let (key, parent) = (self.key.clone(), self.parent.clone());
        let t0 = self.w.root_alias();
        let scope = match self.w.root_scope()? {
            Some(scope) => self.w.condition(&[scope])?,
            None => None,
        };
        let inline = d.cte_read_in_place();
        let table = d.quote(&tree.set.table);
        // The nodes in the caller's scope: the table itself when the set
        // has no scope, so that every engine reads it through its indexes.
        let mut ctes = Vec::new();
        let scoped = match scope {
            Some(condition) => {
                ctes.push(format!(
                    "gh_scoped AS {inline}(SELECT {t0}.* FROM {table} AS {t0} WHERE {condition})"
                ));
                "gh_scoped".to_owned()
            }
            None => table,
        };
        // The nodes the tree is made of: all in scope, or those an
        // `ancestors` picks and their ancestors.
        let mut source = scoped.as_str();
        let filtered = match &tree.ancestors {
            Some(ancestors) => {
                let picked = self.picked(ancestors)?;
                ctes.push(format!("gh_matched AS (SELECT {t0}.{key} AS gh_key FROM {scoped} AS {t0} WHERE {picked})"));
                let matched = format!("{t0}.{key} IN (SELECT gh_key FROM gh_matched)");
                ctes.push(self.rootward("gh_up", &scoped, &matched));
                ctes.push(format!(
                    "gh_kept AS {inline}(SELECT n.* FROM {scoped} n WHERE n.{key} IN (SELECT gh_key FROM gh_up))"
                ));
                source = "gh_kept";
                true
            }
            None => false,
        };
        let one_level = self.one_level_shown();
        let (anchors, depth0, open0, step_open, anchors_by_parent) = match &tree.shape {
            TreeShape::TopLevels { levels, expand } => {
                let below_roots = self.levels(*levels, 1);
                let root_open = self.open(expand, &format!("r.{key}"), &below_roots);
                // (Written only when there is a walk: it binds the entries.)
                let child_open = match one_level {
                    true => String::new(),
                    false => self.open(expand, &format!("c.{key}"), "p.gh_open - 1"),
                };
                let root = self.root(source, &format!("r.{parent}"), false);
                let anchors = format!("{source} r WHERE {root}");
                (anchors, "0".to_owned(), root_open, child_open, false)
            }
            TreeShape::Descendants { start, distance } => {
                // A start node counts only when it is reached from a root.
                let picked = self.picked(start)?;
                ctes.push(self.rootward("gh_rootward", source, &picked));
                let top = self.root(source, "u.gh_parent", true);
                ctes.push(format!(
                    "gh_rooted AS (SELECT u.gh_start, MAX(u.gh_up) AS gh_depth FROM gh_rootward u \
                     WHERE {top} GROUP BY u.gh_start)"
                ));
                let below = self.levels(*distance, 1);
                // The start nodes' children, read once with their depth.
                let anchors = format!(
                    "gh_rooted s {} {source} r ON r.{parent} = s.gh_start",
                    d.walk_down_join()
                );
                let depth0 = "s.gh_depth + 1".to_owned();
                (anchors, depth0, below, "p.gh_open - 1".to_owned(), true)
            }
        };
        let down = d.walk_down_join();
        // Siblings in key order with an integer key: each node's path is
        // its parent's and its own key's digits, made as the walk goes.
        let keyed = self.key_width();
        let (path0, path_step) = match keyed {
            Some(wide) => {
                let own = d.key_digits(&format!("r.{key}"), wide);
                let first = match anchors_by_parent {
                    true => d.concat(&d.key_digits(&format!("r.{parent}"), wide), &own),
                    false => own,
                };
                let length = Self::digits(wide) * self.path_levels();
                let step = d.concat("p.gh_path", &d.key_digits(&format!("c.{key}"), wide));
                (
                    format!(", {} AS gh_path", d.path_column(&first, length)),
                    format!(", {step}"),
                )
            }
            None => (String::new(), String::new()),
        };
        // First the nodes shown, with their columns, each with its depth
        // and the levels shown below it, walked down through the parent
        // column only: nothing after this reads the set again but to tell
        // a leaf. When only the first level is shown, there is no walk.
        let walk = match one_level {
            true => String::new(),
            false => format!(
                " UNION ALL SELECT c.*, p.gh_depth + 1, {step_open}, 0{path_step} \
                 FROM gh_shown p {down} {source} c ON c.{parent} = p.{key} \
                 WHERE p.gh_open > 0 AND p.gh_depth < {MAX_DEPTH}"
            ),
        };
        ctes.push(format!(
            "gh_shown AS (\
             SELECT r.*, {depth0} AS gh_depth, {open0} AS gh_open, 1 AS gh_anchor{path0} FROM {anchors}{walk})"
        ));
        // The path's characters per level, and the first level's.
        let (tree_rows, width, first) = match keyed {
            Some(wide) => {
                let width = Self::digits(wide);
                let levels = if anchors_by_parent { 2 } else { 1 };
                ("gh_shown", width, width * levels)
            }
            None => {
                // Otherwise only the nodes shown are ranked among their
                // siblings (the first level shown as siblings of one
                // another), ...
                let lead = match anchors_by_parent {
                    true => format!("CASE WHEN {t0}.gh_anchor = 1 THEN {t0}.{parent} END, "),
                    false => String::new(),
                };
                let order = self.sibling_order();
                ctes.push(format!(
                    "gh_ranked AS (SELECT {t0}.*, \
                     ROW_NUMBER() OVER (PARTITION BY CASE WHEN {t0}.gh_anchor = 1 THEN NULL ELSE {t0}.{parent} END \
                     ORDER BY {lead}{order}) AS gh_sibling FROM gh_shown AS {t0})"
                ));
                // ... and given their paths, eight digits a level.
                let path0 = d.path_column(&d.rank_digits("r.gh_sibling"), 8 * self.path_levels());
                let walk = match one_level {
                    true => String::new(),
                    false => {
                        let path_step = d.concat("p.gh_path", &d.rank_digits("c.gh_sibling"));
                        format!(
                            " UNION ALL SELECT c.*, {path_step} \
                             FROM gh_tree p JOIN gh_ranked c ON c.{parent} = p.{key} AND c.gh_anchor = 0"
                        )
                    }
                };
                ctes.push(format!(
                    "gh_tree AS (SELECT r.*, {path0} AS gh_path FROM gh_ranked r WHERE r.gh_anchor = 1{walk})"
                ));
                ("gh_tree", 8, 8)
            }
        };
        let leaf = Self::absent(source, &parent, &format!("t.{key}"));
        let (below, counted) = match one_level {
            // Nothing shown below the first level: no node has a descendant
            // shown (a node's children, as UI5 asks on each expansion).
            true => (d.int_param("0"), String::new()),
            false => {
                // Each shown node below the first level, paired with each of
                // its shown ancestors, named by their paths (a prefix of its
                // own, one level shorter each step): a node's descendants
                // shown are the pairs naming it, counted once for all rows
                // rather than by a look at every row for each row.
                ctes.push(format!(
                    "gh_above (gh_len, gh_path) AS (\
                     SELECT LENGTH(t.gh_path) - {width}, t.gh_path FROM {tree_rows} t WHERE t.gh_anchor = 0 \
                     UNION ALL SELECT u.gh_len - {width}, u.gh_path FROM gh_above u WHERE u.gh_len > {first})"
                ));
                (
                    "COALESCE(d.gh_below, 0)".to_owned(),
                    " LEFT JOIN (SELECT SUBSTR(gh_path, 1, gh_len) AS gh_anc, COUNT(*) AS gh_below \
                     FROM gh_above GROUP BY SUBSTR(gh_path, 1, gh_len)) d ON d.gh_anc = t.gh_path"
                        .to_owned(),
                )
            }
        };
        let (matched, matched_below) = match filtered {
            true => (
                format!("CASE WHEN t.{key} IN (SELECT gh_key FROM gh_matched) THEN TRUE ELSE FALSE END"),
                format!("(SELECT COUNT(DISTINCT u.gh_start) FROM gh_up u WHERE u.gh_key = t.{key} AND u.gh_up > 0)"),
            ),
            false => (d.null_of(SqlType::Boolean), d.null_of(SqlType::Int64)),
        };
        let q = |name: &str| d.quote(name);
        // The rows carry the walk's own columns (`gh_…`) beside the set's;
        // only the set's and the computed ones are ever selected.
        let select = format!(
            "SELECT t.*, t.gh_depth AS {}, \
             CASE WHEN {leaf} THEN 'leaf' WHEN t.gh_open > 0 THEN 'expanded' ELSE 'collapsed' END AS {}, \
             {below} AS {}, ROW_NUMBER() OVER (ORDER BY t.gh_path) - 1 AS {}, {matched} AS {}, {matched_below} AS {} \
             FROM {tree_rows} t{counted}",
            q("DistanceFromRoot"),
            q("DrillState"),
            q("LimitedDescendantCount"),
            q("LimitedRank"),
            q("Matched"),
            q("MatchedDescendantCount"),
        );
        let text = format!("WITH RECURSIVE {} {select}", ctes.join(", "));
        Ok((text, self.w.binds))
    }
}
