/* Leave traps for the supervisor in the work folder. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    symlink("/etc/shadow", "out.txt");
    symlink("/", "rootlink");
    symlink("/etc", "etclink");
    mkfifo("fifo", 0644);
    FILE *f = fopen("real", "w"); fputs("mine", f); fclose(f);
    link("real", "hard");
    printf("hard link to /etc/passwd: %d\n", link("/etc/passwd", "hard2"));
    mkdir("dir", 0755);
    return 0;
}
