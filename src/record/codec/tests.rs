use super::*;

fn socket(port: u16, bytes: u64, v6: bool) -> SocketSample {
    let local: SocketAddr = if v6 {
        format!("[2001:db8::1]:{port}").parse().unwrap()
    } else {
        format!("198.18.0.1:{port}").parse().unwrap()
    };
    SocketSample {
        proto: Proto::Tcp,
        state: 1,
        local,
        peer: "198.18.0.2:443".parse().unwrap(),
        recv_q: 0,
        send_q: (bytes % 3) as u32,
        uid: 33,
        inode: 1000 + u32::from(port),
        users: vec![SocketUser {
            process: "nginx".into(),
            pid: 10,
            fd: u32::from(port),
        }]
        .into(),
        owner_denied: false,
        owner_pending: false,
        tcp: port.is_multiple_of(2).then(|| TcpInfoSample {
            rtt_us: 100,
            bytes_acked: bytes,
            last_send_ms: 5,
            ..Default::default()
        }),
        limits: port.is_multiple_of(5).then(|| {
            Box::new(TcpLimits {
                busy_us: bytes * 7,
                rwnd_limited_us: bytes * 5,
                sndbuf_limited_us: bytes,
                delivery_rate: 1 << 33,
                app_limited: port.is_multiple_of(10),
                min_rtt_us: 40,
                notsent_bytes: u32::from(port),
                snd_wnd: 65_535 << 2,
                reord_seen: 1,
                dsack_dups: 2,
                pacing_rate: 1 << 30,
                max_pacing_rate: u64::MAX,
                reordering: 3 + u32::from(port),
                rcv_rtt_us: 20_000 + u32::from(port),
                rcv_ssthresh: 47_804,
                rcv_space: 91_224,
            })
        }),
        drops: port.is_multiple_of(3).then_some(2),
        rcvbuf: port.is_multiple_of(4).then_some(212_992),
        queue_streak: 0,
        v6only: false,
        netns: port % 3,
    }
}

#[test]
fn sockets_round_trip_through_deltas() {
    let mut encoder = SampleEncoder::default();
    let mut previous = SocketTable::default();
    let mut sample = Sample::default();
    let lists = [
        (0..50).map(|p| socket(p, 10, p == 7)).collect::<Vec<_>>(),
        // Counters move (one going down), one socket goes, two come,
        // the order changes, a duplicate key appears, users change.
        {
            let mut l: Vec<_> = (1..50)
                .map(|p| socket(p, 10 + u64::from(p), p == 7))
                .collect();
            if let Some(t) = l[3].tcp.as_mut() {
                t.bytes_acked = 0;
            }
            l.swap(5, 20);
            l.push(socket(900, u64::MAX, true));
            l.push(socket(12, 1, false));
            l[10].users.clear();
            l[11].tcp = None;
            l
        },
        Vec::new(),
        (0..3).map(|p| socket(p, 1, false)).collect(),
    ];
    for (i, list) in lists.iter().enumerate() {
        sample.t = i as f64;
        sample.sockets = SocketTable::from(list.clone());
        let bytes = encoder.encode(&mut sample, i == 0);
        assert_eq!(&sample.sockets.to_vec(), list, "put back");
        let decoded = decode(&previous, &bytes).unwrap();
        assert_eq!(decoded, sample, "sample {i}");
        // Damage is an error, never a panic.
        for cut in 0..bytes.len() {
            let _ = decode(&previous, &bytes[..cut]);
        }
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x80;
            let _ = decode(&previous, &damaged);
        }
        previous = decoded.sockets;
    }
}

/// A recording made before the later columns ends at the users: its
/// sockets read without them.
#[test]
fn a_record_without_the_later_columns_still_reads() {
    let mut sample = Sample {
        sockets: (1..4).map(|p| socket(p * 4, 10, false)).collect(),
        ..Default::default()
    };
    let bytes = SampleEncoder::default().encode(&mut sample, true);
    // One varint per socket per later column: 212992 + 1 takes 3
    // bytes, a namespace id 1.
    let before_limits =
        bytes.len() - 3 * (LIMIT_FIELDS.len() + PACING_FIELDS.len() + RECEIVE_FIELDS.len());
    let before_netns = before_limits - 3 * NETNS_FIELDS.len();
    let old = &bytes[..before_netns - 3 * 3 * LATER_FIELDS.len()];
    let decoded = decode(&SocketTable::default(), old).unwrap();
    assert!(decoded.sockets.iter().all(|s| s.rcvbuf.is_none()));
    let mut expected = sample.clone();
    expected.sockets.modify_all(|s| {
        s.rcvbuf = None;
        s.netns = 0;
    });
    assert_eq!(decoded, expected);
    // One made before the namespace column reads namespace 0.
    let no_netns = decode(&SocketTable::default(), &bytes[..before_netns]).unwrap();
    assert!(no_netns.sockets.iter().all(|s| s.netns == 0));
    assert_eq!(no_netns.sockets.at(0).rcvbuf, Some(212_992));
    let new = decode(&SocketTable::default(), &bytes).unwrap();
    assert_eq!(new.sockets.at(0).rcvbuf, Some(212_992));
    assert_eq!(new, sample);
}

/// What limited a sending socket goes through a keyframe and a delta
/// exactly, appears and goes away; a recording made before its columns
/// reads None.
#[test]
fn limits_round_trip_and_older_records_read_none() {
    let mut encoder = SampleEncoder::default();
    let mut first = Sample {
        sockets: (1..12)
            .map(|p| socket(p, 1000 + u64::from(p), false))
            .collect(),
        ..Default::default()
    };
    let key = encoder.encode(&mut first, true);
    let decoded = decode(&SocketTable::default(), &key).unwrap();
    assert_eq!(decoded, first);
    assert!(
        decoded
            .sockets
            .iter()
            .filter(|s| s.limits.is_some())
            .count()
            == 2
    );
    // The next sample: counters moved, one socket's limits gone, one new.
    let mut second = first.clone();
    second.sockets.modify_all(|s| {
        if let Some(limits) = s.limits.as_deref_mut() {
            limits.busy_us += 1_000_000;
            limits.rwnd_limited_us += 900_000;
            limits.app_limited = !limits.app_limited;
        }
    });
    second.sockets.modify(4, |s| s.limits = None);
    second.sockets.modify(5, |s| {
        s.limits = Some(Box::new(TcpLimits {
            notsent_bytes: 4096,
            ..TcpLimits::default()
        }))
    });
    let delta = encoder.encode(&mut second, false);
    assert_eq!(decode(&decoded.sockets, &delta).unwrap(), second);
    // One made before the pacing columns reads its limits with pacing 0:
    // the same sample with pacing 0 (a zero byte per socket and column),
    // cut there.
    let mut unpaced = first.clone();
    unpaced.sockets.modify_all(|s| {
        if let Some(limits) = s.limits.as_deref_mut() {
            (
                limits.pacing_rate,
                limits.max_pacing_rate,
                limits.reordering,
            ) = (0, 0, 0);
        }
    });
    // One made before the receive columns reads them 0, in the same way.
    let mut unreceived = first.clone();
    unreceived.sockets.modify_all(|s| {
        if let Some(limits) = s.limits.as_deref_mut() {
            (limits.rcv_rtt_us, limits.rcv_ssthresh, limits.rcv_space) = (0, 0, 0);
        }
    });
    let bytes = SampleEncoder::default().encode(&mut unreceived, true);
    let cut = bytes.len() - unreceived.sockets.len() * RECEIVE_FIELDS.len();
    assert!(bytes[cut..].iter().all(|b| *b == 0));
    assert_eq!(
        decode(&SocketTable::default(), &bytes[..cut]).unwrap(),
        unreceived
    );
    unpaced.sockets.modify_all(|s| {
        if let Some(limits) = s.limits.as_deref_mut() {
            (limits.rcv_rtt_us, limits.rcv_ssthresh, limits.rcv_space) = (0, 0, 0);
        }
    });
    let bytes = SampleEncoder::default().encode(&mut unpaced, true);
    let cut = bytes.len() - unpaced.sockets.len() * (PACING_FIELDS.len() + RECEIVE_FIELDS.len());
    assert!(bytes[cut..].iter().all(|b| *b == 0));
    assert_eq!(
        decode(&SocketTable::default(), &bytes[..cut]).unwrap(),
        unpaced
    );
    // A recording made before the limit columns ends at the namespace's:
    // the same sample without limits (a zero byte per socket and column),
    // cut there.
    let mut before = first.clone();
    before.sockets.modify_all(|s| {
        s.limits = None;
    });
    let bytes = SampleEncoder::default().encode(&mut before, true);
    let later = LIMIT_FIELDS.len() + PACING_FIELDS.len() + RECEIVE_FIELDS.len();
    let cut = bytes.len() - before.sockets.len() * later;
    assert!(bytes[cut..].iter().all(|b| *b == 0));
    assert_eq!(
        decode(&SocketTable::default(), &bytes[..cut]).unwrap(),
        before
    );
}

/// Each byte `2` refers again to the socket before: a copy per byte
/// was the amplification; now it is damage, as is a count past the
/// maximum.
#[test]
fn repeated_references_and_huge_counts_are_damage() {
    let previous = vec![socket(1, 10, false)];
    let mut table = Vec::new();
    put(&mut table, 3);
    put(&mut table, 0);
    table.extend_from_slice(&[1, 2, 2]);
    table.resize(table.len() + 3 * (FIELDS.len() + 1), 0);
    let error =
        decode_sockets(&SocketTable::from(previous), &mut Input::new(&table, "t")).unwrap_err();
    assert!(error.to_string().contains("more sockets than"), "{error}");
    let many = vec![socket(1, 10, false); 2];
    let mut table = Vec::new();
    put(&mut table, 2);
    put(&mut table, 0);
    table.extend_from_slice(&[1, 2]);
    table.resize(table.len() + 2 * (FIELDS.len() + 1), 0);
    let error = decode_sockets(&SocketTable::from(many), &mut Input::new(&table, "t")).unwrap_err();
    assert!(
        error.to_string().contains("refer to the same one"),
        "{error}"
    );
    let mut table = Vec::new();
    put(&mut table, MAX_SOCKETS as u64 + 1);
    put(&mut table, MAX_SOCKETS as u64 + 1);
    table.resize(table.len() + MAX_SOCKETS + 1, 0);
    let error = decode_sockets(&SocketTable::default(), &mut Input::new(&table, "t")).unwrap_err();
    assert!(error.to_string().contains("a sample may hold"), "{error}");
}

#[test]
fn keyframes_are_told_from_deltas() {
    let mut encoder = SampleEncoder::default();
    let mut sample = Sample {
        sockets: (0..20).map(|p| socket(p, 10, false)).collect(),
        ..Default::default()
    };
    let key = encoder.encode(&mut sample, true);
    let delta = encoder.encode(&mut sample, false);
    assert!(self_contained(&key));
    assert!(!self_contained(&delta));
    // A keyframe decodes alone, whatever came before; a delta needs
    // the sockets before it.
    let first = decode(&SocketTable::default(), &key).unwrap();
    assert_eq!(decode(&first.sockets, &delta).unwrap(), sample);
    assert_eq!(decode(&sample.sockets, &key).unwrap(), sample);
    assert!(decode(&SocketTable::default(), &delta).is_err());
    // No sockets at all: nothing refers back.
    sample.sockets.clear();
    assert!(self_contained(&encoder.encode(&mut sample, false)));
    for cut in 0..delta.len() {
        assert!(!self_contained(&delta[..cut]), "cut at {cut}");
    }
}

#[test]
fn unchanged_sockets_cost_about_a_byte_per_column() {
    let mut encoder = SampleEncoder::default();
    let mut sample = Sample {
        sockets: (0..1000).map(|p| socket(p, 10, false)).collect(),
        ..Default::default()
    };
    let key = encoder.encode(&mut sample, true).len();
    let delta = encoder.encode(&mut sample, false).len();
    assert!(
        delta
            < 1000
                * (FIELDS.len()
                    + LATER_FIELDS.len()
                    + NETNS_FIELDS.len()
                    + LIMIT_FIELDS.len()
                    + PACING_FIELDS.len()
                    + RECEIVE_FIELDS.len()
                    + 3),
        "{delta}"
    );
    // The namespace column, and the limit columns of the sockets without
    // limits, cost their byte per socket in both.
    let netns = 1000
        * (NETNS_FIELDS.len() + LIMIT_FIELDS.len() + PACING_FIELDS.len() + RECEIVE_FIELDS.len());
    assert!(
        (delta - netns) * 2 < key - netns,
        "{delta} vs keyframe {key}"
    );
}

/// A head stored in more than MAX_HEAD_BYTES is damage, refused before
/// it is deserialized (what it would decode to is not charged otherwise).
#[test]
fn a_head_past_its_bound_is_damage() {
    let mut record = ((MAX_HEAD_BYTES + 1) as u32).to_le_bytes().to_vec();
    record.resize(4 + MAX_HEAD_BYTES + 1, 0x90);
    let error = decode_head(&record).unwrap_err();
    assert!(error.to_string().contains("head is over 64 MiB"), "{error}");
}
