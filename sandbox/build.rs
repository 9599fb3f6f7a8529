//! Builds the box's init (`holder/init.c`), a static program the holder
//! execs once the box is built; `holder.rs` embeds it.
//!
//! On x86-64 and AArch64 without a C library (`-nostdlib`: it makes its
//! system calls itself, and a few KB are all of it); elsewhere with the
//! static C library (`KOTH_INIT_LIBC`).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=holder/init.c");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("koth-box-init");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let compiler = cc::Build::new().opt_level(2).get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-static", "-s"]);
    if arch == "x86_64" || arch == "aarch64" {
        // No C library to start it: no stack protector (its canary lives
        // in the C library's thread block), no unwind tables, and nothing
        // of libgcc's or the C library's linked in (a call the compiler
        // made to one, memset say, fails the link here).
        cmd.args(["-nostdlib", "-ffreestanding", "-fno-stack-protector", "-fno-asynchronous-unwind-tables", "-fno-pie", "-no-pie"]);
        cmd.args(["-Wl,--build-id=none"]);
    } else {
        cmd.arg("-DKOTH_INIT_LIBC");
    }
    cmd.arg("-o").arg(&out).arg("holder/init.c");
    let status = cmd.status().unwrap_or_else(|e| panic!("running the C compiler ({:?}) for the box's init: {e}", compiler.path()));
    assert!(
        status.success(),
        "building the box's init (sandbox/holder/init.c) failed: koth needs a C compiler and a static C library (Debian: gcc libc6-dev)"
    );
}
