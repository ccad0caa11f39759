// SPDX-License-Identifier: GPL-2.0
/* Socket owners in the kernel, two iterators:
 * - watched_tasks (task): the tgid of every thread in the watched network
 *   namespace, one pass over the host's threads;
 * - socket_owners (task_file): one record (tgid, fd, socket inode, comm)
 *   per open socket file of the watched namespace, nothing for the other
 *   files. netlens runs it once per watched process (the link's task
 *   filter), so the million fds of other processes are never visited.
 * netlens reads them when a socket's owner is unknown; the /proc walk
 * (readlink of every fd) is their fallback.
 *
 * The task_file iterator visits each process once (threads sharing their
 * file table are skipped) and every fd in it.
 *
 * Rebuild with ebpf/build.sh (pinned clang, reproducible object). */
#include "vmlinux.h"

#define SEC(name) __attribute__((section(name), used))
#define AF_INET 2
#define AF_INET6 10

/* The iterator's types, beside vmlinux.h's (which drops.bpf.c shares):
 * preserve_access_index makes each field a CO-RE relocation. */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct net *net_ns;
} __attribute__((preserve_access_index));

struct task_struct {
	int tgid;
	char comm[16];
	struct nsproxy *nsproxy;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct socket {
	struct sock *sk;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

struct bpf_iter__task_file {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
	__u32 fd;
	struct file *file;
} __attribute__((preserve_access_index));

static long (*bpf_seq_write)(struct seq_file *m, const void *data, __u32 len) = (void *)127;
static struct socket *(*bpf_sock_from_file)(struct file *file) = (void *)162;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;

/* The watched namespace's inode (ns.inum); 0: every namespace. The loader
 * sets it. */
volatile const __u32 watched_netns = 0;

/* Must match collect/owners/bpf.rs's Record byte for byte. */
struct record {
	__u32 tgid;
	__u32 fd;
	__u32 inode;
	char comm[16];
};

SEC("iter/task_file")
int socket_owners(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct record record = {};
	struct socket *socket;
	struct sock *sk = 0;
	struct net *net = 0;
	struct inode *inode = 0;
	unsigned short family = 0;
	unsigned int inum = 0;
	unsigned long ino = 0;

	if (!task || !file)
		return 0;
	socket = bpf_sock_from_file(file);
	if (!socket)
		return 0;
	bpf_probe_read_kernel(&sk, sizeof(sk), &socket->sk);
	if (!sk)
		return 0;
	bpf_probe_read_kernel(&family, sizeof(family), &sk->__sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	bpf_probe_read_kernel(&net, sizeof(net), &sk->__sk_common.skc_net.net);
	bpf_probe_read_kernel(&inum, sizeof(inum), &net->ns.inum);
	if (watched_netns && inum != watched_netns)
		return 0;
	bpf_probe_read_kernel(&inode, sizeof(inode), &file->f_inode);
	bpf_probe_read_kernel(&ino, sizeof(ino), &inode->i_ino);
	bpf_probe_read_kernel(&record.tgid, sizeof(record.tgid), &task->tgid);
	bpf_probe_read_kernel(&record.comm, sizeof(record.comm), &task->comm);
	record.fd = ctx->fd;
	record.inode = ino;
	bpf_seq_write(ctx->meta->seq, &record, sizeof(record));
	return 0;
}

/* The tgid of each thread whose network namespace is the watched one (a
 * process may have only some threads there, as netlens's sampler). */
SEC("iter/task")
int watched_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct nsproxy *nsproxy = 0;
	struct net *net = 0;
	unsigned int inum = 0;
	__u32 tgid = 0;

	if (!task)
		return 0;
	/* NULL once the task is exiting. */
	bpf_probe_read_kernel(&nsproxy, sizeof(nsproxy), &task->nsproxy);
	if (!nsproxy)
		return 0;
	bpf_probe_read_kernel(&net, sizeof(net), &nsproxy->net_ns);
	if (!net)
		return 0;
	bpf_probe_read_kernel(&inum, sizeof(inum), &net->ns.inum);
	if (watched_netns && inum != watched_netns)
		return 0;
	bpf_probe_read_kernel(&tgid, sizeof(tgid), &task->tgid);
	bpf_seq_write(ctx->meta->seq, &tgid, sizeof(tgid));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
