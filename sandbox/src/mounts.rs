//! The box's filesystem, built by the holder inside its new mount namespace.
//!
//! ```text
//! /               the chosen root, cloned recursively: read-only, nosuid, nodev
//! /home           empty read-only tmpfs (hides the host's homes)
//! /home/bot       the work folder           ┐
//! /tmp, /var/tmp  private, sticky (one dir)  ├ one tmpfs of `limits.disk` bytes
//! /dev/shm        private, sticky           ┘ (charged to the writer's memory cgroup)
//! /dev            read-only tmpfs: null zero full random urandom, fd and std* links
//! /proc           a new procfs for the box's PID namespace, hidepid=invisible
//! /sys, /run      empty read-only tmpfs
//! ```
//!
//! The scratch tmpfs is mounted on a per-box directory of the runtime dir, but
//! only inside the box's namespace: the host never sees it, and it vanishes
//! with the namespace. `pivot_root` then detaches the host's tree.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::{init, sys};

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

/// Where the work folder appears inside the box.
pub const WORK_DIR: &str = "/home/bot";
/// Device nodes bound into the box's /dev.
pub const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

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

fn mount(src: &str, target: &Path, fstype: &str, flags: libc::c_ulong, data: &str) -> io::Result<()> {
    let src = CString::new(src).unwrap();
    let fstype = CString::new(fstype).unwrap();
    let data = CString::new(data).unwrap();
    // SAFETY: every pointer is a NUL-terminated CString alive across the call (or null where mount allows it).
    check(unsafe {
        libc::mount(
            src.as_ptr(),
            c(target).as_ptr(),
            fstype.as_ptr(),
            flags,
            if data.as_bytes().is_empty() { std::ptr::null() } else { data.as_ptr().cast() },
        )
    })
}

fn bind(src: &Path, target: &Path, extra: libc::c_ulong) -> io::Result<()> {
    // SAFETY: NUL-terminated paths alive across the call; the other pointers are null, as a bind mount allows.
    check(unsafe { libc::mount(c(src).as_ptr(), c(target).as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) })?;
    // Flags of a bind mount can only be set by a remount.
    // SAFETY: as above; a remount passes no source, type or data.
    check(unsafe {
        libc::mount(std::ptr::null(), c(target).as_ptr(), std::ptr::null(), libc::MS_BIND | libc::MS_REMOUNT | extra, std::ptr::null())
    })
}

fn remount_ro(target: &Path) -> io::Result<()> {
    // SAFETY: as above; a remount passes no source, type or data.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c(target).as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    })
}

fn mkdir(p: &Path, mode: u32) -> io::Result<()> {
    // SAFETY: a NUL-terminated path alive across the call.
    check(unsafe { libc::mkdir(c(p).as_ptr(), mode) })?;
    // mkdir obeys the umask; the mode must be exact (1777 for /tmp).
    // SAFETY: a NUL-terminated path alive across the call.
    check(unsafe { libc::chmod(c(p).as_ptr(), mode) })
}

/// Body of the holder, run as root in fresh mount, PID (as pid 1), network,
/// IPC and UTS namespaces. Reports a failure on `report` (see
/// [`sys::child_fail`]), or execs the box's init (`init`, a memfd), which
/// reports `0` there and then reaps orphans until `control` reaches EOF (the
/// supervisor closed it or died).
pub(crate) fn holder_main(plan: &MountPlan, init: RawFd, report: RawFd, control: RawFd) -> ! {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    macro_rules! step {
        ($stage:expr, $e:expr) => {
            if let Err(e) = $e {
                sys::child_fail(report, $stage, e)
            }
        };
    }
    step!(
        "making mounts private",
        // SAFETY: a static path and null pointers, as a propagation change takes.
        check(unsafe { libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) })
    );
    let tree = match sys::open_tree_clone_recursive(&c(&plan.root)) {
        Ok(fd) => fd,
        Err(e) => sys::child_fail(report, "cloning the root filesystem (open_tree)", e),
    };
    step!(
        "making the root read-only (mount_setattr)",
        sys::mount_setattr_recursive(tree.as_raw_fd(), sys::MOUNT_ATTR_RDONLY | sys::MOUNT_ATTR_NOSUID | sys::MOUNT_ATTR_NODEV)
    );
    let s = &plan.scratch;
    step!(
        "mounting the scratch tmpfs",
        mount("koth-scratch", s, "tmpfs", libc::MS_NOSUID | libc::MS_NODEV, &format!("size={},mode=0755", plan.disk))
    );
    let (root, work, tmp, shm) = (s.join("root"), s.join("work"), s.join("tmp"), s.join("shm"));
    step!(
        "creating scratch folders",
        (|| {
            mkdir(&root, 0o755)?;
            mkdir(&work, 0o700)?;
            // SAFETY: a NUL-terminated path alive across the call.
            check(unsafe { libc::chown(c(&work).as_ptr(), plan.uid, plan.gid) })?;
            mkdir(&tmp, 0o1777)?;
            mkdir(&shm, 0o1777)
        })()
    );
    step!("attaching the root (move_mount)", sys::move_mount_to(tree.as_raw_fd(), &c(&root)));
    drop(tree);

    let ro_tmpfs = |dir: &str| -> io::Result<()> {
        let target = root.join(dir);
        if !target.is_dir() {
            return Ok(()); // nothing of the host's to hide there
        }
        mount("koth-empty", &target, "tmpfs", libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC, "size=64k,mode=0755")
    };
    let home = root.join("home");
    if !home.is_dir() {
        sys::child_fail(
            report,
            "the root filesystem has no /home directory for the work folder",
            io::Error::from_raw_os_error(libc::ENOENT),
        );
    }
    step!("mounting /home", ro_tmpfs("home"));
    step!("creating /home/bot", mkdir(&home.join("bot"), 0o755));
    step!("remounting /home read-only", remount_ro(&home));
    step!("mounting the work folder", bind(&work, &home.join("bot"), libc::MS_NOSUID | libc::MS_NODEV));
    step!("mounting /tmp", bind(&tmp, &root.join("tmp"), libc::MS_NOSUID | libc::MS_NODEV));
    if root.join("var/tmp").is_dir() {
        step!("mounting /var/tmp", bind(&tmp, &root.join("var/tmp"), libc::MS_NOSUID | libc::MS_NODEV));
    }
    step!("hiding /run", ro_tmpfs("run"));
    step!("hiding /sys", ro_tmpfs("sys"));
    for dir in &plan.hidden {
        step!("hiding a state folder", ro_tmpfs(&dir.to_string_lossy()[1..]));
    }

    let dev = root.join("dev");
    step!("mounting /dev", mount("koth-dev", &dev, "tmpfs", libc::MS_NOSUID | libc::MS_NOEXEC, "size=64k,mode=0755"));
    for name in DEVICES {
        let node = dev.join(name);
        step!("creating a device mount point", std::fs::File::create(&node).map(drop));
        step!("binding a device", bind(&Path::new("/dev").join(name), &node, libc::MS_NOSUID | libc::MS_NOEXEC));
    }
    step!(
        "creating /dev links",
        (|| {
            std::os::unix::fs::symlink("/proc/self/fd", dev.join("fd"))?;
            std::os::unix::fs::symlink("/proc/self/fd/0", dev.join("stdin"))?;
            std::os::unix::fs::symlink("/proc/self/fd/1", dev.join("stdout"))?;
            std::os::unix::fs::symlink("/proc/self/fd/2", dev.join("stderr"))?;
            mkdir(&dev.join("shm"), 0o755)
        })()
    );
    step!("mounting /dev/shm", bind(&shm, &dev.join("shm"), libc::MS_NOSUID | libc::MS_NODEV));
    step!("remounting /dev read-only", remount_ro(&dev));

    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let proc_dir = root.join("proc");
    if mount("proc", &proc_dir, "proc", proc_flags, "hidepid=invisible").is_err() {
        step!("mounting /proc", mount("proc", &proc_dir, "proc", proc_flags, "hidepid=2"));
    }
    // Host-wide counters that show the other boxes' activity while they
    // move (see PROC_MASKED) read as empty.
    for name in PROC_MASKED {
        let target = proc_dir.join(name);
        if target.is_dir() {
            step!("masking a /proc folder", mount("koth-empty", &target, "tmpfs", proc_flags | libc::MS_RDONLY, "size=4k,mode=0555"));
        } else if target.exists() {
            step!("masking a /proc file", bind(Path::new("/dev/null"), &target, libc::MS_NOSUID | libc::MS_NOEXEC));
        }
    }

    // SAFETY: a NUL-terminated path alive across the call (in the holder, single-threaded).
    step!("entering the new root", check(unsafe { libc::chdir(c(&root).as_ptr()) }));
    // SAFETY: static C strings; pivot_root(".", ".") stacks the old root under the new one.
    step!("pivot_root", check(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int }));
    // SAFETY: a static C string.
    step!("detaching the old root", check(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) }));
    // SAFETY: a static C string.
    step!("chdir /", check(unsafe { libc::chdir(c"/".as_ptr()) }));
    // SAFETY: a 4-byte static name and its length.
    step!("setting the hostname", check(unsafe { libc::sethostname(c"koth".as_ptr(), 4) }));
    if plan.loopback {
        step!("bringing loopback up", loopback_up());
    }
    exec_init(init, report, control)
}

/// Become the box's init (`crate::init`): it reports the box ready, reaps
/// orphans and runs the supervisor's commands, holding nothing of the
/// supervisor's memory.
fn exec_init(init: RawFd, report: RawFd, control: RawFd) -> ! {
    // SAFETY: descriptor calls on this process's own descriptors. The three
    // are first moved above the two numbers the init expects, so no dup2
    // below closes one still to be moved; dup2 leaves the copies open
    // across execve.
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

/// Holder commands on the control pipe: stop or continue every program of
/// the box (see `Sandbox::freeze` on cgroup v1). The box's init carries them
/// out (`holder/init.c`, which uses the same bytes).
pub(crate) const STOP_ALL: u8 = b'S';
pub(crate) const CONTINUE_ALL: u8 = b'C';

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
