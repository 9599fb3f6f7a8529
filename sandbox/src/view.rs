//! What a rootless box sees: an allowlist of paths, each with its mode and
//! the reason it is there.
//!
//! A root box's program runs as an unused uid (a slot), so it may see the
//! host's whole root read-only: what that uid can read, everyone can. A
//! rootless box's program runs as the user (see [`crate::Privilege`]), and
//! everything the user can read or connect to in a visible folder would be
//! its: the mode-0600 files of the folder `koth match` was run from, the
//! user's sockets in `/tmp` or `/run/user/UID`, what they keep under `/srv`
//! or `/opt`. So a rootless box does not start from the host's root and hide
//! folders; it starts from an empty read-only root and shows only what is
//! in [`ROOTLESS_VIEW`]. Landlock agrees with it (`landlock_rules`): reads
//! and execution are allowed beneath the read-only entries and `/proc`,
//! writes only in the box's own folders.
//!
//! Every toolchain koth offers is installed under `/usr` (its commands are
//! `/usr/bin/...`, `languages/*/language.json`), both on a host and in a
//! language image; a root filesystem other than `/` (an image) is shown
//! through the same list.

/// How an entry of [`ROOTLESS_VIEW`] is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The root filesystem's own path, bound read-only, nosuid and nodev
    /// (recursively: what is mounted below it comes along). Skipped where
    /// the root has none; a link there (merged-`/usr` systems' `/bin ->
    /// usr/bin`) is made as the same link.
    ReadOnly,
    /// An empty read-only folder.
    Empty,
    /// The box's work folder, read-write: on its scratch filesystem.
    Work,
    /// A private, sticky, read-write folder on the box's scratch filesystem
    /// (the one tmpfs of `Limits::disk` bytes); nothing of the host's.
    Scratch,
    /// A read-only tmpfs with the device nodes of [`crate::mounts::DEVICES`]
    /// (read-write), and `fd`, `stdin`, `stdout`, `stderr` links.
    Devices,
    /// A new procfs for the box's PID namespace, `hidepid=invisible`, its
    /// host-wide counters masked (`crate::mounts::PROC_MASKED`).
    Proc,
}

/// One path of a rootless box's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Absolute path in the box.
    pub path: &'static str,
    pub mode: Mode,
    /// Why it is there.
    pub why: &'static str,
}

/// Everything a rootless box shows, in the order it is built (a parent
/// before its children). Nothing else exists in the box: no `/home` of the
/// user's, `/root`, `/run` (so no `/run/user/UID`, no session bus, no
/// Docker socket), `/var` beyond `/var/tmp`, `/srv`, `/opt`, `/mnt`,
/// `/media`, `/sys`, and none of the host's `/tmp`, `/dev/shm` or folder
/// `koth match` was run from. docs/sandbox.md shows this table.
pub const ROOTLESS_VIEW: [Entry; 15] = [
    Entry { path: "/usr", mode: Mode::ReadOnly, why: "every toolchain: compilers, interpreters, runtimes and their libraries" },
    Entry {
        path: "/bin",
        mode: Mode::ReadOnly,
        why: "`/bin/sh` and programs run by absolute path (a link to usr/bin on merged-/usr systems)",
    },
    Entry { path: "/sbin", mode: Mode::ReadOnly, why: "the rest of the default PATH (a link to usr/sbin on merged-/usr systems)" },
    Entry { path: "/lib", mode: Mode::ReadOnly, why: "shared libraries and the dynamic loader (a link to usr/lib on merged-/usr systems)" },
    Entry { path: "/lib64", mode: Mode::ReadOnly, why: "the 64-bit dynamic loader, whose path is fixed in every x86-64 executable" },
    Entry {
        path: "/lib32",
        mode: Mode::ReadOnly,
        why: "32-bit libraries, where installed (their programs are killed by seccomp, but multilib compilers read them)",
    },
    Entry { path: "/libx32", mode: Mode::ReadOnly, why: "x32 libraries, where installed (as /lib32)" },
    Entry {
        path: "/etc",
        mode: Mode::ReadOnly,
        why: "the system's configuration toolchains read: ld.so.cache, alternatives (cc, java), java-*-openjdk, mono, ssl, \
              localtime, passwd and group, nsswitch.conf; the system's files, not the user's (its secrets, such as shadow \
              and ssh host keys, are root's with modes the user cannot read)",
    },
    Entry { path: "/home", mode: Mode::Empty, why: "holds only the work folder" },
    Entry { path: "/home/bot", mode: Mode::Work, why: "the bot's own folder (its sources, its compiled program, what it writes)" },
    Entry { path: "/tmp", mode: Mode::Scratch, why: "a private /tmp: compilers and runtimes write there (javac, go build)" },
    Entry { path: "/var/tmp", mode: Mode::Scratch, why: "the same folder as /tmp, for programs that use /var/tmp" },
    Entry { path: "/dev", mode: Mode::Devices, why: "null, zero, full, random, urandom, and /dev/fd" },
    Entry { path: "/dev/shm", mode: Mode::Scratch, why: "POSIX shared memory and semaphores (Python's multiprocessing)" },
    Entry { path: "/proc", mode: Mode::Proc, why: "the box's own processes: runtimes read /proc/self, /proc/stat, /proc/meminfo" },
];

/// The read-only entries, as paths relative to the root (`usr`, `bin`, ...).
pub(crate) fn read_only() -> impl Iterator<Item = &'static str> {
    ROOTLESS_VIEW.iter().filter(|e| e.mode == Mode::ReadOnly).map(|e| e.path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mount code makes the folders of the box itself (work folder,
    /// scratch, /dev, /proc) where they have always been: the table must
    /// name them there, and list a parent before its children.
    #[test]
    fn the_table_names_the_boxes_own_folders_and_parents_come_first() {
        use crate::mounts::WORK_DIR;
        let path_of = |m: Mode| ROOTLESS_VIEW.iter().filter(move |e| e.mode == m).map(|e| e.path);
        assert_eq!(path_of(Mode::Work).collect::<Vec<_>>(), [WORK_DIR]);
        assert_eq!(path_of(Mode::Scratch).collect::<Vec<_>>(), ["/tmp", "/var/tmp", "/dev/shm"]);
        assert_eq!(path_of(Mode::Devices).collect::<Vec<_>>(), ["/dev"]);
        assert_eq!(path_of(Mode::Proc).collect::<Vec<_>>(), ["/proc"]);
        for (i, e) in ROOTLESS_VIEW.iter().enumerate() {
            assert!(e.path.starts_with('/') && !e.path.ends_with('/'), "{}", e.path);
            let parent = std::path::Path::new(e.path).parent().unwrap();
            if parent != std::path::Path::new("/") && parent != std::path::Path::new("/var") {
                let p = ROOTLESS_VIEW.iter().position(|o| std::path::Path::new(o.path) == parent);
                assert!(p.is_some_and(|p| p < i), "{} comes before its parent", e.path);
            }
        }
        assert!(read_only().all(|p| !p.contains('/')), "read-only entries are top-level folders");
    }
}
