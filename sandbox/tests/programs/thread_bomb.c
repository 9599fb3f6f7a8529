/* Start threads until the kernel refuses. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *sleeper(void *arg) { (void)arg; for (;;) pause(); return 0; }
int main(void) {
    int n = 0;
    for (;;) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 65536);
        int rc = pthread_create(&t, &a, sleeper, 0);
        if (rc != 0) { printf("threads=%d errno=%d\n", n, rc); fflush(stdout); _exit(0); }
        n++;
    }
}
