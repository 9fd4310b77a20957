//! Embeds every file of `kernels/` into the crate (NVRTC compiles them at run time), so that
//! the list of kernel files is the folder itself, not a list kept by hand.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("cu" | "cuh")) {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let kernels = root.join("kernels");
    println!("cargo:rerun-if-changed=kernels");
    let mut files = Vec::new();
    walk(&kernels, &mut files);
    files.sort();
    let mut s = String::from("/// Every file of `kernels/`, by the name an `#include` uses.\n");
    s.push_str("pub(crate) const EMBEDDED: &[(&str, &str)] = &[\n");
    for f in &files {
        let name = f
            .strip_prefix(&kernels)
            .expect("under kernels/")
            .to_string_lossy()
            .replace('\\', "/");
        s.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    s.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("kernels.rs");
    std::fs::write(out, s).expect("write kernels.rs");
}
