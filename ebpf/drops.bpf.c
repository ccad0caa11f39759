// SPDX-License-Identifier: GPL-2.0
/* Counts every packet the kernel drops, by (location, network namespace,
 * reason, device, socket port and protocol), in a per-CPU hash that netlens
 * reads once per interval: no per-packet event reaches user space.
 *
 * Three entry points, tried in this order by the loader:
 *   kfree_skb_btf  tp_btf, with rx_sk (the 4th argument, kernels >= 6.11)
 *   kfree_skb_btf3 tp_btf, without it (5.17 .. 6.10)
 *   kfree_skb_tp   the classic tracepoint, where tp_btf cannot attach
 * tp_btf reads kernel memory directly (~100 ns a drop, no tracefs); the
 * tracepoint goes through bpf_probe_read_kernel (~300 ns).
 *
 * Only the watched namespace's drops are counted (WATCHED below): every
 * entry point reads the netns the same way (the device's, else the
 * socket's) and returns before touching DROPS or LOST for any other, so
 * another namespace's drops can neither fill the map nor show as "not
 * counted" here.
 *
 * Rebuild with ebpf/build.sh (pinned clang, reproducible object). */
#include "vmlinux.h"

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))

#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_NOEXIST 1
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)2;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;

/* Must match collect/drops/loader.rs's DropKey byte for byte. */
struct drop_key {
	__u64 location;
	__u32 netns;
	__u32 reason;
	__u32 ifindex;
	__u16 port;
	__u8 proto;  /* sk_protocol of the socket, 0 without one */
	__u8 family; /* the socket's address family, 0 without one */
};

/* uapi/linux/bpf.h's map flag (vmlinux.h has no macros). */
#define BPF_F_NO_PREALLOC (1U << 0)

/* Not preallocated: each netlens start would otherwise allocate 16,384
 * per-CPU elements up front (a sixth of its start-up CPU on 2 cores, more
 * with more CPUs); entries are made as keys appear, up to the same cap. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct drop_key);
	__type(value, __u64);
} DROPS SEC(".maps");

/* The watched namespace's nsfs inode, written by netlens before it
 * attaches; 0 counts every namespace (netlens watching the initial one
 * shows them all). One inode, not a set: each sampler loads its own
 * program for the one namespace it watches. Filtering here is simpler
 * than per-namespace eviction and exact: a watched drop finds the map
 * holding watched keys only. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} WATCHED SEC(".maps");

/* The watched namespace's drops not counted because DROPS was full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} LOST SEC(".maps");

static __always_inline int watched(__u32 netns)
{
	__u32 zero = 0;
	__u32 *inode = bpf_map_lookup_elem(&WATCHED, &zero);
	return !inode || !*inode || *inode == netns;
}

/* Counts the drop unless it is another namespace's. */
static __always_inline void count(struct drop_key *key)
{
	if (!watched(key->netns))
		return;
	__u64 *packets = bpf_map_lookup_elem(&DROPS, key);
	if (packets) {
		*packets += 1; /* per-CPU: no other writer */
		return;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&DROPS, key, &one, BPF_NOEXIST) == 0)
		return;
	packets = bpf_map_lookup_elem(&DROPS, key);
	if (packets) { /* created meanwhile by an interrupt on this CPU */
		*packets += 1;
		return;
	}
	__u32 zero = 0;
	__u64 *lost = bpf_map_lookup_elem(&LOST, &zero);
	if (lost)
		*lost += 1;
}

/* tp_btf: skb, its device and sockets are typed kernel pointers, read
 * directly (a NULL pointer reads as 0). */
static __always_inline void fill_socket(struct drop_key *key, struct sock *sk)
{
	__u16 family = sk->__sk_common.skc_family;
	key->family = family;
	key->proto = sk->sk_protocol;
	if (family == AF_INET || family == AF_INET6)
		key->port = sk->__sk_common.skc_num;
}

static __always_inline int record_btf(struct sk_buff *skb, void *location,
				      enum skb_drop_reason reason, struct sock *rx_sk)
{
	struct drop_key key = {};
	key.location = (__u64)location;
	key.reason = reason;
	struct net_device *dev = skb->dev;
	struct sock *sk = skb->sk;
	if (!sk)
		sk = rx_sk;
	if (dev) {
		key.ifindex = dev->ifindex;
		key.netns = dev->nd_net.net->ns.inum;
	}
	if (sk) {
		fill_socket(&key, sk);
		if (!key.netns)
			key.netns = sk->__sk_common.skc_net.net->ns.inum;
	}
	count(&key);
	return 0;
}

SEC("tp_btf/kfree_skb")
int kfree_skb_btf(__u64 *ctx)
{
	return record_btf((struct sk_buff *)ctx[0], (void *)ctx[1],
			  (enum skb_drop_reason)ctx[2], (struct sock *)ctx[3]);
}

SEC("tp_btf/kfree_skb")
int kfree_skb_btf3(__u64 *ctx)
{
	return record_btf((struct sk_buff *)ctx[0], (void *)ctx[1],
			  (enum skb_drop_reason)ctx[2], 0);
}

/* Classic tracepoint: only the record is ours; the rest goes through
 * bpf_probe_read_kernel with CO-RE-relocated offsets. */
#define READ(dst, src)                                                          \
	bpf_probe_read_kernel(&(dst), sizeof(dst), __builtin_preserve_access_index(&(src)))

SEC("tracepoint/skb/kfree_skb")
int kfree_skb_tp(struct trace_event_raw_kfree_skb *ctx)
{
	struct drop_key key = {};
	struct sk_buff *skb = ctx->skbaddr;
	struct net_device *dev = 0;
	struct sock *sk = 0;
	struct net *net = 0;
	key.location = (__u64)ctx->location;
	key.reason = ctx->reason;
	READ(dev, skb->dev);
	READ(sk, skb->sk);
	if (!sk && __builtin_preserve_field_info(ctx->rx_sk, 2 /* FIELD_EXISTS */))
		sk = ctx->rx_sk;
	if (dev) {
		READ(key.ifindex, dev->ifindex);
		READ(net, dev->nd_net.net);
	}
	if (sk) {
		__u16 family = 0, proto = 0, port = 0;
		READ(family, sk->__sk_common.skc_family);
		READ(proto, sk->sk_protocol);
		key.family = family;
		key.proto = proto;
		if (family == AF_INET || family == AF_INET6) {
			READ(port, sk->__sk_common.skc_num);
			key.port = port;
		}
		if (!net)
			READ(net, sk->__sk_common.skc_net.net);
	}
	if (net)
		READ(key.netns, net->ns.inum);
	count(&key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
