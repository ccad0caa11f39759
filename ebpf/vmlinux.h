/* The few kernel types drops.bpf.c reads, written by hand instead of a
 * 100,000-line `bpftool btf dump` of one kernel. preserve_access_index
 * makes every field access a CO-RE relocation: the loader looks each field
 * up by name in the running kernel's BTF, so offsets here do not matter
 * and the same object loads on any kernel that has these fields. Anonymous
 * unions in the kernel's structs (sk_buff.dev, sock_common.skc_num) are
 * matched through by name. */
#ifndef NETLENS_VMLINUX_H
#define NETLENS_VMLINUX_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;

/* The reason's real type: a field declared u32 instead fails CO-RE's type
 * check ("invalid func unknown#195896080" in the verifier). */
enum skb_drop_reason {
	SKB_DROP_REASON_NOT_SPECIFIED = 2,
};

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} __attribute__((preserve_access_index)) possible_net_t;

struct net_device {
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

struct sock_common {
	unsigned short skc_family;
	unsigned short skc_num;
	possible_net_t skc_net;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
	unsigned short sk_type;
	unsigned short sk_protocol;
	int sk_err;
	int sk_err_soft;
} __attribute__((preserve_access_index));

/* _nfct exists only with conntrack built (CONFIG_NF_CONNTRACK): the
 * program checks for it with FIELD_EXISTS before reading it. The header
 * offsets are in a struct_group (an anonymous member) in newer kernels. */
struct sk_buff {
	struct net_device *dev;
	struct sock *sk;
	unsigned long _nfct;
	__u16 protocol; /* __be16 */
	__u16 network_header;
	unsigned char *head;
} __attribute__((preserve_access_index));

/* Conntrack's entry, only its two directions' destinations. Missing from
 * vmlinux's BTF when conntrack is a module no built-in code refers to:
 * checked with FIELD_EXISTS too. */
union nf_inet_addr {
	__u32 all[4];
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple {
	struct {
		union nf_inet_addr u3;
		union {
			__u16 all; /* __be16 */
		} u;
		__u8 protonum;
	} dst;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash {
	struct nf_conntrack_tuple tuple;
} __attribute__((preserve_access_index));

struct nf_conn {
	struct nf_conntrack_tuple_hash tuplehash[2];
} __attribute__((preserve_access_index));

struct trace_entry {
	unsigned short type;
} __attribute__((preserve_access_index));

/* The classic tracepoint's record (tracefs events/skb/kfree_skb/format). */
struct trace_event_raw_kfree_skb {
	struct trace_entry ent;
	void *skbaddr;
	void *location;
	void *rx_sk;
	enum skb_drop_reason reason;
} __attribute__((preserve_access_index));

#endif
