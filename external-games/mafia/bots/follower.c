/* A Mafia bot for koth's corpus (external-games/mafia), written for koth.
 * Started anew for every action in its own folder: it reads `from_server`,
 * `players` and `name`, keeps the dead and its allies in `dead` and
 * `allies`, and writes its answer to `to_server`.
 *
 * By day it follows the crowd: it votes for the player named in the last
 * "X has voted to lynch Y." it read, unless Y is itself, an ally or "no
 * one"; with nothing to follow it says "I am a normal villager" (message
 * 4) when it did not say so in the last round, else votes for the first
 * living player in sorted order other than itself and its allies. At
 * night, as a mafioso it votes to kill the last living non-mafioso in
 * sorted order it has not chosen before (one who lived was saved; else the
 * last), as the cop it investigates the next player in sorted order, as
 * the doctor it saves itself. Deterministic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 16
#define NAME 64

static char players[MAXP][NAME];
static int nplayers;
static char me[NAME];

static int listed(const char *file, const char *name) {
    FILE *f = fopen(file, "r");
    char w[NAME];
    int found = 0;
    if (!f) return 0;
    while (!found && fscanf(f, "%63s", w) == 1) found = strcmp(w, name) == 0;
    fclose(f);
    return found;
}

static void add(const char *file, const char *name) {
    FILE *f;
    if (listed(file, name)) return;
    f = fopen(file, "a");
    if (f) { fprintf(f, "%s\n", name); fclose(f); }
}

static void answer(const char *s) {
    FILE *f = fopen("to_server", "w");
    if (f) { fprintf(f, "%s\n", s); fclose(f); }
    exit(0);
}

int main(void) {
    static char text[1 << 16], line[1024], out[2048], follow[NAME] = "";
    FILE *f = fopen("players", "r");
    size_t n = 0;
    int i, mafia_lines = 0, talk = 1;
    while (f && nplayers < MAXP && fscanf(f, "%63s", players[nplayers]) == 1) nplayers++;
    if (f) fclose(f);
    f = fopen("name", "r");
    if (f) { if (fscanf(f, "%63s", me) != 1) me[0] = 0; fclose(f); }
    f = fopen("from_server", "r");
    if (f) { n = fread(text, 1, sizeof text - 1, f); fclose(f); }
    text[n] = 0;

    for (char *p = text; *p;) {
        char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char a[NAME], b[NAME];
        if (len >= sizeof line) len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (e != NULL);
        if (strcmp(line, "Your allies are:") == 0) { mafia_lines = 1; continue; }
        if (mafia_lines) {
            for (i = 0; i < nplayers; i++)
                if (strcmp(line, players[i]) == 0) add("allies", line);
            if (i == nplayers) mafia_lines = 0;
        }
        if (strcmp(line, "You are a member of the mafia.") == 0) add("role", "mafia");
        if (sscanf(line, "Last night, %63[A-Za-z0-9] was killed.", a) == 1) add("dead", a);
        if (sscanf(line, "The town has killed %63[A-Za-z0-9]!", a) == 1) add("dead", a);
        if (sscanf(line, "%63[A-Za-z0-9] has voted to lynch %63[A-Za-z0-9]", a, b) == 2 && strcmp(b, me) != 0 &&
            strcmp(b, "no") != 0)
            strcpy(follow, b);
        if (strstr(line, " says \"I am a normal villager\"") && strncmp(line, me, strlen(me)) == 0 &&
            line[strlen(me)] == ' ')
            talk = 0;
        if (strncmp(line, "Dawn of day", 11) == 0 || strncmp(line, "Rise and shine", 14) == 0) talk = 1;
    }

    if (strstr(text, "It is night. Vote for a victim.")) {
        /* The last one it has not chosen before (one who survived was
         * saved), else the last. */
        int last = -1;
        for (i = nplayers - 1; i >= 0; i--)
            if (strcmp(players[i], me) && !listed("dead", players[i]) && !listed("allies", players[i])) {
                if (last < 0) last = i;
                if (!listed("chosen", players[i])) break;
            }
        if (i < 0) i = last;
        if (i < 0) answer("");
        add("chosen", players[i]);
        answer(players[i]);
    }
    if (strstr(text, "It is night. Who would you like to investigate?")) {
        int next = 0;
        f = fopen("investigated", "r");
        if (f) { if (fscanf(f, "%d", &next) != 1) next = 0; fclose(f); }
        for (i = next; i < nplayers; i++)
            if (strcmp(players[i], me) && !listed("dead", players[i])) break;
        f = fopen("investigated", "w");
        if (f) { fprintf(f, "%d\n", i + 1); fclose(f); }
        answer(i < nplayers ? players[i] : "");
    }
    if (strstr(text, "It is night. Who would you like to save?")) answer(me);
    if (follow[0] && !listed("dead", follow) && !listed("allies", follow)) {
        snprintf(out, sizeof out, "vote %s", follow);
        answer(out);
    }
    if (talk) answer("say 4");
    for (i = 0; i < nplayers; i++)
        if (strcmp(players[i], me) && !listed("dead", players[i]) && !listed("allies", players[i])) {
            snprintf(out, sizeof out, "vote %s", players[i]);
            answer(out);
        }
    answer("");
    return 0;
}
