/* Installed setuid root by the test: prints the ids it runs with. */
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("uid=%d euid=%d\n", getuid(), geteuid()); return 0; }
