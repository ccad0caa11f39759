// SPDX-License-Identifier: GPL-2.0
/* Counts the bytes and packets of every flow crossing the watched
 * namespace's interfaces, at tc clsact ingress and egress, in a per-CPU hash
 * that netlens reads once per interval: no per-packet event reaches user
 * space, and nothing is dropped when user space is slow.
 *
 * The program never alters a packet: it always returns TC_ACT_UNSPEC (for
 * TCX: TCX_NEXT), so the next program or filter decides as if it were not
 * there.
 *
 * Each packet is counted once:
 *   - at egress, a packet that came in on an interface (ingress_ifindex set:
 *     forwarded, or bridged) was counted at its ingress;
 *   - on loopback (ifindex 1 in every namespace) a packet goes out and comes
 *     back in: it is counted at ingress only (libpcap skips lo's outgoing
 *     copy for the same reason).
 *
 * A packet is what the capture sees: a GSO/GRO packet is one packet of its
 * whole length (link-layer header included), so the kernel's counts and
 * the capture's agree where the capture dropped nothing.
 *
 * Rebuild with ebpf/build.sh (pinned clang, reproducible object). */

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))

#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_NOEXIST 1
#define BPF_HDR_START_NET 1
#define TC_ACT_UNSPEC (-1)
#define LOOPBACK_IFINDEX 1
#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP_BE 0x0008   /* htons(0x0800) */
#define ETH_P_IPV6_BE 0xdd86 /* htons(0x86dd) */

/* The first fields of the UAPI's struct __sk_buff (linux/bpf.h), whose
 * layout is fixed: the verifier rewrites each access to the kernel's
 * sk_buff. */
struct __sk_buff {
	__u32 len;
	__u32 pkt_type;
	__u32 mark;
	__u32 queue_mapping;
	__u32 protocol;
	__u32 vlan_present;
	__u32 vlan_tci;
	__u32 vlan_proto;
	__u32 priority;
	__u32 ingress_ifindex;
	__u32 ifindex;
	__u32 tc_index;
	__u32 cb[5];
	__u32 hash;
	__u32 tc_classid;
	__u32 data;
	__u32 data_end;
	__u32 napi_id;
	__u32 family;
	__u32 remote_ip4;
	__u32 local_ip4;
	__u32 remote_ip6[4];
	__u32 local_ip6[4];
	__u32 remote_port;
	__u32 local_port;
	__u32 data_meta;
	__u64 flow_keys;
	__u64 tstamp;
	__u32 wire_len;
	__u32 gso_segs;
	__u64 sk;
	__u32 gso_size;
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)2;
static long (*bpf_skb_load_bytes_relative)(const struct __sk_buff *skb, __u32 offset,
					   void *to, __u32 len, __u32 start) = (void *)68;
static __u64 (*bpf_ktime_get_boot_ns)(void) = (void *)125;

/* Must match collect/flows/loader.rs's FlowKey byte for byte. Ports are
 * in network byte order; an IPv4 address fills the first 4 bytes. */
struct flow_key {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport;
	__u16 dport;
	__u32 ifindex;
	__u8 family; /* AF_INET, AF_INET6 */
	__u8 proto;
	__u8 egress;
	__u8 pad;
};

/* Must match collect/flows/loader.rs's FlowCount. */
struct flow_count {
	__u64 packets;
	__u64 bytes;
	__u64 first_ns; /* CLOCK_BOOTTIME */
	__u64 last_ns;
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
	__type(key, struct flow_key);
	__type(value, struct flow_count);
} FLOWS SEC(".maps");

/* What was not counted because FLOWS was full: [0] packets, [1] bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} NOT_COUNTED SEC(".maps");

static __always_inline void not_counted(__u64 packets, __u64 bytes)
{
	__u32 index = 0;
	__u64 *value = bpf_map_lookup_elem(&NOT_COUNTED, &index);
	if (value)
		*value += packets;
	index = 1;
	value = bpf_map_lookup_elem(&NOT_COUNTED, &index);
	if (value)
		*value += bytes;
}

static __always_inline void count(struct flow_key *key, __u64 packets, __u64 bytes)
{
	__u64 now = bpf_ktime_get_boot_ns();
	struct flow_count *value = bpf_map_lookup_elem(&FLOWS, key);
	if (value) { /* per-CPU: no other writer */
		value->packets += packets;
		value->bytes += bytes;
		value->last_ns = now;
		return;
	}
	struct flow_count fresh = {packets, bytes, now, now};
	if (bpf_map_update_elem(&FLOWS, key, &fresh, BPF_NOEXIST) == 0)
		return;
	value = bpf_map_lookup_elem(&FLOWS, key);
	if (value) { /* created meanwhile by an interrupt on this CPU */
		value->packets += packets;
		value->bytes += bytes;
		value->last_ns = now;
		return;
	}
	not_counted(packets, bytes);
}

/* Protocols whose first 4 bytes are the ports (as the capture's flow table
 * keys them): TCP, UDP, DCCP, SCTP, UDP-Lite. */
static __always_inline int has_ports(__u8 proto)
{
	return proto == 6 || proto == 17 || proto == 33 || proto == 132 || proto == 136;
}

/* Fills the key's addresses, protocol and ports (left 0 when the packet is
 * not IP: such packets are counted by protocol 0). */
static __always_inline void parse(struct __sk_buff *skb, struct flow_key *key)
{
	__u32 l4 = 0;
	if (skb->protocol == ETH_P_IP_BE) {
		__u8 ip[20];
		if (bpf_skb_load_bytes_relative(skb, 0, ip, sizeof(ip), BPF_HDR_START_NET))
			return;
		key->family = AF_INET;
		key->proto = ip[9];
		__builtin_memcpy(key->saddr, &ip[12], 4);
		__builtin_memcpy(key->daddr, &ip[16], 4);
		l4 = (ip[0] & 0xf) * 4;
		/* A later fragment carries no ports. */
		if (((ip[6] & 0x1f) | ip[7]) != 0)
			return;
	} else if (skb->protocol == ETH_P_IPV6_BE) {
		__u8 ip[40];
		if (bpf_skb_load_bytes_relative(skb, 0, ip, sizeof(ip), BPF_HDR_START_NET))
			return;
		key->family = AF_INET6;
		__builtin_memcpy(key->saddr, &ip[8], 16);
		__builtin_memcpy(key->daddr, &ip[24], 16);
		__u8 next = ip[6];
		l4 = 40;
		/* Hop-by-hop, routing, destination options, fragment: a few. */
		for (int i = 0; i < 4; i++) {
			if (next != 0 && next != 43 && next != 60 && next != 44)
				break;
			__u8 ext[4];
			if (bpf_skb_load_bytes_relative(skb, l4, ext, sizeof(ext),
							BPF_HDR_START_NET))
				break;
			if (next == 44) {
				l4 += 8;
				next = ext[0];
				if (((ext[2] << 8) | (ext[3] & 0xf8)) != 0) {
					key->proto = next;
					return; /* a later fragment */
				}
				continue;
			}
			l4 += (ext[1] + 1) * 8;
			next = ext[0];
		}
		key->proto = next;
	} else {
		return;
	}
	if (!has_ports(key->proto))
		return;
	__u16 ports[2];
	if (bpf_skb_load_bytes_relative(skb, l4, ports, sizeof(ports), BPF_HDR_START_NET))
		return;
	key->sport = ports[0];
	key->dport = ports[1];
}

static __always_inline int account(struct __sk_buff *skb, __u8 egress)
{
	struct flow_key key = {};
	key.ifindex = skb->ifindex;
	key.egress = egress;
	parse(skb, &key);
	count(&key, 1, skb->len);
	return TC_ACT_UNSPEC;
}

SEC("classifier/ingress")
int flows_ingress(struct __sk_buff *skb)
{
	return account(skb, 0);
}

SEC("classifier/egress")
int flows_egress(struct __sk_buff *skb)
{
	if (skb->ingress_ifindex != 0 || skb->ifindex == LOOPBACK_IFINDEX)
		return TC_ACT_UNSPEC;
	return account(skb, 1);
}

char LICENSE[] SEC("license") = "GPL";
