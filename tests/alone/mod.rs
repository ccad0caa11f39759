//! The tests that change a setting of the whole host (nf_conntrack_max,
//! net.ipv4.tcp_mem: no namespace has its own) and so hold it alone
//! (`common::need_root_alone`) while it is changed: every other root test
//! waits. They come first in name order, the order libtest starts tests
//! in, so that they wait for no other root test to end and none waits
//! for them in the middle of the run.

mod conntrack_full;
mod tcp_memory;
