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
 * A firewall's drop (NETFILTER_DROP) also keys on the packet's destination,
 * read from its IP header, and, when conntrack translated it before the
 * drop (DNAT in prerouting, dropped in forward), on the destination before
 * the translation. When the map is full such a drop is counted at its site
 * without the destination (whose entry is made first), so destinations
 * cannot push drops out.
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
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_DCCP 33
#define IPPROTO_SCTP 132
#define IPPROTO_UDPLITE 136
/* enum ip_conntrack_info, in the low 3 bits of skb->_nfct (NFCT_INFOMASK);
 * the rest is the struct nf_conn pointer (NFCT_PTRMASK). */
#define IP_CT_ESTABLISHED 0
#define IP_CT_NEW 2
#define IP_CT_ESTABLISHED_REPLY 3
#define NFCT_INFOMASK 7UL
#define FIELD_EXISTS 2 /* __builtin_preserve_field_info's kind */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HTONS(x) __builtin_bswap16(x)
#else
#define HTONS(x) (x)
#endif

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
	/* NETFILTER_DROP only, zero for every other reason (so their keys do
	 * not multiply): the packet's destination when it was dropped, address
	 * and port in network order (IPv4 in the first 4 bytes; the port of
	 * TCP, UDP, UDP-Lite, DCCP and SCTP, else 0), and where it was going
	 * before conntrack translated it (zero when it was not). */
	__u8 dst_addr[16];
	__u8 orig_addr[16];
	__u16 dst_port;
	__u16 orig_port;
	__u8 dst_family; /* AF_INET or AF_INET6; 0 without a destination */
	__u8 dst_proto;  /* the IP protocol (IPv6: the first next header) */
	__u8 pad[2];     /* explicit: the whole key is hashed */
};
_Static_assert(sizeof(struct drop_key) == 64, "DropKey in loader.rs is 64 bytes");

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

/* SKB_DROP_REASON_NETFILTER_DROP's number in the running kernel (it
 * differs between kernels), written by netlens before it attaches; 0 (no
 * drop's reason) reads no destination. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} NETFILTER SEC(".maps");

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

static __always_inline int netfilter(__u32 reason)
{
	__u32 zero = 0;
	__u32 *number = bpf_map_lookup_elem(&NETFILTER, &zero);
	return number && *number && *number == reason;
}

/* The skb's fields go through bpf_probe_read_kernel in every entry point
 * (head is a plain byte pointer tp_btf cannot follow), with CO-RE-relocated
 * offsets. */
#define READ(dst, src)                                                          \
	bpf_probe_read_kernel(&(dst), sizeof(dst), __builtin_preserve_access_index(&(src)))

/* The wire headers, up to the destination. */
struct ipv4_head {
	__u8 version_ihl;
	__u8 tos;
	__u16 len;
	__u16 id;
	__u16 frag_off;
	__u8 ttl;
	__u8 protocol;
	__u16 check;
	__u8 saddr[4];
	__u8 daddr[4];
};

struct ipv6_head {
	__u8 version_class;
	__u8 flow[3];
	__u16 len;
	__u8 nexthdr;
	__u8 hop_limit;
	__u8 saddr[16];
	__u8 daddr[16];
};

/* Protocols whose destination port follows the source port. */
static __always_inline int has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
	       proto == IPPROTO_DCCP || proto == IPPROTO_SCTP;
}

/* The packet's destination from its IP header. IPv6 extension headers are
 * not walked: behind one the protocol is the header's and the port 0. */
static __always_inline void fill_packet(struct drop_key *key, struct sk_buff *skb)
{
	unsigned char *head = 0;
	__u16 network = 0, protocol = 0;
	READ(head, skb->head);
	READ(network, skb->network_header);
	READ(protocol, skb->protocol);
	if (!head || network == 0xffff) /* no network header set */
		return;
	unsigned char *l3 = head + network;
	unsigned char *l4 = 0;
	if (protocol == HTONS(ETH_P_IP)) {
		struct ipv4_head ip;
		if (bpf_probe_read_kernel(&ip, sizeof(ip), l3) || ip.version_ihl >> 4 != 4)
			return;
		key->dst_family = AF_INET;
		key->dst_proto = ip.protocol;
		__builtin_memcpy(key->dst_addr, ip.daddr, 4);
		/* Only a first fragment carries the ports. */
		if (!(ip.frag_off & HTONS(0x1fff)))
			l4 = l3 + (ip.version_ihl & 0xf) * 4;
	} else if (protocol == HTONS(ETH_P_IPV6)) {
		struct ipv6_head ip;
		if (bpf_probe_read_kernel(&ip, sizeof(ip), l3) || ip.version_class >> 4 != 6)
			return;
		key->dst_family = AF_INET6;
		key->dst_proto = ip.nexthdr;
		__builtin_memcpy(key->dst_addr, ip.daddr, 16);
		l4 = l3 + sizeof(ip);
	}
	if (l4 && has_ports(key->dst_proto))
		bpf_probe_read_kernel(&key->dst_port, sizeof(key->dst_port), l4 + 2);
}

/* Where the packet was going before conntrack translated it: its
 * direction's tuple holds the destination it arrived (or was sent) with.
 * Kept only when it differs from the packet's. */
static __always_inline void fill_original(struct drop_key *key, struct sk_buff *skb)
{
	/* Both missing on kernels without conntrack (or its BTF): no reads. */
	if (!__builtin_preserve_field_info(skb->_nfct, FIELD_EXISTS))
		return;
	unsigned long nfct = 0;
	READ(nfct, skb->_nfct);
	struct nf_conn *ct = (struct nf_conn *)(nfct & ~NFCT_INFOMASK);
	unsigned long info = nfct & NFCT_INFOMASK;
	/* RELATED packets (ICMP errors) carry another connection's tuple. */
	if (!ct || (info != IP_CT_ESTABLISHED && info != IP_CT_NEW &&
		    info != IP_CT_ESTABLISHED_REPLY))
		return;
	if (!__builtin_preserve_field_info(ct->tuplehash, FIELD_EXISTS))
		return;
	union nf_inet_addr addr = {};
	__u16 port = 0;
	__u8 proto = 0;
	if (info == IP_CT_ESTABLISHED_REPLY) {
		READ(addr, ct->tuplehash[1].tuple.dst.u3);
		READ(port, ct->tuplehash[1].tuple.dst.u.all);
		READ(proto, ct->tuplehash[1].tuple.dst.protonum);
	} else {
		READ(addr, ct->tuplehash[0].tuple.dst.u3);
		READ(port, ct->tuplehash[0].tuple.dst.u.all);
		READ(proto, ct->tuplehash[0].tuple.dst.protonum);
	}
	/* A template (raw table's CT target) is all zero: not this packet's. */
	if (proto != key->dst_proto)
		return;
	if (!has_ports(proto))
		port = 0;
	if (key->dst_family == AF_INET)
		addr.all[1] = addr.all[2] = addr.all[3] = 0;
	__u32 *dst = (__u32 *)key->dst_addr;
	if (addr.all[0] == dst[0] && addr.all[1] == dst[1] && addr.all[2] == dst[2] &&
	    addr.all[3] == dst[3] && port == key->dst_port)
		return;
	__builtin_memcpy(key->orig_addr, &addr, 16);
	key->orig_port = port;
}

/* Adds one to the key's count; non-zero when the map has no room. */
static __always_inline int add(struct drop_key *key)
{
	__u64 *packets = bpf_map_lookup_elem(&DROPS, key);
	if (packets) {
		*packets += 1; /* per-CPU: no other writer */
		return 0;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&DROPS, key, &one, BPF_NOEXIST) == 0)
		return 0;
	packets = bpf_map_lookup_elem(&DROPS, key);
	if (packets) { /* created meanwhile by an interrupt on this CPU */
		*packets += 1;
		return 0;
	}
	return -1;
}

/* Counts the drop unless it is another namespace's; a firewall's with its
 * destination. */
static __always_inline void count(struct drop_key *key, struct sk_buff *skb)
{
	if (!watched(key->netns))
		return;
	if (netfilter(key->reason)) {
		/* The site's own entry first, at 0 (netlens shows no empty
		 * row): once destinations fill the map, their drops still have
		 * it to count in. */
		if (!bpf_map_lookup_elem(&DROPS, key)) {
			__u64 none = 0;
			bpf_map_update_elem(&DROPS, key, &none, BPF_NOEXIST);
		}
		fill_packet(key, skb);
		if (key->dst_family)
			fill_original(key, skb);
	}
	if (add(key) == 0)
		return;
	/* Full: counted at the same site without the destination. */
	if (key->dst_family) {
		__builtin_memset(key->dst_addr, 0, sizeof(key->dst_addr));
		__builtin_memset(key->orig_addr, 0, sizeof(key->orig_addr));
		key->dst_port = key->orig_port = 0;
		key->dst_family = key->dst_proto = 0;
		if (add(key) == 0)
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
	count(&key, skb);
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
 * bpf_probe_read_kernel with CO-RE-relocated offsets (READ). */
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
	if (!sk && __builtin_preserve_field_info(ctx->rx_sk, FIELD_EXISTS))
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
	count(&key, skb);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
