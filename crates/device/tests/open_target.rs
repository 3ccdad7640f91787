//! The one opening path ([`open_target`] / [`check_target`]): new files and their limits
//! (never in /dev), refusals of targets that hold data or are not of the expected kind (the
//! target left byte-identical), `--force`, steps announced before anything is written, and the
//! exclusive lock against a second process.

use nowa_device::{
    check_target, open_target, recognize_scratch, BlockDevice, BusyReason, DeviceError, Expect,
    FileDevice, FileOptions, Identity, OpenError, SafetyIssue, ScratchLabel, Verdict,
};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A recognizer for the tests: a target whose first bytes are "TESTDB".
fn test_db(head: &[u8]) -> Option<Identity> {
    head.starts_with(b"TESTDB").then(|| Identity {
        what: "test database".into(),
    })
}

const DB: Expect<'static> = Expect {
    what: "a test database",
    recognize: &test_db,
};

fn open(path: &Path, force: Option<&Path>, size: Option<u64>) -> Result<FileDevice, OpenError> {
    let steps = vec!["fill it".to_string()];
    open_target(
        path,
        force,
        DB,
        size,
        &FileOptions::default(),
        &steps,
        &mut |_| {},
    )
    .map(|o| o.device)
}

#[test]
fn new_file_is_created_after_the_steps_are_announced() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("new.img");
    let mut lines = Vec::new();
    let steps = vec!["trim the whole target".to_string(), "fill it".to_string()];
    let o = open_target(
        &p,
        None,
        DB,
        Some(1 << 20),
        &FileOptions::default(),
        &steps,
        &mut |l| {
            assert!(!p.exists(), "announced before anything is created: {l}");
            lines.push(l.to_string());
        },
    )
    .unwrap();
    assert!(matches!(
        o.verdict,
        Verdict::Create {
            size: 1_048_576,
            ..
        }
    ));
    assert_eq!(o.device.geometry().capacity, 1 << 20);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("create ") && lines[1] == steps[0] && lines[2] == steps[1]);
}

#[test]
fn missing_path_needs_a_size_and_never_becomes_a_file_in_dev() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("absent");
    assert!(matches!(
        open(&p, None, None),
        Err(OpenError::Missing { .. })
    ));
    assert!(!p.exists());
    let typo = Path::new("/dev/nowa-typo-nvme0n9");
    let e = open(typo, None, Some(1 << 20)).unwrap_err();
    assert!(
        matches!(e, OpenError::Device(DeviceError::CreateInDev { .. })),
        "{e}"
    );
    assert!(e.is_refusal() && e.to_string().contains("/dev"), "{e}");
    assert!(!typo.exists(), "nothing created in /dev");
    // The low-level constructor refuses too.
    assert!(matches!(
        FileDevice::create(typo, 1 << 20, &FileOptions::default()),
        Err(DeviceError::CreateInDev { .. })
    ));
    assert!(!typo.exists());
}

#[test]
fn unknown_contents_are_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("user.dat");
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| i.to_le_bytes()[1]).collect();
    std::fs::write(&p, &data).unwrap();
    let e = open(&p, None, Some(1 << 20)).unwrap_err();
    assert!(matches!(e, OpenError::NotExpected { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("not a test database") && msg.contains("--force") && !msg.contains('\n'),
        "{msg}"
    );
    assert_eq!(std::fs::read(&p).unwrap(), data, "byte-identical");
    // --force naming another path is refused; naming it, the open goes ahead with a warning.
    let other = dir.path().join("other");
    assert!(matches!(
        open(&p, Some(&other), None),
        Err(OpenError::ForceMismatch { .. })
    ));
    let v = check_target(&p, Some(&p), DB, None).unwrap();
    assert!(v.warnings()[0].contains("not a nowa target"), "{v:?}");
    drop(open(&p, Some(&p), None).unwrap());
    assert_eq!(std::fs::read(&p).unwrap(), data, "opening writes nothing");

    // A target of the expected kind needs no --force.
    let mut db = b"TESTDB".to_vec();
    db.resize(1 << 20, 0);
    std::fs::write(&p, &db).unwrap();
    let v = check_target(&p, None, DB, None).unwrap();
    assert!(matches!(
        v,
        Verdict::Existing {
            identity: Some(_),
            ..
        }
    ));
    assert!(v.warnings().is_empty());
}

#[test]
fn signatures_beat_recognition_and_scratch_labels_are_recognized() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ext4.img");
    let mut img = b"TESTDB".to_vec();
    img.resize(1 << 20, 0);
    img[1024 + 0x38] = 0x53;
    img[1024 + 0x39] = 0xEF;
    std::fs::write(&p, &img).unwrap();
    match open(&p, None, None).unwrap_err() {
        OpenError::Unsafe { issues, .. } => {
            assert_eq!(issues, vec![SafetyIssue::Signature("ext2/3/4")]);
        }
        e => panic!("{e}"),
    }
    assert_eq!(std::fs::read(&p).unwrap(), img);

    let s = dir.path().join("scratch.img");
    let mut label = ScratchLabel {
        owner: "ssdiq".into(),
        capacity: 1 << 20,
    }
    .encode();
    label.resize(1 << 20, 0);
    std::fs::write(&s, &label).unwrap();
    let scratch = Expect {
        what: "a nowa scratch target",
        recognize: &recognize_scratch,
    };
    let v = check_target(&s, None, scratch, None).unwrap();
    assert!(
        matches!(v, Verdict::Existing { identity: Some(ref i), .. } if i.what.contains("ssdiq"))
    );
    assert!(matches!(
        check_target(&s, None, DB, None),
        Err(OpenError::NotExpected { .. })
    ));
}

/// Run by [`second_process_is_refused_naming_the_holder`] in a child process: holds the lock
/// on `NOWA_TEST_LOCK_PATH` until `NOWA_TEST_LOCK_PATH.release` exists.
#[test]
#[ignore = "helper process of second_process_is_refused_naming_the_holder"]
fn lock_holder() {
    let Some(p) = std::env::var_os("NOWA_TEST_LOCK_PATH").map(PathBuf::from) else {
        return;
    };
    let d = FileDevice::open(&p, &FileOptions::default()).unwrap();
    println!("LOCKED");
    let release = p.with_extension("release");
    let t = Instant::now();
    while !release.exists() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(d);
}

#[test]
fn second_process_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db.img");
    drop(FileDevice::create(&p, 1 << 20, &FileOptions::default()).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "lock_holder", "--ignored", "--nocapture"])
        .env("NOWA_TEST_LOCK_PATH", &p)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let locked = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("LOCKED"));
    assert!(locked, "the child took the lock");
    let e = FileDevice::open(&p, &FileOptions::default()).unwrap_err();
    std::fs::write(p.with_extension("release"), b"").unwrap();
    lines.for_each(drop); // the child's remaining output, until it exits
    let status = child.wait().unwrap();
    assert!(status.success());
    match &e {
        DeviceError::Busy {
            why: BusyReason::Locked,
            holder: Some(h),
            ..
        } => assert_eq!(h.pid, child.id(), "{e}"),
        _ => panic!("unexpected: {e}"),
    }
    let msg = e.to_string();
    assert!(msg.contains(&format!("held by process {}", child.id())) && !msg.contains('\n'));
    // Released when the holder exits.
    FileDevice::open(&p, &FileOptions::default()).unwrap();
}
