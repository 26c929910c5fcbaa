//! Rebuilds when a migration changes: `sqlx::migrate!` embeds the migration
//! files, and on stable Rust the compiler does not track them itself.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
