//! The resolver against a fake host: a directory standing for `/`, with
//! /proc/PID/{cgroup,status,stat,cmdline} and each runtime's state files
//! laid out as the runtime writes them, and a fake API daemon.

use super::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;

const ID: &str = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

struct Host(PathBuf);

impl Host {
    fn new(name: &str) -> Host {
        let dir = std::env::temp_dir().join(format!("netlens-host-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Host(dir)
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A process `pid` of `uid`, child of `ppid`, in cgroup `path`.
    fn process(&self, pid: u32, ppid: u32, comm: &str, uid: u32, cgroup: &str) {
        self.write(
            &format!("proc/{pid}/cgroup"),
            &format!("12:pids:{cgroup}\n11:memory:{cgroup}\n0::/\n"),
        );
        self.write(
            &format!("proc/{pid}/status"),
            &format!("Name:\t{comm}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
        );
        self.write(
            &format!("proc/{pid}/stat"),
            &format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0 0"),
        );
    }

    fn resolver(&self) -> Resolver {
        Resolver::new(&self.0)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn store_json(id: &str, name: &str) -> String {
    format!(
        r#"[{{"id":"{id}","names":["{name}"],"image":"c4ab05ab","layer":"d1e2","metadata":"{{\"image-name\":\"localhost/busybox:1\",\"name\":\"{name}\"}}","created":"2026-11-26T07:10:01Z"}}]"#
    )
}

#[test]
fn podman_rootful_and_rootless_from_the_container_store() {
    let host = Host::new("podman");
    host.process(100, 99, "httpd", 0, &format!("/libpod_parent/libpod-{ID}"));
    host.write(
        "var/lib/containers/storage/overlay-containers/containers.json",
        &store_json(ID, "web"),
    );
    let other = "a".repeat(64);
    host.process(
        200,
        1,
        "sleep",
        1000,
        &format!("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{other}.scope"),
    );
    host.write(
        "etc/passwd",
        "root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\n",
    );
    let anns = "home/ann/.local/share/containers/storage/overlay-containers/containers.json";
    host.write(anns, &store_json(&other, "anns-box"));
    // Only ann's own file names ann's containers.
    let ann_owns = std::os::unix::fs::chown(host.0.join(anns), Some(1000), None).is_ok();
    let mut resolver = host.resolver();
    let web = resolver.container_of_pid(100).unwrap();
    assert_eq!((web.runtime.as_str(), web.id.as_str()), ("podman", ID));
    assert_eq!(web.label(), "web");
    let anns_box = resolver.container_of_pid(200).unwrap();
    if ann_owns {
        assert_eq!(anns_box.label(), "anns-box");
    } else {
        eprintln!("not root: ann's store stays the runner's, so it names nothing");
        assert_eq!(anns_box.name, None);
    }
    // Cached by id: the store going away leaves the name known.
    std::fs::remove_file(
        host.0
            .join("var/lib/containers/storage/overlay-containers/containers.json"),
    )
    .unwrap();
    assert_eq!(resolver.container_of_pid(100).unwrap().label(), "web");
    // Forgotten once the container is gone; unnamed, then not asked again
    // before RETRY.
    resolver.retain(&HashSet::new());
    assert_eq!(
        resolver.container_of_pid(100).unwrap().label(),
        "podman:3f2a1b9c8d7e"
    );
    host.write(
        "var/lib/containers/storage/overlay-containers/containers.json",
        &store_json(ID, "web"),
    );
    assert_eq!(resolver.container_of_pid(100).unwrap().name, None);
}

#[test]
fn podman_without_its_store_is_named_by_conmon() {
    let host = Host::new("conmon");
    // conmon (99) -> catatonit, the --init (100) -> httpd (101).
    host.process(99, 1, "conmon", 0, "/libpod_parent/conmon");
    host.write(
        "proc/99/cmdline",
        &format!(
            "/usr/bin/conmon\0--api-version\01\0-c\0{ID}\0-u\0{ID}\0-r\0/usr/sbin/runc\0-n\0web\0"
        ),
    );
    let cgroup = format!("/libpod_parent/libpod-{ID}");
    host.process(100, 99, "catatonit", 0, &cgroup);
    host.process(101, 100, "httpd", 0, &cgroup);
    assert_eq!(
        host.resolver().container_of_pid(101).unwrap().label(),
        "web"
    );
}

#[test]
fn docker_from_config_v2() {
    let host = Host::new("docker");
    host.process(100, 99, "nginx", 0, &format!("/docker/{ID}"));
    host.write(
        &format!("var/lib/docker/containers/{ID}/config.v2.json"),
        &format!(
            r#"{{"State":{{"Running":true,"Pid":100}},"ID":"{ID}","Config":{{"Hostname":"3f2a1b9c8d7e","Labels":{{}}}},"Name":"/shop-web","Driver":"overlay2"}}"#
        ),
    );
    let c = host.resolver().container_of_pid(100).unwrap();
    assert_eq!(
        (c.runtime.as_str(), c.label().as_str()),
        ("docker", "shop-web")
    );
}

#[test]
fn kubernetes_pods_from_containerd_and_crio_bundles() {
    let host = Host::new("k8s");
    let crio = "b".repeat(64);
    let cgroupfs = "c".repeat(64);
    host.process(
        100,
        99,
        "nginx",
        0,
        &format!("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0d5c.slice/cri-containerd-{ID}.scope"),
    );
    host.write(
        &format!("run/containerd/io.containerd.runtime.v2.task/k8s.io/{ID}/config.json"),
        r#"{"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"container","io.kubernetes.cri.container-name":"web","io.kubernetes.cri.sandbox-name":"shop-7d9f","io.kubernetes.cri.sandbox-namespace":"prod"}}"#,
    );
    host.process(
        200,
        199,
        "redis",
        0,
        &format!("/kubepods.slice/kubepods-pod1.slice/crio-{crio}.scope"),
    );
    host.write(
        &format!("run/containers/storage/overlay-containers/{crio}/userdata/config.json"),
        r#"{"ociVersion":"1.0.2","annotations":{"io.kubernetes.container.name":"cache","io.kubernetes.pod.name":"redis-0","io.kubernetes.pod.namespace":"data"}}"#,
    );
    // The cgroupfs driver does not say which runtime: any bundle will do.
    host.process(
        300,
        299,
        "pause",
        0,
        &format!("/kubepods/besteffort/pod0d5c-7e3f/{cgroupfs}"),
    );
    host.write(
        &format!("run/containerd/io.containerd.runtime.v2.task/k8s.io/{cgroupfs}/config.json"),
        r#"{"annotations":{"io.kubernetes.cri.container-type":"sandbox","io.kubernetes.cri.sandbox-name":"shop-7d9f","io.kubernetes.cri.sandbox-namespace":"prod"}}"#,
    );
    let mut resolver = host.resolver();
    let web = resolver.container_of_pid(100).unwrap();
    assert_eq!(
        (
            web.name.as_deref(),
            web.pod.as_deref(),
            web.k8s_namespace.as_deref()
        ),
        (Some("web"), Some("shop-7d9f"), Some("prod"))
    );
    assert_eq!(web.label(), "prod/shop-7d9f/web");
    assert_eq!(
        resolver.container_of_pid(200).unwrap().label(),
        "data/redis-0/cache"
    );
    let sandbox = resolver.container_of_pid(300).unwrap();
    assert_eq!(
        (sandbox.runtime.as_str(), sandbox.label().as_str()),
        ("k8s", "prod/shop-7d9f")
    );
}

#[test]
fn nspawn_and_lxc_are_named_by_their_cgroup() {
    let host = Host::new("machines");
    host.process(
        100,
        1,
        "sshd",
        0,
        "/machine.slice/systemd-nspawn@web\\x2d1.service/payload",
    );
    host.process(200, 1, "init", 0, "/lxc.payload.db/init.scope");
    host.process(
        300,
        1,
        "bash",
        0,
        "/user.slice/user-0.slice/session-3.scope",
    );
    let mut resolver = host.resolver();
    assert_eq!(resolver.container_of_pid(100).unwrap().label(), "web-1");
    assert_eq!(resolver.container_of_pid(200).unwrap().runtime, "lxc");
    assert_eq!(
        resolver.container_of_pid(300),
        None,
        "a session is no container"
    );
    assert_eq!(resolver.container_of_pid(400), None, "no such process");
}

/// A fake Docker daemon on the host's socket answering `replies` requests
/// (None: accept and never answer).
fn daemon(host: &Host, reply: Option<String>) -> std::thread::JoinHandle<usize> {
    let path = host.0.join("var/run/docker.sock");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 4096];
        let n = conn.read(&mut buffer).unwrap();
        match reply {
            Some(text) => conn.write_all(text.as_bytes()).unwrap(),
            None => {
                let _ = conn.read(&mut buffer);
            }
        }
        n
    })
}

/// Resolves `pid` until named, or gives up after `tries` calls 20 ms apart.
fn resolve_until_named(resolver: &mut Resolver, pid: u32, tries: usize) -> Option<Container> {
    for _ in 0..tries {
        let c = resolver.container_of_pid(pid)?;
        if c.named() {
            return Some(c);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn docker_without_state_files_is_named_by_its_api() {
    let host = Host::new("api");
    host.process(
        100,
        99,
        "nginx",
        0,
        &format!("/system.slice/docker-{ID}.scope"),
    );
    let body = format!(r#"{{"Id":"{ID}","Name":"/shop-web","Config":{{"Labels":{{}}}}}}"#);
    let server = daemon(
        &host,
        Some(format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )),
    );
    let mut resolver = host.resolver();
    // The first call returns at once, unnamed; the answer names it later.
    assert_eq!(resolver.container_of_pid(100).unwrap().name, None);
    let named = resolve_until_named(&mut resolver, 100, 500).expect("the API's answer");
    assert_eq!(named.label(), "shop-web");
    assert!(server.join().unwrap() > 0);
}

#[test]
fn a_stalled_daemon_is_asked_once_and_blocks_nothing() {
    let host = Host::new("stalled");
    host.process(
        100,
        99,
        "nginx",
        0,
        &format!("/system.slice/docker-{ID}.scope"),
    );
    let server = daemon(&host, None);
    let mut resolver = host.resolver();
    // Every call returns at once, unnamed, while the daemon sits on the
    // request.
    for _ in 0..10 {
        assert_eq!(
            resolver.container_of_pid(100).unwrap().label(),
            "docker:3f2a1b9c8d7e"
        );
    }
    // The worker gives up at its deadline and the daemon thread ends.
    server.join().unwrap();
    assert_eq!(resolver.container_of_pid(100).unwrap().name, None);
}

#[test]
fn hostile_stores_neither_block_nor_flood() {
    let host = Host::new("hostile");
    // The runner stands for the store's owner: its files are the runner's.
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    host.write(
        "etc/passwd",
        &format!("mal:x:{uid}:{uid}::/home/mal:/bin/sh\n"),
    );
    let cgroup = |id: &str| format!("/user.slice/libpod-{id}.scope");
    let store = "home/mal/.local/share/containers/storage/overlay-containers/containers.json";
    std::fs::create_dir_all(host.0.join(store).parent().unwrap()).unwrap();

    // A FIFO where the store goes: read, it would wait for a writer forever.
    let fifo = std::ffi::CString::new(host.0.join(store).into_os_string().into_encoded_bytes());
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.unwrap().as_ptr(), 0o600) }, 0);
    host.process(300, 1, "sh", uid, &cgroup(ID));
    let root = host.0.clone();
    let (done, named) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(Resolver::new(root).container_of_pid(300)));
    let container = named
        .recv_timeout(Duration::from_secs(3))
        .expect("a FIFO in place of the store still blocks the lookup after 3 s")
        .unwrap();
    assert_eq!(container.name, None);

    // A symlink there is not followed, even to a good store.
    std::fs::remove_file(host.0.join(store)).unwrap();
    host.write("elsewhere.json", &store_json(ID, "web"));
    std::os::unix::fs::symlink(host.0.join("elsewhere.json"), host.0.join(store)).unwrap();
    assert_eq!(host.resolver().container_of_pid(300).unwrap().name, None);

    // A 4 MB name with control characters is kept as 253 safe bytes.
    std::fs::remove_file(host.0.join(store)).unwrap();
    let huge = format!("\u{1b}]0;owned\u{7}{}", "n".repeat(4_000_000));
    let json = store_json(ID, &huge)
        .replace('\u{1b}', "\\u001b")
        .replace('\u{7}', "\\u0007");
    host.write(store, &json);
    let name = host.resolver().container_of_pid(300).unwrap().name.unwrap();
    assert_eq!(name.len(), crate::text::MAX_NAME, "{}", &name[..64]);
    assert!(
        name.starts_with("\\x1b]0;owned\\x07nnn") && name.ends_with('~'),
        "{}",
        &name[..64]
    );
}
