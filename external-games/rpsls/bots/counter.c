/* Rock Paper Scissors Lizard Spock bot: plays the hand that beats the
 * most hands the others played last round (rock in round 1). */
#include <stdio.h>
#include <string.h>

static const char *HANDS = "RPSLK";
/* BEATEN_BY[h]: the two hands that beat hand h. */
static const char *BEATEN_BY[] = {"PK", "SL", "RK", "RS", "LP"};

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        int rnd, rounds, seat, n = 0, at = 0;
        if (sscanf(line, "%d %d %d %n", &rnd, &rounds, &seat, &at) != 3) break;
        int score[5] = {0};
        char *p = line + at;
        for (char *tok = strtok(p, " \n"); tok; tok = strtok(NULL, " \n"), n++) {
            const char *h = strchr(HANDS, tok[0]);
            if (n == seat || !h || tok[0] == '\0') continue;
            for (int k = 0; k < 2; k++) score[strchr(HANDS, BEATEN_BY[h - HANDS][k]) - HANDS]++;
        }
        int best = 0;
        for (int h = 1; h < 5; h++)
            if (score[h] > score[best]) best = h;
        printf("%c\n", HANDS[best]);
        fflush(stdout);
    }
    return 0;
}
