//! Builds the box's init (`holder/init.c`), a static program the holder
//! execs once the box is built; `holder.rs` embeds it.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=holder/init.c");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("koth-box-init");
    let compiler = cc::Build::new().opt_level(2).get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-static", "-s", "-o"]).arg(&out).arg("holder/init.c");
    let status = cmd.status().unwrap_or_else(|e| panic!("running the C compiler ({:?}) for the box's init: {e}", compiler.path()));
    assert!(
        status.success(),
        "building the box's init (sandbox/holder/init.c) failed: koth needs a C compiler and a static C library (Debian: gcc libc6-dev)"
    );
}
