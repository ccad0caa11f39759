//! Defect 5, the rest: a crafted recording whose one segment holds many
//! samples, each an unchanged copy of a large one before it (a row of
//! zero deltas per socket, compressing to almost nothing), must not make
//! the readers that hold a segment keep it all decoded: `replay --json
//! --follow` and the app's replay (its finding marks, its Player) held
//! every sample, gigabytes from a file of a few MB. Now they go one sample
//! at a time or charge what they keep (`lazy::MAX_DECODED_KEPT`).

use super::measured::{Measured, TempPath, capped_netlens, wait_measured};
use crate::common::tmux::Tmux;
use netlens::model::Sample;
use netlens::model::sockets::{Owners, Proto, SocketSample};
use netlens::record::codec::{self, SampleEncoder};
use netlens::record::format::{self, DataHead, Header, Index, Kind, SegmentEntry, Stream};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

const T0: f64 = 1_700_000_000.0;

/// Socket `i`, distinct from every other by its endpoints.
pub(crate) fn socket(i: usize) -> SocketSample {
    SocketSample {
        proto: Proto::Tcp,
        state: 1,
        local: format!("198.18.0.1:{}", i % 60_000 + 1).parse().unwrap(),
        peer: format!("198.18.{}.2:443", i / 60_000 + 1).parse().unwrap(),
        recv_q: 0,
        send_q: 0,
        uid: 0,
        inode: i as u32,
        users: Owners::new(),
        owner_denied: false,
        owner_pending: false,
        tcp: None,
        drops: None,
        rcvbuf: None,
        queue_streak: 0,
        v6only: false,
        netns: 0,
        limits: None,
    }
}

/// Writes a closed recording (index and end marker) of one samples
/// segment: a keyframe of `sockets` sockets, then `samples - 1` samples
/// each listing them all unchanged, as the encoder writes a delta. Every
/// record is valid; only the segment's length is crafted (the recorder
/// cuts a segment at 64 MiB raw and stores every tenth sample whole).
/// Returns the file's size.
pub fn write_copies(path: &Path, sockets: usize, samples: usize) -> u64 {
    let mut encoder = SampleEncoder::default();
    let mut sample = Sample {
        t: T0,
        mono: T0,
        netns: "host".into(),
        sockets: (0..sockets).map(socket).collect(),
        ..Default::default()
    };
    let keyframe = encoder.encode(&mut sample, true);
    let delta = encoder.encode(&mut sample, false);
    let table = &delta[codec::head_part(&delta).len()..];
    sample.sockets.clear();
    let mut file = Header::current().encode().to_vec();
    let meta = serde_json::json!({
        "netlens": "crafted", "created": T0, "hostname": "h", "netns": "host", "interval": 1.0
    });
    file.extend(format::encode_chunk(
        Kind::Meta,
        0,
        meta.to_string().as_bytes(),
    ));
    let mut zstd = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    let mut entry: Option<SegmentEntry> = None;
    for k in 0..samples {
        let t = T0 + k as f64;
        let record = if k == 0 {
            keyframe.clone()
        } else {
            sample.t = t;
            sample.mono = t;
            let whole = SampleEncoder::default().encode(&mut sample, true);
            let mut record = codec::head_part(&whole).to_vec();
            record.extend_from_slice(table);
            record
        };
        zstd.write_all(&(record.len() as u32).to_le_bytes())
            .unwrap();
        zstd.write_all(&record).unwrap();
        zstd.flush().unwrap();
        let mut chunk = std::mem::take(zstd.get_mut());
        if k + 1 == samples {
            chunk.extend(
                std::mem::replace(
                    &mut zstd,
                    zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap(),
                )
                .finish()
                .unwrap(),
            );
        }
        let head = DataHead {
            segment: 0,
            ordinal: k as u32,
            t,
            mono: t,
        };
        let mut payload = Vec::new();
        head.encode(&mut payload);
        payload.extend_from_slice(&chunk);
        let start = file.len() as u64;
        file.extend(format::encode_chunk(
            Kind::Data,
            Stream::Samples as u8,
            &payload,
        ));
        let end = file.len() as u64;
        match &mut entry {
            Some(entry) => entry.extend(head, end),
            None => entry = Some(SegmentEntry::new(Stream::Samples as u8, head, start, end)),
        }
    }
    let index = Index {
        segments: entry.into_iter().collect(),
    };
    let index_at = file.len() as u64;
    let payload = rmp_serde::to_vec_named(&index).unwrap();
    file.extend(format::encode_chunk(Kind::Index, 0, &payload));
    file.extend(format::encode_chunk(
        Kind::End,
        0,
        &format::encode_end(index_at),
    ));
    std::fs::write(path, &file).unwrap();
    file.len() as u64
}

fn report(what: &str, run: &Measured) {
    eprintln!(
        "{what}: exit {:?} signal {:?}, peak RSS {} MB, {:.2} s; stderr: {}",
        run.code,
        run.signal,
        run.max_rss_mb,
        run.seconds,
        run.stderr.lines().take(5).collect::<Vec<_>>().join(" | ")
    );
}

/// Runs netlens as `measured::run_netlens` does (address space capped,
/// killed by its PID after `timeout`), its stdout counted in lines and
/// dropped rather than kept: the JSON of a long segment is gigabytes.
fn run_counting_lines(args: &[&str], max_as: u64, timeout: Duration) -> (Measured, usize) {
    use std::io::Read;
    use std::process::Stdio;
    let stderr = TempPath::new("stderr");
    let mut command = capped_netlens(args, max_as);
    command
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr.0).expect("stderr file"));
    let started = Instant::now();
    // Reaped by wait4 in wait_measured, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = command.spawn().expect("netlens starts");
    let mut stdout = child.stdout.take().expect("piped");
    let counter = std::thread::spawn(move || {
        let mut buffer = vec![0u8; 1 << 16];
        let mut lines = 0;
        while let Ok(n) = stdout.read(&mut buffer) {
            if n == 0 {
                break;
            }
            lines += buffer[..n].iter().filter(|b| **b == b'\n').count();
        }
        lines
    });
    let run = wait_measured(&child, args, started, timeout);
    let lines = counter.join().expect("the counter ends with the pipe");
    let run = Measured {
        stderr: std::fs::read_to_string(&stderr.0).unwrap_or_default(),
        ..run
    };
    (run, lines)
}

/// 20 samples of 50,000 sockets: ~220 MB decoded in all, ~11 MB each.
/// `--follow` held the segment's samples at once (and printed them from
/// there); one at a time it needs two of them and one record (64 MB peak
/// RSS), well under the 150 MB bound that holding the segment exceeds.
#[test]
fn replay_json_follow_of_a_long_segment_holds_two_samples() {
    let file = TempPath::new("copies-follow.nlrec");
    let size = write_copies(&file.0, 50_000, 20);
    eprintln!("recording: {size} bytes");
    let path = file.0.to_str().unwrap();
    let (run, lines) = run_counting_lines(
        &["replay", "--json", "--follow", path],
        3 << 30,
        Duration::from_secs(120),
    );
    report("replay --json --follow", &run);
    assert!(run.signal.is_none(), "killed by {:?}", run.signal);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Each sample after the first prints a line (with every socket).
    assert_eq!(lines, 19, "lines printed");
    assert!(
        run.max_rss_mb < 150,
        "replay --json --follow peaked at {} MB RSS (bound 150 MB): it holds the segment",
        run.max_rss_mb
    );
}

/// Peak RSS and how netlens ended, as /usr/bin/time wrote them.
fn time_report(path: &Path) -> Option<(u64, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("peak_kb="))?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some((kb / 1024, text))
}

/// 150 samples of 100,000 sockets: ~3.3 GB decoded in all (~400 MB raw).
/// The interactive replay read every sample whole for its finding marks
/// (a file without a findings stream) and its Player kept every sample it
/// decoded: `G` (last sample) decoded and kept them all, past the 2600 MB
/// bound (with 250 samples it aborted under a 4 GiB address space); now
/// it keeps at most MAX_DECODED_KEPT (1.7 GB peak RSS). 150 rather than
/// 250: the same proof in 60% of the time, which on a loaded 2-core box
/// passed three minutes.
#[test]
fn interactive_replay_of_a_long_segment_stays_within_its_budget() {
    const SAMPLES: usize = 150;
    let Some(tmux) = Tmux::new("segments") else {
        return;
    };
    let file = TempPath::new("copies-ui.nlrec");
    let times = TempPath::new("copies-ui.time");
    let size = write_copies(&file.0, 100_000, SAMPLES);
    eprintln!("recording: {size} bytes");
    let command = format!(
        "prlimit --as={} /usr/bin/time -f peak_kb=%M -o {} {} replay {}",
        4u64 << 30,
        times.0.display(),
        env!("CARGO_BIN_EXE_netlens"),
        file.0.display()
    );
    tmux.start(160, 40, &std::env::temp_dir(), &command);
    let started = Instant::now();
    let patience = Duration::from_secs(90);
    let shows = |what: &str| {
        tmux.wait(what, patience, |screen| {
            if let Some((mb, text)) = time_report(&times.0) {
                panic!("netlens ended before showing {what} (peak {mb} MB): {text}\n{screen}");
            }
            screen.contains(what).then_some(())
        })
    };
    shows(&format!("#1/{SAMPLES}"));
    tmux.send_keys(&["G"]);
    shows(&format!("#{SAMPLES}/{SAMPLES}"));
    // A minute back, then a step back: decoded from the keyframe once,
    // the samples around the new position kept.
    tmux.send_keys(&["["]);
    shows(&format!("#{}/{SAMPLES}", SAMPLES - 60));
    tmux.send_keys(&["Left"]);
    shows(&format!("#{}/{SAMPLES}", SAMPLES - 61));
    tmux.send_keys(&["g"]);
    shows(&format!("#1/{SAMPLES}"));
    tmux.send_keys(&["q"]);
    let (peak_mb, text) = loop {
        if let Some(done) = time_report(&times.0) {
            break done;
        }
        assert!(
            started.elapsed() < patience * 2,
            "netlens did not exit on q:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("interactive replay: peak RSS {peak_mb} MB, {text}");
    assert!(
        !text.contains("terminated by signal") && !text.contains("non-zero status"),
        "netlens did not exit cleanly: {text}"
    );
    assert!(
        peak_mb < 2600,
        "interactive replay peaked at {peak_mb} MB RSS (bound 2600 MB): it keeps the segment"
    );
}
