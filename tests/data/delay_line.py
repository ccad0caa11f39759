"""A delay line on NFQUEUE: every packet an iptables rule queues to
QUEUE is held DELAY_MS and then accepted, while the packets the rule
leaves alone pass at once, so the held ones arrive after later ones: the
path reorders. This kernel has no netem; this speaks nfnetlink_queue over
a raw netlink socket, with nothing to install.

Usage: delay_line.py QUEUE DELAY_MS SECONDS. Prints "ready" once bound,
accepts whatever it still holds and exits after SECONDS.
"""

import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NF_ACCEPT = 1
NLM_F_REQUEST = 1

queue, delay, seconds = int(sys.argv[1]), float(sys.argv[2]) / 1000, float(sys.argv[3])
sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
sock.bind((0, 0))


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def send(msg_type, attrs):
    body = struct.pack("!BBH", socket.AF_UNSPEC, 0, queue) + b"".join(attrs)
    kind = (NFNL_SUBSYS_QUEUE << 8) | msg_type
    sock.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST, 0, 0) + body)


send(NFQNL_MSG_CONFIG, [attr(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, 0))])
send(NFQNL_MSG_CONFIG, [attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))])
print("ready", flush=True)


def accept(packet_id):
    send(NFQNL_MSG_VERDICT, [attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id))])


def packet_ids(data):
    """The packet ids in a batch of netlink messages."""
    at = 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            return
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            rest = at + 20
            while rest + 4 <= at + length:
                alen, akind = struct.unpack_from("=HH", data, rest)
                if alen < 4:
                    break
                if akind & 0x7FFF == NFQA_PACKET_HDR:
                    yield struct.unpack_from("!I", data, rest + 4)[0]
                rest += (alen + 3) & ~3
        at += (length + 3) & ~3


held = []
end = time.time() + seconds
while time.time() < end:
    now = time.monotonic()
    while held and held[0][0] <= now:
        accept(held.pop(0)[1])
    wait = max(0.0, held[0][0] - now) if held else 0.05
    if select.select([sock], [], [], wait)[0]:
        data = sock.recv(1 << 20)
        due = time.monotonic() + delay
        held.extend((due, packet_id) for packet_id in packet_ids(data))
for _, packet_id in held:
    accept(packet_id)
