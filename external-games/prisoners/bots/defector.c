/* Always tells all. Written for koth's corpus (not an original answer). */
#include <stdio.h>

int main(void) {
    puts("t");
    return 0;
}
