/* Spins argv[1] threads (the main one among them) until killed. */
#include <pthread.h>
#include <stdlib.h>
static void *spin(void *arg) { volatile unsigned long x = 0; for (;;) x++; return arg; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1;
    pthread_t t;
    for (int i = 1; i < n; i++) pthread_create(&t, NULL, spin, NULL);
    spin(NULL);
    return 0;
}
