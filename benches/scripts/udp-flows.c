/* Sends one UDP datagram per flow from ADDR to ADDR (a namespace's own
 * loopback address), N distinct flows: source port 10000 + i / 50000,
 * destination port 1024 + i % 50000. Each is one new conntrack entry.
 * Bounded: N datagrams, nothing else. Built by scale-conntrack.sh. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: udp-flows ADDR N\n");
        return 2;
    }
    long n = atol(argv[2]);
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, argv[1], &a.sin_addr) != 1 || n < 1 || n > 3000000) {
        fprintf(stderr, "bad ADDR or N (1..3000000)\n");
        return 2;
    }
    int fd = -1;
    long sent = 0;
    for (long i = 0; i < n; i++) {
        if (i % 50000 == 0) {
            if (fd >= 0) close(fd);
            fd = socket(AF_INET, SOCK_DGRAM, 0);
            struct sockaddr_in src = a;
            src.sin_port = htons(10000 + i / 50000);
            if (bind(fd, (void *)&src, sizeof src)) { perror("bind"); return 1; }
        }
        a.sin_port = htons(1024 + i % 50000);
        if (sendto(fd, "x", 1, 0, (void *)&a, sizeof a) == 1) sent++;
    }
    printf("%ld\n", sent);
    return 0;
}
