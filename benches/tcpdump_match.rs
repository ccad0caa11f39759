//! Developer check, not a test: prints netlens's lines for a capture, or with
//! --compare DIR LIST, the share of lines identical to tcpdump's own output
//! (FILE.txt next to each capture, made with `TZ=UTC tcpdump -n -r FILE`).
//! A fidelity measurement beside the speed ones, so it lives in benches/:
//! `cargo bench --bench tcpdump_match -- FILE` or
//! `cargo bench --bench tcpdump_match -- --compare DIR LIST`
//! (a plain `cargo bench` runs it with no file: it prints this usage).

use netlens::packet::format::Formatter;
use std::path::Path;

fn lines(path: &Path) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut reader = match netlens::capture::pcap_file::open(path) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    let mut fmt = Formatter::new(netlens::capture::HOST);
    let mut buf = Vec::new();
    loop {
        match reader.next_into(&mut buf) {
            Ok(Some(rec)) => {
                let mut line = String::new();
                fmt.line(rec.linktype, rec.ts, &buf, rec.orig_len, &mut line);
                out.extend(line.split('\n').map(str::to_string));
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

fn main() {
    // `cargo bench` adds --bench to every bench binary's arguments.
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    if args.len() < 2 {
        println!(
            "usage: cargo bench --bench tcpdump_match -- FILE | --compare DIR LIST \
             (nothing to compare without a capture)"
        );
        return;
    }
    if args.len() == 4 && args[1] == "--compare" {
        let dir = Path::new(&args[2]);
        let list = std::fs::read_to_string(&args[3]).expect("list");
        let (mut same, mut total) = (0usize, 0usize);
        for name in list.split_whitespace() {
            let expected =
                std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap_or_default();
            let (got, err) = lines(&dir.join(name));
            let exp: Vec<&str> = expected.lines().collect();
            let mut file_same = 0;
            for (i, e) in exp.iter().enumerate() {
                if got.get(i).map(String::as_str) == Some(*e) {
                    file_same += 1;
                } else if std::env::var_os("VERBOSE").is_some() {
                    println!("- {e}\n+ {}", got.get(i).map_or("<none>", |s| s.as_str()));
                }
            }
            println!(
                "{name}: {file_same}/{} {}",
                exp.len(),
                err.unwrap_or_default()
            );
            same += file_same;
            total += exp.len();
        }
        println!(
            "TOTAL {same}/{total} = {:.1}%",
            100.0 * same as f64 / total.max(1) as f64
        );
        return;
    }
    let (got, err) = lines(Path::new(&args[1]));
    for l in got {
        println!("{l}");
    }
    if let Some(e) = err {
        eprintln!("{e}");
    }
}
