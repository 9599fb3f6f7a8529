/* Try every way out. argv: tcp_port udp_port unix_path... -- abstract_name
 * Prints "<what>: ok" or "<what>: errno=N" for each attempt. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static void report(const char *what, int rc) {
    if (rc < 0) printf("%s: errno=%d\n", what, errno); else printf("%s: ok\n", what);
}
static struct sockaddr_in lo(int port) {
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}
int main(int argc, char **argv) {
    int tcp = atoi(argv[1]), udp = atoi(argv[2]);
    struct sockaddr_in a = lo(tcp);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    report("tcp connect host", connect(s, (struct sockaddr *)&a, sizeof a));
    s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in any = lo(5555);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    report("tcp bind", bind(s, (struct sockaddr *)&any, sizeof any));
    s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in u = lo(udp);
    report("udp send host", (int)sendto(s, "hi", 2, 0, (struct sockaddr *)&u, sizeof u));
    report("raw icmp socket", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
    report("packet socket", socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
    report("vsock socket", socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
    report("crypto api socket", socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
    int i = 3;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        struct sockaddr_un un = {0};
        un.sun_family = AF_UNIX;
        strncpy(un.sun_path, argv[i], sizeof un.sun_path - 1);
        s = socket(AF_UNIX, SOCK_STREAM, 0);
        char what[200];
        snprintf(what, sizeof what, "unix connect %s", argv[i]);
        report(what, connect(s, (struct sockaddr *)&un, sizeof un));
    }
    if (i + 1 < argc) {
        struct sockaddr_un un = {0};
        un.sun_family = AF_UNIX;
        size_t len = strlen(argv[i + 1]);
        memcpy(un.sun_path + 1, argv[i + 1], len);
        s = socket(AF_UNIX, SOCK_STREAM, 0);
        report("abstract unix connect", connect(s, (struct sockaddr *)&un, offsetof(struct sockaddr_un, sun_path) + 1 + len));
    }
    FILE *f = fopen("/proc/net/dev", "r");
    char line[512];
    int ifaces = -2; /* two header lines */
    while (f && fgets(line, sizeof line, f)) ifaces++;
    printf("interfaces=%d\n", ifaces);
    return 0;
}
