//! Rule `engine-sql`: SQL that names one engine's feature — a join or CTE
//! hint, a cast to an engine's type, an engine's own function or clause —
//! is written only in `src/db/` (the `Dialect` and the engines' own
//! readers) and in the cells reader that decodes each engine's values
//! (`src/odata/service/rows/cells.rs`). Everywhere else SQL is the common
//! part of the three engines, and what differs is asked of `db/`.

use crate::rust::Source;
use crate::{Tree, Violation};

/// Where engine knowledge belongs.
pub const ALLOWED: [&str; 2] = ["src/db/", "src/odata/service/rows/cells.rs"];

/// Words that name one engine's feature, as they are written in SQL.
pub const FEATURES: [&str; 27] = [
    "STRAIGHT_JOIN",
    "MATERIALIZED",
    "CAST(",
    "CONVERT(",
    "ILIKE",
    "GROUP_CONCAT",
    "STRING_AGG",
    "ON DUPLICATE KEY",
    "INSERT IGNORE",
    "ON CONFLICT",
    "PRAGMA",
    "RETURNING",
    "NULLS FIRST",
    "NULLS LAST",
    "COLLATE",
    "IFNULL",
    "strftime(",
    "julianday(",
    "EXTRACT(EPOCH",
    "TIMESTAMPDIFF",
    "UNIX_TIMESTAMP",
    "FOR UPDATE",
    "SKIP LOCKED",
    "sqlite_master",
    "information_schema",
    "AUTO_INCREMENT",
    "AUTOINCREMENT",
];

/// Whether a string literal reads as SQL (for the `::type` cast, which
/// other text may hold).
fn reads_as_sql(text: &str) -> bool {
    [
        "SELECT ", "INSERT ", "UPDATE ", "DELETE ", " FROM ", " WHERE ", "WITH ",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// The engine feature `text` names, if any.
pub fn feature_in(text: &str) -> Option<&'static str> {
    if let Some(feature) = FEATURES.iter().find(|f| text.contains(*f)) {
        return Some(feature);
    }
    let pg_cast = text.match_indices("::").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + 2..].chars().next();
        before.is_some_and(|c| c == ')' || c.is_alphanumeric() || c == '\'')
            && after.is_some_and(|c| c.is_ascii_lowercase())
    });
    (pg_cast && reads_as_sql(text)).then_some("::type cast")
}

/// Every string literal outside [`ALLOWED`] that names an engine feature.
pub fn check(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    for (path, text) in tree.files("src/", ".rs") {
        if ALLOWED.iter().any(|a| path.starts_with(a)) || path.ends_with("_tests.rs") {
            continue;
        }
        let source = Source::of(text);
        let test_from = source
            .code
            .find("#[cfg(test)]")
            .map(|at| source.line_of(at));
        for (line, string) in &source.strings {
            if test_from.is_some_and(|t| *line >= t) {
                continue;
            }
            if let Some(feature) = feature_in(string) {
                found.push(Violation {
                    path: path.to_owned(),
                    line: *line,
                    rule: "engine-sql",
                    message: format!(
                        "SQL names an engine's feature ({feature}) outside db/: ask the Dialect"
                    ),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_hint_outside_db_is_found_and_inside_db_is_not() {
        let tree = Tree::of(&[
            (
                "src/odata/plan.rs",
                "const J: &str = \"SELECT STRAIGHT_JOIN a FROM t\";\n",
            ),
            (
                "src/odata/tree.rs",
                "fn f() -> String { format!(\"WITH RECURSIVE x AS NOT MATERIALIZED (…)\") }\n",
            ),
            (
                "src/odata/cast.rs",
                "const C: &str = \"SELECT id::text FROM t\";\n",
            ),
            (
                "src/db/dialect.rs",
                "const J: &str = \"SELECT STRAIGHT_JOIN a FROM t\";\n",
            ),
            (
                "src/auth/users.rs",
                "const Q: &str = \"SELECT id FROM users WHERE id = $1\";\n",
            ),
            ("src/odata/names.rs", "const M: &str = \"odata::sets\";\n"),
        ]);
        let found: Vec<(String, usize)> =
            check(&tree).into_iter().map(|v| (v.path, v.line)).collect();
        assert_eq!(
            found,
            vec![
                ("src/odata/cast.rs".to_owned(), 1),
                ("src/odata/plan.rs".to_owned(), 1),
                ("src/odata/tree.rs".to_owned(), 1),
            ]
        );
    }
}
