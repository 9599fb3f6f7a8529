/* Invisible target starter bot (C, gcc 12).
 * 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
 * more wall can be placed) the bot nearest the hidden target cell wins.
 * Protocol (stdin/stdout, one long-lived process), every turn one line:
 *   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
 *   since your last turn, or 1024 for none; enemies always in the same order.
 * Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
 * (the board wraps around). Moving into a wall, or into a cell another bot
 * also wants, leaves you where you are. 50 ms per move, or you stay.
 * Nothing is sent at the end: stdin closes and the bot is stopped.
 * Stderr is for debugging: koth shows it beside your moves in the replay.
 * Try it:  koth match --game target bot.c   (watch: add --open)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 32
#define CELLS (N * N)
#define NO_WALL 1024
static const int DIRS[4] = {0, 1, 3, 4};   /* up, left, right, down (2 = stay) */
static char wall[CELLS];                   /* walls never go away: remember them all */
static char enemy[CELLS];                  /* the other bots, this turn */

/* The cell reached from p going d, wrapping around the edges. */
static int step(int p, int d) {
    int r = p / N, c = p % N;
    if (d == 0) r = (r + N - 1) % N;
    else if (d == 1) c = (c + N - 1) % N;
    else if (d == 3) c = (c + 1) % N;
    else if (d == 4) r = (r + 1) % N;
    return r * N + c;
}

/* Walking distance (a BFS around walls) from start to the farthest likely
 * target: a dead end (a cell with at most one open side) that no other bot
 * stands on; while there are none, the farthest reachable cell. */
static int farthest(int start) {
    static int dist[CELLS], todo[CELLS];
    int head = 0, tail = 0, far_dead_end = -1;
    memset(dist, -1, sizeof dist);
    dist[start] = 0;
    todo[tail++] = start;
    while (head < tail) {
        int p = todo[head++], open_sides = 0;
        for (int k = 0; k < 4; k++) {
            int q = step(p, DIRS[k]);
            if (wall[q]) continue;
            open_sides++;
            if (dist[q] < 0) { dist[q] = dist[p] + 1; todo[tail++] = q; }
        }
        if (open_sides <= 1 && !enemy[p]) far_dead_end = dist[p];
    }
    /* A BFS meets the farthest cells last. */
    return far_dead_end >= 0 ? far_dead_end : dist[todo[tail - 1]];
}

/* Strategy: the target is somewhere in the area we can reach (walls never cut
 * a bot off from it). A wall can always fill a dead end unless a bot or the
 * target is on it, so the dead ends that stay open are where the target hides:
 * at the very end it is the only one no bot stands on. So stand where the
 * farthest such dead end is nearest (early on, when there are none: at the
 * centre of the area), and follow that spot as walls close in.
 * This is the place to do better: weigh dead ends by how long they have stayed
 * open, keep out of other bots' way or block them... */
int main(void) {
    static char line[4096];
    long turn = 0;
    int last_pos = -1, last_move = 2;
    while (fgets(line, sizeof line, stdin)) {
        int f[20], n = 0;                   /* at most 16 bots: 17 numbers */
        char *s = line, *end;
        while (n < 20) {
            long v = strtol(s, &end, 10);
            if (end == s) break;
            f[n++] = (int)v;
            s = end;
        }
        int pos = f[0], new_wall = f[1];    /* f[2] .. f[n-1]: the enemies */
        if (++turn == 1) srand((unsigned)time(NULL) ^ (unsigned)pos * 7919u);
        if (new_wall != NO_WALL) wall[new_wall] = 1;
        memset(enemy, 0, sizeof enemy);
        for (int i = 2; i < n; i++) enemy[f[i]] = 1;
        int best = 2, best_far = farthest(pos);   /* staying is the default */
        for (int k = 0; k < 4; k++) {
            int q = step(pos, DIRS[k]);
            if (wall[q] || enemy[q]) continue;   /* that move would fail */
            int far = farthest(q);
            if (far < best_far) { best = DIRS[k]; best_far = far; }
        }
        /* A move that did not happen means another bot wanted the same cell; if
         * both insist, neither ever moves again. So after one, wait half the time. */
        if (last_move != 2 && pos == last_pos && rand() % 2) best = 2;
        last_pos = pos;
        last_move = best;
        if (new_wall != NO_WALL)
            fprintf(stderr, "turn %ld: wall at %d, I'm at %d, move %d, farthest likely target %d steps away\n",
                    turn, new_wall, pos, best, best_far);
        printf("%d\n", best);
        fflush(stdout);
    }
    return 0;
}
