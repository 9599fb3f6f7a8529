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
 *   'C'  kill(-1, SIGCONT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTROL 3
#define REPORT 4

int main(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    /* Only SIGCHLD blocked (read from the signalfd), whatever mask the
       holder had. */
    sigprocmask(SIG_SETMASK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        _exit(121);
    char ready = 0;
    if (write(REPORT, &ready, 1) != 1)
        _exit(122);
    close(REPORT);
    struct pollfd fds[2] = {{.fd = CONTROL, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    for (;;) {
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (poll(fds, 2, -1) < 0)
            continue;
        if (fds[0].revents) {
            char cmd[16];
            ssize_t n = read(CONTROL, cmd, sizeof cmd);
            if (n == 0 || (n < 0 && errno != EINTR))
                _exit(0);
            for (ssize_t i = 0; i < n; i++) {
                if (cmd[i] == 'S')
                    kill(-1, SIGSTOP);
                else if (cmd[i] == 'C')
                    kill(-1, SIGCONT);
                /* Done: the supervisor waits for this before it goes on. */
                (void)!write(CONTROL, &cmd[i], 1);
            }
        }
        char info[128];
        while (read(sfd, info, sizeof info) > 0) {
        }
    }
}
