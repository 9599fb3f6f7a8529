#include <stdio.h>
int main(void) { for (;;) fputs("xxxxxxxxxxxxxxxx", stdout); }
