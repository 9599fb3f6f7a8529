/* Hostile bots for the engine's tests, one per behaviour, chosen by argv[1]:
 *
 *   never_reads                  Target: shrinks its stdin pipe to one page and never reads it
 *   spin_after_answer GAME       answers at once; three threads spin all the time
 *   victim GAME CPU_MS           burns CPU_MS of its own CPU time each move, then answers
 *   slow_start CPU_MS            Snake: burns CPU_MS of CPU before its id line
 *   spin_at_start                Snake: three threads spin from the start, then plays
 *   instant_tcp [twice]          Snake: connects the instant it starts (twice: a second
 *                                connection attempt too), then plays over TCP
 *   closes_stdout                Target: answers once, closes stdout, lives on
 *   flood_no_newline             Target: 8 MiB without a newline, then answers every move
 *
 * GAME is snake (a wall hugger over stdio) or target (always "2").
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define N 32
static char seen[N * N];
static int heading;

static int step(int p, char d) {
    int r = p / N, c = p % N;
    if (d == 'u') r--; else if (d == 'd') r++; else if (d == 'l') c--; else c++;
    return (r < 0 || c < 0 || r >= N || c >= N) ? -1 : r * N + c;
}

/* The wall hugger's move for a Snake request line; 0 at the end notice. */
static char snake_move(const char *line) {
    const char *order = "urdl";
    int me, them;
    if (sscanf(line, "%d %d", &me, &them) != 2) return 0;
    seen[me] = seen[them] = 1;
    int k;
    for (k = 0; k < 4; k++) {
        int q = step(me, order[(heading + k) % 4]);
        if (q >= 0 && !seen[q]) break;
    }
    heading = (heading + (k < 4 ? k : 0)) % 4;
    return order[heading];
}

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void burn(double ms) {
    double until = cpu_ms() + ms;
    volatile unsigned long n = 0;
    while (cpu_ms() < until) n++;
}

static void *spin(void *arg) {
    volatile unsigned long n = 0;
    for (;;) n++;
    return arg;
}

static void spinners(void) {
    pthread_t t;
    for (int i = 0; i < 3; i++) pthread_create(&t, NULL, spin, NULL);
}

/* Answer every request on (in, out): Snake's wall hugger or Target's "2". */
static void play(FILE *in, FILE *out, int snake, double cpu_per_move) {
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        if (cpu_per_move > 0) burn(cpu_per_move);
        if (snake) {
            char m = snake_move(line);
            if (!m) return;
            fprintf(out, "%c\n", m);
        } else {
            fputs("2\n", out);
        }
        fflush(out);
    }
}

static FILE *connect_tcp(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(4040)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        exit(4);
    }
    return fdopen(s, "r+");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int snake = argc > 2 && strcmp(argv[2], "snake") == 0;
    setvbuf(stderr, NULL, _IONBF, 0);
    if (!strcmp(mode, "never_reads")) {
        int got = fcntl(0, F_SETPIPE_SZ, 4096);
        fprintf(stderr, "stdin pipe is now %d bytes; not reading it\n", got);
        for (;;) pause();
    }
    if (!strcmp(mode, "spin_after_answer")) {
        if (snake) { puts("spin_after_answer"); fflush(stdout); }
        spinners();
        play(stdin, stdout, snake, 0);
        return 0;
    }
    if (!strcmp(mode, "victim")) {
        if (snake) { puts("victim"); fflush(stdout); }
        play(stdin, stdout, snake, atof(argv[3]));
        return 0;
    }
    if (!strcmp(mode, "slow_start")) {
        burn(atof(argv[2]));
        puts("slow_start");
        fflush(stdout);
        play(stdin, stdout, 1, 0);
        return 0;
    }
    if (!strcmp(mode, "spin_at_start")) {
        spinners();
        puts("spin_at_start");
        fflush(stdout);
        play(stdin, stdout, 1, 0);
        return 0;
    }
    if (!strcmp(mode, "instant_tcp")) {
        FILE *s = connect_tcp();
        if (argc > 2 && !strcmp(argv[2], "twice")) {
            /* A second connection: refused or never served, never a hang. */
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(4040)};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            int t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            connect(t, (struct sockaddr *)&a, sizeof a);
        }
        fputs("instant_tcp\n", s);
        fflush(s);
        play(s, s, 1, 0);
        return 0;
    }
    if (!strcmp(mode, "closes_stdout")) {
        char line[4096];
        if (!fgets(line, sizeof line, stdin)) return 1;
        puts("2");
        fflush(stdout);
        close(1);
        for (;;) pause();
    }
    if (!strcmp(mode, "flood_no_newline")) {
        static char junk[1 << 16];
        memset(junk, 'x', sizeof junk);
        for (int i = 0; i < 128; i++) fwrite(junk, 1, sizeof junk, stdout);
        fputs("\n", stdout);
        fflush(stdout);
        play(stdin, stdout, 0, 0);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
