//! The rules of Gatehouse's architecture as checks over the source text, in
//! the manner of rust-analyzer's tidy tests: each rule reads a [`Tree`]
//! (the repository's files as text) and answers the places that break it,
//! each naming file and line. `tests/house.rs` runs every rule over the
//! repository itself; each rule's own tests run it on a small tree that
//! breaks it.

pub mod apply_checked;
pub mod docs;
pub mod engine_sql;
pub mod graph;
pub mod pipeline;
pub mod routes;
pub mod rust;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The repository's files as text, by path relative to its root (with
/// `/` as separator).
#[derive(Debug, Default, Clone)]
pub struct Tree {
    files: BTreeMap<String, String>,
}

impl Tree {
    /// A tree of the given files (for a rule's tests).
    pub fn of(files: &[(&str, &str)]) -> Self {
        Self {
            files: files
                .iter()
                .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
                .collect(),
        }
    }

    /// The files below `root` the rules read: `src/`, the documents at the
    /// root and in `docs/`; and the paths of every other file (their text is
    /// not kept), so that a document's path can be checked.
    pub fn read(root: &Path) -> std::io::Result<Self> {
        let mut files = BTreeMap::new();
        walk(root, root, &mut files)?;
        Ok(Self { files })
    }

    /// The text of `path`, if the tree holds it.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    /// Whether `path` is a file or a folder of the tree.
    pub fn exists(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        if self.files.contains_key(path) {
            return true;
        }
        let folder = format!("{path}/");
        self.files
            .range(folder.clone()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&folder))
    }

    /// Every file whose path starts with `prefix` and ends with `suffix`.
    pub fn files<'a>(
        &'a self,
        prefix: &'a str,
        suffix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.files
            .iter()
            .filter(move |(p, _)| p.starts_with(prefix) && p.ends_with(suffix))
            .map(|(p, t)| (p.as_str(), t.as_str()))
    }
}

/// Whether the text of a file at `path` is kept (the rest are listed only).
fn kept(path: &str) -> bool {
    let rust = path.ends_with(".rs")
        && (path.starts_with("src/") || path.starts_with("host/") || path.starts_with("tidy/"));
    rust || (path.ends_with(".md") && (!path.contains('/') || path.starts_with("docs/")))
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if matches!(
            name.as_ref(),
            "target" | ".git" | "node_modules" | ".mirror"
        ) {
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if entry.file_type()?.is_dir() {
            walk(root, &path, files)?;
        } else {
            let text = if kept(&relative) {
                std::fs::read_to_string(&path).unwrap_or_default()
            } else {
                String::new()
            };
            files.insert(relative, text);
        }
    }
    Ok(())
}

/// One place that breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The file, relative to the repository's root.
    pub path: String,
    /// Its line, from 1 (0: the file as a whole).
    pub line: usize,
    /// The rule's name.
    pub rule: &'static str,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: [{}] {}",
            self.path, self.line, self.rule, self.message
        )
    }
}

/// Every rule, run over `tree`.
pub fn check(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    found.extend(graph::file_circles(tree));
    found.extend(graph::module_circles(tree));
    found.extend(pipeline::check(tree));
    found.extend(engine_sql::check(tree));
    found.extend(apply_checked::check(tree));
    found.extend(routes::route_imports(tree));
    found.extend(routes::same_origin(tree));
    found.extend(docs::paths(tree));
    found.extend(docs::invariants(tree));
    found.sort();
    found
}
