/* Flit bot: keeps the board from the updates; on "M" moves a random piece of
 * its own next to another of its own pieces. */
#include <stdio.h>
#include <stdlib.h>
#define N 32
static int board[N][N], me;
static int legal(int x0, int y0, int x1, int y1) {
    if (board[y1][x1] != 0) return 0;
    int d[4][2] = {{1, 0}, {N - 1, 0}, {0, 1}, {0, N - 1}};
    for (int i = 0; i < 4; i++) {
        int x = (x1 + d[i][0]) % N, y = (y1 + d[i][1]) % N;
        if (board[y][x] == me && !(x == x0 && y == y0)) return 1;
    }
    return 0;
}
int main(void) {
    char line[256];
    srand(12345);
    while (fgets(line, sizeof line, stdin)) {
        int a, b, c;
        int n = sscanf(line, "%d %d %d", &a, &b, &c);
        if (line[0] == 'M') {
            int px[1024], py[1024], k = 0;
            for (int y = 0; y < N; y++)
                for (int x = 0; x < N; x++)
                    if (board[y][x] == me) { px[k] = x; py[k] = y; k++; }
            int done = 0;
            for (int tries = 0; tries < 4000 && !done && k > 0; tries++) {
                int i = rand() % k, x1 = rand() % N, y1 = rand() % N;
                if (legal(px[i], py[i], x1, y1)) { printf("%d %d %d %d\n", px[i], py[i], x1, y1); done = 1; }
            }
            if (!done) printf("0 0 0 0\n");
            fflush(stdout);
        } else if (n == 1) {
            me = a;
        } else if (n == 3) {
            board[b][a] = c;
        }
    }
    return 0;
}
