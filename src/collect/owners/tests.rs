use super::procfs::{ProcWalk, Reach, socket_inode};
use super::*;
use std::fs;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::PathBuf;

#[test]
fn parses_socket_links() {
    assert_eq!(socket_inode(b"socket:[4242]"), Some(4242));
    assert_eq!(socket_inode(b"pipe:[4242]"), None);
    assert_eq!(socket_inode(b"socket:[x]"), None);
}

/// A directory shaped like /proc: PID/{stat,comm,ns/net,fd/N}, the fd
/// and ns links being plain symlinks (readlink and stat treat them alike).
struct FakeProc {
    root: PathBuf,
    /// Stands for the watched namespace: ns/net links to it.
    watched: PathBuf,
    elsewhere: PathBuf,
}

impl FakeProc {
    fn new(tag: &str) -> Self {
        let root = std::env::temp_dir().join(format!("nlo-proc-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("ns")).unwrap();
        let (watched, elsewhere) = (root.join("ns/watched"), root.join("ns/elsewhere"));
        fs::write(&watched, "").unwrap();
        fs::write(&elsewhere, "").unwrap();
        Self {
            root,
            watched,
            elsewhere,
        }
    }

    fn netns(&self) -> u64 {
        fs::metadata(&self.watched).unwrap().ino()
    }

    fn walk(&self) -> ProcWalk {
        ProcWalk::with_root(self.root.join("p"), Some(self.netns()), 0)
    }

    /// (Re)creates process `pid` started at `start`, in the watched
    /// namespace or not, with the fd links given.
    fn process(&self, pid: u32, start: u64, name: &str, watched: bool, fds: &[(u32, &str)]) {
        let dir = self.root.join("p").join(pid.to_string());
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("fd")).unwrap();
        fs::create_dir_all(dir.join("ns")).unwrap();
        // The name may hold ") (": fields count from the last ')'.
        let stat = format!("{pid} ({name}) x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {start} 0 0");
        fs::write(dir.join("stat"), stat).unwrap();
        fs::write(dir.join("comm"), format!("{name}\n")).unwrap();
        let ns = if watched {
            &self.watched
        } else {
            &self.elsewhere
        };
        symlink(ns, dir.join("ns/net")).unwrap();
        for (fd, target) in fds {
            self.link(pid, *fd, target);
        }
    }

    fn link(&self, pid: u32, fd: u32, target: &str) {
        let path = self
            .root
            .join("p")
            .join(pid.to_string())
            .join("fd")
            .join(fd.to_string());
        let _ = fs::remove_file(&path);
        symlink(target, path).unwrap();
    }
}

impl Drop for FakeProc {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn pids(map: &OwnerMap, inode: u32) -> Vec<(String, u32, u32)> {
    match map.owner(inode) {
        Owner::Known(users) => users
            .iter()
            .map(|u| (u.process.to_string(), u.pid, u.fd))
            .collect(),
        other => panic!("{inode}: {other:?}"),
    }
}

#[test]
fn a_non_socket_fd_is_read_once_and_again_only_by_a_recheck() {
    let fake = FakeProc::new("once");
    let files: Vec<(u32, String)> = (10..510).map(|fd| (fd, format!("/tmp/f{fd}"))).collect();
    let mut fds: Vec<(u32, &str)> = files.iter().map(|(fd, t)| (*fd, t.as_str())).collect();
    fds.push((3, "socket:[77]"));
    fake.process(100, 5, "web", true, &fds);
    // Another namespace's process: never read, however many fds.
    fake.process(200, 5, "other", false, &fds);
    let (mut walk, mut map) = (fake.walk(), OwnerMap::default());
    let live: Inodes = [77, 88].into_iter().collect();
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 501, "each fd of the watched process once");
    assert_eq!(pids(&map, 77), [("web".to_string(), 100, 3)]);
    assert_eq!(map.owner(88), Owner::Unowned);
    // Scans for new sockets read only the new fd.
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 501, "nothing new, nothing read");
    fake.link(100, 600, "socket:[88]");
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 502);
    assert_eq!(pids(&map, 88), [("web".to_string(), 100, 600)]);
    // fd 10 closed and reused for a socket between two scans looks the
    // same in the listing: a scan keeps it as a file, a recheck reads it.
    fake.link(100, 10, "socket:[99]");
    let live: Inodes = [77, 88, 99].into_iter().collect();
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 502);
    assert_eq!(map.owner(99), Owner::Unowned);
    map.scan_now(&mut walk, &live, Reach::Recheck);
    assert_eq!(
        walk.readlinks,
        502 + 500,
        "the 500 fds remembered as files (fd 10 among them), not the live sockets"
    );
    assert_eq!(pids(&map, 99), [("web".to_string(), 100, 10)]);
}

#[test]
fn a_reused_pid_is_a_new_process() {
    let fake = FakeProc::new("reuse");
    fake.process(
        100,
        5,
        "first",
        true,
        &[(3, "socket:[77]"), (4, "/dev/null")],
    );
    let (mut walk, mut map) = (fake.walk(), OwnerMap::default());
    let live: Inodes = [77, 88].into_iter().collect();
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(pids(&map, 77), [("first".to_string(), 100, 3)]);
    assert_eq!(walk.readlinks, 2);
    // Same pid, another start time, same fd numbers: all read again.
    fake.process(
        100,
        9,
        "second",
        true,
        &[(3, "socket:[88]"), (4, "/dev/null")],
    );
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 4);
    assert_eq!(map.owner(77), Owner::Unowned, "the first process is gone");
    assert_eq!(pids(&map, 88), [("second".to_string(), 100, 3)]);
    // A reused pid outside the namespace holds nothing we read.
    fake.process(100, 12, "third", false, &[(3, "socket:[88]")]);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 4);
    assert_eq!(map.owner(88), Owner::Unowned);
    // Reused again, by a process in the namespace: an outside pid is
    // looked at again only by a recheck.
    fake.process(100, 15, "fourth", true, &[(5, "socket:[88]")]);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(map.owner(88), Owner::Unowned);
    map.scan_now(&mut walk, &live, Reach::Recheck);
    assert_eq!(pids(&map, 88), [("fourth".to_string(), 100, 5)]);
}

#[test]
fn a_socket_that_ended_has_its_fd_read_again() {
    let fake = FakeProc::new("ended");
    fake.process(100, 5, "web", true, &[(3, "socket:[77]")]);
    fake.process(101, 5, "peer", true, &[(4, "socket:[77]")]);
    let (mut walk, mut map) = (fake.walk(), OwnerMap::default());
    map.scan_now(&mut walk, &Inodes::from_iter([77]), Reach::Every);
    assert_eq!(pids(&map, 77).len(), 2, "a shared socket lists both");
    // Socket 77 ended and both fd numbers now hold socket 88: a socket fd
    // is trusted only while its socket is live, so both are read again.
    fake.link(100, 3, "socket:[88]");
    fake.link(101, 4, "socket:[88]");
    map.scan_now(&mut walk, &Inodes::from_iter([88]), Reach::Every);
    assert_eq!(
        map.owner(77),
        Owner::Pending,
        "no longer live, no longer known"
    );
    assert_eq!(pids(&map, 88).len(), 2);
}

#[test]
fn a_scan_of_the_openers_lists_only_the_processes_that_opened_sockets_lately() {
    let fake = FakeProc::new("openers");
    let held: Vec<String> = (0..300).map(|i| format!("socket:[{}]", 1000 + i)).collect();
    let fds: Vec<(u32, &str)> = (0..300)
        .map(|i| (10 + i, held[i as usize].as_str()))
        .collect();
    fake.process(100, 5, "holder", true, &fds);
    fake.process(101, 5, "churn", true, &[(3, "socket:[77]")]);
    let (mut walk, mut map) = (fake.walk(), OwnerMap::default());
    let mut live: Inodes = (1000..1300).chain([77]).collect();
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.fd_dirs_read, 2);
    // A process read for the first time is no opener: it showed sockets
    // it had. One that shows a new socket since its last read is one.
    assert!(!walk.has_openers());
    let open = |fake: &FakeProc, pid: u32, fd: u32, inode: u32, live: &mut Inodes| {
        fake.link(pid, fd, &format!("socket:[{inode}]"));
        live.insert(inode);
        Inodes::from_iter([inode])
    };
    open(&fake, 101, 4, 78, &mut live);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.fd_dirs_read, 4);
    assert_eq!(pids(&map, 78), [("churn".to_string(), 101, 4)]);
    assert!(walk.has_openers());
    // The opener alone is listed.
    let wanted = open(&fake, 101, 5, 79, &mut live);
    map.scan_now(&mut walk, &live, Reach::Openers(&wanted));
    assert_eq!(walk.fd_dirs_read, 5, "the churn's fds alone");
    assert_eq!(pids(&map, 79), [("churn".to_string(), 101, 5)]);
    // A socket the openers do not hold stays pending until a scan of
    // every process.
    let wanted = open(&fake, 100, 900, 80, &mut live);
    map.scan_now(&mut walk, &live, Reach::Openers(&wanted));
    assert_eq!(walk.fd_dirs_read, 6);
    assert_eq!(map.owner(80), Owner::Pending);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(pids(&map, 80), [("holder".to_string(), 100, 900)]);
    // A new socket two processes hold: the scan of the openers stops at
    // the first holder (the newest opener); one of every process names
    // both.
    open(&fake, 101, 6, 81, &mut live);
    let wanted = open(&fake, 100, 901, 81, &mut live);
    let before = walk.fd_dirs_read;
    map.scan_now(&mut walk, &live, Reach::Openers(&wanted));
    assert_eq!(walk.fd_dirs_read, before + 1);
    assert_eq!(pids(&map, 81), [("holder".to_string(), 100, 901)]);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(pids(&map, 81).len(), 2);
    // A socket no process holds: unowned only after every process.
    let wanted = Inodes::from_iter([82]);
    live.insert(82);
    map.scan_now(&mut walk, &live, Reach::Openers(&wanted));
    assert_eq!(map.owner(82), Owner::Pending);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(map.owner(82), Owner::Unowned);
    // An opener gone is dropped with its sockets; they are pending until
    // a scan of every process finds no other holder.
    fs::remove_dir_all(fake.root.join("p/101")).unwrap();
    let wanted = open(&fake, 100, 902, 83, &mut live);
    map.scan_now(&mut walk, &live, Reach::Openers(&wanted));
    assert_eq!(pids(&map, 83), [("holder".to_string(), 100, 902)]);
    assert_eq!(map.owner(79), Owner::Pending);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(map.owner(79), Owner::Unowned, "its holder ended");
}

#[test]
fn every_process_is_listed_when_due_or_for_a_socket_the_openers_did_not_hold() {
    let wanted = Inodes::from_iter([7, 8]);
    let none = Inodes::default();
    let reach = |recheck, due, missed: &Inodes| match scan_reach(recheck, due, &wanted, missed) {
        Reach::Every => "every",
        Reach::Recheck => "recheck",
        Reach::Openers(_) => "openers",
    };
    assert_eq!(reach(false, false, &none), "openers");
    assert_eq!(reach(false, true, &none), "every");
    assert_eq!(reach(true, false, &none), "recheck");
    // Missed by the openers last time and still live: another process's.
    assert_eq!(reach(false, false, &Inodes::from_iter([8])), "every");
    // Missed last time and gone since (a short connection): no matter.
    assert_eq!(reach(false, false, &Inodes::from_iter([9])), "openers");
}

#[test]
fn a_socket_fd_closed_or_reused_is_noted_and_the_rest_not_read_again() {
    let fake = FakeProc::new("closed");
    fake.process(
        100,
        5,
        "web",
        true,
        &[(3, "socket:[77]"), (4, "socket:[78]")],
    );
    let (mut walk, mut map) = (fake.walk(), OwnerMap::default());
    map.scan_now(&mut walk, &Inodes::from_iter([77, 78]), Reach::Every);
    assert_eq!(walk.readlinks, 2);
    // Socket 77 ended and its fd now holds a file; fd 4 was closed though
    // socket 78 lives on (elsewhere); fd 5 is a new socket.
    fake.link(100, 3, "/dev/null");
    fs::remove_file(fake.root.join("p/100/fd/4")).unwrap();
    fake.link(100, 5, "socket:[79]");
    let live = Inodes::from_iter([78, 79]);
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 4, "fd 3 (its socket ended) and fd 5");
    assert_eq!(pids(&map, 79), [("web".to_string(), 100, 5)]);
    assert_eq!(map.owner(78), Owner::Unowned, "its fd was closed");
    assert_eq!(
        map.owner(77),
        Owner::Pending,
        "no longer live, no longer known"
    );
    map.scan_now(&mut walk, &live, Reach::Every);
    assert_eq!(walk.readlinks, 4, "nothing new, nothing read");
    assert_eq!(pids(&map, 79), [("web".to_string(), 100, 5)]);
}

fn wait_for<'a>(lookup: &'a OwnerLookup, inode: u32) -> MutexGuard<'a, OwnerMap> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let map = lookup.map();
        if map.owner(inode) != Owner::Pending || Instant::now() > deadline {
            return map;
        }
        drop(map);
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_lookup_thread_finds_our_own_socket_and_scans_only_for_new_inodes() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = listener.as_raw_fd() as u32;
    let inode = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino() as u32;
    // No process is in namespace 1: only netlens itself is read.
    let mut lookup = OwnerLookup::start(Some(1), false, false);
    lookup.request(Inodes::from_iter([inode]), false, Duration::ZERO);
    let map = wait_for(&lookup, inode);
    let Owner::Known(users) = map.owner(inode) else {
        panic!("{:?}", map.owner(inode));
    };
    assert!(
        users
            .iter()
            .any(|u| u.pid == std::process::id() && u.fd == fd),
        "{users:?}"
    );
    let scans = map.scans();
    drop(map);
    // A known socket needs no scan; an unknown one needs one, once.
    lookup.request(Inodes::from_iter([inode]), false, Duration::ZERO);
    let ghost = u32::MAX - 1;
    lookup.request(Inodes::from_iter([inode, ghost]), false, Duration::ZERO);
    let map = wait_for(&lookup, ghost);
    assert_eq!(map.owner(ghost), Owner::Unowned);
    assert_eq!(map.scans(), scans + 1);
}

#[test]
fn the_iterator_finds_our_socket_where_it_loads() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP the_iterator_finds_our_socket: needs root");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = listener.as_raw_fd() as u32;
    let inode = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino() as u32;
    let netns = fs::metadata("/proc/thread-self/ns/net").unwrap().ino();
    let mut lookup = OwnerLookup::start(Some(netns), true, false);
    lookup.request(Inodes::from_iter([inode]), false, Duration::ZERO);
    let map = wait_for(&lookup, inode);
    assert_eq!(map.source(), "bpf task_file iterator");
    let Owner::Known(users) = map.owner(inode) else {
        panic!("{:?}", map.owner(inode));
    };
    assert!(
        users
            .iter()
            .any(|u| u.pid == std::process::id() && u.fd == fd),
        "{users:?}"
    );
}

/// A child process holding a listener; killed (by its pid) on drop.
struct Holder(std::process::Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_iterator_runs_per_process_and_names_another_process_by_its_pid() {
    use std::io::BufRead;
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP the_iterator_runs_per_process: needs root");
        return;
    }
    let script = "import os, socket, time\n\
                  s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n\
                  print(os.fstat(s.fileno()).st_ino, s.fileno(), flush=True)\n\
                  time.sleep(30)\n";
    let Ok(python) = std::process::Command::new("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIP the_iterator_runs_per_process: needs python3 (apt-get install python3)");
        return;
    };
    let mut holder = Holder(python);
    let mut line = String::new();
    let stdout = holder.0.stdout.take().unwrap();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let [inode, fd]: [u32; 2] = line
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let netns = fs::metadata("/proc/thread-self/ns/net").unwrap().ino();
    let mut lookup = OwnerLookup::start(Some(netns), true, false);
    lookup.request(Inodes::from_iter([inode]), false, Duration::ZERO);
    let map = wait_for(&lookup, inode);
    assert_eq!(map.source(), "bpf task_file iterator");
    let Owner::Known(users) = map.owner(inode) else {
        panic!("{:?}", map.owner(inode));
    };
    let found: Vec<(u32, u32)> = users.iter().map(|u| (u.pid, u.fd)).collect();
    assert_eq!(found, [(holder.0.id(), fd)]);
    assert_eq!(users[0].process.to_string(), "python3");
}

#[test]
fn a_request_waits_for_its_scan_within_the_bound() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = listener.as_raw_fd() as u32;
    let inode = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino() as u32;
    let mut lookup = OwnerLookup::start(Some(1), false, false);
    // Answered as soon as the scan ends (milliseconds), not at the bound.
    lookup.request(Inodes::from_iter([inode]), false, Duration::from_secs(30));
    let map = lookup.map();
    let Owner::Known(users) = map.owner(inode) else {
        panic!("still {:?} after the wait", map.owner(inode));
    };
    assert!(users.iter().any(|u| u.fd == fd), "{users:?}");
}

/// A holder is 8 bytes and its process's name is kept once, while the
/// process holds a socket: a shared socket's next holder takes over with
/// its own name, and a process without sockets is forgotten.
#[test]
fn holders_share_their_process_name() {
    let user = |process: &str, pid, fd| SocketUser {
        process: process.into(),
        pid,
        fd,
    };
    let mut map = OwnerMap::default();
    for (inode, fd) in [(7, 3), (8, 4)] {
        map.apply(Change::Opened {
            inode,
            user: user("nginx", 10, fd),
        });
    }
    map.apply(Change::Opened {
        inode: 8,
        user: user("worker", 11, 5),
    });
    assert_eq!(map.names.len(), 1, "one name for nginx's two sockets");
    assert_eq!(
        pids(&map, 8),
        [("nginx".into(), 10, 4), ("worker".into(), 11, 5)]
    );
    map.apply(Change::Closed {
        inode: 8,
        pid: 10,
        fd: 4,
    });
    assert_eq!(pids(&map, 8), [("worker".into(), 11, 5)]);
    map.apply(Change::Closed {
        inode: 7,
        pid: 10,
        fd: 3,
    });
    assert_eq!(map.remove_inode(8), [(11, 5)]);
    assert!(map.names.is_empty() && map.by_inode.is_empty());
    // Every change was noted for the sampler, once; a reset is all.
    assert_eq!(map.take_touched(), Some(Inodes::from_iter([7, 8])));
    assert_eq!(map.take_touched(), Some(Inodes::default()));
    map.reset();
    assert_eq!(map.take_touched(), None);
    assert_eq!(map.take_touched(), Some(Inodes::default()));
}
