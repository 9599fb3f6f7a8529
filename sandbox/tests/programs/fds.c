/* Open files until the limit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
int main(void) {
    int n = 0;
    for (;;) {
        if (open("/dev/null", O_RDONLY) < 0) { printf("fds=%d errno=%d\n", n, errno); return 0; }
        n++;
    }
}
