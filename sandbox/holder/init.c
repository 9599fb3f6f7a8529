/*
 * The init of a box: pid 1 of the box's PID namespace, root with CAP_KILL
 * alone (the launcher threads' bounding set: sandbox/src/launcher.rs),
 * outside the box's cgroup. The holder process execs this once the box's
 * filesystem is built (sandbox/src/mounts.rs), so that it no longer holds
 * a copy of the supervisor's memory (a forked holder kept every page the
 * supervisor wrote afterwards: see docs/sandbox.md, "Holder").
 *
 * Descriptors: 3 is the control socket (commands from the supervisor),
 * 4 the report pipe (one 0 byte: the box is ready). Everything else is
 * closed. It reaps every orphan of the box, answers each command with the
 * same byte once it is carried out, and exits when the control socket
 * reaches end of file (the supervisor closed it, or died).
 *
 * Commands (the same bytes as STOP_ALL and CONTINUE_ALL in mounts.rs):
 *   'S'  kill(-1, SIGSTOP): every other process of the namespace, in one
 *        pass under the kernel's task-list lock, so no fork slips through
 *        and no stopped program can continue another;
 *   'C'  kill(-1, SIGCONT);
 *   'K'  kill(-1, SIGKILL): the box's kill on cgroup v1, which has no
 *        cgroup.kill; the same one pass, and no freezer (a supervisor
 *        killed while v1's freezer held the box left it frozen for ever:
 *        a frozen task acts on SIGKILL only once thawed).
 *
 * No C library: on x86-64 and AArch64 it is built with -nostdlib
 * (sandbox/build.rs) and makes its system calls itself. Every box execs
 * it, and a static C library's start-up (its TLS, its ifunc relocations,
 * 680 KB of program) cost about 0.15 ms of CPU an exec more than these 9
 * KB, and the supervisor writes the program into a memfd at its start.
 * Elsewhere (KOTH_INIT_LIBC) the same code calls the C library's
 * syscall(). Every call returns what the kernel does: the result, or
 * -errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define CONTROL 3
#define REPORT 4

#ifdef KOTH_INIT_LIBC
#include <unistd.h>
static long sys(long n, long a, long b, long c, long d, long e) {
    long r = syscall(n, a, b, c, d, e);
    return r < 0 ? -errno : r;
}
#elif defined(__x86_64__)
static long sys(long n, long a, long b, long c, long d, long e) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return r;
}
/* The kernel starts the program here, the stack holding argc, argv and
   the environment (unused); the stack is aligned for the call. */
__asm__(".text\n.global _start\n_start:\n\txor %rbp, %rbp\n\tand $-16, %rsp\n\tcall init_main\n\thlt\n");
#elif defined(__aarch64__)
static long sys(long n, long a, long b, long c, long d, long e) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory", "cc");
    return x0;
}
__asm__(".text\n.global _start\n_start:\n\tmov x29, #0\n\tmov x30, #0\n\tbl init_main\n\tb .\n");
#else
#error "the box's init is built without a C library on x86-64 and AArch64 only; build.rs defines KOTH_INIT_LIBC elsewhere"
#endif

static __attribute__((noreturn)) void leave(int code) {
    for (;;)
        sys(SYS_exit_group, code, 0, 0, 0, 0);
}

/* The kernel's signal set: one bit a signal, 8 bytes on these machines. */
#define KERNEL_SIGSET 8

__attribute__((noreturn, used)) void init_main(void) {
    unsigned long set = 1UL << (SIGCHLD - 1);
    /* Only SIGCHLD blocked (read from the signalfd), whatever mask the
       holder had. */
    sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&set, 0, KERNEL_SIGSET, 0);
    long sfd = sys(SYS_signalfd4, -1, (long)&set, KERNEL_SIGSET, SFD_CLOEXEC | SFD_NONBLOCK, 0);
    if (sfd < 0)
        leave(121);
    char ready = 0;
    if (sys(SYS_write, REPORT, (long)&ready, 1, 0, 0) != 1)
        leave(122);
    sys(SYS_close, REPORT, 0, 0, 0, 0);
    struct pollfd fds[2] = {{.fd = CONTROL, .events = POLLIN}, {.fd = (int)sfd, .events = POLLIN}};
    for (;;) {
        while (sys(SYS_wait4, -1, 0, WNOHANG, 0, 0) > 0) {
        }
        /* ppoll, which every architecture has (AArch64 has no poll). */
        if (sys(SYS_ppoll, (long)fds, 2, 0, 0, KERNEL_SIGSET) < 0)
            continue;
        if (fds[0].revents) {
            char cmd[16];
            long n = sys(SYS_read, CONTROL, (long)cmd, sizeof cmd, 0, 0);
            if (n == 0 || (n < 0 && n != -EINTR))
                leave(0);
            for (long i = 0; i < n; i++) {
                if (cmd[i] == 'S')
                    sys(SYS_kill, -1, SIGSTOP, 0, 0, 0);
                else if (cmd[i] == 'C')
                    sys(SYS_kill, -1, SIGCONT, 0, 0, 0);
                else if (cmd[i] == 'K')
                    sys(SYS_kill, -1, SIGKILL, 0, 0, 0);
                /* Done: the supervisor waits for this before it goes on. */
                sys(SYS_write, CONTROL, (long)&cmd[i], 1, 0, 0);
            }
        }
        char info[128];
        while (sys(SYS_read, sfd, (long)info, sizeof info, 0, 0) > 0) {
        }
    }
}

#ifdef KOTH_INIT_LIBC
int main(void) {
    init_main();
}
#endif
