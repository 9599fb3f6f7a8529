/* Threads that spend their time in uninterruptible sleep: O_DIRECT reads of
 * a large file (argv[1]) in big chunks, so the kernel holds them in disk
 * waits (state D) where neither the v1 freezer nor SIGKILL reaches them
 * until the read returns. argv[2]: threads, argv[3]: MiB per read. Falls
 * back to plain reads where O_DIRECT is refused (9p in the VM). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *path;
static size_t chunk;
static int direct = 1;

static void *reader(void *arg) {
    int fd = open(path, O_RDONLY | (direct ? O_DIRECT : 0));
    if (fd < 0) { perror("open"); return arg; }
    off_t size = lseek(fd, 0, SEEK_END);
    void *buf;
    if (posix_memalign(&buf, 4096, chunk)) return arg;
    unsigned long i = (unsigned long)arg;
    for (;;) {
        off_t at = (off_t)((i++ * 7919 * chunk) % (size_t)(size - chunk)) & ~(off_t)4095;
        if (pread(fd, buf, chunk, at) < 0) { perror("pread"); return arg; }
    }
}

int main(int argc, char **argv) {
    path = argv[1];
    int threads = atoi(argv[2]);
    chunk = (size_t)atoi(argv[3]) << 20;
    int probe = open(path, O_RDONLY | O_DIRECT);
    if (probe < 0) direct = 0; else close(probe);
    for (long t = 0; t < threads; t++) {
        pthread_t th;
        pthread_create(&th, NULL, reader, (void *)t);
    }
    printf("readers=%d direct=%d\n", threads, direct);
    fflush(stdout);
    for (;;) pause();
}
