//! Rules for `src/routes/`. `route-import`: a route file (one that declares
//! a route) imports no other route file; what routes share lives in files
//! that declare none (the request guards, the sign-in's end, the account
//! screen's listings, sudo mode). `same-origin`: a route that changes
//! something (`post`, `put`, `patch`, `delete`) takes the same-origin guard,
//! itself or inside the request it takes.

use std::collections::BTreeSet;

use crate::graph::Graph;
use crate::rust::{self, Source};
use crate::{Tree, Violation};

/// The guards that hold `SameOrigin` (a mutating route takes one of them).
pub const SAME_ORIGIN_GUARDS: [&str; 3] = ["SameOrigin", "AccountRequest", "GuestRequest"];

/// Posts that change nothing and answer the same to everyone, so that a
/// cross-site one learns nothing either (file, handler).
pub const CHANGES_NOTHING: [(&str, &str); 1] = [
    // An unknown intent kind is 404 before the caller is checked.
    ("src/routes/intents.rs", "unknown"),
];

/// The files under `folder` that declare a route.
fn route_files(tree: &Tree, folder: &str) -> BTreeSet<String> {
    tree.files(folder, ".rs")
        .filter(|(_, text)| !rust::routes(&Source::of(text)).is_empty())
        .map(|(path, _)| path.to_owned())
        .collect()
}

/// Rule `route-import`.
pub fn route_imports(tree: &Tree) -> Vec<Violation> {
    let routes = route_files(tree, "src/routes/");
    let graph = Graph::of(tree);
    let mut found = Vec::new();
    for from in &routes {
        let Some(targets) = graph.edges.get(from) else {
            continue;
        };
        for (to, (line, name)) in targets {
            if routes.contains(to) {
                found.push(Violation {
                    path: from.clone(),
                    line: *line,
                    rule: "route-import",
                    message: format!(
                        "a route file imports another route file ({to}: {name}); move what they share below the routes"
                    ),
                });
            }
        }
    }
    found
}

/// Rule `same-origin`, over every route of `src/`.
pub fn same_origin(tree: &Tree) -> Vec<Violation> {
    let mut found = Vec::new();
    for (path, text) in tree.files("src/", ".rs") {
        for route in rust::routes(&Source::of(text)) {
            if route.method == "get" || CHANGES_NOTHING.contains(&(path, route.handler.as_str())) {
                continue;
            }
            let guarded = SAME_ORIGIN_GUARDS
                .iter()
                .any(|guard| rust::words(&route.parameters, guard).next().is_some());
            if !guarded {
                found.push(Violation {
                    path: path.to_owned(),
                    line: route.line,
                    rule: "same-origin",
                    message: format!(
                        "`{}` changes something but takes no same-origin guard ({})",
                        route.handler,
                        SAME_ORIGIN_GUARDS.join(", ")
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
    fn a_route_file_importing_another_is_found_but_a_shared_piece_is_not() {
        let tree = Tree::of(&[
            ("src/lib.rs", "mod routes;\n"),
            ("src/routes/mod.rs", "mod a;\nmod b;\nmod posting;\n"),
            ("src/routes/posting.rs", "pub struct AccountRequest;\n"),
            (
                "src/routes/a.rs",
                "use super::b::listing;\nuse super::posting::AccountRequest;\n#[get(\"/a\")]\npub fn a() {}\n",
            ),
            ("src/routes/b.rs", "pub fn listing() {}\n#[get(\"/b\")]\npub fn b() {}\n"),
        ]);
        let found = route_imports(&tree);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].path.as_str(), found[0].line),
            ("src/routes/a.rs", 1)
        );
    }

    #[test]
    fn a_post_without_the_same_origin_guard_is_found() {
        let tree = Tree::of(&[(
            "src/routes/x.rs",
            "#[post(\"/x\")]\npub fn open(session: Session) {}\n#[post(\"/y\")]\npub fn held(caller: AccountRequest<'_>) {}\n#[get(\"/z\")]\npub fn page() {}\n",
        )]);
        let found = same_origin(&tree);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("`open`"));
    }
}
