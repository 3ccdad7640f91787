//! FileDevice on a temp file: round trips with both engines, batches deeper than the queue,
//! unaligned I/O errors, counters (trim: tests/trim_semantics.rs).

use nowa_device::{BlockDevice, DeviceError, FileDevice, FileOptions, IoEngine, BLOCK_SIZE};

fn block(i: u64, salt: u64) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    (0..BLOCK_SIZE)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn open(engine: IoEngine, qd: u32) -> (tempfile::TempDir, FileDevice) {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = FileOptions {
        engine,
        queue_depth: qd,
        ..FileOptions::default()
    };
    let d = FileDevice::create(dir.path().join("dev.img"), 4 << 20, &opts).expect("create");
    if !d.is_direct() {
        println!(
            "note: buffered I/O: {}",
            d.direct_fallback_reason().unwrap_or("?")
        );
        assert!(d.direct_fallback_reason().is_some());
    }
    if engine == IoEngine::Uring && d.engine() != IoEngine::Uring {
        println!(
            "note: io_uring unavailable: {}",
            d.engine_fallback_reason().expect("a reason")
        );
    }
    (dir, d)
}

#[test]
fn roundtrip_both_engines() {
    for engine in [IoEngine::Uring, IoEngine::Sync] {
        let (_dir, d) = open(engine, 8);
        assert_eq!(d.geometry().capacity, 4 << 20);
        let data: Vec<u8> = (0..16).flat_map(|i| block(i, 1)).collect();
        d.write_at(64 * 4096, &data).unwrap();
        d.flush().unwrap();
        let mut out = vec![0u8; data.len()];
        d.read_at(64 * 4096, &mut out).unwrap();
        assert_eq!(out, data, "{engine:?}");
        // Unwritten space reads as zeroes.
        let mut z = vec![1u8; 4096];
        d.read_at(0, &mut z).unwrap();
        assert!(z.iter().all(|&b| b == 0));
        let c = d.counters();
        assert_eq!(c.host_bytes_written, data.len() as u64);
        assert_eq!(c.media_bytes_written, None);
        assert_eq!(c.flushes, 1);
    }
}

#[test]
fn batch_deeper_than_queue_depth() {
    for engine in [IoEngine::Uring, IoEngine::Sync] {
        let (_dir, d) = open(engine, 4);
        // 100 single-block writes at scattered offsets plus a few multi-block ones.
        let offs: Vec<u64> = (0..100u64).map(|i| (i * 7 % 1000) * 4096).collect();
        let bufs: Vec<Vec<u8>> = offs.iter().map(|&o| block(o / 4096, 2)).collect();
        let mut writes: Vec<(u64, &[u8])> = offs
            .iter()
            .zip(&bufs)
            .map(|(&o, b)| (o, b.as_slice()))
            .collect();
        let big: Vec<u8> = (0..8).flat_map(|i| block(1000 + i, 3)).collect();
        writes.push((1000 * 4096, &big));
        d.write_batch(&writes, None).unwrap();

        let mut outs: Vec<Vec<u8>> = writes.iter().map(|(_, b)| vec![0u8; b.len()]).collect();
        let mut reads: Vec<(u64, &mut [u8])> = writes
            .iter()
            .zip(outs.iter_mut())
            .map(|((o, _), b)| (*o, b.as_mut_slice()))
            .collect();
        d.read_batch(&mut reads).unwrap();
        for ((o, w), r) in writes.iter().zip(&outs) {
            assert_eq!(w, &r.as_slice(), "{engine:?} offset {o}");
        }
        assert_eq!(d.counters().host_bytes_written, (100 + 8) * 4096);
        if d.engine() == IoEngine::Uring {
            assert_eq!(
                d.max_in_flight_observed(),
                4,
                "queue depth bound reached and kept"
            );
        }
    }
}

#[test]
fn unaligned_and_out_of_range_errors() {
    let (_dir, d) = open(IoEngine::Uring, 8);
    let buf = vec![0u8; 4096];
    let mut rbuf = vec![0u8; 4096];
    assert!(matches!(
        d.write_at(512, &buf),
        Err(DeviceError::Unaligned { .. })
    ));
    assert!(matches!(
        d.write_at(0, &buf[..1000]),
        Err(DeviceError::Unaligned { .. })
    ));
    assert!(matches!(
        d.read_at(100, &mut rbuf),
        Err(DeviceError::Unaligned { .. })
    ));
    assert!(matches!(
        d.write_batch(&[(0, &buf), (10, &buf)], None),
        Err(DeviceError::Unaligned { .. })
    ));
    assert!(matches!(
        d.write_at(4 << 20, &buf),
        Err(DeviceError::OutOfRange { .. })
    ));
    assert!(matches!(
        d.trim(4096, 100),
        Err(DeviceError::Unaligned { .. })
    ));
    // A rejected batch wrote nothing.
    assert_eq!(d.counters().host_bytes_written, 0);
}

#[test]
fn open_rejects_bad_targets() {
    let dir = tempfile::tempdir().unwrap();
    let opts = FileOptions::default();
    assert!(FileDevice::create(dir.path().join("x"), 1000, &opts).is_err());
    assert!(FileDevice::open(dir.path(), &opts).is_err());
    std::fs::write(dir.path().join("tiny"), [0u8; 100]).unwrap();
    assert!(matches!(
        FileDevice::open(dir.path().join("tiny"), &opts),
        Err(DeviceError::TooSmall { .. })
    ));
    assert!(FileDevice::open(dir.path().join("missing"), &opts).is_err());
}

#[test]
fn concurrent_batches_share_the_ring() {
    let (_dir, d) = open(IoEngine::Uring, 4);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let d = &d;
            s.spawn(move || {
                let bufs: Vec<Vec<u8>> = (0..32).map(|i| block(t * 100 + i, 5)).collect();
                let writes: Vec<(u64, &[u8])> = bufs
                    .iter()
                    .enumerate()
                    .map(|(i, b)| ((t * 32 + i as u64) * 4096, b.as_slice()))
                    .collect();
                d.write_batch(&writes, None).unwrap();
            });
        }
    });
    for t in 0..4u64 {
        for i in 0..32u64 {
            let mut out = vec![0u8; 4096];
            d.read_at((t * 32 + i) * 4096, &mut out).unwrap();
            assert_eq!(out, block(t * 100 + i, 5));
        }
    }
}

/// Issue 26 item 6: every refusal names the path and says what is there.
#[test]
fn create_and_open_errors_name_the_path_and_the_kind() {
    let dir = tempfile::tempdir().unwrap();
    let opts = FileOptions::default();
    // An existing character device is not "missing": say what it is.
    let e = FileDevice::create("/dev/null", 1 << 20, &opts).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, DeviceError::Exists { .. }), "{e:?}");
    assert!(
        msg.contains("/dev/null") && msg.contains("character device"),
        "{msg}"
    );
    let e = FileDevice::open("/dev/null", &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/null") && e.contains("character device"),
        "{e}"
    );
    // An existing regular file is never overwritten by create.
    let f = dir.path().join("f");
    std::fs::write(&f, [0u8; 4096]).unwrap();
    let e = FileDevice::create(&f, 1 << 20, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&*f.to_string_lossy()) && e.contains("regular file"),
        "{e}"
    );
    // A missing file or directory: the message names the path.
    let missing = dir.path().join("missing");
    let e = FileDevice::open(&missing, &opts).unwrap_err().to_string();
    assert!(e.contains(&*missing.to_string_lossy()), "{e}");
    let deep = dir.path().join("no/such/dir/f");
    let e = FileDevice::create(&deep, 1 << 20, &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains(&*deep.to_string_lossy()), "{e}");
    let e = nowa_device::safety_check(&missing).unwrap_err().to_string();
    assert!(e.contains(&*missing.to_string_lossy()), "{e}");
}
