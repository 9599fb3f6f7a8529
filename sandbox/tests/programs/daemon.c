/* Leave a daemon behind: setsid and double fork, then exit at once. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    pid_t p = fork();
    if (p == 0) {
        setsid();
        if (fork() == 0) {
            for (;;) { FILE *f = fopen("/tmp/daemon-alive", "w"); if (f) fclose(f); sleep(1); }
        }
        _exit(0);
    }
    puts("parent leaving");
    return 0;
}
