//! The box's filesystem, built by the holder inside its new mount namespace.
//!
//! ```text
//! /               the chosen root, cloned recursively: read-only, nosuid, nodev
//!                 (a rootless box: an empty read-only tmpfs with only the
//!                 read-only binds of `view::ROOTLESS_VIEW`, see `crate::view`)
//! /home           empty read-only tmpfs (hides the host's homes)
//! /home/bot       the work folder           ┐
//! /tmp, /var/tmp  private, sticky (one dir)  ├ one tmpfs of `limits.disk` bytes
//! /dev/shm        private, sticky           ┘ (charged to the writer's memory cgroup)
//! /dev            read-only tmpfs: null zero full random urandom, fd and std* links
//! /proc           a new procfs for the box's PID namespace, hidepid=invisible
//! /sys, /run      empty read-only tmpfs (a rootless box has neither)
//! ```
//!
//! The scratch tmpfs is mounted on a per-box directory of the runtime dir, but
//! only inside the box's namespace: the host never sees it, and it vanishes
//! with the namespace. `pivot_root` then detaches the host's tree; where a
//! seccomp profile refuses `pivot_root` (Docker's default profile does, with
//! every capability), the root is moved over `/` and chrooted into instead
//! ([`RootSwitch`]), and the sandbox says so.
//!
//! **A box built by root starts from a template** (where `pivot_root` is
//! allowed): its mount namespace is not a copy of the host's, which the
//! build would have to make private and then detach (the detach waits for
//! an RCU grace period, the largest and most variable step of a new box),
//! but a copy of a namespace made once a process ([`template_main`]) that
//! holds nothing but a read-only, empty tmpfs with one folder, `/box`. The
//! trees the box shows from the host (its root, the device nodes) are
//! cloned by the unsharer before it enters the template ([`HostTrees`]),
//! the scratch tmpfs is mounted on `/box` and the root built on it as
//! before, and the root is moved over the template's `/` and chrooted into:
//! under it is only the template's empty tmpfs, never the host's tree. A
//! rootless box cannot enter a namespace owned by root's user namespace:
//! it starts from a copy of the host's and detaches it, as before.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::marks::Marks;
use crate::{init, sys, view};

/// Files and folders of the box's `/proc` that read as empty. A procfs is
/// the box's own for processes, but these are the host's: the load
/// average, pressure stall information, interrupt and disk counters, and
/// the scheduler's statistics move with the other bots' CPU and I/O, so a
/// bot could watch its opponents think during simultaneous moves; the rest
/// (timers, keys, kcore) are the usual masked paths of container runtimes.
/// Kept, because runtimes read them (Node's `os.cpus()` and glibc's CPU
/// count read `/proc/stat`, JVMs and Python read `/proc/meminfo`): `stat`
/// and `meminfo`, whose totals move too (documented in docs/sandbox.md).
pub const PROC_MASKED: [&str; 12] = [
    "loadavg",
    "pressure",
    "interrupts",
    "softirqs",
    "diskstats",
    "schedstat",
    "vmstat",
    "timer_list",
    "sched_debug",
    "kcore",
    "keys",
    "latency_stats",
];

/// The template's one folder, where a box started from it mounts its
/// scratch tmpfs (see the module's docs).
pub(crate) const TEMPLATE_SCRATCH: &str = "/box";

/// Where the work folder appears inside the box.
pub const WORK_DIR: &str = "/home/bot";
/// Device nodes bound into the box's /dev.
pub const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

/// How the holder makes the box's tree its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootSwitch {
    /// `pivot_root`, then the old root detached: the host's tree is not in
    /// the box's mount namespace at all.
    PivotRoot,
    /// `pivot_root` is refused by a seccomp profile (Docker's default one
    /// refuses it whatever the capabilities): the box's root is moved over
    /// `/` (`MS_MOVE`) and the holder chroots into it, as runc does with
    /// `no_pivot_root`. The host's tree stays mounted under the box's root,
    /// reachable only by `chroot`, which needs `CAP_SYS_CHROOT` (no bot has
    /// any capability) and which koth's seccomp filter refuses to every bot;
    /// programs joining the box land on its root (`setns` follows the mounts
    /// stacked on the namespace's root), and `/proc/*/mountinfo` in the box
    /// lists only mounts under it.
    MoveAndChroot,
}

impl std::fmt::Display for RootSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RootSwitch::PivotRoot => "pivot_root",
            RootSwitch::MoveAndChroot => "move_and_chroot",
        })
    }
}

impl RootSwitch {
    /// What this process may use: `pivot_root` with null paths fails with
    /// `EFAULT` where the call is allowed (the paths are read after the
    /// permission check) and `EPERM` where a seccomp filter, or a missing
    /// `CAP_SYS_ADMIN`, refuses it. Asked once; `root` says the boxes are
    /// built by this process as root (a rootless box's holder has its
    /// capabilities in a user namespace of its own: always `pivot_root`).
    pub fn for_this_process(root: bool) -> RootSwitch {
        static PROBED: std::sync::OnceLock<RootSwitch> = std::sync::OnceLock::new();
        if !root {
            return RootSwitch::PivotRoot;
        }
        *PROBED.get_or_init(|| {
            // SAFETY: null paths: the kernel checks permission, then fails to read them.
            let r = unsafe { libc::syscall(libc::SYS_pivot_root, std::ptr::null::<libc::c_char>(), std::ptr::null::<libc::c_char>()) };
            let errno = io::Error::last_os_error().raw_os_error();
            Self::from_probe(r, errno)
        })
    }

    /// The decision of [`RootSwitch::for_this_process`] from its probe's result.
    pub fn from_probe(result: libc::c_long, errno: Option<i32>) -> RootSwitch {
        if result < 0 && errno == Some(libc::EPERM) {
            RootSwitch::MoveAndChroot
        } else {
            RootSwitch::PivotRoot
        }
    }
}

/// Everything the holder needs, prepared by the supervisor.
pub(crate) struct MountPlan {
    pub root: PathBuf,
    pub scratch: PathBuf,
    pub disk: u64,
    pub uid: u32,
    pub gid: u32,
    pub loopback: bool,
    /// Absolute folders of the root to show empty (see `SandboxConfig::hidden`).
    pub hidden: Vec<PathBuf>,
    /// Show only [`view::ROOTLESS_VIEW`] of the root, not all of it (a
    /// rootless box).
    pub allowlist: bool,
    pub root_switch: RootSwitch,
    /// Start from the template namespace (`scratch` is then
    /// [`TEMPLATE_SCRATCH`]), not from a copy of the host's.
    pub from_template: bool,
}

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("paths have no NUL")
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Every path and option string the holder uses, made by the supervisor
/// before the holder starts: the holder shares the supervisor's memory
/// until it execs the box's init, so it allocates nothing (see `spawn`).
pub(crate) struct MountPaths {
    root_fs: CString,
    scratch: CString,
    scratch_options: CString,
    uid: u32,
    gid: u32,
    loopback: bool,
    /// `<scratch>/root`, where the box's root is attached.
    root: CString,
    work: CString,
    tmp: CString,
    shm: CString,
    home: CString,
    home_bot: CString,
    root_tmp: CString,
    root_var_tmp: CString,
    /// Folders of the root shown empty: `/run`, `/sys` and the hidden ones.
    emptied: Vec<CString>,
    /// A rootless box's root: built from the allowlist instead of cloned.
    view: Option<ViewPaths>,
    dev: CString,
    /// (host device, its mount point in the box's /dev)
    devices: Vec<(CString, CString)>,
    /// (link, target) in the box's /dev
    dev_links: Vec<(CString, CString)>,
    dev_shm: CString,
    /// The box's own `/dev/null`, bound over the masked `/proc` files.
    dev_null: CString,
    proc: CString,
    proc_masked: Vec<CString>,
    root_switch: RootSwitch,
    from_template: bool,
}

/// How a rootless box's root is built (see [`view`]): an empty tmpfs at
/// `MountPaths::root`, these folders and links made on it, these trees bound
/// into it read-only, and the tmpfs made read-only.
struct ViewPaths {
    /// Folders made on the new root, parents first: the mount points of the
    /// box's own folders (`/home`, `/tmp`, `/var/tmp`, `/dev`, `/proc`).
    dirs: Vec<CString>,
    /// (target, link): a read-only entry that is a link in the root
    /// (`/bin -> usr/bin`), made as the same link.
    links: Vec<(CString, CString)>,
    /// (the root's folder, its mount point in the new root).
    binds: Vec<(CString, CString)>,
}

impl ViewPaths {
    /// What of [`view::ROOTLESS_VIEW`] the root filesystem `root_fs` has,
    /// placed under `root` (where the box's root is built). Read by the
    /// supervisor, before the holder starts: the holder allocates nothing.
    fn new(root_fs: &Path, root: &Path) -> ViewPaths {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for e in view::ROOTLESS_VIEW.iter().filter(|e| e.mode != view::Mode::ReadOnly) {
            let path = Path::new(e.path);
            let parent = path.parent().unwrap_or(Path::new("/"));
            // A folder inside another of the box's own mounts (/home/bot in
            // /home, /dev/shm in /dev) is made on that mount.
            if parent != Path::new("/") && view::ROOTLESS_VIEW.iter().any(|o| Path::new(o.path) == parent) {
                continue;
            }
            for a in path.ancestors().collect::<Vec<_>>().into_iter().rev().skip(1) {
                let d = root.join(a.strip_prefix("/").unwrap_or(a));
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        let (mut links, mut binds) = (Vec::new(), Vec::new());
        for rel in view::read_only() {
            let (host, inside) = (root_fs.join(rel), root.join(rel));
            match std::fs::symlink_metadata(&host) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(&host) {
                        links.push((c(&target), c(&inside)));
                    }
                }
                Ok(m) if m.is_dir() => binds.push((c(&host), c(&inside))),
                _ => {} // not in this root (or not a folder): not shown
            }
        }
        ViewPaths { dirs: dirs.iter().map(|d| c(d)).collect(), links, binds }
    }
}

impl MountPlan {
    pub(crate) fn paths(&self) -> MountPaths {
        let s = &self.scratch;
        let root = s.join("root");
        let dev = root.join("dev");
        let proc_dir = root.join("proc");
        let mut emptied = vec![c(&root.join("run")), c(&root.join("sys"))];
        emptied.extend(self.hidden.iter().map(|d| c(&root.join(d.strip_prefix("/").unwrap_or(d)))));
        MountPaths {
            root_fs: c(&self.root),
            scratch: c(s),
            scratch_options: CString::new(format!("size={},mode=0755", self.disk)).expect("digits"),
            uid: self.uid,
            gid: self.gid,
            loopback: self.loopback,
            root: c(&root),
            work: c(&s.join("work")),
            tmp: c(&s.join("tmp")),
            shm: c(&s.join("shm")),
            home: c(&root.join("home")),
            home_bot: c(&root.join("home/bot")),
            root_tmp: c(&root.join("tmp")),
            root_var_tmp: c(&root.join("var/tmp")),
            emptied,
            view: self.allowlist.then(|| ViewPaths::new(&self.root, &root)),
            devices: DEVICES.iter().map(|d| (c(&Path::new("/dev").join(d)), c(&dev.join(d)))).collect(),
            dev_links: [
                ("fd", "/proc/self/fd"),
                ("stdin", "/proc/self/fd/0"),
                ("stdout", "/proc/self/fd/1"),
                ("stderr", "/proc/self/fd/2"),
            ]
            .iter()
            .map(|(l, t)| (c(&dev.join(l)), CString::new(*t).expect("static")))
            .collect(),
            dev_shm: c(&dev.join("shm")),
            dev_null: c(&dev.join("null")),
            dev: c(&dev),
            proc_masked: PROC_MASKED.iter().map(|n| c(&proc_dir.join(n))).collect(),
            proc: c(&proc_dir),
            root_switch: self.root_switch,
            from_template: self.from_template,
        }
    }
}

/// The host's trees a box started from the template shows, cloned
/// (`open_tree`, detached, close-on-exec) by the unsharer while it still
/// sees the host's mounts, then attached by the holder in the box's
/// namespace. Plain descriptors: the unsharer allocates nothing.
pub(crate) struct HostTrees {
    /// The root filesystem, recursively, read-only, nosuid, nodev.
    root: RawFd,
    /// Each of [`DEVICES`], nosuid, noexec (as `MountPaths::devices`).
    devices: [RawFd; DEVICES.len()],
}

impl HostTrees {
    /// Clone the trees `p` names, in the caller's mount namespace; a
    /// failure is reported on `report` and ends the child.
    pub(crate) fn open(p: &MountPaths, report: RawFd) -> HostTrees {
        const READ_ONLY: u64 = sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;
        let clone = |path: &CStr, attrs: u64, stage: &str| -> RawFd {
            let tree = match sys::open_tree_clone_recursive(path) {
                Ok(fd) => fd,
                Err(e) => sys::child_fail(report, stage, e),
            };
            if let Err(e) = sys::mount_setattr_recursive(tree.as_raw_fd(), attrs) {
                sys::child_fail(report, stage, e)
            }
            std::os::fd::IntoRawFd::into_raw_fd(tree)
        };
        let root = clone(&p.root_fs, READ_ONLY, "cloning the root filesystem read-only (open_tree, mount_setattr)");
        let mut devices = [-1; DEVICES.len()];
        for (fd, (host, _)) in devices.iter_mut().zip(&p.devices) {
            *fd = clone(host, sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NOEXEC, "cloning a device node (open_tree, mount_setattr)");
        }
        HostTrees { root, devices }
    }

    /// Every descriptor, for the holder to keep open until it attaches them.
    pub(crate) fn fds(&self) -> [RawFd; DEVICES.len() + 1] {
        let mut all = [self.root; DEVICES.len() + 1];
        all[1..].copy_from_slice(&self.devices);
        all
    }
}

/// What the template's maker leaves for the launcher (it shares its memory).
pub(crate) struct TemplateMade {
    /// The template's mount namespace (`/proc/self/ns/mnt`), close-on-exec,
    /// in the descriptor table the maker shares (`CLONE_FILES`); -1 until made.
    pub ns: RawFd,
    /// The step that failed and its errno, when one did.
    pub failed: Option<(&'static str, i32)>,
}

/// Body of the template's maker, a child sharing the launcher's memory and
/// descriptor table (`CLONE_VM | CLONE_VFORK | CLONE_FILES`), not its
/// filesystem information: a new mount namespace made private, opened, a
/// small tmpfs mounted on `at` (a folder of the runtime dir, seen only in
/// that namespace) with the empty folder `box` (`at_box`), made the root by
/// `pivot_root`, the old root detached, and the tmpfs made read-only. Then
/// it exits; the open descriptor keeps the namespace. Allocation-free.
pub(crate) fn template_main(at: &CStr, at_box: &CStr, made: &mut TemplateMade) -> ! {
    macro_rules! step {
        ($stage:expr, $e:expr) => {{
            if let Err(e) = $e {
                made.failed = Some(($stage, e.raw_os_error().unwrap_or(0)));
                // SAFETY: ends this child, touching nothing of the launcher's.
                unsafe { libc::_exit(1) }
            }
        }};
    }
    no_umask();
    // SAFETY: integer flags only; this child has its own filesystem information (no CLONE_FS).
    step!("creating its mount namespace (unshare)", check(unsafe { libc::unshare(libc::CLONE_NEWNS) }));
    step!(
        "making its mounts private",
        // SAFETY: a static path and null pointers, as a propagation change takes.
        check(unsafe { libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) })
    );
    // SAFETY: a static C string; the descriptor goes to the shared table.
    let ns = unsafe { libc::open(c"/proc/self/ns/mnt".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    step!("opening its mount namespace (/proc/self/ns/mnt)", check(ns));
    made.ns = ns;
    const SEALED: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    step!("mounting its tmpfs", mount(c"koth-template", at, c"tmpfs", SEALED, Some(c"size=16k,mode=0755")));
    step!("creating its folder", mkdir(at_box, 0o755));
    // SAFETY: a NUL-terminated path alive across the call.
    step!("entering its tmpfs", check(unsafe { libc::chdir(at.as_ptr()) }));
    // SAFETY: static C strings; pivot_root(".", ".") stacks the old root under the new one.
    step!("pivot_root", check(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int }));
    // SAFETY: a static C string.
    step!("detaching the host's tree", check(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) }));
    // SAFETY: a static C string.
    step!("chdir /", check(unsafe { libc::chdir(c"/".as_ptr()) }));
    step!("making its tmpfs read-only", remount_ro(c"/"));
    // SAFETY: the maker's work is done; _exit skips destructors that belong to the launcher.
    unsafe { libc::_exit(0) }
}

fn mount(src: &CStr, target: &CStr, fstype: &CStr, flags: libc::c_ulong, data: Option<&CStr>) -> io::Result<()> {
    // SAFETY: every pointer is a NUL-terminated string alive across the call (or null where mount allows it).
    check(unsafe {
        libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), flags, data.map_or(std::ptr::null(), |d| d.as_ptr().cast()))
    })
}

fn bind(src: &CStr, target: &CStr, extra: libc::c_ulong) -> io::Result<()> {
    // SAFETY: NUL-terminated paths alive across the call; the other pointers are null, as a bind mount allows.
    check(unsafe { libc::mount(src.as_ptr(), target.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) })?;
    // Flags of a bind mount can only be set by a remount.
    // SAFETY: as above; a remount passes no source, type or data.
    check(unsafe {
        libc::mount(std::ptr::null(), target.as_ptr(), std::ptr::null(), libc::MS_BIND | libc::MS_REMOUNT | extra, std::ptr::null())
    })
}

/// A bind mount with its source's flags (a bind copies them), for a source
/// already as the target must be: one call where [`bind`] makes two.
fn bind_keeping_flags(src: &CStr, target: &CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated paths alive across the call; the other pointers are null, as a bind mount allows.
    check(unsafe { libc::mount(src.as_ptr(), target.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) })
}

fn remount_ro(target: &CStr) -> io::Result<()> {
    // SAFETY: as above; a remount passes no source, type or data.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    })
}

/// `mkdir` with the exact `mode` (1777 for /tmp): its callers, the holder
/// and the template's maker, have cleared their own umask ([`no_umask`]).
fn mkdir(p: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: a NUL-terminated path alive across the call.
    check(unsafe { libc::mkdir(p.as_ptr(), mode) })
}

/// Clear the calling process's umask, so that the modes it creates with
/// are the modes made (one call each, no `chmod` after). The holder and the
/// template's maker share no filesystem information (`CLONE_FS`) with the
/// supervisor, so its umask is untouched.
fn no_umask() {
    // SAFETY: umask takes an integer and cannot fail.
    unsafe { libc::umask(0) };
}

/// The file type of `p` (`S_IFDIR`, `S_IFREG`, ...), or `None` if it does not exist.
fn file_type(p: &CStr) -> Option<libc::mode_t> {
    // SAFETY: `st` is plain data the call fills in; `p` is NUL-terminated and alive.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::stat(p.as_ptr(), &mut st) == 0).then_some(st.st_mode & libc::S_IFMT)
    }
}

fn is_dir(p: &CStr) -> bool {
    file_type(p) == Some(libc::S_IFDIR)
}

/// Create an empty file (a mount point), in one call.
fn touch(p: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated path alive across the call; a regular file needs no device number.
    check(unsafe { libc::mknod(p.as_ptr(), libc::S_IFREG | 0o644, 0) })
}

/// Body of the holder, run as root in fresh mount, PID (as pid 1), network,
/// IPC and UTS namespaces, on the supervisor's memory (it allocates
/// nothing: every string is in `paths`). Reports a failure on `report` (see
/// [`sys::child_fail`]), or execs the box's init (`init`, a memfd), which
/// reports `0` there and then reaps orphans until `control` reaches EOF (the
/// supervisor closed it or died).
///
/// `trees`: the box starts from the template namespace (`paths.from_template`),
/// with these trees of the host's to attach.
pub(crate) fn holder_main(paths: &MountPaths, trees: Option<&HostTrees>, init: RawFd, report: RawFd, control: RawFd, marks: &Marks) -> ! {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    no_umask();
    macro_rules! step {
        ($stage:expr, $e:expr) => {{
            if let Err(e) = $e {
                sys::child_fail(report, $stage, e)
            }
            marks.mark($stage);
        }};
    }
    let p = paths;
    const NOSUID_NODEV: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV;
    if trees.is_none() {
        step!(
            "making mounts private",
            // SAFETY: a static path and null pointers, as a propagation change takes.
            check(unsafe {
                libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null())
            })
        );
    }
    const READ_ONLY: u64 = sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV;
    // A root box shows the whole root (cloned by the unsharer when it
    // starts from the template); a rootless one builds its root from the
    // allowlist below (`p.view`).
    let tree = match (&p.view, trees) {
        (Some(_), _) => None,
        (None, Some(t)) => Some(t.root),
        (None, None) => {
            let fd = match sys::open_tree_clone_recursive(&p.root_fs) {
                Ok(fd) => std::os::fd::IntoRawFd::into_raw_fd(fd),
                Err(e) => sys::child_fail(report, "cloning the root filesystem (open_tree)", e),
            };
            marks.mark("cloning the root filesystem (open_tree)");
            step!("making the root read-only (mount_setattr)", sys::mount_setattr_recursive(fd, READ_ONLY));
            Some(fd)
        }
    };
    step!("mounting the scratch tmpfs", mount(c"koth-scratch", &p.scratch, c"tmpfs", NOSUID_NODEV, Some(&p.scratch_options)));
    step!(
        "creating scratch folders",
        (|| {
            mkdir(&p.root, 0o755)?;
            mkdir(&p.work, 0o700)?;
            // SAFETY: a NUL-terminated path alive across the call.
            check(unsafe { libc::chown(p.work.as_ptr(), p.uid, p.gid) })?;
            mkdir(&p.tmp, 0o1777)?;
            mkdir(&p.shm, 0o1777)
        })()
    );
    if let Some(tree) = tree {
        step!("attaching the root (move_mount)", sys::move_mount_to(tree, &p.root));
        // SAFETY: the tree's descriptor, attached and not used again.
        unsafe { libc::close(tree) };
    }
    if let Some(v) = &p.view {
        step!("mounting the box's root tmpfs", mount(c"koth-root", &p.root, c"tmpfs", NOSUID_NODEV, Some(c"size=64k,mode=0755")));
        for dir in &v.dirs {
            step!("creating the box's folders in its root", mkdir(dir, 0o755));
        }
        for (target, link) in &v.links {
            // SAFETY: NUL-terminated paths alive across the call.
            step!("creating a link of the root (/bin -> usr/bin)", check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) }));
        }
        for (host, inside) in &v.binds {
            step!("creating a mount point for a toolchain folder", mkdir(inside, 0o755));
            let tree = match sys::open_tree_clone_recursive_nofollow(host) {
                Ok(fd) => fd,
                Err(e) => sys::child_fail(report, "cloning a toolchain folder (open_tree)", e),
            };
            step!("making a toolchain folder read-only (mount_setattr)", sys::mount_setattr_recursive(tree.as_raw_fd(), READ_ONLY));
            step!("attaching a toolchain folder (move_mount)", sys::move_mount_to(tree.as_raw_fd(), inside));
        }
        step!("remounting the box's root read-only", remount_ro(&p.root));
    }

    let empty_tmpfs = |target: &CStr| -> io::Result<()> {
        if !is_dir(target) {
            return Ok(()); // nothing of the host's to hide there
        }
        mount(c"koth-empty", target, c"tmpfs", NOSUID_NODEV | libc::MS_NOEXEC, Some(c"size=64k,mode=0755"))
    };
    if !is_dir(&p.home) {
        sys::child_fail(
            report,
            "the root filesystem has no /home directory for the work folder",
            io::Error::from_raw_os_error(libc::ENOENT),
        );
    }
    step!("mounting /home", empty_tmpfs(&p.home));
    step!("creating /home/bot", mkdir(&p.home_bot, 0o755));
    step!("remounting /home read-only", remount_ro(&p.home));
    step!("mounting the work folder", bind(&p.work, &p.home_bot, NOSUID_NODEV));
    step!("mounting /tmp", bind(&p.tmp, &p.root_tmp, NOSUID_NODEV));
    if is_dir(&p.root_var_tmp) {
        step!("mounting /var/tmp", bind(&p.tmp, &p.root_var_tmp, NOSUID_NODEV));
    }
    for dir in &p.emptied {
        step!("hiding a folder (/run, /sys, a state folder)", empty_tmpfs(dir));
    }

    step!("mounting /dev", mount(c"koth-dev", &p.dev, c"tmpfs", libc::MS_NOSUID | libc::MS_NOEXEC, Some(c"size=64k,mode=0755")));
    for (i, (host, node)) in p.devices.iter().enumerate() {
        step!("creating a device mount point", touch(node));
        match trees {
            Some(t) => step!("binding a device", sys::move_mount_to(t.devices[i], node)),
            None => step!("binding a device", bind(host, node, libc::MS_NOSUID | libc::MS_NOEXEC)),
        }
    }
    for (link, target) in &p.dev_links {
        // SAFETY: NUL-terminated paths alive across the call.
        step!("creating /dev links", check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) }));
    }
    step!("creating /dev/shm", mkdir(&p.dev_shm, 0o755));
    step!("mounting /dev/shm", bind(&p.shm, &p.dev_shm, NOSUID_NODEV));
    step!("remounting /dev read-only", remount_ro(&p.dev));

    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    if mount(c"proc", &p.proc, c"proc", proc_flags, Some(c"hidepid=invisible")).is_err() {
        step!("mounting /proc", mount(c"proc", &p.proc, c"proc", proc_flags, Some(c"hidepid=2")));
    } else {
        marks.mark("mounting /proc");
    }
    // Host-wide counters that show the other boxes' activity while they
    // move (see PROC_MASKED) read as empty.
    for target in &p.proc_masked {
        match file_type(target) {
            Some(libc::S_IFDIR) => step!(
                "masking a /proc folder",
                mount(c"koth-empty", target, c"tmpfs", proc_flags | libc::MS_RDONLY, Some(c"size=4k,mode=0555"))
            ),
            // A bind keeps its source's flags: the box's /dev/null is nosuid, noexec.
            Some(_) => step!("masking a /proc file", bind_keeping_flags(&p.dev_null, target)),
            None => {}
        }
    }

    // SAFETY: a NUL-terminated path alive across the call.
    step!("entering the new root", check(unsafe { libc::chdir(p.root.as_ptr()) }));
    match p.root_switch {
        // The template's root has nothing under it but its own empty tmpfs:
        // the box's root is stacked on it, as `MoveAndChroot` does, and
        // nothing is detached (see the module's docs).
        RootSwitch::PivotRoot if p.from_template => {
            step!(
                "moving the box's root over the template's /",
                // SAFETY: static C strings and null pointers, as a move takes.
                check(unsafe { libc::mount(c".".as_ptr(), c"/".as_ptr(), std::ptr::null(), libc::MS_MOVE, std::ptr::null()) })
            );
            // SAFETY: a static C string.
            step!("chroot into the box's root", check(unsafe { libc::chroot(c".".as_ptr()) }));
        }
        RootSwitch::PivotRoot => {
            // SAFETY: static C strings; pivot_root(".", ".") stacks the old root under the new one.
            step!("pivot_root", check(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int }));
            // SAFETY: a static C string.
            step!("detaching the old root", check(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) }));
        }
        RootSwitch::MoveAndChroot => {
            step!(
                "moving the box's root over / (MS_MOVE; pivot_root is refused here)",
                // SAFETY: static C strings and null pointers, as a move takes.
                check(unsafe { libc::mount(c".".as_ptr(), c"/".as_ptr(), std::ptr::null(), libc::MS_MOVE, std::ptr::null()) })
            );
            // SAFETY: a static C string.
            step!("chroot into the box's root", check(unsafe { libc::chroot(c".".as_ptr()) }));
        }
    }
    // SAFETY: a static C string.
    step!("chdir /", check(unsafe { libc::chdir(c"/".as_ptr()) }));
    // SAFETY: a 4-byte static name and its length.
    step!("setting the hostname", check(unsafe { libc::sethostname(c"koth".as_ptr(), 4) }));
    if p.loopback {
        step!("bringing loopback up", loopback_up());
    }
    exec_init(init, report, control)
}

/// Become the box's init (`crate::init`): it reports the box ready, reaps
/// orphans and runs the supervisor's commands, holding nothing of the
/// supervisor's memory.
fn exec_init(init: RawFd, report: RawFd, control: RawFd) -> ! {
    // SAFETY: descriptor calls on this process's own descriptors (its table
    // is its own: no CLONE_FILES). The three are first moved above the two
    // numbers the init expects, so no dup2 below closes one still to be
    // moved; dup2 leaves the copies open across execve.
    unsafe {
        let high = |fd: RawFd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
        let (init, r, c) = (high(init), high(report), high(control));
        if init < 0 || r < 0 || c < 0 || libc::dup2(c, init::CONTROL_FD) < 0 || libc::dup2(r, init::REPORT_FD) < 0 {
            sys::child_fail(report, "passing descriptors to the box's init", io::Error::last_os_error());
        }
        let argv = [c"koth-box-init".as_ptr(), std::ptr::null()];
        let envp = [std::ptr::null::<libc::c_char>()];
        libc::syscall(libc::SYS_execveat, init, c"".as_ptr(), argv.as_ptr(), envp.as_ptr(), libc::AT_EMPTY_PATH);
        sys::child_fail(
            report,
            "starting the box's init from memory (execveat; a host with vm.memfd_noexec=2 refuses it)",
            io::Error::last_os_error(),
        )
    }
}

fn loopback_up() -> io::Result<()> {
    // SAFETY: socket takes integers only.
    let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(sock)?;
    // SAFETY: ifreq is plain C data, valid when zeroed.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *s as libc::c_char;
    }
    // SAFETY: `req` is a live ifreq the kernel fills in.
    check(unsafe { libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req) })?;
    // SAFETY: ifru_flags is the member SIOCGIFFLAGS just wrote; a plain integer.
    unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    // SAFETY: `req` is a live, filled ifreq.
    check(unsafe { libc::ioctl(sock, libc::SIOCSIFFLAGS, &req) })?;
    // SAFETY: `sock` was opened above and is not used again.
    unsafe { libc::close(sock) };
    Ok(())
}

/// Holder commands on the control pipe: stop, continue or kill every
/// program of the box (see `Sandbox::freeze` and `Sandbox::kill_all` on
/// cgroup v1). The box's init carries them out (`holder/init.c`, which uses
/// the same bytes).
pub(crate) const STOP_ALL: u8 = b'S';
pub(crate) const CONTINUE_ALL: u8 = b'C';
pub(crate) const KILL_ALL: u8 = b'K';

/// Open the holder's view of a path in the box (`/proc/<holder>/root/...`).
pub(crate) fn open_in_box(holder: libc::pid_t, inside: &str, flags: libc::c_int) -> io::Result<OwnedFd> {
    let p = format!("/proc/{holder}/root{inside}");
    let cp = CString::new(p).unwrap();
    // SAFETY: a NUL-terminated path alive across the call.
    let fd = unsafe { libc::open(cp.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened (checked >= 0) and nothing else owns it.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::RootSwitch;

    #[test]
    fn the_root_switch_follows_the_probe() {
        for (result, errno, want) in [
            (-1, Some(libc::EFAULT), RootSwitch::PivotRoot), // allowed: the null paths could not be read
            (-1, Some(libc::EINVAL), RootSwitch::PivotRoot),
            (-1, Some(libc::EPERM), RootSwitch::MoveAndChroot), // a seccomp filter (or no CAP_SYS_ADMIN)
            (0, Some(libc::EPERM), RootSwitch::PivotRoot),      // a stale errno after a success
            (-1, None, RootSwitch::PivotRoot),
        ] {
            assert_eq!(RootSwitch::from_probe(result, errno), want, "{result} {errno:?}");
        }
    }

    #[test]
    fn root_switches_have_their_report_names() {
        assert_eq!(RootSwitch::PivotRoot.to_string(), "pivot_root");
        assert_eq!(RootSwitch::MoveAndChroot.to_string(), "move_and_chroot");
        assert_eq!(serde_json::to_string(&RootSwitch::MoveAndChroot).unwrap(), "\"move_and_chroot\"");
    }
}
