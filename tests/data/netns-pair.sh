# Sourced by tests/data/make-*-pcap.sh (from the repository's root): needs
# root; sets NETLENS (as given, else a release build of this tree) and
# makes two network namespaces, $A (198.18.9.1 on veth-a) and $B
# (198.18.9.2 on veth-b), joined by a veth pair. On exit it ends the
# capture whose PID is in $CAP, if any, and removes both namespaces.
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, packet sockets)" >&2; exit 1; }
if [ -z "${NETLENS:-}" ]; then
    cargo build --release --quiet
    NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")
fi
A=pcap-a-$$
B=pcap-b-$$
CAP=
cleanup() {
    [ -n "$CAP" ] && kill "$CAP" 2>/dev/null || true
    ip netns del "$A" 2>/dev/null || true
    ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$A"
ip netns add "$B"
ip -n "$A" link add veth-a type veth peer name veth-b netns "$B"
ip -n "$A" addr add 198.18.9.1/24 dev veth-a
ip -n "$B" addr add 198.18.9.2/24 dev veth-b
ip -n "$A" link set veth-a up
ip -n "$B" link set veth-b up
