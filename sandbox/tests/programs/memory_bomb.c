/* Allocate and touch memory until something stops us. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    size_t total = 0;
    for (;;) {
        char *p = malloc(1 << 20);
        if (!p) { printf("malloc failed after %zu MiB\n", total); return 1; }
        memset(p, 1, 1 << 20);
        total++;
    }
}
