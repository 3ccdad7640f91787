//! `nowa ssdiq` on regular files and loop devices: the device crate's queues (io_uring and
//! psync), the rate limiter, the suite, the scratch label, and the refusals of the one opening
//! path (signature, mounted, not a scratch target, missing --force).

use nowa_bench::ssdiq::{
    self, check, Engine, JobKind, JobSpec, OpenOpts, PhaseKind, SuiteConfig, Target,
};
use nowa_device::{OpenError, ScratchLabel, Verdict};
use nowa_workload::WorkloadSpec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

const SIZE: u64 = 64 << 20;

fn open(path: &Path, engine: Engine) -> (Target, ssdiq::TargetInfo) {
    let o = OpenOpts {
        engine,
        direct: true,
        max_qd: 32,
        create_size: Some(SIZE),
        force: None,
    };
    Target::open_real(path, &o, &[], &mut |_| {}).expect("open the target")
}

fn small_cfg() -> SuiteConfig {
    SuiteConfig {
        workloads: vec![WorkloadSpec::Uniform],
        warmup: 0.25,
        volume: 0.5,
        read_secs: 0.3,
        lat_secs: 0.2,
        sweep: vec![0.5],
        sweep_secs: 0.2,
        interval: 0.05,
        ..SuiteConfig::default()
    }
}

#[test]
fn suite_on_a_file_reports_numbers_and_says_it_is_not_an_ssd() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.img");
    let (mut t, info) = open(&path, Engine::Uring);
    assert_eq!(info.kind, "regular file");
    assert!(
        info.notes.iter().any(|n| n.contains("NOT AN SSD")),
        "{:?}",
        info.notes
    );
    assert_eq!(t.capacity(), SIZE);
    let stop = AtomicBool::new(false);
    let res = ssdiq::run_suite(&mut t, info, &small_cfg(), &stop, &mut |_| {});
    assert!(res.error.is_none(), "{:?}", res.error);
    let s = &res.summary;
    assert!(
        s.seq_write_mb_s.unwrap() > 0.0
            && s.seq_read_mb_s.unwrap() > 0.0
            && s.rand_read_kiops.unwrap() > 0.0
    );
    let row = &s.rand_write[0];
    assert!(row.kiops > 0.0 && row.waf_measured.is_none() && row.waf_implied.is_some());
    assert_eq!(s.est_op.as_ref().unwrap().from, "implied");
    assert!(s.read_lat.unwrap().count > 0 && s.write_lat.unwrap().count > 0);
    assert_eq!(s.sweep.len(), 1);
    // The measured phase wrote exactly volume x capacity.
    let p = res
        .phases
        .iter()
        .find(|p| p.step == PhaseKind::RandWrite)
        .unwrap();
    assert_eq!(p.jobs[0].bytes, SIZE / 2);
    assert!(!p.jobs[0].intervals.is_empty());
    // The sequential init really wrote the file (random payload, not zeroes), and the run
    // left the scratch label in block 0, so the next run needs no --force.
    let data = std::fs::read(&path).unwrap();
    assert!(data[data.len() - 4096..].iter().any(|&b| b != 0));
    assert_eq!(ScratchLabel::decode(&data).unwrap().capacity, SIZE);
    assert!(matches!(
        check(&path, None, None).unwrap(),
        Verdict::Existing {
            identity: Some(_),
            ..
        }
    ));
    assert!(ssdiq::report::text_report(&res).contains("NOT AN SSD"));
}

#[test]
fn psync_engine_and_rate_limiter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.img");
    let stop = AtomicBool::new(false);
    for engine in [Engine::Psync, Engine::Uring] {
        let (mut t, info) = open(&path, engine);
        assert_eq!(info.engine, engine.to_string());
        let job = JobSpec {
            name: "rated".into(),
            kind: JobKind::RandWrite(WorkloadSpec::Uniform),
            bs: 4096,
            qd: 8,
            threads: 2,
            rate: Some(20e6),
            range: SIZE,
            max_bytes: None,
            max_secs: Some(0.5),
            interval: 0.1,
            seed: 1,
        };
        let r = t.run(&[job], &stop).unwrap();
        let got = r[0].mb_s;
        // The limiter must never exceed its target; how close below it the job gets depends
        // on the disk and on what else runs (CI load), so only a loose lower bound.
        assert!(
            (20.0 * 0.3..=20.0 * 1.1).contains(&got),
            "{engine}: rate-limited job ran at {got:.2} MB/s, want <= 20 (and not stalled)"
        );
        assert!(r[0].lat.count == r[0].ops && r[0].lat.mean_us > 0.0);
        // A byte-limited job does exactly its volume.
        let job = JobSpec {
            name: "vol".into(),
            kind: JobKind::SeqWrite,
            bs: 65536,
            qd: 4,
            threads: 1,
            rate: None,
            range: SIZE,
            max_bytes: Some(8 << 20),
            max_secs: None,
            interval: 0.1,
            seed: 2,
        };
        let r = t.run(&[job], &stop).unwrap();
        assert_eq!(r[0].bytes, 8 << 20);
        // The scratch label lets the next round open the file without --force.
        t.finish().unwrap();
    }
}

/// The refusal message of `check`, or a panic if it was allowed.
fn refusal(path: &Path, force: Option<&Path>) -> String {
    let e = check(path, force, None).expect_err("refused");
    assert!(e.is_refusal(), "{e}");
    let m = e.to_string();
    assert!(!m.contains('\n'), "one line: {m}");
    m
}

#[test]
fn files_need_force_unless_they_are_scratch_targets() {
    let dir = tempfile::tempdir().unwrap();
    // A file that is not ssdiq's scratch target (it may hold somebody's data).
    let user = dir.path().join("user.img");
    std::fs::write(&user, vec![7u8; 1 << 20]).unwrap();
    let e = refusal(&user, None);
    assert!(
        e.contains("not a nowa scratch target") && e.contains("--force"),
        "{e}"
    );

    let sig = dir.path().join("ext4.img");
    let mut img = vec![0u8; 1 << 20];
    img[1024 + 0x38] = 0x53;
    img[1024 + 0x39] = 0xEF; // ext2/3/4 superblock magic
    std::fs::write(&sig, &img).unwrap();
    let e = refusal(&sig, None);
    assert!(
        e.contains("refusing") && e.contains("ext2/3/4") && e.contains("--force"),
        "{e}"
    );
    // --force must name the same target.
    let e = refusal(&sig, Some(&user));
    assert!(e.contains("--force names"), "{e}");
    match check(&sig, Some(&sig), None).unwrap() {
        Verdict::Existing { overridden, .. } => assert_eq!(overridden.len(), 1),
        v => panic!("{v:?}"),
    }
    // A new file is fine; a missing one without a size is not.
    let new = dir.path().join("new.img");
    assert!(matches!(
        check(&new, None, Some(SIZE)),
        Ok(Verdict::Create { .. })
    ));
    assert!(matches!(
        check(&new, None, None),
        Err(OpenError::Missing { .. })
    ));
}

/// A loop device we attached; detached (and unmounted) on drop.
struct Loop {
    dev: PathBuf,
    mount: Option<PathBuf>,
}

impl Loop {
    fn attach(img: &Path) -> Option<Loop> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(img)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!dev.is_empty()).then(|| Loop {
            dev: PathBuf::from(dev),
            mount: None,
        })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

#[test]
fn loop_device_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("loop.img");
    std::fs::write(&img, vec![0u8; 32 << 20]).unwrap();
    let Some(lo) = Loop::attach(&img) else {
        eprintln!("SKIPPED loop_device_refusals: losetup is not permitted here");
        return;
    };
    let dev = lo.dev.clone();

    // A block device that is not a scratch target needs --force naming it.
    let e = refusal(&dev, None);
    assert!(
        e.contains("refusing to write to block device") && e.contains("--force"),
        "{e}"
    );
    assert!(check(&dev, Some(&dev), None).is_ok());
    // The backing file of a loop device is refused too.
    let e = refusal(&img, None);
    assert!(e.contains("backing file"), "{e}");

    // Forced, the suite runs on the block device (BLKDISCARD reset, O_DIRECT, io_uring).
    let o = OpenOpts {
        engine: Engine::Uring,
        direct: true,
        max_qd: 32,
        create_size: None,
        force: Some(dev.clone()),
    };
    let (mut t, info) = Target::open_real(&dev, &o, &[], &mut |_| {}).unwrap();
    assert_eq!(info.kind, "block device");
    assert_eq!(t.capacity(), 32 << 20);
    let cfg = SuiteConfig {
        sweep: vec![],
        steps: ssdiq::Steps {
            sweep: false,
            ..ssdiq::Steps::ALL
        },
        ..small_cfg()
    };
    let res = ssdiq::run_suite(&mut t, info, &cfg, &AtomicBool::new(false), &mut |_| {});
    assert!(res.error.is_none(), "{:?}", res.error);
    assert!(res.summary.rand_write[0].kiops > 0.0 && res.summary.read_lat.is_some());
    drop(t);
    // The run left its scratch label: the next run needs no --force.
    assert!(check(&dev, None, None).is_ok());
    drop(lo);

    // An ext4 signature.
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&img)
        .status();
    if !mkfs.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED signature/mount part: mkfs.ext4 not available");
        return;
    }
    let Some(mut lo) = Loop::attach(&img) else {
        return;
    };
    let e = refusal(&lo.dev, None);
    assert!(e.contains("ext2/3/4"), "{e}");

    // Mounted.
    let mp = dir.path().join("mnt");
    std::fs::create_dir(&mp).unwrap();
    if Command::new("mount")
        .arg(&lo.dev)
        .arg(&mp)
        .status()
        .is_ok_and(|s| s.success())
    {
        lo.mount = Some(mp.clone());
        let e = refusal(&lo.dev, None);
        assert!(e.contains("mounted on"), "{e}");
        // Even when forced, the exclusive open fails while it is mounted.
        let forced = check(&lo.dev, Some(&lo.dev), None);
        assert!(forced.is_ok());
        let o = OpenOpts {
            engine: Engine::Psync,
            direct: true,
            max_qd: 1,
            create_size: None,
            force: Some(lo.dev.clone()),
        };
        let err = Target::open_real(&lo.dev, &o, &[], &mut |_| {})
            .err()
            .expect("a mounted device cannot be opened exclusively");
        assert!(format!("{err:#}").contains("busy"), "{err:#}");
    } else {
        eprintln!("SKIPPED mount part: mount is not permitted here");
    }
}

#[test]
fn system_disk_is_refused() {
    // The device mounted on / (read-only check: nothing is opened for writing).
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let Some(root) = mounts
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?, it.next()?))
        })
        .find(|(src, mp)| *mp == "/" && src.starts_with("/dev/"))
        .map(|(src, _)| PathBuf::from(src))
    else {
        eprintln!("SKIPPED system_disk_is_refused: / is not on a block device here");
        return;
    };
    if !root.exists() {
        eprintln!(
            "SKIPPED system_disk_is_refused: {} not visible",
            root.display()
        );
        return;
    }
    // Refused; when the device may not even be opened for inspection (containers), the
    // refusal still names the system disk.
    let e = refusal(&root, None);
    assert!(e.contains("system disk"), "{e}");
}
