/* Snake starter bot (C, gcc 12).
 * Tron light cycles for 2 players on a 32x32 board: both snakes move one cell
 * per turn at the same time and leave a permanent trail; whoever crashes
 * (edge, any trail, or the other head) last wins.
 * Protocol (stdin/stdout, one long-lived process):
 *   first print an id line (your bot's name);
 *   then each turn you get "ME THEM": the cells of both heads, cell = row*32 + col
 *   (you always see the board as the snake that started at 484);
 *   answer one line "u", "d", "l" or "r" and flush. Anything else crashes you.
 *   At the end you get "WIN", "LOSS" or "TIE" instead; then exit.
 * Only the heads are sent: remember the trails yourself. 200 ms per move.
 * Stderr is for debugging: koth shows it beside your moves in the replay.
 * Try it:  koth match --game snake bot.c   (watch: add --open)
 */
#include <stdio.h>
#include <string.h>

#define N 32
static char taken[N * N];          /* every cell either snake has ever occupied */
static const char *DIRS = "udlr";

/* The cell reached from p going d, or -1 past the edge. */
static int step(int p, char d) {
    int r = p / N, c = p % N;
    if (d == 'u') r--; else if (d == 'd') r++; else if (d == 'l') c--; else c++;
    return (r < 0 || c < 0 || r >= N || c >= N) ? -1 : r * N + c;
}

static int is_free(int p) { return p >= 0 && !taken[p]; }

/* How many free cells can be reached from start (a flood fill). */
static int room(int start) {
    static char seen[N * N];
    static int todo[N * N];
    int n = 0, count = 1;
    memset(seen, 0, sizeof seen);
    seen[start] = 1;
    todo[n++] = start;
    while (n > 0) {
        int p = todo[--n];
        for (int k = 0; k < 4; k++) {
            int q = step(p, DIRS[k]);
            if (is_free(q) && !seen[q]) { seen[q] = 1; todo[n++] = q; count++; }
        }
    }
    return count;
}

/* Your strategy goes here. This one: go where the most room is; on a tie,
 * prefer a cell the opponent cannot also step into (head-on = tie). */
static char choose(int me, int them) {
    char best = 'u';               /* if every way is blocked we crash anyway */
    int best_score = -1;
    for (int k = 0; k < 4; k++) {
        int q = step(me, DIRS[k]);
        if (!is_free(q)) continue;
        int contested = 0;
        for (int e = 0; e < 4; e++) if (step(them, DIRS[e]) == q) contested = 1;
        int score = room(q) * 2 + (contested ? 0 : 1);
        if (score > best_score) { best = DIRS[k]; best_score = score; }
    }
    return best;
}

int main(void) {
    char line[128];
    printf("starter_c\n");         /* the id line */
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        int me, them;
        if (sscanf(line, "%d %d", &me, &them) != 2) {  /* WIN, LOSS or TIE */
            fprintf(stderr, "result: %s", line);
            break;
        }
        taken[me] = taken[them] = 1;
        char move = choose(me, them);
        fprintf(stderr, "at %d, opponent at %d: %c\n", me, them, move);
        printf("%c\n", move);
        fflush(stdout);            /* without this the answer sits in a buffer */
    }
    return 0;
}
