//! The box's seccomp filter: a short deny list in classic BPF.
//!
//! # Decision
//!
//! Namespaces, cgroups, no capabilities and Landlock already confine a
//! program; seccomp removes the kernel attack surface that an unprivileged
//! process can still reach and that no bot or compiler needs. A deny list
//! (as isolate and nsjail's defaults do) rather than an allow list, because
//! koth runs every language's runtime and compiler, whose system calls change
//! with each release; an allow list would break them silently.
//!
//! Denied with `EPERM` (programs see an ordinary failure):
//! * kernel keyrings: `keyctl`, `add_key`, `request_key`;
//! * `io_uring_*` (a large, often-exploited surface that bypasses seccomp for
//!   the operations it submits), `bpf`, `perf_event_open`, `userfaultfd`;
//! * inspecting other processes: `ptrace`, `process_vm_readv/writev`,
//!   `kcmp`, `pidfd_getfd`;
//! * new namespaces: `unshare`, `setns`, and `clone` with any `CLONE_NEW*` flag
//!   (unprivileged user namespaces would hand the program capabilities in a
//!   namespace of its own); `clone3` returns `ENOSYS`, because its flags sit
//!   in memory where BPF cannot read them and libc then falls back to `clone`;
//! * mounts and the new mount API, `pivot_root`, `chroot`, `open_by_handle_at`,
//!   `name_to_handle_at`, kernel modules, `kexec_*`, `reboot`, swap, `acct`,
//!   `quotactl`, `syslog`, `iopl`/`ioperm`, `personality`, `vhangup`.
//!
//! Sockets of the families a program may need only: `socket` and
//! `socketpair` with `AF_UNIX`, `AF_INET`, `AF_INET6` or `AF_NETLINK` (libc's
//! address lookups read the box's own interfaces through netlink); any other
//! family gets `EAFNOSUPPORT`, as from a kernel without it. That closes
//! `AF_VSOCK` (not network-namespaced: it reaches the hypervisor of a VM
//! host), `AF_ALG` (the kernel's crypto API), `AF_PACKET`, Bluetooth, CAN,
//! TIPC, RDS, XDP and the rest, none of which a bot or compiler uses.
//!
//! Other architectures' system calls (32-bit `int 0x80` calls arrive with
//! `AUDIT_ARCH_I386`) kill the process; x32 calls (bit 30 of the number) get
//! `ENOSYS`.

/// A built filter, ready for `seccomp(SECCOMP_SET_MODE_FILTER)`.
pub struct Filter {
    program: Vec<libc::sock_filter>,
}

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_SET_MODE_FILTER: libc::c_long = 1;

const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const OFFSET_ARG0_LOW: u32 = 16;

/// Namespace flags refused in `clone`.
const CLONE_NEW_ANY: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;

/// Socket families a program may create; others get `EAFNOSUPPORT`.
pub const SOCKET_FAMILIES: [(&str, i32); 4] =
    [("AF_UNIX", libc::AF_UNIX), ("AF_INET", libc::AF_INET), ("AF_INET6", libc::AF_INET6), ("AF_NETLINK", libc::AF_NETLINK)];

/// System calls answered with `EPERM`.
pub const DENIED: &[(&str, libc::c_long)] = &[
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("kcmp", libc::SYS_kcmp),
    ("pidfd_getfd", libc::SYS_pidfd_getfd),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("chroot", libc::SYS_chroot),
    ("open_tree", libc::SYS_open_tree),
    ("move_mount", libc::SYS_move_mount),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("mount_setattr", libc::SYS_mount_setattr),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("name_to_handle_at", libc::SYS_name_to_handle_at),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("reboot", libc::SYS_reboot),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("acct", libc::SYS_acct),
    ("quotactl", libc::SYS_quotactl),
    ("syslog", libc::SYS_syslog),
    ("iopl", libc::SYS_iopl),
    ("ioperm", libc::SYS_ioperm),
    ("personality", libc::SYS_personality),
    ("vhangup", libc::SYS_vhangup),
];

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

/// What the filter does with a system call it singles out; every other
/// call of the native architecture is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    /// `EPERM` ([`DENIED`]).
    Deny,
    /// `ENOSYS` (`clone3`).
    NoSys,
    /// Allowed unless its first argument asks for a namespace.
    Clone,
    /// Allowed for [`SOCKET_FAMILIES`] only.
    Socket,
}

/// Where a jump of the filter lands, resolved once the program is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Allow,
    Eperm,
    Enosys,
    Eafnosupport,
    Clone,
    Socket,
}

impl Target {
    fn of(s: Special) -> Target {
        match s {
            Special::Deny => Target::Eperm,
            Special::NoSys => Target::Enosys,
            Special::Clone => Target::Clone,
            Special::Socket => Target::Socket,
        }
    }
}

/// A classic-BPF program with forward jumps to [`Target`]s, whose offsets
/// are filled in when the targets are placed (every jump of classic BPF
/// goes forward; a conditional one by at most 255 instructions).
#[derive(Default)]
struct Assembler {
    program: Vec<libc::sock_filter>,
    /// (instruction, its true branch or else its false branch, where to).
    jumps: Vec<(usize, bool, Target)>,
    /// Unconditional jumps (`BPF_JA`, a 32-bit offset) and where to.
    always: Vec<(usize, Target)>,
    placed: Vec<(Target, usize)>,
}

impl Assembler {
    fn push(&mut self, ins: libc::sock_filter) -> usize {
        self.program.push(ins);
        self.program.len() - 1
    }
    /// A conditional jump: to `jt` when it holds, else to `jf` (`None`: the
    /// next instruction).
    fn branch(&mut self, code: u32, k: u32, jt: Option<Target>, jf: Option<Target>) -> usize {
        let at = self.push(libc::sock_filter { code: code as u16, jt: 0, jf: 0, k });
        if let Some(t) = jt {
            self.jumps.push((at, true, t));
        }
        if let Some(t) = jf {
            self.jumps.push((at, false, t));
        }
        at
    }
    fn always(&mut self, to: Target) {
        let at = self.push(stmt(libc::BPF_JMP | libc::BPF_JA, 0));
        self.always.push((at, to));
    }
    fn place(&mut self, t: Target) {
        self.placed.push((t, self.program.len()));
    }
    fn finish(mut self) -> Vec<libc::sock_filter> {
        let at = |t: Target| self.placed.iter().find(|(p, _)| *p == t).map(|&(_, i)| i).expect("every jump's target is placed");
        for &(from, taken, to) in &self.jumps {
            let offset = at(to).checked_sub(from + 1).expect("classic BPF jumps only forward");
            let offset = u8::try_from(offset).expect("a conditional jump of classic BPF reaches at most 255 instructions");
            let ins = &mut self.program[from];
            if taken {
                ins.jt = offset;
            } else {
                ins.jf = offset;
            }
        }
        for &(from, to) in &self.always {
            self.program[from].k = (at(to).checked_sub(from + 1).expect("classic BPF jumps only forward")) as u32;
        }
        self.program
    }
}

/// Calls compared one by one at a leaf of the search tree, at most.
const LEAF: usize = 4;

/// Find `nr` (in the accumulator) among `calls` (sorted) by halves, and
/// jump to its action; a number not among them is allowed.
///
/// Why a tree: installing a filter costs the kernel a run of it for every
/// system call number (it caches which calls the filter always allows,
/// `seccomp_cache_prepare`), so its cost grows with the path a call takes.
/// Compared one after another, the 48 calls put up to 60 instructions on
/// every allowed call's path, and installing the filter took 185 to 195 µs
/// of each spawn; searched by halves, about a dozen (`koth sandbox bench`,
/// "seccomp filter").
fn search(a: &mut Assembler, calls: &[(u32, Special)]) {
    if calls.len() <= LEAF {
        for &(nr, what) in calls {
            a.branch(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, nr, Some(Target::of(what)), None);
        }
        a.always(Target::Allow);
        return;
    }
    let (low, high) = calls.split_at(calls.len() / 2);
    // At or above the upper half's first number: over the lower half.
    let split = a.branch(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, high[0].0, None, None);
    search(a, low);
    let over = a.program.len() - split - 1;
    a.program[split].jt = u8::try_from(over).expect("a half of the tree fits a conditional jump");
    search(a, high);
}

impl Filter {
    /// The koth filter (see the module docs): the architecture checked,
    /// x32 calls refused, then the call's number looked up among those it
    /// singles out by halves ([`search`]), each found one jumping to its
    /// action at the end of the program.
    pub fn koth() -> Filter {
        use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
        let ld = BPF_LD | BPF_W | BPF_ABS;
        let mut calls: Vec<(u32, Special)> = DENIED.iter().map(|&(_, nr)| (nr as u32, Special::Deny)).collect();
        calls.push((libc::SYS_clone3 as u32, Special::NoSys));
        calls.push((libc::SYS_clone as u32, Special::Clone));
        calls.push((libc::SYS_socket as u32, Special::Socket));
        calls.push((libc::SYS_socketpair as u32, Special::Socket));
        calls.sort_unstable_by_key(|&(nr, _)| nr);
        assert!(calls.windows(2).all(|w| w[0].0 != w[1].0), "a system call singled out twice");
        let mut a = Assembler::default();
        a.push(stmt(ld, OFFSET_ARCH));
        a.push(libc::sock_filter { code: (BPF_JMP | BPF_JEQ | BPF_K) as u16, jt: 1, jf: 0, k: AUDIT_ARCH_X86_64 });
        a.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
        a.push(stmt(ld, OFFSET_NR));
        a.branch(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, Some(Target::Enosys), None);
        search(&mut a, &calls);
        // clone: refuse namespace flags (first argument, low 32 bits).
        a.place(Target::Clone);
        a.push(stmt(ld, OFFSET_ARG0_LOW));
        a.branch(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEW_ANY, Some(Target::Eperm), Some(Target::Allow));
        // socket / socketpair: only SOCKET_FAMILIES (the family is arg0).
        a.place(Target::Socket);
        a.push(stmt(ld, OFFSET_ARG0_LOW));
        for &(_, family) in SOCKET_FAMILIES.iter() {
            a.branch(BPF_JMP | BPF_JEQ | BPF_K, family as u32, Some(Target::Allow), None);
        }
        a.place(Target::Eafnosupport);
        a.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32));
        a.place(Target::Allow);
        a.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        a.place(Target::Eperm);
        a.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
        a.place(Target::Enosys);
        a.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
        Filter { program: a.finish() }
    }

    /// Install the filter on the calling thread. `no_new_privs` must be set.
    /// Called in the child right before `execve`.
    pub(crate) fn install(&self) -> std::io::Result<()> {
        let prog = libc::sock_fprog { len: self.program.len() as u16, filter: self.program.as_ptr() as *mut _ };
        // SAFETY: `prog` points at the filter's instructions, which live as long as `self`, across the call.
        let r = unsafe { libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog as *const libc::sock_fprog) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.program.len()
    }

    pub fn is_empty(&self) -> bool {
        self.program.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny classic-BPF interpreter, enough to check the filter's decisions
    /// without installing it: the decision, and how many instructions ran
    /// before it or before the first load of an argument (where the
    /// kernel's cache of always-allowed calls stops following a call).
    fn run(p: &[libc::sock_filter], arch: u32, nr: u32, arg0: u32) -> (u32, usize) {
        let (mut pc, mut acc, mut steps, mut constant_steps) = (0usize, 0u32, 0usize, None);
        loop {
            let ins = p[pc];
            let code = ins.code as u32;
            steps += 1;
            match code & 0x07 {
                libc::BPF_LD => {
                    acc = match ins.k {
                        OFFSET_NR => nr,
                        OFFSET_ARCH => arch,
                        OFFSET_ARG0_LOW => {
                            constant_steps.get_or_insert(steps);
                            arg0
                        }
                        off => panic!("unexpected load at {off}"),
                    }
                }
                libc::BPF_RET => return (ins.k, constant_steps.unwrap_or(steps)),
                libc::BPF_JMP if code & 0xf0 == libc::BPF_JA => {
                    pc += 1 + ins.k as usize;
                    continue;
                }
                libc::BPF_JMP => {
                    let taken = match code & 0xf0 {
                        libc::BPF_JEQ => acc == ins.k,
                        libc::BPF_JGE => acc >= ins.k,
                        libc::BPF_JSET => acc & ins.k != 0,
                        other => panic!("unexpected jump {other:#x}"),
                    };
                    pc += 1 + if taken { ins.jt as usize } else { ins.jf as usize };
                    continue;
                }
                other => panic!("unexpected class {other:#x}"),
            }
            pc += 1;
        }
    }

    fn eval(p: &[libc::sock_filter], arch: u32, nr: u32, arg0: u32) -> u32 {
        run(p, arch, nr, arg0).0
    }

    const EPERM: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const EAFNOSUPPORT: u32 = SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32;

    #[test]
    fn decisions() {
        let f = Filter::koth();
        let x = AUDIT_ARCH_X86_64;
        let cases: &[(&str, u32, u32, u32, u32)] = &[
            ("read is allowed", x, libc::SYS_read as u32, 0, SECCOMP_RET_ALLOW),
            ("execve is allowed", x, libc::SYS_execve as u32, 0, SECCOMP_RET_ALLOW),
            ("plain fork-like clone is allowed", x, libc::SYS_clone as u32, libc::SIGCHLD as u32, SECCOMP_RET_ALLOW),
            ("thread clone is allowed", x, libc::SYS_clone as u32, (libc::CLONE_VM | libc::CLONE_THREAD) as u32, SECCOMP_RET_ALLOW),
            ("clone with a user namespace is denied", x, libc::SYS_clone as u32, libc::CLONE_NEWUSER as u32, EPERM),
            ("clone with a network namespace is denied", x, libc::SYS_clone as u32, libc::CLONE_NEWNET as u32, EPERM),
            ("clone3 is ENOSYS", x, libc::SYS_clone3 as u32, 0, ENOSYS),
            ("ptrace is denied", x, libc::SYS_ptrace as u32, 0, EPERM),
            ("keyctl is denied", x, libc::SYS_keyctl as u32, 0, EPERM),
            ("io_uring_setup is denied", x, libc::SYS_io_uring_setup as u32, 0, EPERM),
            ("vhangup, the last entry, is denied", x, libc::SYS_vhangup as u32, 0, EPERM),
            ("x32 calls are ENOSYS", x, X32_SYSCALL_BIT | libc::SYS_read as u32, 0, ENOSYS),
            ("i386 calls kill", 0x4000_0003, 3, 0, SECCOMP_RET_KILL_PROCESS),
            ("a TCP socket is allowed", x, libc::SYS_socket as u32, libc::AF_INET as u32, SECCOMP_RET_ALLOW),
            ("an IPv6 socket is allowed", x, libc::SYS_socket as u32, libc::AF_INET6 as u32, SECCOMP_RET_ALLOW),
            ("a unix socket pair is allowed", x, libc::SYS_socketpair as u32, libc::AF_UNIX as u32, SECCOMP_RET_ALLOW),
            ("netlink is allowed", x, libc::SYS_socket as u32, libc::AF_NETLINK as u32, SECCOMP_RET_ALLOW),
            ("vsock is refused", x, libc::SYS_socket as u32, libc::AF_VSOCK as u32, EAFNOSUPPORT),
            ("AF_ALG is refused", x, libc::SYS_socket as u32, libc::AF_ALG as u32, EAFNOSUPPORT),
            ("packet sockets are refused", x, libc::SYS_socket as u32, libc::AF_PACKET as u32, EAFNOSUPPORT),
            ("a vsock pair is refused", x, libc::SYS_socketpair as u32, libc::AF_VSOCK as u32, EAFNOSUPPORT),
        ];
        for &(what, arch, nr, arg0, want) in cases {
            assert_eq!(eval(&f.program, arch, nr, arg0), want, "{what}");
        }
        for &(name, nr) in DENIED {
            assert_eq!(eval(&f.program, x, nr as u32, 0), EPERM, "{name} must be denied");
        }
        for family in 0..64u32 {
            let allowed = SOCKET_FAMILIES.iter().any(|&(_, f)| f as u32 == family);
            let want = if allowed { SECCOMP_RET_ALLOW } else { EAFNOSUPPORT };
            assert_eq!(eval(&f.program, x, libc::SYS_socket as u32, family), want, "socket family {family}");
        }
    }

    /// What the module docs promise for a call of the native architecture,
    /// written plainly: the filter must decide every number as this does.
    fn promised(nr: u32, arg0: u32) -> u32 {
        let family_allowed = SOCKET_FAMILIES.iter().any(|&(_, f)| f as u32 == arg0);
        match nr as libc::c_long {
            _ if nr >= X32_SYSCALL_BIT => ENOSYS,
            libc::SYS_clone3 => ENOSYS,
            libc::SYS_clone if arg0 & CLONE_NEW_ANY != 0 => EPERM,
            libc::SYS_socket | libc::SYS_socketpair if !family_allowed => EAFNOSUPPORT,
            n if DENIED.iter().any(|&(_, d)| d == n) => EPERM,
            _ => SECCOMP_RET_ALLOW,
        }
    }

    #[test]
    fn every_system_call_number_is_decided_as_promised() {
        let f = Filter::koth();
        let args = [
            0,
            libc::SIGCHLD as u32,
            libc::CLONE_NEWUSER as u32,
            libc::CLONE_NEWNS as u32,
            libc::AF_INET as u32,
            libc::AF_VSOCK as u32,
            u32::MAX,
        ];
        for nr in (0..1024).chain([X32_SYSCALL_BIT, X32_SYSCALL_BIT + 1, u32::MAX]) {
            for arg0 in args {
                assert_eq!(eval(&f.program, AUDIT_ARCH_X86_64, nr, arg0), promised(nr, arg0), "system call {nr}, first argument {arg0:#x}");
            }
        }
        // Other architectures die, whatever the call.
        for nr in [0, 3, 11, 120, 1000] {
            assert_eq!(eval(&f.program, 0x4000_0003, nr, 0), SECCOMP_RET_KILL_PROCESS);
        }
    }

    #[test]
    fn no_call_runs_through_more_than_a_short_path() {
        let f = Filter::koth();
        // What installing the filter costs the kernel, once for every number.
        let longest = (0..512).map(|nr| run(&f.program, AUDIT_ARCH_X86_64, nr, 0).1).max().unwrap();
        // 5 to reach the number, 4 halvings of 48, up to 4 comparisons, a jump and the return.
        assert!(longest <= 16, "a call runs through {longest} instructions before its decision");
    }
}
