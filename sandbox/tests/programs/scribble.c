/* Try to write each path in argv; print what each attempt gave. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0) { printf("%s: errno=%d\n", argv[i], errno); continue; }
        if (write(fd, "pwned", 5) != 5) { printf("%s: write errno=%d\n", argv[i], errno); continue; }
        printf("%s: WROTE\n", argv[i]);
        close(fd);
    }
    return 0;
}
