//! Hardening: what another user controls (names, files in their home and
//! FUSE mounts there, container stores, recordings, pcaps, namespaces,
//! signals, a full disk) can make a root netlens neither hang, nor grow
//! past a documented bound, nor write control bytes to a terminal. One
//! binary, a module a subject; each test runs the real binary against the
//! real thing (a FIFO in a real user's home, namespaces made with `ip netns
//! add`, a setcap'd copy), and prints a SKIP line where it needs root.

#[path = "../common/mod.rs"]
mod common;

mod device_outputs;
mod escapes;
mod fuse;
mod kill_setcap;
mod many_netns;
mod measured;
mod names;
mod pcaps;
mod recordings;
mod segments;
mod stdout_errors;
mod stop_signals;
mod writers_util;
