//! A fresh virtual SSD for one engine: the vssd mounted by this process (its daemon on a
//! thread), and unless `--fs raw`, a loop device over its disk with a new file system mounted.
//! Everything is undone when the bed is finished or dropped.

use super::{Fs, Spec};
use crate::Error;
use nowa_device::{SimConfig, SimMode};
use nowa_vssd::{control, Backing, Disk, DiskSpec, Snapshot};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

/// Where an engine keeps its data.
#[derive(Debug, Clone)]
pub enum Target {
    /// The vssd's disk file itself (a block device's worth of bytes), and the bytes of the
    /// vssd's GC unit (what an out-of-place engine's zones should be).
    Raw(PathBuf, u64),
    /// A directory on the file system on the vssd, with the bytes it may fill.
    Dir(PathBuf, u64),
}

/// A mounted vssd, and the file system on it.
pub struct Bed {
    _tmp: tempfile::TempDir,
    /// The backing file's directory in /dev/shm: the data stays out of this process's memory
    /// (so an in-process engine's memory can be measured), and a flush costs no disk sync.
    _shm: Option<tempfile::TempDir>,
    dir: PathBuf,
    disk: Arc<Disk>,
    daemon: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    loop_dev: Option<PathBuf>,
    /// At the attach: the loop device's bytes written (/sys/block) and the vssd's host bytes.
    at_attach: Option<(u64, u64)>,
    fs_dir: Option<PathBuf>,
}

fn failed(what: &'static str, msg: impl Into<String>) -> Error {
    Error::failed(what, std::io::Error::other(msg.into()))
}

/// Runs a system tool, its stderr in the error.
pub(crate) fn run_tool(what: &'static str, cmd: &mut Command) -> Result<String, Error> {
    let out = cmd
        .output()
        .map_err(|e| failed(what, format!("{cmd:?}: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr)
            .trim()
            .replace('\n', "; ");
        return Err(failed(what, format!("{cmd:?}: {err}")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Bed {
    /// Mounts a fresh vssd of `spec`'s geometry in a temporary directory under `spec.work`,
    /// and makes and mounts the file system.
    ///
    /// # Errors
    /// The mount, losetup, mkfs or mount fails.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    pub fn start(spec: &Spec) -> Result<Bed, Error> {
        let tmp = tempfile::Builder::new()
            .prefix("nowa-compare-")
            .tempdir_in(&spec.work)
            .map_err(|e| Error::io(&spec.work, e))?;
        let shm = tempfile::Builder::new()
            .prefix("nowa-compare-")
            .tempdir_in("/dev/shm")
            .ok();
        let backing = shm
            .as_ref()
            .map_or(Backing::Mem, |d| Backing::File(d.path().join("disk.img")));
        let sim = SimConfig::for_capacity(spec.capacity, spec.op, SimMode::Conventional)
            .map_err(|e| Error::Usage(format!("--capacity / --op: {e}")))?;
        let disk = Disk::open(DiskSpec {
            sim,
            files: 1,
            backing,
            timing: spec.timing.model(),
            describe: format!("nowa compare: {} bytes, OP {}", spec.capacity, spec.op),
            record: None,
        })
        .map_err(|e| Error::failed("opening the vssd", e))?;
        let disk = Arc::new(disk);
        assert!(
            disk.file_bytes() <= spec.capacity && disk.file_bytes() > 0,
            "the disk is the vssd's logical space"
        );
        let dir = tmp.path().join("vssd");
        assert!(dir.starts_with(&spec.work), "everything stays under --work");
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        let mut m = nowa_vssd::mount(disk.clone(), &dir)
            .map_err(|e| Error::failed("mounting the vssd", e))?;
        let daemon = Some(std::thread::spawn(move || m.run()));
        let mut bed = Bed {
            _tmp: tmp,
            _shm: shm,
            dir,
            disk,
            daemon,
            loop_dev: None,
            at_attach: None,
            fs_dir: None,
        };
        bed.wait_for_mount()?;
        if spec.fs != Fs::Raw {
            bed.make_fs(spec.fs)?;
        }
        Ok(bed)
    }

    fn wait_for_mount(&self) -> Result<(), Error> {
        let t = std::time::Instant::now();
        while control::read_stats(&self.dir).is_err() {
            if t.elapsed() > std::time::Duration::from_secs(20) {
                return Err(failed("mounting the vssd", "no answer after 20 s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    }

    fn make_fs(&mut self, fs: Fs) -> Result<(), Error> {
        let disk = self.dir.join("disk");
        assert!(self.loop_dev.is_none(), "one file system per bed");
        let dev = control::attach(&disk).map_err(|e| Error::failed("losetup", e))?;
        self.loop_dev = Some(dev.clone());
        // A reused loop device keeps its counters: the check below uses deltas from here.
        self.at_attach = Some((
            block_write_bytes(&dev)?,
            self.disk.snapshot().host_write_bytes,
        ));
        let mut mkfs = match fs {
            // Inode tables zeroed now, not by ext4lazyinit during the measured phase.
            Fs::Ext4 => {
                let mut c = Command::new("mkfs.ext4");
                c.args(["-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"]);
                c
            }
            Fs::Xfs => {
                let mut c = Command::new("mkfs.xfs");
                c.args(["-q", "-f"]);
                c
            }
            Fs::Raw => unreachable!("raw has no file system"),
        };
        run_tool("mkfs", mkfs.arg(&dev))?;
        let at = self._tmp.path().join("fs");
        std::fs::create_dir(&at).map_err(|e| Error::io(&at, e))?;
        run_tool("mount", Command::new("mount").arg(&dev).arg(&at))?;
        assert!(
            control::mount_point_of(&dev).is_some(),
            "{} is mounted",
            dev.display()
        );
        self.fs_dir = Some(at);
        Ok(())
    }

    /// Where the engine keeps its data.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn target(&self) -> Target {
        match &self.fs_dir {
            Some(d) => Target::Dir(d.clone(), control::free_bytes(d).unwrap_or(0)),
            None => {
                assert!(self.loop_dev.is_none(), "raw: no loop device");
                Target::Raw(self.dir.join("disk"), self.disk.gc_unit_bytes())
            }
        }
    }

    /// With a timing model: its clock (the time all the vssd's work so far is done).
    #[must_use]
    pub fn model_time(&self) -> Option<std::time::Duration> {
        self.disk.model_time()
    }

    /// The vssd's counters now.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        let s = self.disk.snapshot();
        assert!(
            s.media_write_bytes >= s.gc_copy_bytes,
            "GC copies are flash programs"
        );
        s
    }

    /// Writes the file system's dirty data and metadata to the vssd (syncfs), so what the
    /// page cache still holds of a phase is counted in that phase.
    ///
    /// # Errors
    /// syncfs fails.
    pub fn sync_fs(&self) -> Result<(), Error> {
        let Some(d) = &self.fs_dir else {
            return Ok(());
        };
        let f = std::fs::File::open(d).map_err(|e| Error::io(d, e))?;
        // SAFETY: syncfs takes an open descriptor, owned by `f` for the whole call.
        // Test: tests/compare_cli.rs runs engines on ext4 on a vssd, which calls this.
        let r = unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&f)) };
        if r != 0 {
            return Err(Error::io(d, std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Transactions the ext4 journal (jbd2) has committed on the loop device so far; None
    /// without ext4. Each is a flush and a journal write that a waiting fsync pays for.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn journal_commits(&self) -> Option<u64> {
        let dev = self.loop_dev.as_ref()?.file_name()?.to_str()?.to_owned();
        assert!(
            dev.starts_with("loop"),
            "the bed's file system is on a loop device"
        );
        let text = std::fs::read_to_string(format!("/proc/fs/jbd2/{dev}-8/info")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }

    /// Unmounts the file system (which writes what it still held), detaches the loop device,
    /// unmounts the vssd; the vssd's counters after the file system was unmounted.
    ///
    /// # Errors
    /// One of them fails (the rest is still tried when the bed is dropped).
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    pub fn finish(mut self) -> Result<Closed, Error> {
        if let Some(at) = self.fs_dir.take() {
            run_tool("umount", Command::new("umount").arg(&at))?;
        }
        let snapshot = self.snapshot();
        let block_layer = match (&self.loop_dev, self.at_attach) {
            (Some(dev), Some((loop0, vssd0))) => {
                let written = block_write_bytes(dev)?;
                assert!(
                    written >= loop0 && snapshot.host_write_bytes >= vssd0,
                    "counters only grow"
                );
                Some((written - loop0, snapshot.host_write_bytes - vssd0))
            }
            _ => None,
        };
        self.teardown()?;
        Ok(Closed {
            snapshot,
            block_layer,
        })
    }

    fn teardown(&mut self) -> Result<(), Error> {
        if let Some(at) = self.fs_dir.take() {
            run_tool("umount", Command::new("umount").arg(&at))?;
        }
        if let Some(dev) = self.loop_dev.take() {
            control::detach(&dev).map_err(|e| Error::failed("losetup -d", e))?;
        }
        if let Some(d) = self.daemon.take() {
            control::unmount(&self.dir, false)
                .map_err(|e| Error::failed("unmounting the vssd", e))?;
            let _ = d.join();
        }
        Ok(())
    }
}

/// What [`Bed::finish`] read after the file system was unmounted.
pub struct Closed {
    /// The vssd's counters.
    pub snapshot: Snapshot,
    /// From the loop device's attach to the unmount: the bytes written as the block layer
    /// counts them (/sys/block/loopN/stat) and as the vssd received them; None on `--fs raw`.
    pub block_layer: Option<(u64, u64)>,
}

/// Bytes written to block device `dev` so far: /sys/block/NAME/stat's sectors written
/// (field 7) x 512.
fn block_write_bytes(dev: &std::path::Path) -> Result<u64, Error> {
    let name = dev.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let path = PathBuf::from(format!("/sys/block/{name}/stat"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let sectors = text
        .split_whitespace()
        .nth(6)
        .and_then(|f| f.parse::<u64>().ok())
        .ok_or_else(|| failed("reading /sys/block", format!("{}: {text}", path.display())))?;
    Ok(sectors * 512)
}

impl Drop for Bed {
    fn drop(&mut self) {
        // After a failure: a lazy unmount of the file system lets the rest go even when an
        // engine process still holds a file open.
        if let Some(at) = self.fs_dir.take() {
            let _ = Command::new("umount").arg("-l").arg(&at).status();
        }
        if let Err(e) = self.teardown() {
            eprintln!("nowa compare: cleaning up {}: {e}", self.dir.display());
        }
    }
}
