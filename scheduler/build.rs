//! `sqlx::migrate!("../sql")` embeds the migrations when this crate is
//! compiled, and Cargo does not know it reads that folder: without this, a
//! new migration is left out of the build until something else changes.
fn main() {
    println!("cargo:rerun-if-changed=../sql");
}
