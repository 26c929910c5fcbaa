//! Who imports whom under `src/`: each file is a module, and a file imports
//! another when a path it writes — in a `use` or inline, from `crate`,
//! `super`, `self` or a child module — names an item that the other file
//! defines (re-exports are followed to the item). A folder's `mod.rs` (and
//! `lib.rs`) declares and re-exports its children: what it takes from below
//! itself is containment, not an import. Rules: no circle between files,
//! and none between the crate's top-level modules.

use std::collections::{BTreeMap, BTreeSet};

use crate::rust::{self, Source, UsePath};
use crate::{Tree, Violation};

/// One import: the line of the path in the importing file, and the name.
type Because = (usize, String);

/// The crate's modules and what each file imports.
pub struct Graph {
    /// Module path (segments below `crate`) → its file.
    modules: BTreeMap<Vec<String>, String>,
    /// File → its module path.
    module_of: BTreeMap<String, Vec<String>>,
    /// Module → names its file defines.
    defined: BTreeMap<Vec<String>, BTreeSet<String>>,
    /// Module → its `use` paths.
    uses: BTreeMap<Vec<String>, Vec<UsePath>>,
    /// File → file it imports → why (the first place).
    pub edges: BTreeMap<String, BTreeMap<String, Because>>,
}

/// The module path of the file at `path` (`src/a/b.rs`, `src/a/b/mod.rs` →
/// `a::b`; `src/lib.rs` → the crate).
fn module_path(path: &str) -> Vec<String> {
    let inner = path.trim_start_matches("src/").trim_end_matches(".rs");
    let mut segments: Vec<String> = inner.split('/').map(str::to_owned).collect();
    if segments
        .last()
        .is_some_and(|s| s == "mod" || s == "lib" || s == "main")
    {
        segments.pop();
    }
    segments
}

/// The inline modules of `source` (`mod name { … }`): name and byte range.
fn inline_modules(source: &Source) -> Vec<(String, std::ops::Range<usize>)> {
    let code = &source.code;
    let mut found = Vec::new();
    for at in rust::words(code, "mod") {
        let rest = &code[at + 3..];
        let trimmed = rest.trim_start();
        let len = trimmed
            .find(|c: char| !rust::ident_char(c))
            .unwrap_or(trimmed.len());
        let name = &trimmed[..len];
        let after = trimmed[len..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        if let Some(close) = rust::closing(code, open) {
            found.push((name.to_owned(), open..close));
        }
    }
    found
}

impl Graph {
    /// The graph of `tree`'s `src/`.
    pub fn of(tree: &Tree) -> Self {
        let mut modules = BTreeMap::new();
        let mut module_of = BTreeMap::new();
        let sources: BTreeMap<String, Source> = tree
            .files("src/", ".rs")
            .map(|(path, text)| (path.to_owned(), Source::of(text)))
            .collect();
        for path in sources.keys() {
            let module = module_path(path);
            modules.insert(module.clone(), path.clone());
            module_of.insert(path.clone(), module);
        }
        // `#[path = "x_tests.rs"] mod tests;` puts a file below the module
        // that declares it.
        for (path, source) in &sources {
            for (at, _) in source.code.match_indices("#[path") {
                let line = source.line_of(at);
                let text = tree.text(path).unwrap_or_default();
                let Some(attribute) = text.lines().nth(line - 1) else {
                    continue;
                };
                let Some(file) = attribute.split('"').nth(1) else {
                    continue;
                };
                let declared = text.lines().nth(line).unwrap_or_default();
                let Some(name) = declared
                    .trim()
                    .trim_start_matches("pub ")
                    .strip_prefix("mod ")
                    .map(|n| n.trim_end_matches(';').trim())
                else {
                    continue;
                };
                let folder = path.rsplit_once('/').map_or("", |(f, _)| f);
                let target = format!("{folder}/{file}");
                if let Some(old) = module_of.get(&target).cloned() {
                    modules.remove(&old);
                    let mut module = module_of[path].clone();
                    module.push(name.to_owned());
                    modules.insert(module.clone(), target.clone());
                    module_of.insert(target, module);
                }
            }
        }
        // Test code is not part of the architecture: modules declared under
        // `#[cfg(test)]`, as files or inline, import what they test.
        let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
        for (path, source) in &sources {
            for (at, _) in source.code.match_indices("#[cfg(test)]") {
                let rest = &source.code[at + "#[cfg(test)]".len()..];
                let mut rest = rest.trim_start();
                while rest.starts_with("#[") {
                    rest = rest[rest.find(']').map_or(rest.len(), |e| e + 1)..].trim_start();
                }
                let rest = rest.trim_start_matches("pub ").trim_start();
                if let Some(declared) = rest.strip_prefix("mod ") {
                    let len = declared
                        .find(|c: char| !rust::ident_char(c))
                        .unwrap_or(declared.len());
                    if let Some(module) = module_of.get(path) {
                        let mut module = module.clone();
                        module.push(declared[..len].to_owned());
                        test_modules.insert(module);
                    }
                }
            }
        }
        let mut graph = Self {
            modules,
            module_of,
            defined: BTreeMap::new(),
            uses: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for (path, source) in &sources {
            let module = graph.module_of[path].clone();
            let mut defined: BTreeSet<String> = rust::definitions(source).into_iter().collect();
            // An inline module's items belong to it, not to the file's.
            let inline = inline_modules(source);
            for (name, _) in &inline {
                defined.insert(name.clone());
            }
            graph.defined.insert(module.clone(), defined);
            graph.uses.insert(module, rust::uses(source));
        }
        for (path, source) in &sources {
            let module = graph.module_of[path].clone();
            if test_modules.iter().any(|t| module.starts_with(t)) {
                continue;
            }
            let inline = inline_modules(source);
            let scope_of = |at: usize| {
                let mut scope = module.clone();
                if let Some((name, _)) = inline.iter().find(|(_, range)| range.contains(&at)) {
                    scope.push(name.clone());
                }
                scope
            };
            let mut paths: Vec<(usize, usize, Vec<String>)> = rust::uses(source)
                .into_iter()
                .map(|u| (u.line, u.at, u.segments))
                .collect();
            paths.extend(rust::inline_paths(source));
            for (line, at, segments) in paths {
                let scope = scope_of(at);
                if test_modules.contains(&scope) {
                    continue;
                }
                let Some((target, name)) = graph.resolve(&scope, &segments, 0) else {
                    continue;
                };
                if target == *path || graph.contains(path, &target) {
                    continue;
                }
                graph
                    .edges
                    .entry(path.clone())
                    .or_default()
                    .entry(target)
                    .or_insert((line, name));
            }
        }
        graph
    }

    /// Whether `other`'s module lies below `file`'s (a module declares and
    /// re-exports its children: containment, not an import).
    fn contains(&self, file: &str, other: &str) -> bool {
        let (Some(outer), Some(inner)) = (self.module_of.get(file), self.module_of.get(other))
        else {
            return false;
        };
        inner.len() > outer.len() && inner.starts_with(outer)
    }

    /// The file that `segments`, written in module `scope`, names an item
    /// of, and the item's name; `None` for another crate.
    fn resolve(
        &self,
        scope: &[String],
        segments: &[String],
        depth: u8,
    ) -> Option<(String, String)> {
        if depth > 8 || segments.is_empty() {
            return None;
        }
        let mut current: Vec<String>;
        let mut i = 1;
        match segments[0].as_str() {
            "crate" => current = Vec::new(),
            "self" => current = self.module_part(scope),
            "super" => {
                current = self.module_part(scope);
                current.pop();
                while segments.get(i).is_some_and(|s| s == "super") {
                    current.pop();
                    i += 1;
                }
            }
            first => {
                let module = self.module_part(scope);
                let mut child = module.clone();
                child.push(first.to_owned());
                if self.modules.contains_key(&child) {
                    current = child;
                } else if let Some(used) = self.uses.get(&module).and_then(|uses| {
                    uses.iter()
                        .find(|u| u.alias == first && u.segments[0] != first)
                }) {
                    let mut joined = used.segments.clone();
                    joined.extend(segments[1..].iter().cloned());
                    return self.resolve(&module, &joined, depth + 1);
                } else {
                    return None;
                }
            }
        }
        while let Some(next) = segments.get(i) {
            let mut child = current.clone();
            child.push(next.clone());
            if !self.modules.contains_key(&child) {
                break;
            }
            current = child;
            i += 1;
        }
        let file = self.modules.get(&current)?.clone();
        let Some(name) = segments.get(i) else {
            let name = current.last().cloned().unwrap_or_default();
            return Some((file, name));
        };
        if name == "*" || self.defined.get(&current).is_some_and(|d| d.contains(name)) {
            return Some((file, name.clone()));
        }
        let uses = self
            .uses
            .get(&current)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(reexport) = uses.iter().find(|u| u.alias == *name) {
            return self
                .resolve(&current, &reexport.segments, depth + 1)
                .or(Some((file, name.clone())));
        }
        for glob in uses.iter().filter(|u| u.alias == "*") {
            let mut joined = glob.segments.clone();
            joined.pop();
            joined.push(name.clone());
            if let Some(found) = self.resolve(&current, &joined, depth + 1) {
                if self.defined_in(&found.0, name) {
                    return Some(found);
                }
            }
        }
        Some((file, name.clone()))
    }

    /// The part of `scope` that is a module of a file (an inline module's
    /// items are looked up in its file).
    fn module_part(&self, scope: &[String]) -> Vec<String> {
        let mut module = scope.to_vec();
        while !module.is_empty() && !self.modules.contains_key(&module) {
            module.pop();
        }
        if scope.len() > module.len() {
            // `super` inside an inline module means the file's module.
            let mut inner = module.clone();
            inner.push(scope[module.len()].clone());
            return inner;
        }
        module
    }

    fn defined_in(&self, file: &str, name: &str) -> bool {
        self.module_of
            .get(file)
            .and_then(|m| self.defined.get(m))
            .is_some_and(|d| d.contains(name))
    }

    /// The top-level module a file belongs to (`src/a/b.rs` → `a`; the
    /// crate root → none).
    pub fn top_of(&self, file: &str) -> Option<String> {
        self.module_of.get(file)?.first().cloned()
    }
}

/// The strongly connected groups of more than one node of `edges`.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, node: &'a str) {
        s.index.insert(node, s.next);
        s.low.insert(node, s.next);
        s.next += 1;
        s.stack.push(node);
        s.on_stack.insert(node);
        if let Some(targets) = s.edges.get(node) {
            for target in targets {
                let target = target.as_str();
                if !s.index.contains_key(target) {
                    visit(s, target);
                    let low = s.low[node].min(s.low[target]);
                    s.low.insert(node, low);
                } else if s.on_stack.contains(target) {
                    let low = s.low[node].min(s.index[target]);
                    s.low.insert(node, low);
                }
            }
        }
        if s.low[node] == s.index[node] {
            let mut group = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                group.push(top.to_owned());
                if top == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.found
}

/// Rule `file-circle`: no file imports, through other files, one that
/// imports it.
pub fn file_circles(tree: &Tree) -> Vec<Violation> {
    let graph = Graph::of(tree);
    let plain: BTreeMap<String, BTreeSet<String>> = graph
        .edges
        .iter()
        .map(|(from, to)| (from.clone(), to.keys().cloned().collect()))
        .collect();
    circles(&plain)
        .into_iter()
        .map(|group| {
            let ties: Vec<String> = group
                .iter()
                .flat_map(|from| {
                    graph.edges[from]
                        .iter()
                        .filter(|(to, _)| group.contains(to))
                        .map(move |(to, (line, name))| format!("{from}:{line} -> {to} ({name})"))
                })
                .collect();
            let (line, _) = graph.edges[&group[0]]
                .iter()
                .find(|(to, _)| group.contains(to))
                .map(|(_, because)| because.clone())
                .unwrap_or_default();
            Violation {
                path: group[0].clone(),
                line,
                rule: "file-circle",
                message: format!(
                    "an import circle of {} files: {}",
                    group.len(),
                    ties.join("; ")
                ),
            }
        })
        .collect()
}

/// Rule `module-circle`: no top-level module of the crate imports, through
/// others, one that imports it.
pub fn module_circles(tree: &Tree) -> Vec<Violation> {
    let graph = Graph::of(tree);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut because: BTreeMap<(String, String), String> = BTreeMap::new();
    for (from, targets) in &graph.edges {
        let Some(from_top) = graph.top_of(from) else {
            continue;
        };
        for (to, (line, name)) in targets {
            let Some(to_top) = graph.top_of(to) else {
                continue;
            };
            if from_top == to_top {
                continue;
            }
            edges
                .entry(from_top.clone())
                .or_default()
                .insert(to_top.clone());
            because
                .entry((from_top.clone(), to_top.clone()))
                .or_insert_with(|| format!("{from}:{line} -> {to} ({name})"));
        }
    }
    circles(&edges)
        .into_iter()
        .map(|group| {
            let ties: Vec<String> = because
                .iter()
                .filter(|((a, b), _)| group.contains(a) && group.contains(b))
                .map(|((a, b), why)| format!("{a} -> {b}: {why}"))
                .collect();
            Violation {
                path: format!("src/{}", group[0]),
                line: 0,
                rule: "module-circle",
                message: format!(
                    "a circle of top-level modules {}: {}",
                    group.join(", "),
                    ties.join("; ")
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_circle_between_two_files_is_found_with_its_names() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::Two;\npub struct One;\n"),
            (
                "src/b.rs",
                "pub struct Two;\nfn f() { let _ = crate::a::One; }\n",
            ),
        ]);
        let found = file_circles(&tree);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("src/a.rs:1 -> src/b.rs (Two)"),
            "{}",
            found[0]
        );
        assert!(
            found[0].message.contains("src/b.rs:2 -> src/a.rs (One)"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn a_folders_reexports_are_containment_and_are_followed() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod db;\nmod config;\n"),
            (
                "src/db/mod.rs",
                "mod dialect;\npub use dialect::Dialect;\npub struct Db;\n",
            ),
            ("src/db/dialect.rs", "use super::Db;\npub struct Dialect;\n"),
            (
                "src/config.rs",
                "use crate::db::Dialect;\npub struct Settings;\n",
            ),
        ]);
        assert_eq!(file_circles(&tree), vec![]);
        let graph = Graph::of(&tree);
        assert!(graph.edges["src/config.rs"].contains_key("src/db/dialect.rs"));
        assert!(!graph.edges.contains_key("src/db/mod.rs"));
    }

    #[test]
    fn a_circle_of_top_level_modules_is_found_through_an_inline_path() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod db;\nmod config;\n"),
            (
                "src/db/mod.rs",
                "mod readers;\nmod dialect;\npub use dialect::Dialect;\n",
            ),
            ("src/db/dialect.rs", "pub struct Dialect;\n"),
            ("src/db/readers.rs", "use crate::config::Settings;\n"),
            (
                "src/config.rs",
                "pub struct Settings;\nfn f() { crate::db::Dialect::from_url(\"\"); }\n",
            ),
        ]);
        assert_eq!(file_circles(&tree), vec![], "no circle of files");
        let found = module_circles(&tree);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("config -> db"), "{}", found[0]);
        assert!(found[0].message.contains("db -> config"), "{}", found[0]);
    }

    #[test]
    fn test_code_is_left_out() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::b::g; }\n"),
            ("src/b.rs", "pub fn g() { crate::a::f(); }\n#[cfg(test)]\n#[path = \"b_tests.rs\"]\nmod tests;\n"),
            ("src/b_tests.rs", "use crate::a::f;\n"),
        ]);
        assert_eq!(file_circles(&tree), vec![]);
        let graph = Graph::of(&tree);
        assert!(!graph.edges.contains_key("src/a.rs"));
        assert!(!graph.edges.contains_key("src/b_tests.rs"));
    }

    #[test]
    fn a_test_module_is_below_its_file() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod a;\n"),
            (
                "src/a.rs",
                "pub fn f() {}\n#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n#[cfg(test)] mod more { use super::f; }\n",
            ),
            ("src/a_tests.rs", "use super::f;\n"),
        ]);
        assert_eq!(file_circles(&tree), vec![]);
        let graph = Graph::of(&tree);
        assert_eq!(
            graph.module_of["src/a_tests.rs"],
            vec!["a".to_owned(), "tests".to_owned()]
        );
    }
}
