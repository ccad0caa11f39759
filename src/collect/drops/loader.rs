//! Loads ebpf/drops.bpf.o (committed, built by ebpf/build.sh), attaches it
//! to skb:kfree_skb and reads its per-CPU counts.

use crate::collect::btf::chain;
use aya::maps::{Array, MapData, PerCpuArray, PerCpuHashMap};
use aya::programs::{BtfTracePoint, TracePoint};
use aya::{Btf, Ebpf, EbpfLoader};
use std::collections::HashMap;

/// The object, aligned for the ELF parser. Rebuilt by ebpf/build.sh; CI
/// checks it matches its source.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../ebpf/drops.bpf.o");

/// The map's key, byte for byte the C program's `struct drop_key`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DropKey {
    pub location: u64,
    pub netns: u32,
    pub reason: u32,
    pub ifindex: u32,
    pub port: u16,
    /// The socket's sk_protocol; 0 without a socket.
    pub proto: u8,
    /// The socket's address family; 0 without a socket.
    pub family: u8,
    /// NETFILTER_DROP only (zero for other reasons): the packet's
    /// destination address in network order, IPv4 in the first 4 bytes.
    pub dst_addr: [u8; 16],
    /// The destination before conntrack translated it; zero when it was
    /// not translated.
    pub orig_addr: [u8; 16],
    /// The destination port in network order (0: none, or not TCP, UDP,
    /// UDP-Lite, DCCP or SCTP).
    pub dst_port: u16,
    pub orig_port: u16,
    /// AF_INET or AF_INET6; 0 without a destination.
    pub dst_family: u8,
    /// The packet's IP protocol.
    pub dst_proto: u8,
    pub pad: [u8; 2],
}

// SAFETY: plain old data, repr(C), no padding (8+4+4+4+2+1+1+16+16+2+2+1+1+2
// = 64 bytes, the explicit `pad` included), every bit pattern valid.
unsafe impl aya::Pod for DropKey {}

impl DropKey {
    /// The key without its destination: the site it belongs to.
    pub fn without_destination(self) -> DropKey {
        DropKey {
            dst_addr: [0; 16],
            orig_addr: [0; 16],
            dst_port: 0,
            orig_port: 0,
            dst_family: 0,
            dst_proto: 0,
            ..self
        }
    }
}

/// The map's size in the C program: when it is three quarters full, keys
/// that did not move since the last read are folded into user space.
const MAP_ENTRIES: usize = 16384;
const FOLD_AT: usize = MAP_ENTRIES * 3 / 4;

/// The attached program and its maps; dropping it detaches.
pub struct Program {
    _ebpf: Ebpf,
    drops: PerCpuHashMap<MapData, DropKey, u64>,
    lost: PerCpuArray<MapData, u64>,
    /// Which entry point attached ("tp_btf", "tp_btf3" without rx_sk,
    /// "tracepoint").
    pub attached: &'static str,
    /// Counts of keys deleted from the kernel map to make room, by
    /// normalized key (so their number stays bounded).
    folded: HashMap<DropKey, u64>,
    /// Each key's kernel count at the last read.
    last: HashMap<DropKey, u64>,
}

/// Loads and attaches, counting only the drops of the namespace whose
/// nsfs inode is `watched` (0: every namespace), the destinations of those
/// whose reason has the number `netfilter` returns (NETFILTER_DROP's; asked
/// once the program loaded), or says in one line why not and what would
/// fix it.
pub fn load(watched: u64, netfilter: impl FnOnce() -> Option<u32>) -> Result<Program, String> {
    let kernel_btf = crate::collect::btf::kernel().map_err(|e| {
        format!(
            "kernel has no BTF (/sys/kernel/btf/vmlinux: {e}): drop reasons need CONFIG_DEBUG_INFO_BTF",
        )
    })?;
    let btf: &aya::Btf = &kernel_btf;
    let mut ebpf = EbpfLoader::new()
        .btf(Some(btf))
        .load(OBJECT)
        .map_err(|e| why("cannot load the drop-reason program", &chain(&e)))?;
    // Before attaching: no other namespace's drop may reach the map.
    watch(&mut ebpf, watched)?;
    set_u32(&mut ebpf, "NETFILTER", netfilter().unwrap_or(0))?;
    let attached = attach(&mut ebpf, btf)?;
    let drops = ebpf
        .take_map("DROPS")
        .ok_or("the drop-reason program has no DROPS map")?;
    let lost = ebpf
        .take_map("LOST")
        .ok_or("the drop-reason program has no LOST map")?;
    Ok(Program {
        drops: PerCpuHashMap::try_from(drops).map_err(|e| chain(&e))?,
        lost: PerCpuArray::try_from(lost).map_err(|e| chain(&e))?,
        _ebpf: ebpf,
        attached,
        folded: HashMap::new(),
        last: HashMap::new(),
    })
}

/// Writes the watched namespace into the program's WATCHED map.
fn watch(ebpf: &mut Ebpf, watched: u64) -> Result<(), String> {
    // The kernel's inode numbers (ns.inum) are 32 bits.
    let inode = u32::try_from(watched)
        .map_err(|_| format!("namespace inode {watched} is not the kernel's 32-bit inum"))?;
    set_u32(ebpf, "WATCHED", inode)
}

/// Writes the one value of the program's array map `name`.
fn set_u32(ebpf: &mut Ebpf, name: &str, value: u32) -> Result<(), String> {
    let map = ebpf
        .map_mut(name)
        .ok_or_else(|| format!("the drop-reason program has no {name} map"))?;
    let mut array: Array<_, u32> = Array::try_from(map).map_err(|e| chain(&e))?;
    array
        .set(0, value, 0)
        .map_err(|e| format!("cannot set the program's {name}: {}", chain(&e)))
}

/// tp_btf with rx_sk (>= 6.11), tp_btf without it, then the classic
/// tracepoint; the first that loads and attaches wins.
fn attach(ebpf: &mut Ebpf, btf: &Btf) -> Result<&'static str, String> {
    let mut failures = Vec::new();
    // NETLENS_BPF_ATTACH=tracepoint skips tp_btf, =tp_btf3 its rx_sk
    // variant (the fallbacks' tests, on a kernel where the first attaches).
    let tp_btf: &[(&str, &'static str)] = match std::env::var("NETLENS_BPF_ATTACH").as_deref() {
        Ok("tracepoint") => &[],
        Ok("tp_btf3") => &[("kfree_skb_btf3", "tp_btf3")],
        _ => &[("kfree_skb_btf", "tp_btf"), ("kfree_skb_btf3", "tp_btf3")],
    };
    for &(name, attached) in tp_btf {
        let program: &mut BtfTracePoint = match ebpf.program_mut(name).map(TryInto::try_into) {
            Some(Ok(program)) => program,
            _ => continue,
        };
        match program
            .load("kfree_skb", btf)
            .and_then(|()| program.attach())
        {
            Ok(_) => return Ok(attached),
            Err(e) => failures.push(chain(&e)),
        }
    }
    if let Some(Ok(program)) = ebpf
        .program_mut("kfree_skb_tp")
        .map(TryInto::<&mut TracePoint>::try_into)
    {
        match program
            .load()
            .and_then(|()| program.attach("skb", "kfree_skb"))
        {
            Ok(_) => return Ok("tracepoint"),
            Err(e) => failures.push(chain(&e)),
        }
    }
    let last = failures.pop().unwrap_or_else(|| "no entry point".into());
    Err(why("cannot attach to skb:kfree_skb", &last))
}

impl Program {
    /// Every key's count summed over the CPUs (folded keys included), each
    /// key passed through `normalize` (which may merge keys), and the drops
    /// not counted because the map was full.
    pub fn read(
        &mut self,
        mut normalize: impl FnMut(DropKey) -> DropKey,
    ) -> (HashMap<DropKey, u64>, u64) {
        let mut counts = self.folded.clone();
        let mut now = HashMap::with_capacity(self.last.len());
        for (key, values) in self.drops.iter().flatten() {
            let packets: u64 = values.iter().sum();
            *counts.entry(normalize(key)).or_default() += packets;
            now.insert(key, packets);
        }
        if now.len() > FOLD_AT {
            self.fold(&now, &mut normalize);
        }
        self.last = now;
        let lost = self
            .lost
            .get(&0, 0)
            .map(|values| values.iter().sum())
            .unwrap_or(0);
        (counts, lost)
    }

    /// Deletes the keys that did not move since the last read, keeping
    /// their counts here, so new sites still find room. A drop counted
    /// between the read and the delete is lost; such a key was idle.
    fn fold(
        &mut self,
        now: &HashMap<DropKey, u64>,
        normalize: &mut impl FnMut(DropKey) -> DropKey,
    ) {
        for (key, packets) in now {
            if self.last.get(key) == Some(packets) && self.drops.remove(key).is_ok() {
                *self.folded.entry(normalize(*key)).or_default() += packets;
            }
        }
    }
}

/// What went wrong, with the fix when the cause is a known one.
fn why(what: &str, cause: &str) -> String {
    let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
    if lockdown.contains("[confidentiality]") {
        return format!(
            "{what}: the kernel is in lockdown (confidentiality), which forbids eBPF tracing ({cause})"
        );
    }
    if cause.contains("Operation not permitted") || cause.contains("os error 1)") {
        return format!("{what}: needs CAP_BPF and CAP_PERFMON (run as root) ({cause})");
    }
    if cause.contains("kfree_skb")
        && (cause.contains("not found") || cause.contains("No such file"))
    {
        return format!(
            "{what}: the kernel has no skb:kfree_skb tracepoint with drop reasons (needs Linux 5.17 or newer) ({cause})"
        );
    }
    format!("{what}: {cause}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_c_programs_64_bytes() {
        assert_eq!(std::mem::size_of::<DropKey>(), 64);
        assert_eq!(std::mem::align_of::<DropKey>(), 8);
        assert_eq!(std::mem::offset_of!(DropKey, dst_addr), 24);
        assert_eq!(std::mem::offset_of!(DropKey, orig_addr), 40);
        assert_eq!(std::mem::offset_of!(DropKey, dst_port), 56);
        assert_eq!(std::mem::offset_of!(DropKey, orig_port), 58);
        assert_eq!(std::mem::offset_of!(DropKey, dst_family), 60);
        assert_eq!(std::mem::offset_of!(DropKey, dst_proto), 61);
    }
}
