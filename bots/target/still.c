/* Invisible target bot: moves in a fixed spiral-ish pattern. */
#include <stdio.h>
int main(void) {
    char line[4096];
    unsigned long turn = 0;
    const int pattern[] = {3, 3, 4, 4, 1, 1, 1, 0, 0, 0, 2};
    while (fgets(line, sizeof line, stdin)) {
        printf("%d\n", pattern[turn++ % (sizeof pattern / sizeof *pattern)]);
        fflush(stdout);
    }
    return 0;
}
