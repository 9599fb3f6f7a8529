/* Try to kill everything in reach: every pid the host has (argv[2..], read
 * from the host's /proc when the test started) and the first 1024 (its own
 * namespace's), pid 1, the supervisor's pid (argv[1], a host pid), kill(-1),
 * then the parent. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int visible = 0;
    for (int pid = 1; pid <= 1024; pid++)
        if (pid != getpid() && kill(pid, 0) == 0) visible++;
    for (int i = 1; i < argc; i++) {
        int pid = atoi(argv[i]);
        if (pid > 1024 && pid != getpid() && kill(pid, 0) == 0) visible++;
    }
    int host = argc > 1 ? atoi(argv[1]) : 0;
    printf("visible=%d kill1=%d killhost=%d\n", visible, kill(1, SIGKILL), kill(host, SIGKILL));
    kill(-1, SIGKILL);
    puts("survived kill(-1)");
    fflush(stdout);
    kill(getppid(), SIGKILL);
    puts("survived killing the parent");
    fflush(stdout);
    return 0;
}
