//! Rules for the documents. `doc-path`: a repository path a document names
//! (in backticks or as a link) exists. `invariant`: each invariant of
//! ARCHITECTURE.md says what holds it (`*Held by*`), and each test or tidy
//! rule it names exists.

use crate::rust::{self, Source};
use crate::{Tree, Violation};

/// The documents whose paths are checked.
fn documents(tree: &Tree) -> Vec<(&str, &str)> {
    let mut docs: Vec<(&str, &str)> = tree
        .files("", ".md")
        .filter(|(path, _)| !path.contains('/') || path.starts_with("docs/"))
        .collect();
    docs.sort();
    docs
}

/// The folders and files at the root a path in a document may start at.
const ROOTS: [&str; 16] = [
    "src/",
    "host/",
    "bench/",
    "docs/",
    "fuzz/",
    "migrations/",
    "templates/",
    "static/",
    "i18n/",
    "examples/",
    "tidy/",
    ".ci/",
    "Cargo.toml",
    "Rocket.toml",
    "build.rs",
    "proptest-regressions/",
];

/// The candidate path in `token`, cleaned of a line number, an anchor and
/// punctuation; `None` unless it is a plain repository path.
fn path_in(token: &str) -> Option<&str> {
    let token = token.trim().trim_end_matches(['.', ',', ';', ')']);
    let token = token.split('#').next()?;
    let token = token.split(':').next()?;
    let plain = !token.is_empty()
        && !token.contains(['*', '{', '}', '<', '>', '…', ' ', '$', '|', '?'])
        && !token.contains("NAME")
        && !token.contains("..");
    plain.then_some(token)
}

/// `(line, text)` of each backticked span and link target of `text`.
fn mentions(text: &str) -> Vec<(usize, String, bool)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), _) = (parts.next(), parts.next()) {
            found.push((number + 1, inside.to_owned(), false));
        }
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push((number + 1, rest[..end].to_owned(), true));
            }
        }
    }
    found
}

/// Rule `doc-path`.
pub fn paths(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    for (doc, text) in documents(tree) {
        let folder = doc.rsplit_once('/').map_or("", |(f, _)| f);
        for (line, mention, is_link) in mentions(text) {
            if mention.starts_with("http")
                || mention.starts_with('#')
                || mention.starts_with("mailto:")
            {
                continue;
            }
            let Some(path) = path_in(&mention) else {
                continue;
            };
            let path = if is_link && !folder.is_empty() {
                normalise(&format!("{folder}/{path}"))
            } else {
                normalise(path)
            };
            if !ROOTS.iter().any(|root| path.starts_with(root)) {
                continue;
            }
            if !tree.exists(&path) {
                found.push(Violation {
                    path: doc.to_owned(),
                    line,
                    rule: "doc-path",
                    message: format!("names `{path}`, which does not exist"),
                });
            }
        }
    }
    found
}

/// `path` with `./` and `dir/../` taken out.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.ends_with('/') {
        format!("{joined}/")
    } else {
        joined
    }
}

/// The rules' names, as an invariant names them (``tidy rule `name` ``).
pub const RULES: [&str; 9] = [
    "file-circle",
    "module-circle",
    "pipeline",
    "engine-sql",
    "apply-checked",
    "route-import",
    "same-origin",
    "doc-path",
    "invariant",
];

/// Every function name the tree's Rust defines.
fn functions(tree: &Tree) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for (_, text) in tree.files("", ".rs") {
        let source = Source::of(text);
        for at in rust::words(&source.code, "fn") {
            let rest = source.code[at + 2..].trim_start();
            let len = rest
                .find(|c: char| !rust::ident_char(c))
                .unwrap_or(rest.len());
            names.insert(rest[..len].to_owned());
        }
    }
    names
}

/// Whether `name` reads as a test's name (snake case, three words or more).
fn test_like(name: &str) -> bool {
    name.matches('_').count() >= 2
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Rule `invariant`: over the bullets of ARCHITECTURE.md's `## Invariants`.
pub fn invariants(tree: &Tree) -> Vec<Violation> {
    let Some(text) = tree.text("ARCHITECTURE.md") else {
        return Vec::new();
    };
    let functions = functions(tree);
    let mut found = Vec::new();
    let mut inside = false;
    let mut bullets: Vec<(usize, String)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("## ") {
            inside = line.trim() == "## Invariants";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(rest) = line.strip_prefix("- ") {
            bullets.push((number + 1, rest.to_owned()));
        } else if line.starts_with("  ") {
            if let Some((_, bullet)) = bullets.last_mut() {
                bullet.push(' ');
                bullet.push_str(line.trim());
            }
        }
    }
    for (line, bullet) in bullets {
        let Some((_, held_by)) = bullet.split_once("*Held by*") else {
            found.push(Violation {
                path: "ARCHITECTURE.md".into(),
                line,
                rule: "invariant",
                message: "an invariant that names no check (`*Held by*`)".into(),
            });
            continue;
        };
        let mut named = 0;
        let mut spans = held_by.split('`');
        let mut before = spans.next().unwrap_or_default().to_owned();
        while let (Some(name), after) = (spans.next(), spans.next()) {
            if before.trim_end().ends_with("tidy rule")
                || before.trim_end().ends_with("tidy rules")
                || RULES.contains(&name) && before.contains("tidy")
            {
                named += 1;
                if !RULES.contains(&name) {
                    found.push(Violation {
                        path: "ARCHITECTURE.md".into(),
                        line,
                        rule: "invariant",
                        message: format!("names tidy rule `{name}`, which does not exist"),
                    });
                }
            } else if test_like(name) {
                named += 1;
                if !functions.contains(name) {
                    found.push(Violation {
                        path: "ARCHITECTURE.md".into(),
                        line,
                        rule: "invariant",
                        message: format!("names the test `{name}`, which does not exist"),
                    });
                }
            }
            before = after.unwrap_or_default().to_owned();
        }
        if named == 0 && !held_by.contains("the compiler") && !held_by.contains("the type") {
            found.push(Violation {
                path: "ARCHITECTURE.md".into(),
                line,
                rule: "invariant",
                message: "*Held by* names no test, tidy rule or type".into(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_naming_a_missing_path_is_found() {
        let tree = Tree::of(&[
            (
                "README.md",
                "See `src/a.rs` and `src/gone.rs:12`, [b](docs/b.md), `config.toml`.\n",
            ),
            (
                "docs/b.md",
                "![shot](screenshots/x.png) and [back](../README.md#top)\n",
            ),
            ("src/a.rs", ""),
        ]);
        let found: Vec<(String, usize, String)> = paths(&tree)
            .into_iter()
            .map(|v| (v.path, v.line, v.message))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found
            .iter()
            .any(|f| f.0 == "docs/b.md" && f.2.contains("docs/screenshots/x.png")));
        assert!(found
            .iter()
            .any(|f| f.0 == "README.md" && f.2.contains("src/gone.rs")));
    }

    #[test]
    fn an_invariant_without_a_check_or_with_a_missing_test_is_found() {
        let architecture = "# A\n\n## Invariants\n\n- Held well. *Held by* `the_test_that_exists` and tidy rule `file-circle`.\n- Held by hope.\n- Named wrongly. *Held by* `a_test_that_is_gone`.\n- Ruled wrongly. *Held by* tidy rule `no-such-rule`.\n\n## After\n\n- not an invariant\n";
        let tree = Tree::of(&[
            ("ARCHITECTURE.md", architecture),
            ("src/lib.rs", "#[test]\nfn the_test_that_exists() {}\n"),
        ]);
        let found: Vec<(usize, String)> = invariants(&tree)
            .into_iter()
            .map(|v| (v.line, v.message))
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0].0, 6);
        assert!(found[1].1.contains("a_test_that_is_gone"));
        assert!(found[2].1.contains("no-such-rule"));
    }
}
