//! Where the browser interface's page, style and modules are compiled in from:
//! `src/interface/` as written, or, when `scripts/build.sh` has minified them for
//! the Worker, the folder `MAILROOM_MINIFIED_INTERFACE` names (the same files,
//! minified by esbuild). Either way the page pins each module by the hash of the
//! bytes compiled in (decision 0011), so the browser runs exactly those.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MAILROOM_MINIFIED_INTERFACE");
    let folder = match std::env::var("MAILROOM_MINIFIED_INTERFACE") {
        Ok(folder) if !folder.is_empty() => folder,
        _ => format!("{}/src/interface", std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()),
    };
    println!("cargo:rustc-env=MAILROOM_INTERFACE={folder}");
}
