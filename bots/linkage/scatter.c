/* Linkage bot: places a domino of a colour that touches no domino of the
 * same colour if it can (more groups), else any legal one. With any
 * argument it prints its id line. */
#include <stdio.h>
#include <string.h>
static char g[7][8];
static int touches_same(int r, int c, char k) {
    int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int i = 0; i < 4; i++) {
        int rr = r + d[i][0], cc = c + d[i][1];
        if (rr >= 0 && rr < 7 && cc >= 0 && cc < 7 && g[rr][cc] == k) return 1;
    }
    return 0;
}
int main(int argc, char **argv) {
    if (argc > 1) { puts("Scatter. koth example bot (C), v1"); return 0; }
    FILE *in = fopen("input.txt", "r");
    char head[16];
    if (!in || !fgets(head, sizeof head, in)) return 1;
    for (int r = 0; r < 7; r++) { char line[16]; if (!fgets(line, sizeof line, in)) return 1; memcpy(g[r], line, 7); }
    fclose(in);
    const char *colours = "RBGY";
    char order[8] = "Skip";
    for (int pass = 0; pass < 2 && !strcmp(order, "Skip"); pass++)
        for (int k = 0; k < 4 && !strcmp(order, "Skip"); k++) {
            if (head[1 + k] == '0') continue;
            for (int r = 0; r < 7 && !strcmp(order, "Skip"); r++)
                for (int c = 0; c < 7 && !strcmp(order, "Skip"); c++)
                    for (int o = 0; o < 2; o++) {
                        int r2 = r + (o == 1), c2 = c + (o == 0);
                        if (r2 > 6 || c2 > 6 || g[r][c] != '.' || g[r2][c2] != '.') continue;
                        if (pass == 0 && (touches_same(r, c, colours[k]) || touches_same(r2, c2, colours[k]))) continue;
                        snprintf(order, sizeof order, "%c%c%d%c%d", colours[k], 'A' + c, r + 1, 'A' + c2, r2 + 1);
                        break;
                    }
        }
    FILE *out = fopen("order.txt", "w");
    if (!out) return 1;
    fprintf(out, "%s\n", order);
    fclose(out);
    return 0;
}
