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

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code: code as u16, jt, jf, k }
}

impl Filter {
    /// The koth filter (see the module docs).
    pub fn koth() -> Filter {
        use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W};
        let ld = BPF_LD | BPF_W | BPF_ABS;
        let jeq = BPF_JMP | BPF_JEQ | BPF_K;
        let mut p = vec![
            stmt(ld, OFFSET_ARCH),
            jump(jeq, AUDIT_ARCH_X86_64, 1, 0),
            stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
            stmt(ld, OFFSET_NR),
            jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
            stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
            jump(jeq, libc::SYS_clone3 as u32, 0, 1),
            stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
            // clone: refuse namespace flags (first argument, low 32 bits).
            jump(jeq, libc::SYS_clone as u32, 0, 3),
            stmt(ld, OFFSET_ARG0_LOW),
            jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEW_ANY, 0, 1),
            stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32),
            // (the jset fall-through lands on the "allow" below via the deny list's own jumps)
        ];
        // After the clone block the accumulator may hold arg0 rather than the
        // number; reload it so the deny list compares numbers.
        p.push(stmt(ld, OFFSET_NR));
        // socket / socketpair: only SOCKET_FAMILIES (the family is arg0).
        let families = SOCKET_FAMILIES.len() as u8;
        p.push(jump(jeq, libc::SYS_socket as u32, 1, 0));
        p.push(jump(jeq, libc::SYS_socketpair as u32, 0, families + 3));
        p.push(stmt(ld, OFFSET_ARG0_LOW));
        for (i, &(_, family)) in SOCKET_FAMILIES.iter().enumerate() {
            // Over the remaining comparisons and the refusal, to the ALLOW.
            p.push(jump(jeq, family as u32, families - i as u8, 0));
        }
        p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EAFNOSUPPORT as u32));
        p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        let n = DENIED.len();
        for (i, &(_, nr)) in DENIED.iter().enumerate() {
            // Jump over the remaining comparisons and the ALLOW to the EPERM.
            let to_deny = (n - i) as u8;
            p.push(jump(jeq, nr as u32, to_deny, 0));
        }
        p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
        Filter { program: p }
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
    /// without installing it.
    fn eval(p: &[libc::sock_filter], arch: u32, nr: u32, arg0: u32) -> u32 {
        let data = |off: u32| match off {
            OFFSET_NR => nr,
            OFFSET_ARCH => arch,
            OFFSET_ARG0_LOW => arg0,
            _ => panic!("unexpected load at {off}"),
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let ins = p[pc];
            let code = ins.code as u32;
            match code & 0x07 {
                libc::BPF_LD => acc = data(ins.k),
                libc::BPF_RET => return ins.k,
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
}
