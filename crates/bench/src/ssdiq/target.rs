//! Benchmark targets: a block device or regular file (the device crate's [`FileDevice`],
//! opened through its one opening path) or a simulated SSD (the device crate's [`SimDevice`]
//! timed by its [`Timing`] model in virtual time). Both run jobs through the device crate's
//! queues ([`super::runner`]); this file adds the reset step and the device counters.

use super::job::{JobResult, JobSpec};
use super::nvme::{json_find, json_u128, nvme_counters, nvme_counters_ioctl};
use super::runner::{drive, results, Ctl, Stream, Tick};
use super::PerfModel;
use nowa_device::timing::Timing;
use nowa_device::{
    check_target, open_target, recognize_scratch, BlockDevice, Expect, FileDevice, FileOptions,
    IoEngine, OpenError, ScratchLabel, SimConfig, SimDevice, SimMode, TargetKind, TrimPolicy,
    Verdict,
};
use nowa_flash::{FtlConfig, PolicyKind, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

/// Which submission path to use on a real target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Engine {
    /// io_uring, `qd` I/Os in flight per thread.
    Uring,
    /// pread/pwrite, one I/O at a time per thread (queue depth = threads).
    Psync,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Uring => "io_uring",
            Engine::Psync => "psync",
        })
    }
}

/// A simulated SSD's configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Logical capacity in bytes.
    pub capacity: u64,
    /// Over-provisioning, spare/logical.
    pub op: f64,
    /// GC policy name.
    pub policy: String,
    /// GC unit in pages (0 = automatic: 1 MiB, smaller if the device is tiny).
    pub unit_pages: u32,
    /// The timing model (nowa-device's one model).
    pub model: PerfModel,
}

impl SimSpec {
    /// The FTL configuration: GC units of `unit_pages` (default 256 pages = 1 MiB, i.e. many
    /// units per device so the greedy WAF is close to its large-device limit).
    ///
    /// # Errors
    /// An unknown policy, a capacity below 256 KiB, or no geometry the FTL accepts.
    pub fn ftl_config(&self) -> anyhow::Result<FtlConfig> {
        let policy: PolicyKind = self.policy.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        let logical_pages = self.capacity / PAGE_SIZE;
        anyhow::ensure!(
            logical_pages >= 64,
            "simulated capacity must be at least 256 KiB"
        );
        let candidates: Vec<(u32, u32)> = if self.unit_pages > 0 {
            vec![(self.unit_pages, 1)]
        } else {
            vec![(64, 4), (64, 2), (64, 1), (32, 1), (16, 1), (8, 1)]
        };
        let mut last = String::new();
        for (ppb, bps) in candidates {
            let cfg = FtlConfig {
                logical_pages,
                op: self.op,
                pages_per_block: ppb,
                blocks_per_superblock: bps,
                policy: policy.clone(),
                ..FtlConfig::default()
            };
            match cfg.layout() {
                Ok(_) => return Ok(cfg),
                Err(e) => last = e.to_string(),
            }
        }
        anyhow::bail!("simulated SSD: {last}")
    }
}

/// What the target is, for the report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// "block device", "regular file" or "simulated SSD".
    pub kind: String,
    /// The path, or "sim:SIZE".
    pub path: String,
    /// Capacity in bytes.
    pub capacity: u64,
    /// I/O engine actually used.
    pub engine: String,
    /// O_DIRECT in use.
    pub direct: bool,
    /// Where measured WAF comes from: "OCP log (nvme-cli)", "FTL model", or None.
    pub counters: Option<String>,
    /// The simulated SSD's configuration.
    pub sim: Option<SimSpec>,
    /// Caveats printed with every result (file not an SSD, O_DIRECT fallback, ...).
    pub notes: Vec<String>,
}

/// Device write counters: host bytes and media (physical) bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct MediaCounters {
    /// Bytes the host wrote.
    pub host_bytes: u64,
    /// Bytes the media programmed.
    pub media_bytes: u64,
}

impl MediaCounters {
    /// WAF between two snapshots (None if nothing was written or a counter went backwards).
    #[must_use]
    pub fn waf_since(&self, before: &MediaCounters) -> Option<f64> {
        let h = self.host_bytes.checked_sub(before.host_bytes)?;
        let m = self.media_bytes.checked_sub(before.media_bytes)?;
        nowa_units::waf(m, h)
    }
}

/// A real target: a locked [`FileDevice`] and whether it has NVMe counters.
pub struct RealTarget {
    dev: FileDevice,
    nvme: bool,
}

/// A simulated SSD: the device (FTL, no data kept) and its timing model with its clock.
pub struct SimTarget {
    dev: SimDevice,
    timing: Timing,
}

/// An open target.
pub enum Target {
    /// A block device or regular file.
    Real(Box<RealTarget>),
    /// A simulated SSD in virtual time.
    Sim(Box<SimTarget>),
}

/// What ssdiq expects on an existing target: its own scratch label (written at the end of a
/// run), so a second run on the same target needs no `--force`.
pub const SCRATCH: Expect<'static> = Expect {
    what: "a nowa scratch target (written by an earlier nowa ssdiq run)",
    recognize: &recognize_scratch,
};

/// Decides whether ssdiq may write to `path` (nothing is opened for writing): the device
/// crate's rules ([`nowa_device::check_target`]) with ssdiq's scratch label as the expected
/// kind. `create_size`: size of the file to create if the path does not exist.
///
/// # Errors
/// The refusal, with a one-line message.
pub fn check(
    path: &Path,
    force: Option<&Path>,
    create_size: Option<u64>,
) -> Result<Verdict, OpenError> {
    check_target(path, force, SCRATCH, create_size)
}

/// How to open a real target.
#[derive(Debug, Clone)]
pub struct OpenOpts {
    /// Submission path.
    pub engine: Engine,
    /// O_DIRECT.
    pub direct: bool,
    /// Largest queue depth of any job.
    pub max_qd: u32,
    /// Create a regular file of this size if the path does not exist.
    pub create_size: Option<u64>,
    /// `--force`: the path the user repeated to overwrite a target that is in use, holds
    /// data or is not ssdiq's scratch target.
    pub force: Option<PathBuf>,
}

const NOT_AN_SSD: &str = "TARGET IS A FILE ON A FILE SYSTEM, NOT AN SSD: the file system, the page cache policy and the disk below \
     decide these numbers; use them to try the tool, not to judge a drive";

impl Target {
    /// Opens a real target through the device crate's opening path: refusals, `steps`
    /// announced through `announce`, exclusive lock. The reset step discards (BLKDISCARD on a
    /// device, a punched hole on a file).
    ///
    /// # Errors
    /// The refusal ([`OpenError`], downcastable), or a failure to open.
    pub fn open_real(
        path: &Path,
        o: &OpenOpts,
        steps: &[String],
        announce: &mut dyn FnMut(&str),
    ) -> anyhow::Result<(Target, TargetInfo)> {
        let fo = FileOptions {
            engine: match o.engine {
                Engine::Uring => IoEngine::Uring,
                Engine::Psync => IoEngine::Sync,
            },
            queue_depth: o.max_qd.clamp(1, 4096),
            direct: o.direct,
            exclusive: true,
            trim: TrimPolicy::Deallocate,
        };
        let opened = open_target(
            path,
            o.force.as_deref(),
            SCRATCH,
            o.create_size,
            &fo,
            steps,
            announce,
        )?;
        let dev = opened.device;
        let mut notes = Vec::new();
        let engine = match dev.engine() {
            IoEngine::Sync => Engine::Psync,
            _ => Engine::Uring,
        };
        if let Some(r) = dev.engine_fallback_reason() {
            notes.push(format!("io_uring unavailable ({r})"));
        }
        if let Some(r) = dev.direct_fallback_reason() {
            notes.push(format!(
                "not O_DIRECT: {r}; the page cache distorts every number"
            ));
        }
        let is_block = dev.kind() == TargetKind::BlockDevice;
        if !is_block {
            notes.push(NOT_AN_SSD.into());
        }
        let counters = if is_block && is_nvme(dev.path()) {
            nvme_source(&dev, &mut notes)
        } else {
            None
        };
        let info = TargetInfo {
            kind: dev.kind().to_string(),
            path: path.display().to_string(),
            capacity: dev.geometry().capacity,
            engine: engine.to_string(),
            direct: dev.is_direct(),
            counters,
            sim: None,
            notes,
        };
        let nvme = info.counters.is_some();
        Ok((Target::Real(Box::new(RealTarget { dev, nvme })), info))
    }

    /// Creates a simulated SSD.
    ///
    /// # Errors
    /// A configuration the FTL or the timing model refuses.
    pub fn open_sim(spec: &SimSpec) -> anyhow::Result<(Target, TargetInfo)> {
        let mut cfg = SimConfig::new(SimMode::Conventional, spec.ftl_config()?);
        cfg.store_data = false;
        let dev = SimDevice::new(cfg)?;
        let timing = Timing::new(spec.model)?;
        let l = dev.layout().clone();
        let m = &spec.model;
        let info = TargetInfo {
            kind: "simulated SSD".into(),
            path: format!("sim:{}", super::fmt_bytes(spec.capacity)),
            capacity: dev.geometry().capacity,
            engine: "virtual time (performance model)".into(),
            direct: true,
            counters: Some("FTL model (like an OCP log page)".into()),
            sim: Some(spec.clone()),
            notes: vec![format!(
                "simulated SSD: {} GC, OP {:.1}% spare/logical ({:.1}% spare/physical, alpha {:.4}), GC unit {} KiB; \
                 timing is a model: {}, +{} us read / +{} us write controller latency",
                spec.policy,
                l.op_spare_over_logical * 100.0,
                l.op_spare_over_physical * 100.0,
                l.alpha,
                u64::from(l.unit_pages) * PAGE_SIZE / 1024,
                m.describe(),
                m.read_base_us,
                m.write_base_us
            )],
        };
        Ok((Target::Sim(Box::new(SimTarget { dev, timing })), info))
    }

    /// Capacity in bytes.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        match self {
            Target::Real(r) => r.dev.geometry().capacity,
            Target::Sim(s) => s.dev.geometry().capacity,
        }
    }

    /// The simulated SSD, if this is one.
    #[must_use]
    pub fn sim(&self) -> Option<&SimDevice> {
        match self {
            Target::Sim(s) => Some(&s.dev),
            Target::Real(_) => None,
        }
    }

    /// TRIM / discard of the whole range. Returns a note if the device ignored it.
    ///
    /// # Errors
    /// The discard failed.
    pub fn discard_all(&mut self) -> anyhow::Result<Option<String>> {
        let cap = self.capacity();
        match self {
            Target::Real(r) => {
                r.dev.trim(0, cap)?;
                Ok((!r.dev.trim_supported())
                    .then(|| "discard not supported by the target: reset was a no-op".to_string()))
            }
            Target::Sim(s) => {
                s.dev.trim(0, cap)?;
                Ok(None)
            }
        }
    }

    /// NVMe sanitize (block erase), only on explicit request. Waits until it completes.
    ///
    /// # Errors
    /// Not an NVMe block device, or nvme-cli failed or timed out.
    pub fn sanitize(&mut self) -> anyhow::Result<()> {
        match self {
            Target::Sim(_) => self.discard_all().map(|_| ()),
            Target::Real(r) => {
                anyhow::ensure!(
                    r.dev.kind() == TargetKind::BlockDevice,
                    "sanitize needs an NVMe block device"
                );
                sanitize_nvme(r.dev.path())
            }
        }
    }

    /// Runs jobs concurrently (see [`super::runner`]).
    ///
    /// # Errors
    /// A job without addresses, no limited job, or an I/O error.
    pub fn run(&mut self, jobs: &[JobSpec], stop: &AtomicBool) -> anyhow::Result<Vec<JobResult>> {
        self.run_ticked(jobs, stop, None)
    }

    /// [`Target::run`], reporting progress inside the run to `tick`.
    ///
    /// # Errors
    /// As [`Target::run`].
    pub fn run_ticked(
        &mut self,
        jobs: &[JobSpec],
        stop: &AtomicBool,
        tick: Option<Tick<'_>>,
    ) -> anyhow::Result<Vec<JobResult>> {
        let ctl = Ctl::new(jobs, stop, tick)?;
        let streams = match self {
            Target::Real(r) => run_threads(&r.dev, jobs, &ctl)?,
            Target::Sim(s) => run_virtual(s, jobs, &ctl)?,
        };
        Ok(results(jobs, &streams, stop.load(Relaxed)))
    }

    /// Host and media bytes written, if the device exposes them.
    pub fn counters(&mut self) -> Option<MediaCounters> {
        match self {
            Target::Real(r) if r.nvme => nvme_counters_ioctl(r.dev.file().as_raw_fd())
                .or_else(|| nvme_counters(r.dev.path())),
            Target::Real(_) => None,
            Target::Sim(s) => {
                let c = s.dev.ftl_counters();
                Some(MediaCounters {
                    host_bytes: c.host_pages * PAGE_SIZE,
                    media_bytes: c.media_pages * PAGE_SIZE,
                })
            }
        }
    }

    /// At the end of a run: a real target gets the nowa scratch label in its first block, so
    /// the next `nowa ssdiq` run recognizes it and needs no `--force`.
    ///
    /// # Errors
    /// Writing or flushing the label failed.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        if let Target::Real(r) = self {
            let label = ScratchLabel {
                owner: "nowa ssdiq".into(),
                capacity: r.dev.geometry().capacity,
            };
            r.dev.write_at(0, &label.encode())?;
            r.dev.flush()?;
        }
        Ok(())
    }
}

fn is_nvme(path: &Path) -> bool {
    let name = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    name.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("nvme"))
}

/// Where this NVMe device's counters come from, or a note that it has none.
fn nvme_source(dev: &FileDevice, notes: &mut Vec<String>) -> Option<String> {
    if nvme_counters_ioctl(dev.file().as_raw_fd()).is_some() {
        return Some("OCP extended SMART log (0xC0) + SMART log, NVMe admin ioctl".to_string());
    }
    if nvme_counters(dev.path()).is_some() {
        return Some("OCP extended SMART log + SMART log (nvme-cli)".to_string());
    }
    notes.push("no OCP counters readable (nvme-cli missing or no OCP log): WAF is implied from bandwidth only".into());
    None
}

/// `nvme sanitize --sanact=2` and wait (polling the sanitize log) until it is done.
fn sanitize_nvme(path: &Path) -> anyhow::Result<()> {
    let p = path.to_str().unwrap_or_default();
    let st = std::process::Command::new("nvme")
        .args(["sanitize", p, "--sanact=2"])
        .status()?;
    anyhow::ensure!(st.success(), "nvme sanitize failed ({st})");
    for _ in 0..7200 {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let out = std::process::Command::new("nvme")
            .args(["sanitize-log", p, "-o", "json"])
            .output()?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let progress = json_find(&v, "sprog").and_then(json_u128).unwrap_or(65535);
        if progress >= 65535 {
            return Ok(());
        }
    }
    anyhow::bail!("sanitize did not finish within 2 hours")
}

/// One thread and one queue per stream on a real target.
fn run_threads<'a>(
    dev: &FileDevice,
    jobs: &'a [JobSpec],
    ctl: &Ctl,
) -> anyhow::Result<Vec<Stream<'a>>> {
    let epoch = Instant::now();
    std::thread::scope(|sc| {
        let mut handles = Vec::new();
        for (j, spec) in jobs.iter().enumerate() {
            for tid in 0..spec.threads.max(1) {
                handles.push(sc.spawn(move || -> anyhow::Result<Stream<'a>> {
                    let r = (|| {
                        let mut q = dev.queue(spec.qd.max(1) as usize, spec.bs as usize, epoch)?;
                        let mut s = [Stream::new(j, spec, tid, 0..q.slots())];
                        drive(q.as_mut(), &mut s, ctl)?;
                        let [s] = s;
                        Ok(s)
                    })();
                    if r.is_err() {
                        ctl.abort.store(true, Relaxed);
                    }
                    r
                }));
            }
        }
        let mut streams = Vec::new();
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(s)) => streams.push(s),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(anyhow::anyhow!("an I/O thread panicked"));
                }
            }
        }
        first_err.map_or(Ok(streams), Err)
    })
}

/// Every stream on one virtual-time queue of the simulated SSD.
fn run_virtual<'a>(
    s: &mut SimTarget,
    jobs: &'a [JobSpec],
    ctl: &Ctl,
) -> anyhow::Result<Vec<Stream<'a>>> {
    let mut streams = Vec::new();
    let mut next = 0usize;
    for (j, spec) in jobs.iter().enumerate() {
        for tid in 0..spec.threads.max(1) {
            let qd = spec.qd.max(1) as usize;
            streams.push(Stream::new(j, spec, tid, next..next + qd));
            next += qd;
        }
    }
    let bs = jobs.iter().map(|j| j.bs as usize).max().unwrap_or(4096);
    let mut q = s.dev.timed_queue(&mut s.timing, next.max(1), bs);
    drive(&mut q, &mut streams, ctl)?;
    Ok(streams)
}
