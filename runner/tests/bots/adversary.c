/* Hostile bots for the engine's tests, one per behaviour, chosen by argv[1]:
 *
 *   never_reads                  Target: shrinks its stdin pipe to one page and never reads it
 *   spin_after_answer GAME       answers, then eight threads spin for 15 ms of wall time; it
 *                                reports on stderr the CPU it got in that window
 *                                ("after-answer spin: X ms")
 *   victim GAME CPU_MS           burns CPU_MS of its own CPU time each move, then answers
 *   slow_start CPU_MS            Snake: burns CPU_MS of CPU before its id line
 *   spin_at_start                Snake: eight threads spin from its start until 250 ms after its
 *                                id line, then it plays; reports the CPU it got after its id
 *                                line ("start-up spin: X ms")
 *   instant_tcp [twice]          Snake: connects the instant it starts (twice: a second
 *                                connection attempt too), then plays over TCP
 *   closes_stdout                Target: answers once, closes stdout, lives on
 *   flood_no_newline             Target: 8 MiB without a newline, then answers every move
 *   many_threads GAME N MS       thinks on N threads each move: they spin for MS ms of wall time
 *                                while the main thread waits, then it answers
 *   report_cores                 Target: reports the cores it may run on, every move
 *                                ("cores: LIST", from /proc/self/status)
 *   sched                        Target: reports its scheduling policy and slice on stderr every
 *                                move ("sched: policy P priority R slice S")
 *
 * GAME is snake (a wall hugger over stdio) or target (always "2").
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
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

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Spinners: busy while the wall clock is before `window_end`; the first to
 * see the window closed reports the CPU the process got since `cpu_mark`. */
static volatile double window_end;
static volatile double cpu_mark;
static volatile int report;
static const char *report_what = "spin";

/* Report a closed window once (spinners and the main thread both look). */
static void maybe_report(void) {
    if (report && now_ms() >= window_end && __sync_bool_compare_and_swap(&report, 1, 0))
        fprintf(stderr, "%s: %.2f ms\n", report_what, cpu_ms() - cpu_mark);
}

static void *spin(void *arg) {
    volatile unsigned long n = 0;
    for (;;) {
        if (now_ms() < window_end) {
            for (int i = 0; i < 10000; i++) n++;
        } else {
            maybe_report();
            usleep(200);
        }
    }
    return arg;
}

static void spinners(void) {
    pthread_t t;
    for (int i = 0; i < 8; i++) pthread_create(&t, NULL, spin, NULL);
}

/* Open a spinning window of `ms` from now and report the CPU got in it. */
static void spin_window(double ms) {
    /* The window first, the flag last (x86 keeps stores in order): a
     * reporter never sees the flag with an old window. */
    cpu_mark = cpu_ms();
    window_end = now_ms() + ms;
    report = 1;
}

/* Answer every request on (in, out): Snake's wall hugger or Target's "2";
 * `spin_ms` > 0 opens a spinning window after each answer. */
static void play(FILE *in, FILE *out, int snake, double cpu_per_move, double spin_ms) {
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        maybe_report();
        if (cpu_per_move > 0) burn(cpu_per_move);
        char m = snake ? snake_move(line) : '2';
        if (!m) return;
        /* The window opens just before the answer goes out: it is frozen
         * (if it is) while its threads spin in it. */
        if (spin_ms > 0) spin_window(spin_ms);
        fprintf(out, "%c\n", m);
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
        report_what = "after-answer spin";
        spinners();
        play(stdin, stdout, snake, 0, 15);
        return 0;
    }
    if (!strcmp(mode, "victim")) {
        if (snake) { puts("victim"); fflush(stdout); }
        play(stdin, stdout, snake, atof(argv[3]), 0);
        return 0;
    }
    if (!strcmp(mode, "report_cores")) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            FILE *f = fopen("/proc/self/status", "r");
            char l[512];
            while (f && fgets(l, sizeof l, f))
                if (!strncmp(l, "Cpus_allowed_list:", 18)) fprintf(stderr, "cores: %s", l + 19);
            if (f) fclose(f);
            puts("2");
            fflush(stdout);
        }
        return 0;
    }
    if (!strcmp(mode, "many_threads")) {
        if (snake) { puts("many_threads"); fflush(stdout); }
        int n = atoi(argv[3]);
        double ms = atof(argv[4]);
        pthread_t t;
        for (int i = 0; i < n; i++) pthread_create(&t, NULL, spin, NULL);
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            char m = snake ? snake_move(line) : '2';
            if (!m) return 0;
            window_end = now_ms() + ms;
            while (now_ms() < window_end) usleep(500);
            printf("%c\n", m);
            fflush(stdout);
        }
        return 0;
    }
    if (!strcmp(mode, "slow_start")) {
        burn(atof(argv[2]));
        puts("slow_start");
        fflush(stdout);
        play(stdin, stdout, 1, 0, 0);
        return 0;
    }
    if (!strcmp(mode, "spin_at_start")) {
        report_what = "start-up spin";
        window_end = now_ms() + 1e9;
        spinners();
        /* The window opens just before the id line goes out (it is frozen,
         * if it is, once the line is read). */
        spin_window(250);
        puts("spin_at_start");
        fflush(stdout);
        play(stdin, stdout, 1, 0, 0);
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
        play(s, s, 1, 0, 0);
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
    if (!strcmp(mode, "sched")) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            /* struct sched_attr, version 0 (48 bytes) */
            unsigned int attr[12] = {48};
            long r = syscall(SYS_sched_getattr, 0, attr, 48, 0);
            unsigned long long slice = (unsigned long long)attr[6] | (unsigned long long)attr[7] << 32;
            fprintf(stderr, "sched: policy %d priority %u slice %llu (%ld)\n", sched_getscheduler(0), attr[5], slice, r);
            puts("2");
            fflush(stdout);
        }
        return 0;
    }
    if (!strcmp(mode, "flood_no_newline")) {
        static char junk[1 << 16];
        memset(junk, 'x', sizeof junk);
        for (int i = 0; i < 128; i++) fwrite(junk, 1, sizeof junk, stdout);
        fputs("\n", stdout);
        fflush(stdout);
        play(stdin, stdout, 0, 0, 0);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
