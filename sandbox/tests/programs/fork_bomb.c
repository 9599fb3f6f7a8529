/* Fork until the kernel refuses; children wait forever. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    int n = 0;
    for (;;) {
        pid_t p = fork();
        if (p == 0) { pause(); _exit(0); }
        if (p < 0) { printf("forks=%d errno=%d\n", n, errno); fflush(stdout); return 0; }
        n++;
    }
}
