/* Linkage starter bot (C, gcc 12, standard library only).
 * Two players, More and Fewer, take turns laying shared coloured dominoes
 * (6 each of R B G Y) on a 7x7 board; at the end More wins with 12 or more
 * one-colour groups, Fewer with fewer than 12.
 * Protocol: a NEW process is started every turn in your folder. Read
 * input.txt: "M6666" (M = you are More, F = Fewer; then dominoes left in
 * R B G Y) and 7 rows of '.' empty, 'X' centre, 'x' empty but touching the
 * opponent's last domino (forbidden), RBGY played. Write order.txt: colour
 * + two adjacent cells, column A-G then row 1-7 from the top ("YA1A2"), or
 * "Skip" only when nothing fits. 5 s per turn. Started with any argument,
 * print one id line on stdout instead. Stderr is for debugging: koth shows
 * it beside your moves in the replay.
 * Try it:  koth match --game linkage bot.c   (watch: add --open)
 */
#include <stdio.h>
#include <string.h>

static char head[16];     /* "M6666": role, then dominoes left in R B G Y */
static char grid[7][16];  /* grid[row][col], row 0 is row 1 */

/* How many cells next to the domino (r,c)-(r2,c2) already hold `colour`. */
static int touching(char colour, int r, int c, int r2, int c2) {
    static const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    int cells[2][2] = {{r, c}, {r2, c2}}, n = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            int rr = cells[i][0] + d[k][0], cc = cells[i][1] + d[k][1];
            if (rr < 0 || rr >= 7 || cc < 0 || cc >= 7) continue;
            if ((rr == r && cc == c) || (rr == r2 && cc == c2)) continue;
            if (grid[rr][cc] == colour) n++;
        }
    return n;
}

int main(int argc, char **argv) {
    if (argc > 1) { printf("StarterC. koth starter kit (C), v1\n"); fflush(stdout); return 0; }
    FILE *in = fopen("input.txt", "r");
    if (!in || fscanf(in, "%15s", head) != 1) return 1;
    for (int r = 0; r < 7; r++)
        if (fscanf(in, "%15s", grid[r]) != 1) return 1;
    fclose(in);
    char me = head[0];                 /* 'M' (More) or 'F' (Fewer) */
    const char *colours = "RBGY";

    /* Strategy: More wants many groups, so it lays the domino touching the
     * fewest cells of its own colour; Fewer wants few groups, so it touches
     * the most. First found wins ties. This is the place to do better: look
     * ahead, count real groups, block the opponent with your 'x' zone... */
    int found = 0, best_score = 0, best[5] = {0};
    for (int k = 0; k < 4; k++) {
        if (head[1 + k] == '0') continue;              /* none of this colour left */
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < 7; c++)
                for (int o = 0; o < 2; o++) {          /* o = 0: right, 1: down */
                    int r2 = r + o, c2 = c + 1 - o;
                    /* Only '.' is free: 'x' touches the opponent's last domino. */
                    if (r2 > 6 || c2 > 6 || grid[r][c] != '.' || grid[r2][c2] != '.') continue;
                    int t = touching(colours[k], r, c, r2, c2);
                    int score = me == 'M' ? -t : t;
                    if (!found || score > best_score) {
                        found = 1, best_score = score;
                        best[0] = k, best[1] = r, best[2] = c, best[3] = r2, best[4] = c2;
                    }
                }
    }

    char order[8] = "Skip";           /* legal only when nothing fits */
    if (found)
        snprintf(order, sizeof order, "%c%c%d%c%d", colours[best[0]],
                 'A' + best[2], best[1] + 1, 'A' + best[4], best[3] + 1);
    fprintf(stderr, "%c %s: %s (score %d)\n", me, head + 1, order, best_score);
    FILE *out = fopen("order.txt", "w");    /* read once this process exits */
    if (!out) return 1;
    fprintf(out, "%s\n", order);
    fclose(out);
    return 0;
}
