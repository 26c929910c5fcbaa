//! Rule `pipeline`: the `/odata` code is its pipeline, one folder a step
//! below `src/odata/`, in the order of [`STEPS`]; a file imports only files
//! of its own step or of the steps before it, and every file but the
//! folder's `mod.rs` lives in a step.

use crate::graph::Graph;
use crate::{Tree, Violation};

/// The folder holding the pipeline.
const ROOT: &str = "src/odata/";

/// The steps, in order: syntax, the declared model, checking against it,
/// SQL from checked parts, one plan a request, then HTTP in and out.
pub const STEPS: [&str; 6] = ["query", "model", "check", "sql", "plan", "service"];

/// The step of the file at `path`, if it is in the pipeline's folder:
/// `Some(None)` for a file of the folder that is in no step.
fn step_of(path: &str) -> Option<Option<usize>> {
    let inner = path.strip_prefix(ROOT)?;
    let (folder, _) = match inner.split_once('/') {
        Some(split) => split,
        None if inner == "mod.rs" => return None,
        None => return Some(None),
    };
    Some(STEPS.iter().position(|s| *s == folder))
}

/// Rule `pipeline`.
pub fn check(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    for (path, _) in tree.files(ROOT, ".rs") {
        if let Some(None) = step_of(path) {
            found.push(Violation {
                path: path.to_owned(),
                line: 0,
                rule: "pipeline",
                message: format!("in no step of the pipeline ({})", STEPS.join(", ")),
            });
        }
    }
    let graph = Graph::of(tree);
    for (from, targets) in &graph.edges {
        let Some(Some(from_step)) = step_of(from) else {
            continue;
        };
        for (to, (line, name)) in targets {
            let Some(Some(to_step)) = step_of(to) else {
                continue;
            };
            if to_step > from_step {
                found.push(Violation {
                    path: from.clone(),
                    line: *line,
                    rule: "pipeline",
                    message: format!(
                        "step `{}` imports `{name}` from {to}, of the later step `{}`",
                        STEPS[from_step], STEPS[to_step]
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

    fn tree(files: &[(&str, &str)]) -> Tree {
        let mut all = vec![
            ("src/lib.rs", "mod odata;\n"),
            (
                "src/odata/mod.rs",
                "mod query;\nmod check;\nmod plan;\npub use query::syntax::Query;\n",
            ),
            ("src/odata/query/mod.rs", "pub(crate) mod syntax;\n"),
            ("src/odata/query/syntax.rs", "pub struct Query;\n"),
            ("src/odata/check/mod.rs", "pub(crate) mod checked;\n"),
            ("src/odata/plan/mod.rs", "pub(crate) mod parts;\n"),
            ("src/odata/plan/parts.rs", "pub struct Plan;\n"),
        ];
        all.extend_from_slice(files);
        Tree::of(&all)
    }

    #[test]
    fn a_step_may_import_the_steps_before_it() {
        let tree = tree(&[(
            "src/odata/check/checked.rs",
            "use crate::odata::query::syntax::Query;\npub struct Checked;\n",
        )]);
        assert_eq!(check(&tree), vec![]);
    }

    #[test]
    fn a_step_that_imports_a_later_one_is_named() {
        let tree = tree(&[(
            "src/odata/check/checked.rs",
            "use crate::odata::query::syntax::Query;\nfn f() -> crate::odata::plan::parts::Plan { todo!() }\n",
        )]);
        let found = check(&tree);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "src/odata/check/checked.rs");
        assert_eq!(found[0].line, 2);
        assert!(
            found[0].message.contains("`check` imports `Plan`"),
            "{}",
            found[0]
        );
        assert!(
            found[0].message.contains("later step `plan`"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn a_file_outside_every_step_is_named() {
        let tree = tree(&[
            ("src/odata/fetch.rs", "pub struct Fetch;\n"),
            ("src/odata/extra/thing.rs", "pub struct Thing;\n"),
        ]);
        let found = check(&tree);
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["src/odata/extra/thing.rs", "src/odata/fetch.rs"]);
    }
}
