/* Blocks while the other caveman's stick is sharp but not a sword, and
 * sharpens otherwise. Written for koth's corpus (not an original answer). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *h = argc > 1 ? argv[1] : "";
    const char *theirs = strchr(h, ',');
    int sharp = 0;
    for (const char *m = theirs ? theirs + 1 : ""; *m; m++) {
        if (*m == 'S')
            sharp++;
        else if (*m == 'P' && sharp > 0)
            sharp--;
    }
    puts(sharp >= 1 && sharp <= 4 ? "B" : "S");
    return 0;
}
