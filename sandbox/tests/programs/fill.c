/* Write into argv[1] (a folder) until an error; argv[2] = "one" for a single
 * file, "many" for 1 MiB files. Prints bytes written and the errno. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    signal(SIGXFSZ, SIG_IGN);
    int single = argc > 2 && strcmp(argv[2], "one") == 0;
    long long total = 0;
    for (int i = 0;; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/fill-%d", argv[1], single ? 0 : i);
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0) { printf("bytes=%lld errno=%d\n", total, errno); return 0; }
        for (int j = 0; single || j < 16; j++) {
            ssize_t n = write(fd, buf, sizeof buf);
            if (n < 0) { printf("bytes=%lld errno=%d\n", total, errno); return 0; }
            total += n;
        }
        close(fd);
    }
}
