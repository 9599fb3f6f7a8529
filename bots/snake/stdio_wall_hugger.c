/* Snake bot over stdin/stdout: prints its name, then turns clockwise until
 * the cell ahead is free. */
#include <stdio.h>
#include <string.h>
#define N 32
static char seen[N * N];
static int step(int p, char d) {
    int r = p / N, c = p % N;
    if (d == 'u') r--; else if (d == 'd') r++; else if (d == 'l') c--; else c++;
    return (r < 0 || c < 0 || r >= N || c >= N) ? -1 : r * N + c;
}
int main(void) {
    char line[128];
    const char *order = "urdl";
    int heading = 0;
    printf("stdio_wall_hugger\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        int me, them;
        if (sscanf(line, "%d %d", &me, &them) != 2) break;
        seen[me] = seen[them] = 1;
        int k;
        for (k = 0; k < 4; k++) {
            int q = step(me, order[(heading + k) % 4]);
            if (q >= 0 && !seen[q]) break;
        }
        heading = (heading + (k < 4 ? k : 0)) % 4;
        printf("%c\n", order[heading]);
        fflush(stdout);
    }
    return 0;
}
