//! Where the browser interface's page, style and modules are compiled in from:
//! `src/interface/` as written, or, when `scripts/build.sh` has minified them for
//! the Worker, the folder `MAILROOM_MINIFIED_INTERFACE` names (the same files,
//! minified by esbuild). Either way the page pins each module by the hash of the
//! bytes compiled in (decision 0011), so the browser runs exactly those.
//!
//! One module is not the project's own: DOMPurify, which sanitises a message's
//! HTML before the interface shows it (decision 0021), a pinned devDependency
//! compiled in from `node_modules/` (or from the minified folder). The Worker is
//! never built without it. A native build (the tests) may run before or without
//! `npm ci`; it then compiles in a stand-in that refuses to sanitise, so the
//! interface it would serve shows plain text only, never HTML unsanitised.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MAILROOM_MINIFIED_INTERFACE");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let minified = std::env::var("MAILROOM_MINIFIED_INTERFACE").ok().filter(|folder| !folder.is_empty());
    let folder = minified.clone().unwrap_or_else(|| format!("{manifest}/src/interface"));
    println!("cargo:rustc-env=MAILROOM_INTERFACE={folder}");

    let dompurify = match &minified {
        Some(folder) => format!("{folder}/vendor/purify.js"),
        None => format!("{manifest}/node_modules/dompurify/dist/purify.es.mjs"),
    };
    println!("cargo:rerun-if-changed={dompurify}");
    let for_the_worker = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "wasm32");
    let dompurify = if Path::new(&dompurify).is_file() {
        dompurify
    } else if for_the_worker {
        panic!(
            "{dompurify} is missing: the interface sanitises mail with DOMPurify; run scripts/setup.sh (npm ci) first"
        );
    } else {
        println!("cargo:warning=DOMPurify is not installed (run `npm ci`); this native build serves a stand-in");
        let stand_in = format!("{}/purify-missing.js", std::env::var("OUT_DIR").unwrap_or_default());
        let source = "// DOMPurify was not installed when this was built: nothing is sanitised, so no HTML is shown.\n\
                      export default { isSupported: false };\n";
        if std::fs::write(&stand_in, source).is_err() {
            panic!("could not write {stand_in}");
        }
        stand_in
    };
    println!("cargo:rustc-env=MAILROOM_DOMPURIFY={dompurify}");
}
