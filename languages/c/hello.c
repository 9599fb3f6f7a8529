// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    fputs("hello from c\n", stderr);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) != -1) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (strcmp(line, "M") == 0) {
            puts("0 0 0 0");
            fflush(stdout);
        }
    }
    free(line);
    return 0;
}
