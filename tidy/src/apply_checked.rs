//! Rule `apply-checked`: the SQL step writes `$apply`'s statements from its
//! checked form (`check::apply`), never from its parse tree. No file under
//! `src/odata/sql/` imports [`PARSE_TREE`]'s types from `query::syntax`,
//! in a `use` (a glob of `syntax` included) or written inline
//! (`crate::odata::query::syntax::Transformation::Filter`).

use std::collections::BTreeSet;

use crate::rust::{self, Source};
use crate::{Tree, Violation};

/// The SQL step's folder.
pub const FOLDER: &str = "src/odata/sql/";

/// The types of `$apply`'s parse tree the SQL step must not name.
pub const PARSE_TREE: [&str; 3] = ["Apply", "Transformation", "Aggregate"];

/// The parse-tree type `segments` names after `syntax` (`*` for a glob),
/// if any.
fn parse_tree_in(segments: &[String]) -> Option<&str> {
    segments.windows(2).find_map(|pair| {
        let named = pair[1].as_str();
        let wanted = named == "*" || PARSE_TREE.contains(&named);
        (pair[0] == "syntax" && wanted).then_some(named)
    })
}

/// Each `(line, name)` at which `source` names a parse-tree type of
/// `syntax`: in its `use` trees, and as `syntax::Name` anywhere else.
fn parse_tree_names(source: &Source) -> BTreeSet<(usize, String)> {
    let mut found = BTreeSet::new();
    for used in rust::uses(source) {
        if let Some(name) = parse_tree_in(&used.segments) {
            found.insert((used.line, name.to_owned()));
        }
    }
    let code = &source.code;
    for at in rust::words(code, "syntax") {
        let Some(rest) = code[at + "syntax".len()..].strip_prefix("::") else {
            continue;
        };
        let len = rest
            .find(|c: char| !rust::ident_char(c))
            .unwrap_or(rest.len());
        if PARSE_TREE.contains(&&rest[..len]) {
            found.insert((source.line_of(at), rest[..len].to_owned()));
        }
    }
    found
}

/// Rule `apply-checked`.
pub fn check(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    for (path, text) in tree.files(FOLDER, ".rs") {
        for (line, name) in parse_tree_names(&Source::of(text)) {
            let what = match name.as_str() {
                "*" => "a glob of `query::syntax`, which holds `$apply`'s parse tree".to_owned(),
                name => format!("`{name}` from `query::syntax`, `$apply`'s parse tree"),
            };
            found.push(Violation {
                path: path.to_owned(),
                line,
                rule: "apply-checked",
                message: format!(
                    "the SQL step imports {what}: write its SQL from `check::apply`'s checked form"
                ),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parse_tree_of_apply_named_in_the_sql_step_is_found() {
        let tree = Tree::of(&[
            (
                "src/odata/sql/aggregation/mod.rs",
                "use crate::odata::query::syntax::{Expr, OrderItem};\nuse crate::odata::{check::apply::CheckedApply, query::syntax::{Aggregate, Path}};\nfn f() {\n    let _ = crate::odata::query::syntax::Transformation::Filter;\n}\n",
            ),
            (
                "src/odata/sql/hierarchy.rs",
                "// Not an Apply: syntax::Apply in a comment.\nuse crate::odata::query::syntax::*;\nuse crate::odata::query::syntax::AggregateExpr;\n",
            ),
            (
                "src/odata/sql/fetch.rs",
                "use crate::odata::query::syntax;\nfn f(a: &syntax::Apply) {}\n",
            ),
            (
                "src/odata/check/apply/mod.rs",
                "use crate::odata::query::syntax::{Aggregate, Apply, Transformation};\n",
            ),
        ]);
        let found: Vec<(String, usize, bool)> = check(&tree)
            .into_iter()
            .map(|v| {
                let named = PARSE_TREE
                    .iter()
                    .any(|n| v.message.contains(&format!("`{n}`")));
                (v.path, v.line, named)
            })
            .collect();
        assert_eq!(
            found,
            vec![
                ("src/odata/sql/aggregation/mod.rs".to_owned(), 2, true),
                ("src/odata/sql/aggregation/mod.rs".to_owned(), 4, true),
                ("src/odata/sql/fetch.rs".to_owned(), 2, true),
                ("src/odata/sql/hierarchy.rs".to_owned(), 2, false),
            ]
        );
    }
}
