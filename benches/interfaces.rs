//! Benchmark: one full Interfaces sample (`LinkCollector::collect`).
//!
//! As root: builds a private network namespace holding 250 veth pairs
//! (500 interfaces + lo, each up with one 198.18.0.0/15 address; no traffic
//! is sent), enters it on the bench thread and measures `collect` there.
//! Not root: measures on the host's interfaces instead.
//! Budget: < 10 ms per sample with 500 interfaces.

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::Criterion;
use netlens::collect::link::LinkCollector;

const PAIRS: usize = 250;
const BUDGET: Duration = Duration::from_millis(10);

fn setns_net(f: &File) -> std::io::Result<()> {
    // SAFETY: valid fd; CLONE_NEWNET only affects the calling thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {args:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// The bench namespace; on drop the thread returns to its original
/// namespace and the namespace is deleted (also when unwinding).
struct BenchNetns {
    name: String,
    orig: Option<File>,
}

impl BenchNetns {
    fn create(pairs: usize) -> Result<BenchNetns, String> {
        let name = format!("netlens-bench-{}", std::process::id());
        ip(&["netns", "add", &name])?;
        let mut ns = BenchNetns { name, orig: None };
        for k in ["all", "default"] {
            ip(&[
                "netns",
                "exec",
                &ns.name,
                "sysctl",
                "-q",
                "-w",
                &format!("net.ipv6.conf.{k}.disable_ipv6=1"),
            ])?;
        }
        let mut script = String::from("link set lo up\n");
        for i in 0..pairs {
            script += &format!("link add nlb{i}a type veth peer name nlb{i}b\n");
        }
        for i in 0..pairs {
            // 198.18.i.0/24 for pair i: i < 250 stays inside 198.18.0.0/16.
            script += &format!("addr add 198.18.{i}.1/24 dev nlb{i}a\n");
            script += &format!("addr add 198.18.{i}.2/24 dev nlb{i}b\n");
            script += &format!("link set nlb{i}a up\nlink set nlb{i}b up\n");
        }
        let t = Instant::now();
        let mut child = Command::new("ip")
            .args(["-n", &ns.name, "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("ip -batch: {e}"))?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .map_err(|e| e.to_string())?;
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "ip -batch failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        eprintln!(
            "created {} with {} veth pairs in {:?}",
            ns.name,
            pairs,
            t.elapsed()
        );

        let orig = File::open("/proc/thread-self/ns/net").map_err(|e| e.to_string())?;
        let target = File::open(format!("/run/netns/{}", ns.name)).map_err(|e| e.to_string())?;
        setns_net(&target).map_err(|e| format!("setns: {e}"))?;
        ns.orig = Some(orig);
        Ok(ns)
    }
}

impl Drop for BenchNetns {
    fn drop(&mut self) {
        if let Some(orig) = self.orig.take()
            && let Err(e) = setns_net(&orig)
        {
            eprintln!("warning: cannot return to original netns: {e}");
        }
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            eprintln!("warning: {e}");
        }
    }
}

fn bench(c: &mut Criterion, label: &str) {
    let mut collector = LinkCollector::new().expect("LinkCollector::new");
    let first = collector.collect().expect("collect");
    eprintln!("{label}: collect() returns {} interfaces", first.len());

    // Quick own measurement so the budget verdict is printed explicitly.
    let rounds = 200;
    let t = Instant::now();
    for _ in 0..rounds {
        black_box(collector.collect().expect("collect"));
    }
    let per = t.elapsed() / rounds;
    eprintln!(
        "{label}: mean {per:?} per sample over {rounds} samples -> budget {BUDGET:?}: {}",
        if per < BUDGET { "OK" } else { "EXCEEDED" }
    );

    c.bench_function(&format!("collect/{label}"), |b| {
        b.iter(|| black_box(collector.collect().expect("collect")))
    });
    c.bench_function(&format!("new+collect/{label}"), |b| {
        b.iter(|| {
            let mut c = LinkCollector::new().expect("LinkCollector::new");
            black_box(c.collect().expect("collect"))
        })
    });
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let ns = if root {
        match BenchNetns::create(PAIRS) {
            Ok(ns) => Some(ns),
            Err(e) => {
                eprintln!(
                    "note: could not build the {PAIRS}-pair namespace ({e}); benching host interfaces"
                );
                None
            }
        }
    } else {
        eprintln!(
            "note: not root; benching on the host's interfaces (run as root for the 500-interface case)"
        );
        None
    };
    let label = if ns.is_some() {
        format!("{}_interfaces", PAIRS * 2)
    } else {
        "host".to_string()
    };
    bench(&mut c, &label);
    drop(ns);
    c.final_summary();
}
