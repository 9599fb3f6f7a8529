/* Grid-Routing Battle, koth's own bot: a spoiler. It breaks the vertex
 * right above the last one its first listed rival activated (the report
 * never says which bot that is), and activates the vertex above its own
 * last one, starting from the bottom row's first column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    static char line[1 << 16];
    int side = 0, tx = -1, ty = -1, mx = 0, my = -1;
    while (fgets(line, sizeof line, stdin)) {
        char *w = strtok(line, " \n");
        if (!w) continue;
        if (!strcmp(w, "BEGIN")) {
            strtok(NULL, " \n"); strtok(NULL, " \n");
            side = atoi(strtok(NULL, " \n"));
            tx = ty = -1; mx = 0; my = -1;
        } else if (!strcmp(w, "OWNED")) {
            strtok(NULL, " \n");
            char *mine = strtok(NULL, " \n"), *rival = strtok(NULL, " \n");
            if (mine && strcmp(mine, "N")) sscanf(mine, "%d,%d", &mx, &my);
            if (rival && strcmp(rival, "N") && sscanf(rival, "%d,%d", &tx, &ty) == 2) ty++;
        } else if (!strcmp(w, "DESTROY")) {
            if (ty > 0 && ty < side && !(tx == mx && ty == my + 1)) printf("VERTEX %d,%d\n", tx, ty);
            else printf("NONE\n");
            fflush(stdout);
        } else if (!strcmp(w, "ACTIVATE")) {
            if (my + 1 < side) printf("VERTEX %d,%d\n", mx, my + 1);
            else printf("NONE\n");
            fflush(stdout);
        } else if (!strcmp(w, "SCORE")) {
            return 0;
        }
    }
    return 0;
}
