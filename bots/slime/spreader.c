/* Slime bot: spreads from its first slime that has an empty neighbour,
 * else jumps, else passes. The state is argv[1]: "p,row,row,...". */
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc < 2) return 1;
    char me = argv[1][0];
    char rows[32][33];
    int n = 0;
    for (char *tok = strtok(argv[1] + 2, ","); tok && n < 32; tok = strtok(NULL, ",")) strncpy(rows[n++], tok, 32);
    for (int reach = 1; reach <= 2; reach++)
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) {
                if (rows[r][c] != me) continue;
                for (int dr = -reach; dr <= reach; dr++)
                    for (int dc = -reach; dc <= reach; dc++) {
                        int rr = r + dr, cc = c + dc;
                        int d = (dr < 0 ? -dr : dr) > (dc < 0 ? -dc : dc) ? (dr < 0 ? -dr : dr) : (dc < 0 ? -dc : dc);
                        if (d != reach || rr < 0 || cc < 0 || rr >= n || cc >= n || rows[rr][cc] != '.') continue;
                        printf("%d %d %d %d\n", r, c, rr, cc);
                        return 0;
                    }
            }
    puts("0 0 0 0");
    return 0;
}
