/* Sharpens on odd turns and pokes on even turns of a duel. Written for
 * koth's corpus (not an original answer of the challenge). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *h = argc > 1 ? argv[1] : "";
    const char *comma = strchr(h, ',');
    size_t played = comma ? (size_t)(comma - h) : 0;
    puts(played % 2 == 0 ? "S" : "P");
    return 0;
}
