//! Every rule of the architecture, over this repository: each place that
//! breaks one is listed with its file and line.

use std::path::Path;

#[test]
fn the_repository_keeps_every_rule_of_its_architecture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tree = tidy::Tree::read(&root).expect("the repository reads");
    let found = tidy::check(&tree);
    let listing: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        found.is_empty(),
        "{} places break the architecture's rules:\n{}",
        found.len(),
        listing.join("\n")
    );
}
