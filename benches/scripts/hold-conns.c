/* Holds N loopback TCP connections (2N sockets, both ends in this process)
 * on 127.0.0.1:PORT, then sleeps until killed or SECONDS pass (bounded).
 * With CHURN=1 it instead connects and closes in a loop for SECONDS
 * (the client closes first, so each connection leaves one TIME_WAIT socket).
 * Built and run by scale-sockets.sh; loopback only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: hold-conns PORT N SECONDS CHURN\n");
        return 2;
    }
    int port = atoi(argv[1]);
    long n = atol(argv[2]);
    double seconds = atof(argv[3]);
    int churn = atoi(argv[4]);
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(srv, (void *)&a, sizeof a) || listen(srv, 4096)) {
        perror("listen");
        return 1;
    }
    double end = now() + seconds, start = now();
    long made = 0;
    /* Churn: N at once, then N per 60 s (the TIME_WAIT lifetime), so about
     * N TIME_WAIT sockets stay alive until SECONDS pass. */
    while (churn ? now() < end : made < n) {
        if (churn && made >= n + (long)((now() - start) * n / 60.0)) {
            usleep(10000);
            continue;
        }
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (c < 0 || connect(c, (void *)&a, sizeof a)) {
            perror("connect");
            if (c >= 0) close(c);
            if (!churn) return 1;
            usleep(100000);
            continue;
        }
        int s = accept(srv, NULL, NULL);
        if (s < 0) { perror("accept"); return 1; }
        made++;
        if (churn) {
            close(c); /* client first: the client side lingers in TIME_WAIT */
            close(s);
        }
        if (!churn && made % 1000 == 0 && now() > end) return 1;
    }
    printf("ready %ld\n", made);
    fflush(stdout);
    while (!churn && now() < end) sleep(1);
    return 0;
}
