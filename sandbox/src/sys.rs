//! Thin wrappers over system calls that libc does not wrap (or not on every
//! glibc). x86_64 and aarch64 share these numbers (the "generic" table).

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

pub const OPEN_TREE_CLONE: libc::c_uint = 1;
pub const AT_RECURSIVE: libc::c_uint = 0x8000;
pub const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub const MOUNT_ATTR_NODEV: u64 = 0x4;
pub const MOUNT_ATTR_NOEXEC: u64 = 0x8;

pub const RESOLVE_NO_XDEV: u64 = 0x01;
pub const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
pub const RESOLVE_NO_SYMLINKS: u64 = 0x04;
pub const RESOLVE_BENEATH: u64 = 0x08;
pub const RESOLVE_IN_ROOT: u64 = 0x10;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

fn ret_fd(r: libc::c_long) -> io::Result<OwnedFd> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: a descriptor the kernel just returned (r >= 0), owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
    }
}

fn ret_unit(r: libc::c_long) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes integers only.
    ret_fd(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })
}

pub fn pidfd_send_signal(pidfd: RawFd, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: integers and a null siginfo, which the call allows.
    ret_unit(unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd, sig, std::ptr::null::<libc::siginfo_t>(), 0) })
}

/// Clone a mount tree (detached) for `mount_setattr` and `move_mount`.
pub fn open_tree_clone_recursive(path: &CStr) -> io::Result<OwnedFd> {
    open_tree_clone(path, 0)
}

/// As [`open_tree_clone_recursive`], but a link at `path` itself is not
/// followed (the call fails on it).
pub fn open_tree_clone_recursive_nofollow(path: &CStr) -> io::Result<OwnedFd> {
    open_tree_clone(path, libc::AT_SYMLINK_NOFOLLOW as libc::c_uint)
}

fn open_tree_clone(path: &CStr, extra: libc::c_uint) -> io::Result<OwnedFd> {
    // SAFETY: `path` is a NUL-terminated string alive across the call.
    ret_fd(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE | AT_RECURSIVE | extra | libc::O_CLOEXEC as libc::c_uint,
        )
    })
}

/// Set mount attributes on every mount of the tree behind `fd`, and make it private.
pub fn mount_setattr_recursive(fd: RawFd, set: u64) -> io::Result<()> {
    let attr = MountAttr { attr_set: set, attr_clr: 0, propagation: libc::MS_PRIVATE, userns_fd: 0 };
    // SAFETY: `attr` is a live MountAttr of the size passed; the path is a static empty C string.
    ret_unit(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            fd,
            c"".as_ptr(),
            (libc::AT_EMPTY_PATH as libc::c_uint) | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

pub fn move_mount_to(fd: RawFd, to: &CStr) -> io::Result<()> {
    // SAFETY: static and caller-provided NUL-terminated strings alive across the call.
    ret_unit(unsafe { libc::syscall(libc::SYS_move_mount, fd, c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), MOVE_MOUNT_F_EMPTY_PATH) })
}

/// `openat2` confined beneath `dir`: no symlinks, no magic links, no other mounts.
pub fn openat2_beneath(dir: RawFd, path: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: if flags & libc::O_CREAT != 0 { mode as u64 } else { 0 },
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
    };
    // SAFETY: `how` is a live OpenHow of the size passed; `path` is NUL-terminated and alive.
    ret_fd(unsafe { libc::syscall(libc::SYS_openat2, dir, path.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) })
}

/// An `O_PATH` descriptor of `path` resolved with `root` as `/` (absolute
/// links and `..` stay in it), no magic links: a box's own inodes, from
/// its root's descriptor.
pub fn open_path_in_root(root: RawFd, path: &CStr) -> io::Result<OwnedFd> {
    let how = OpenHow { flags: (libc::O_PATH | libc::O_CLOEXEC) as u64, mode: 0, resolve: RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
    // SAFETY: `how` is a live OpenHow of the size passed; `path` is NUL-terminated and alive.
    ret_fd(unsafe { libc::syscall(libc::SYS_openat2, root, path.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) })
}

/// A stack for a child cloned with `CLONE_VM`, with a guard page below it.
pub struct Stack {
    base: *mut libc::c_void,
    len: usize,
}

impl Stack {
    pub fn new(size: usize) -> io::Result<Stack> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = size.div_ceil(page) * page + page;
        // SAFETY: a new private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the first page of the mapping made above.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmapping the mapping made above, which nothing uses.
            unsafe { libc::munmap(base, len) };
            return Err(e);
        }
        Ok(Stack { base, len })
    }

    /// The highest address, 16-byte aligned: stacks grow down.
    pub fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is page-aligned.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; no child runs on it any more (its owner waited for it).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Clone a child that runs `f(arg)` on the stack whose top is `stack`, with
/// `flags` (and SIGCHLD as its exit signal). Returns the child's pid.
///
/// # Safety
/// `stack` must be the top of a stack no one else uses while the child runs,
/// and `f` and `arg` must be sound to run in a child with those flags (with
/// `CLONE_VM`: no allocation, no locks, no glibc call that acts on every
/// thread; see `spawn`).
pub unsafe fn clone_with_stack(
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
    stack: *mut libc::c_void,
    flags: libc::c_int,
) -> io::Result<libc::pid_t> {
    // SAFETY: the caller's promises above.
    let pid = unsafe { libc::clone(f, stack, flags | libc::SIGCHLD, arg) };
    if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    }
}

/// `struct clone_args` of `linux/sched.h` up to `cgroup` (its second
/// version, Linux 5.7): what `clone3` reads.
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// `CLONE_INTO_CGROUP` (`linux/sched.h`): the child starts in the cgroup
/// `clone_args.cgroup` names, instead of its parent's.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// As [`clone_with_stack`], with the child started in the v2 cgroup whose
/// directory is open as `cgroup` (`clone3` with `CLONE_INTO_CGROUP`):
/// forked there, not moved there afterwards. A move (a write to
/// `cgroup.procs`) takes the kernel's cgroup threadgroup lock for writing,
/// which waits for an RCU grace period unless another move ended within
/// the last one (milliseconds; see `docs/sandbox.md`); a fork into the
/// cgroup takes it for reading. `stack` is the stack's top, with at least
/// `stack_size` bytes below it. An error (a kernel before 5.7, a cgroup
/// the caller may not fork into) leaves nothing behind: the caller may
/// fall back to a move.
///
/// glibc has no `clone3` wrapper, and a child of `CLONE_VM` starts on the
/// new stack at the instruction after the system call, where no compiled
/// frame of this function is valid: so the call and the child's first
/// steps (call `f(arg)`, then exit with its result) are written in
/// assembly, as glibc's `clone` does.
///
/// # Safety
/// As [`clone_with_stack`].
#[cfg(target_arch = "x86_64")]
pub unsafe fn clone3_into_cgroup(
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
    stack: *mut libc::c_void,
    stack_size: usize,
    flags: libc::c_int,
    cgroup: RawFd,
) -> io::Result<libc::pid_t> {
    let args = CloneArgs {
        flags: flags as u64 | CLONE_INTO_CGROUP,
        // clone3 refuses an exit signal with CLONE_PARENT: the child takes
        // its parent's (the joiner's SIGCHLD, see `clone_with_stack`).
        exit_signal: if flags & libc::CLONE_PARENT != 0 { 0 } else { libc::SIGCHLD as u64 },
        // clone3 takes the stack's lowest address and its size.
        stack: stack as u64 - stack_size as u64,
        stack_size: stack_size as u64,
        cgroup: cgroup as u64,
        ..CloneArgs::default()
    };
    let ret: i64;
    // SAFETY: the system call reads `args` (alive on this frame) and
    // returns twice. In this process it returns the child's pid or an
    // error, touching no memory but `rax`, `rcx` and `r11` (declared). The
    // child starts at the same point on the new stack (the kernel sets its
    // stack pointer to `stack`), with every other register as the parent's:
    // it never leaves the assembly block. It clears the frame pointer,
    // aligns the stack as the C calling convention wants, calls `f(arg)`
    // (kept in r12 and r13, which the system call preserves) and exits
    // with its result; `f` follows the caller's promises. Every signal is
    // blocked by the caller, so none runs on either stack meanwhile.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "and rsp, -16",
            "mov rdi, r12",
            "call r13",
            "mov edi, eax",
            "mov eax, {exit}",
            "syscall",
            "ud2",
            "2:",
            exit = const libc::SYS_exit,
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") arg,
            in("r13") f,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    if ret < 0 {
        Err(io::Error::from_raw_os_error(-ret as i32))
    } else {
        Ok(ret as libc::pid_t)
    }
}

/// Elsewhere than x86-64 the program is moved into its cgroup after the
/// fork (the caller's fallback).
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn clone3_into_cgroup(
    _f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    _arg: *mut libc::c_void,
    _stack: *mut libc::c_void,
    _stack_size: usize,
    _flags: libc::c_int,
    _cgroup: RawFd,
) -> io::Result<libc::pid_t> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// A signal set with every signal.
pub fn full_sigset() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, and sigfillset fills the one on this stack.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        set
    }
}

pub fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both descriptors are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A connected pair of stream sockets, close-on-exec (a two-way pipe).
pub fn socketpair_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded: both descriptors are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Write all of `buf` (small messages on pipes from children).
pub fn write_all(fd: RawFd, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: writes at most `buf.len()` bytes from the live slice `buf`.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        buf = &buf[n as usize..];
    }
}

/// Write `text` to the file at `path` in one `write` (a `/proc` file such as
/// `uid_map`, which takes its whole contents at once). Allocation-free, for
/// the children of `spawn`.
pub fn write_path(path: &std::ffi::CStr, text: &[u8]) -> io::Result<()> {
    // SAFETY: a NUL-terminated path alive across the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: writes at most `text.len()` bytes from the live slice to the descriptor opened above.
    let n = unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
    let result = if n == text.len() as isize {
        Ok(())
    } else if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Err(io::Error::from_raw_os_error(libc::EIO))
    };
    // SAFETY: the descriptor opened above, owned by this function.
    unsafe { libc::close(fd) };
    result
}

/// Read until EOF (at most `max` bytes).
pub fn read_to_end(fd: RawFd, max: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    while out.len() < max {
        // SAFETY: reads at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    Ok(out)
}

/// Reap a child, retrying on EINTR. Returns the raw wait status.
pub fn waitpid(pid: libc::pid_t, flags: libc::c_int) -> io::Result<Option<libc::c_int>> {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a live int the kernel may write.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r == pid {
            return Ok(Some(status));
        }
        if r == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Report a failure from a child process that builds a box (the unsharer,
/// the holder): "stage: error" on `fd`, then exit. A program's joiner and
/// the program record theirs in memory instead (`spawn::Prepared::fail`):
/// they run in a box that may be full, where a pipe's write fails.
pub fn child_fail(fd: RawFd, stage: &str, err: io::Error) -> ! {
    // Nothing is allocated by the child: it may share the supervisor's
    // memory (see `spawn`).
    write_all(fd, stage.as_bytes());
    write_all(fd, b"\0");
    let mut digits = [0u8; 12];
    let mut at = digits.len();
    let mut errno = err.raw_os_error().unwrap_or(0).unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (errno % 10) as u8;
        errno /= 10;
        if errno == 0 {
            break;
        }
    }
    write_all(fd, &digits[at..]);
    // SAFETY: _exit ends this child at once; nothing of the parent's is touched.
    unsafe { libc::_exit(127) }
}

/// Decode a message written by [`child_fail`].
pub fn decode_child_failure(msg: &[u8]) -> (String, io::Error) {
    let text = String::from_utf8_lossy(msg);
    let (stage, errno) = text.split_once('\0').unwrap_or((&text, "0"));
    (stage.to_owned(), io::Error::from_raw_os_error(errno.parse().unwrap_or(0)))
}

/// The highest capability number this kernel knows.
pub(crate) fn cap_last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(63)
}

/// Whether `fd` is readable (data, or its end of file; a pidfd: its
/// process has exited) within `timeout`.
pub fn wait_readable(fd: RawFd, timeout: std::time::Duration) -> bool {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd, exclusively borrowed for the call.
    unsafe { libc::poll(&mut pfd, 1, ms) == 1 }
}
