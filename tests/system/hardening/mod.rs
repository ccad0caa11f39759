//! Hardening: what another user controls (names, files in their home and
//! FUSE mounts there, container stores, recordings, pcaps, namespaces,
//! signals, a full disk) can make a root netlens neither hang, nor grow
//! past a documented bound, nor write control bytes to a terminal, nor
//! crowd the watched namespace's drops out of the kernel's map. One
//! module, a file a subject; each test runs the real binary against the
//! real thing (a FIFO in a real user's home, namespaces made with `ip netns
//! add`, a setcap'd copy), and prints a SKIP line where it needs root.

mod device_outputs;
mod drop_map;
mod escapes;
mod flow_counts;
mod fuse;
mod kill_setcap;
mod many_netns;
mod measured;
mod names;
mod netns_tmux;
mod owners;
mod pcaps;
mod recordings;
mod segments;
mod short_connections;
mod stale;
mod stdout_errors;
mod stop_signals;
mod writers_util;
