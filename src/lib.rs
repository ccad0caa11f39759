//! netlens: an htop-style monitor of the Linux network stack.
//!
//! # Layers
//!
//! Each module imports only from its own row or the rows below it, and the
//! modules of one row do not import each other in a loop. `tests/layers.rs`
//! holds the same table and fails, naming the file and line, on an import
//! that climbs.
//!
//! ```text
//! 8  commands cli manual    one module per subcommand; clap; the man page
//! 7  ui                     drawing: one render function per tab and region
//! 6  app                    state and keys: a TabView per tab, an overlay
//!                           stack, the key table (keymap) behind keys, help,
//!                           footer and man page
//! 5  report export record   snapshot text/JSON, the Prometheus exporter,
//!    config                 recordings and replay, the config file
//! 4  session                target -> sampler + capture + DNS monitor ->
//!                           filled-in samples
//! 3  findings               pure functions of samples, with hysteresis
//! 2  collect capture dns    OS I/O: netlink and /proc, the packet ring, DNS
//!    load path safe_file    probes, load generators, the path prober (raw
//!    clock                  sockets, rising TTL), files, local time
//! 1  packet                 bytes in, facts out: decode, filter, the tcpdump
//!                           printer, pcap, flows and their analysis
//! 0  model units text       plain data; text <-> durations, rates, speeds;
//!                           names from outside bounded and escaped
//! ```
//!
//! # Data flow
//!
//! ```text
//! collect::Sampler (thread) --Sample--\
//! capture (ring thread) --summary------> session::fill --> findings::Engine
//! dns::DnsMonitor --results-----------/        |               |
//!                                            record         app History
//!                                       report, export       --> ui
//! record::Player --stored Samples--> the same app History (replay)
//! ```
//!
//! Samples hold raw counters; rates are computed at display time from two
//! samples (model::rates), so live, replay, snapshot and export agree.
//!
//! # Where to add
//!
//! - A collector: a file in `collect/` that fills a field of
//!   `model::Sample`, called from `collect::Collectors::collect` (the sampler
//!   thread runs it each interval).
//! - A finding: a function in `findings/` over (previous, current) samples,
//!   listed in `findings::evaluate` and `findings::IDS`, its threshold in
//!   `findings::thresholds` (the man page's table is generated from it), its
//!   meaning, evidence and fix in `findings/names.rs` (the man page's
//!   FINDINGS and README's "What netlens names" are generated from it).
//!   A finding for a kernel counter or drop reason is one row in
//!   `findings/catalogue/`. Its Prometheus alerting rule and the rule's
//!   promtool unit test are generated (`export::alerts`; regenerate
//!   assets/netlens-alerts.yml with NETLENS_UPDATE_README=1 cargo test
//!   --release --test alerts).
//!   A kernel drop reason (`drop:<REASON>`, the Drops tab, `explain`) is one
//!   row in `findings/catalogue/reasons.rs`.
//! - A tab: its state and keys in `app/` implementing `app::view::TabView`,
//!   its keys in `app/keymap/bindings.rs`, its drawing in `ui/`, its name, title
//!   and number key one row of `config::TABS`.
//! - A subcommand: its clap arguments in `cli/`, a module in `commands/`
//!   turning them into the core's options, one line in `main.rs`.

pub mod app;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod collect;
pub mod commands;
pub mod config;
pub mod dns;
pub mod export;
pub mod findings;
pub mod load;
pub mod manual;
pub mod model;
pub mod notify;
pub mod packet;
pub mod path;
pub mod record;
pub mod report;
pub mod safe_file;
pub mod session;
pub mod text;
pub mod ui;
pub mod units;
