/* Try to read secrets; print what each attempt gave. argv[1..]: paths. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        char buf[4096];
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0) { printf("%s: errno=%d\n", argv[i], errno); continue; }
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n < 0) { printf("%s: read errno=%d\n", argv[i], errno); continue; }
        buf[n] = 0;
        printf("%s: READ %s\n", argv[i], buf);
    }
    return 0;
}
