//! The knowledge base is embedded with `include_dir!`, which cannot tell cargo about the files it
//! reads on stable Rust; without this, editing `knowledge/` would leave a stale copy in the binary.
fn main() {
    println!("cargo:rerun-if-changed=knowledge");
    println!("cargo:rerun-if-changed=build.rs");
}
