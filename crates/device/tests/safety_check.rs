//! safety_check on regular files: a file with an ext4 superblock magic is refused, a zero
//! file is safe, a missing path is an error.

use nowa_device::{safety_check, SafetyIssue, TargetKind};

#[test]
fn ext4_signature_is_refused_zero_file_is_safe() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.img");
    std::fs::write(&zero, vec![0u8; 1 << 20]).unwrap();
    let r = safety_check(&zero).unwrap();
    assert_eq!(r.kind, TargetKind::RegularFile);
    assert!(r.is_safe(), "{:?}", r.reasons());

    // ext4: superblock at 1024, s_magic 0xEF53 (little endian) at offset 0x38.
    let mut img = vec![0u8; 1 << 20];
    img[1024 + 0x38] = 0x53;
    img[1024 + 0x39] = 0xEF;
    let ext4 = dir.path().join("ext4.img");
    std::fs::write(&ext4, &img).unwrap();
    let r = safety_check(&ext4).unwrap();
    assert!(!r.is_safe());
    assert_eq!(r.issues, vec![SafetyIssue::Signature("ext2/3/4")]);
    assert!(r.reasons()[0].contains("ext2/3/4"));

    // Several signatures are all listed.
    img[510] = 0x55;
    img[511] = 0xAA;
    img[512..520].copy_from_slice(b"EFI PART");
    std::fs::write(&ext4, &img).unwrap();
    assert_eq!(safety_check(&ext4).unwrap().issues.len(), 3);

    // Tiny files are fine to inspect.
    let tiny = dir.path().join("tiny");
    std::fs::write(&tiny, b"XFSB").unwrap();
    assert_eq!(
        safety_check(&tiny).unwrap().issues,
        vec![SafetyIssue::Signature("XFS")]
    );

    assert!(safety_check(dir.path().join("missing")).is_err());
    assert!(
        safety_check(dir.path()).is_err(),
        "a directory is not a target"
    );
}
