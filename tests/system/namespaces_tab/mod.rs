//! The Namespaces tab ("0 NS") and Enter's scope.
//!
//! Without root: the tab drawn at 80x24 (and in a small pane) from fixed
//! samples, Enter scoping the Sockets tab, `u` ending it.
//! As root: namespaces made here (`nsv-<pid>-K`, 198.18.228.0/24 ..
//! 198.18.230.0/24) with paced UDP into each, TCP sockets in every state
//! the tab counts and conntrack switched on in two of them by an nft rule;
//! `snapshot --json --all-netns` and the real binary in tmux (80x24) are
//! checked against `ip -s link`, `ss -tan` and `conntrack -C` run inside
//! each namespace; Enter scopes the Sockets tab to one namespace; a
//! recording under --all-netns replays to the same namespaces and numbers.
//!
//! Network safety: every address is in 198.18.228.0/22, every datagram goes
//! from this process to a namespace it created (or inside one), every
//! sender is bounded in packets and seconds, and every namespace (with its
//! veth and nft table) is deleted on drop.

mod kernel;
mod samples;
