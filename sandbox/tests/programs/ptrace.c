/* Try to trace: a child of ours, pid 1, and ourselves. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <unistd.h>
int main(void) {
    pid_t c = fork();
    if (c == 0) { for (;;) pause(); }
    long r = ptrace(PTRACE_ATTACH, c, 0, 0);
    printf("attach child: %s errno=%d\n", r == 0 ? "ok" : "denied", errno);
    errno = 0;
    r = ptrace(PTRACE_ATTACH, 1, 0, 0);
    printf("attach pid 1: %s errno=%d\n", r == 0 ? "ok" : "denied", errno);
    errno = 0;
    r = ptrace(PTRACE_TRACEME, 0, 0, 0);
    printf("traceme: %s errno=%d\n", r == 0 ? "ok" : "denied", errno);
    kill(c, SIGKILL);
    return 0;
}
