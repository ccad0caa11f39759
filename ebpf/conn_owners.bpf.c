// SPDX-License-Identifier: GPL-2.0
/* Names the process behind each TCP connection, for the connection log:
 * sock_diag's destroy notification carries the socket cookie and the final
 * tcp_info but no inode or uid, so a connection that opened and closed
 * between two socket dumps has no owner without this.
 *
 * On sock:inet_sock_set_state it records the current process (tgid, comm,
 * and cgroup v2 id: it names the container of a process gone by the time
 * user space looks it up) on the transitions that only a system call
 * makes, so `current` is the socket's user, never an interrupted bystander:
 *   -> SYN_SENT              connect() (the client)
 *   ESTABLISHED -> FIN_WAIT1 close()/shutdown() by either side
 *   CLOSE_WAIT  -> LAST_ACK  close()/shutdown() after the peer's FIN
 * An accepted socket is named by its close: the server process that
 * closes it (first, as nginx does with "Connection: close", or after the
 * client) is the one that held it. Accept-time naming (fexit on
 * inet_csk_accept) would also name sockets the peer resets before the
 * server closes them, but that function's signature changed in 6.10; the
 * close needs nothing beyond this one tracepoint. A later record for the
 * same socket replaces the earlier (the closer held it last).
 *
 * Two entry points, tried in this order by the loader:
 *   set_state_btf  tp_btf, keyed by the socket cookie (the destroy
 *                  notification's idiag_cookie; bpf_get_socket_cookie
 *                  generates it as sock_diag does)
 *   set_state_tp   the classic tracepoint, keyed by (netns, family,
 *                  addresses, ports): it cannot get the cookie
 * Both write LRU maps that user space reads as the destroy notifications
 * arrive, deleting the cookies' entries (a 4-tuple's may be reused at
 * once, so it stays); the LRU bounds them.
 * Only the watched namespace's sockets are recorded: user space takes
 * only those, and other namespaces' connections (a busy host's) would
 * evict its entries before it reads them.
 *
 * set_state_btf also records, in ERRORS by cookie, the error a connect
 * failed with (sk_err, else sk_err_soft, as SYN_SENT -> CLOSE happens): the
 * destroy notification looks the same whether an RST refused it or an
 * ICMP unreachable (a router's, or this host's own after the neighbour
 * went unanswered) ended it; the error tells ECONNREFUSED from
 * EHOSTUNREACH. An ICMP that arrives while connect() itself still holds
 * the socket (a path of microseconds: a veth on this host) is kept in
 * sk_err_soft, which a non-blocking connect's SO_ERROR reads and clears
 * before the close: that connect is logged as refused or syn-timeout.
 *
 * Rebuild with ebpf/build.sh (pinned clang, reproducible object). */
#include "vmlinux.h"

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))

#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_ANY 0
#define BPF_NOEXIST 1
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_CLOSE 7
#define TCP_FIN_WAIT1 4
#define TCP_CLOSE_WAIT 8
#define TCP_LAST_ACK 9

static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)2;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static __u64 (*bpf_get_socket_cookie)(void *sk) = (void *)46;
static __u64 (*bpf_get_current_cgroup_id)(void) = (void *)80;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;

/* Must match collect/conn_owners.rs's Owner byte for byte. */
struct owner {
	__u32 tgid;
	__u32 pad;
	char comm[16];
	__u64 cgroup;
};

/* Must match collect/conn_owners.rs's Tuple byte for byte. Ports in host
 * order; an IPv4 address in the first 4 bytes, the rest 0. */
struct tuple {
	__u32 netns;
	__u16 family;
	__u16 sport;
	__u16 dport;
	__u16 pad;
	__u8 saddr[16];
	__u8 daddr[16];
};

/* The watched namespace's inode (ns.inum); 0: every namespace. The loader
 * sets it. */
volatile const __u32 watched_netns = 0;

/* Sized for ~64k connections closing between two reads. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct owner);
} BY_COOKIE SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct tuple);
	__type(value, struct owner);
} BY_TUPLE SEC(".maps");

/* Sized as BY_COOKIE: one error per failed connect. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __s32);
} ERRORS SEC(".maps");

/* Whether `current` made this transition in a system call on the socket. */
static __always_inline int by_the_user(int oldstate, int newstate)
{
	return newstate == TCP_SYN_SENT ||
	       (oldstate == TCP_ESTABLISHED && newstate == TCP_FIN_WAIT1) ||
	       (oldstate == TCP_CLOSE_WAIT && newstate == TCP_LAST_ACK);
}

static __always_inline void current_owner(struct owner *owner)
{
	owner->tgid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(owner->comm, sizeof(owner->comm));
	owner->cgroup = bpf_get_current_cgroup_id();
}

SEC("tp_btf/inet_sock_set_state")
int set_state_btf(__u64 *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	int oldstate = (int)ctx[1], newstate = (int)ctx[2];
	int failed = oldstate == TCP_SYN_SENT && newstate == TCP_CLOSE;
	if ((!failed && !by_the_user(oldstate, newstate)) || sk->sk_protocol != IPPROTO_TCP)
		return 0;
	if (watched_netns && sk->__sk_common.skc_net.net->ns.inum != watched_netns)
		return 0;
	__u64 cookie = bpf_get_socket_cookie(sk);
	if (failed) {
		__s32 error = sk->sk_err ? sk->sk_err : sk->sk_err_soft;
		if (error)
			bpf_map_update_elem(&ERRORS, &cookie, &error, BPF_ANY);
		return 0;
	}
	struct owner owner = {};
	current_owner(&owner);
	bpf_map_update_elem(&BY_COOKIE, &cookie, &owner, BPF_ANY);
	return 0;
}

/* The classic tracepoint's record (tracefs events/sock/inet_sock_set_state
 * /format), unchanged since 4.16. Fixed offsets, not CO-RE: a relocated
 * array field is reached through a moved ctx pointer, which the verifier
 * refuses ("dereference of modified ctx ptr"). */
struct inet_sock_set_state_record {
	__u64 common;
	const void *skaddr;
	int oldstate;
	int newstate;
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u16 protocol;
	__u8 saddr[4];
	__u8 daddr[4];
	__u8 saddr_v6[16];
	__u8 daddr_v6[16];
};

#define READ(dst, src)                                                          \
	bpf_probe_read_kernel(&(dst), sizeof(dst), __builtin_preserve_access_index(&(src)))

SEC("tracepoint/sock/inet_sock_set_state")
int set_state_tp(struct inet_sock_set_state_record *ctx)
{
	if (!by_the_user(ctx->oldstate, ctx->newstate) || ctx->protocol != IPPROTO_TCP)
		return 0;
	struct tuple key = {};
	struct sock *sk = (struct sock *)ctx->skaddr;
	struct net *net = 0;
	READ(net, sk->__sk_common.skc_net.net);
	if (net)
		READ(key.netns, net->ns.inum);
	if (watched_netns && key.netns != watched_netns)
		return 0;
	key.family = ctx->family;
	key.sport = ctx->sport;
	key.dport = ctx->dport;
	if (key.family == AF_INET) {
		__builtin_memcpy(key.saddr, ctx->saddr, 4);
		__builtin_memcpy(key.daddr, ctx->daddr, 4);
	} else if (key.family == AF_INET6) {
		__builtin_memcpy(key.saddr, ctx->saddr_v6, 16);
		__builtin_memcpy(key.daddr, ctx->daddr_v6, 16);
	} else {
		return 0;
	}
	struct owner owner = {};
	current_owner(&owner);
	bpf_map_update_elem(&BY_TUPLE, &key, &owner, BPF_ANY);
	return 0;
}

/* The same error as sock:inet_sk_error_report sees it (a failed connect
 * reports it after its CLOSE), recorded by a second program: a tracing
 * program that is already running on a CPU is skipped when its tracepoint
 * fires again there (a softirq ending a connect while set_state_btf runs
 * for another socket), and each copy of netlens has its own. It is a poor
 * second: tcp_done() wakes the socket's owner before the report, and a
 * non-blocking connect's SO_ERROR takes sk_err (sets it to 0) at once, so
 * this one often finds nothing. A connect without a recorded error is
 * named by its counters (collect/tcp_destroy.rs). */
SEC("tp_btf/inet_sk_error_report")
int error_btf(__u64 *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	__s32 error = sk->sk_err ? sk->sk_err : sk->sk_err_soft;
	if (!error)
		return 0;
	if (watched_netns && sk->__sk_common.skc_net.net->ns.inum != watched_netns)
		return 0;
	__u64 cookie = bpf_get_socket_cookie(sk);
	bpf_map_update_elem(&ERRORS, &cookie, &error, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
