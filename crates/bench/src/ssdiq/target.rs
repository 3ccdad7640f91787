//! Benchmark targets: a block device, a regular file or a simulated SSD; the safety checks
//! that run before anything is written; the reset step; device counters (OCP / SMART).

use super::engine::{self, Engine};
use super::job::{JobResult, JobSpec};
use super::simssd::{PerfModel, SimSsd};
use nowa_device::{safety_check, BlockDevice, FileDevice, FileOptions, IoEngine, TargetKind};
use nowa_flash::{FtlConfig, PolicyKind, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A simulated SSD's configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimSpec {
    /// Logical capacity in bytes.
    pub capacity: u64,
    /// Over-provisioning, spare/logical.
    pub op: f64,
    pub policy: String,
    /// GC unit in pages (0 = automatic: 1 MiB, smaller if the device is tiny).
    pub unit_pages: u32,
    pub model: PerfModel,
}

impl SimSpec {
    /// The FTL configuration: GC units of `unit_pages` (default 256 pages = 1 MiB, i.e. many
    /// units per device so the greedy WAF is close to its large-device limit).
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
    pub path: String,
    pub capacity: u64,
    /// I/O engine actually used.
    pub engine: String,
    pub direct: bool,
    /// Where measured WAF comes from: "OCP log (nvme-cli)", "FTL model", or None.
    pub counters: Option<String>,
    pub sim: Option<SimSpec>,
    /// Caveats printed with every result (file not an SSD, O_DIRECT fallback, ...).
    pub notes: Vec<String>,
}

/// Device write counters: host bytes and media (physical) bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct MediaCounters {
    pub host_bytes: u64,
    pub media_bytes: u64,
}

impl MediaCounters {
    /// WAF between two snapshots.
    pub fn waf_since(&self, before: &MediaCounters) -> Option<f64> {
        let h = self.host_bytes.checked_sub(before.host_bytes)?;
        let m = self.media_bytes.checked_sub(before.media_bytes)?;
        (h > 0).then(|| m as f64 / h as f64)
    }
}

/// A real target: the device crate's FileDevice (O_EXCL open, geometry, discard) plus our
/// own descriptor for the benchmark engine.
pub struct RealTarget {
    dev: FileDevice,
    file: std::fs::File,
    engine: Engine,
    nvme: bool,
}

/// An open target.
pub enum Target {
    Real(Box<RealTarget>),
    Sim(Box<SimSsd>),
}

/// Safety verdict for a path.
#[derive(Debug, Clone, PartialEq)]
pub struct Safety {
    pub kind: TargetKind,
    pub canonical: PathBuf,
    /// Problems found (mounted, partitions, signatures, swap, loop backing, system disk).
    pub issues: Vec<String>,
}

/// The whole disk (sysfs directory) a device number belongs to.
fn whole_disk_of(dev: u64) -> Option<PathBuf> {
    let p = std::fs::canonicalize(nowa_device::sysfs_dir(dev)).ok()?;
    Some(if p.join("partition").exists() {
        p.parent()?.to_path_buf()
    } else {
        p
    })
}

/// Disks that hold the root file system or /boot (followed through device-mapper slaves).
fn system_disks() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for mp in ["/", "/boot", "/boot/efi"] {
        if let Ok(m) = std::fs::metadata(mp) {
            if let Some(d) = whole_disk_of(m.dev()) {
                // A dm/md device: its slaves are the real disks.
                let slaves: Vec<PathBuf> = std::fs::read_dir(d.join("slaves"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                    .map(|p| {
                        if p.join("partition").exists() {
                            p.parent().map(Path::to_path_buf).unwrap_or(p)
                        } else {
                            p
                        }
                    })
                    .collect();
                out.push(d);
                out.extend(slaves);
            }
        }
    }
    out
}

/// Inspects `path` (which must exist) for anything that makes overwriting it dangerous.
pub fn check_safety(path: &Path) -> anyhow::Result<Safety> {
    const SYSTEM: &str = "is (on) the system disk holding / or /boot";
    // The system-disk check needs no access to the device itself: do it first, so that it is
    // reported even when the device cannot be opened for inspection.
    let meta = std::fs::metadata(path)?;
    let system = meta.file_type().is_block_device()
        && whole_disk_of(meta.rdev()).is_some_and(|d| system_disks().contains(&d));
    let rep = match safety_check(path) {
        Ok(r) => r,
        Err(e) if system => anyhow::bail!("{e}; it {SYSTEM}"),
        Err(e) => return Err(e.into()),
    };
    let mut issues = rep.reasons();
    if system {
        issues.push(SYSTEM.into());
    }
    Ok(Safety {
        kind: rep.kind,
        canonical: rep.path,
        issues,
    })
}

/// Decides whether writing to `path` is allowed. Rules:
/// - a block device always needs `--force` naming the same device (the whole device is
///   overwritten), and any issue found is listed;
/// - a regular file with an issue (a file-system signature, backing a loop device, swap)
///   needs `--force` naming it;
/// - a clean regular file is fine.
///
/// Returns the list of issues that were overridden, or an error message (one line).
pub fn authorize(path: &Path, force: Option<&Path>) -> Result<Safety, String> {
    let s = check_safety(path).map_err(|e| format!("cannot inspect {}: {e:#}", path.display()))?;
    let forced = match force {
        Some(f) => match std::fs::canonicalize(f) {
            Ok(c) if c == s.canonical => true,
            Ok(c) => {
                return Err(format!(
                    "--force names {} but the target is {}",
                    c.display(),
                    s.canonical.display()
                ))
            }
            Err(e) => return Err(format!("--force {}: {e}", f.display())),
        },
        None => false,
    };
    let what = if s.issues.is_empty() {
        String::new()
    } else {
        format!(": {}", s.issues.join("; "))
    };
    if s.kind == TargetKind::BlockDevice && !forced {
        return Err(format!(
            "refusing to write to block device {}{what}; all data on it would be destroyed. Repeat the device with --force {} to proceed",
            s.canonical.display(),
            s.canonical.display()
        ));
    }
    if !s.issues.is_empty() && !forced {
        return Err(format!(
            "refusing to write to {}{what}. Repeat the path with --force {} to overwrite it anyway",
            s.canonical.display(),
            s.canonical.display()
        ));
    }
    Ok(s)
}

/// Parses a JSON number or an nvme-cli 128-bit {"hi":..,"lo":..} object.
fn json_u128(v: &serde_json::Value) -> Option<u128> {
    if let Some(n) = v.as_u64() {
        return Some(n as u128);
    }
    if let Some(f) = v.as_f64() {
        return Some(f as u128);
    }
    if let Some(s) = v.as_str() {
        return s.replace(',', "").trim().parse().ok();
    }
    let o = v.as_object()?;
    let hi = o.get("hi").and_then(|x| x.as_u64()).unwrap_or(0) as u128;
    let lo = o.get("lo").and_then(|x| x.as_u64())? as u128;
    Some((hi << 64) | lo)
}

/// Finds a key by case-insensitive, space/underscore-insensitive name.
fn json_find<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', ' '], "");
    let want = norm(key);
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .find(|(k, _)| norm(k) == want)
            .map(|(_, v)| v)
            .or_else(|| m.values().find_map(|x| json_find(x, key))),
        _ => None,
    }
}

/// Host bytes written from `nvme smart-log -o json` ("data_units_written", units of 512,000
/// bytes) and media bytes from `nvme ocp smart-add-log -o json` ("Physical media units
/// written", bytes).
pub fn parse_nvme_counters(smart_json: &str, ocp_json: &str) -> Option<MediaCounters> {
    let smart: serde_json::Value = serde_json::from_str(smart_json).ok()?;
    let ocp: serde_json::Value = serde_json::from_str(ocp_json).ok()?;
    let host_units = json_u128(json_find(&smart, "data_units_written")?)?;
    let media = json_u128(json_find(&ocp, "Physical media units written")?)?;
    Some(MediaCounters {
        host_bytes: (host_units * 512_000) as u64,
        media_bytes: media as u64,
    })
}

/// `struct nvme_passthru_cmd` of <linux/nvme_ioctl.h> (72 bytes).
#[repr(C)]
#[derive(Default)]
struct NvmeAdminCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`.
const NVME_IOCTL_ADMIN_CMD: u64 =
    (3 << 30) | ((std::mem::size_of::<NvmeAdminCmd>() as u64) << 16) | ((b'N' as u64) << 8) | 0x41;

/// NVMe Get Log Page (admin opcode 0x02) of 512 bytes for log `lid`, through the admin ioctl.
fn nvme_get_log(fd: i32, lid: u8) -> Option<[u8; 512]> {
    let mut buf = [0u8; 512];
    let numd = (buf.len() / 4 - 1) as u32;
    let mut cmd = NvmeAdminCmd {
        opcode: 0x02,
        nsid: 0xffff_ffff,
        addr: buf.as_mut_ptr() as u64,
        data_len: buf.len() as u32,
        cdw10: ((numd & 0xffff) << 16) | lid as u32,
        cdw11: numd >> 16,
        timeout_ms: 5000,
        ..NvmeAdminCmd::default()
    };
    // SAFETY: `cmd` is a properly laid out nvme_passthru_cmd whose `addr`/`data_len` describe
    // `buf`, which lives across the call; the kernel writes at most `data_len` bytes there.
    let r = unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD as _, &mut cmd as *mut NvmeAdminCmd) };
    (r == 0).then_some(buf)
}

/// Counters from raw log pages: SMART / Health (log 0x02) "Data Units Written" at byte 48
/// (16 bytes LE, units of 512,000 bytes) and the OCP extended SMART log (log 0xC0) "Physical
/// media units written" at byte 0 (16 bytes LE, bytes). The OCP page ends with a GUID
/// (bytes 496..512); an all-zero page means the log is not implemented.
pub fn parse_nvme_log_pages(smart: &[u8; 512], ocp: &[u8; 512]) -> Option<MediaCounters> {
    if ocp.iter().all(|&b| b == 0) {
        return None;
    }
    let le128 = |b: &[u8]| u128::from_le_bytes(b[..16].try_into().expect("16 bytes"));
    let host_units = le128(&smart[48..64]);
    let media = le128(&ocp[0..16]);
    Some(MediaCounters {
        host_bytes: (host_units * 512_000) as u64,
        media_bytes: media as u64,
    })
}

fn nvme_counters_ioctl(fd: i32) -> Option<MediaCounters> {
    let smart = nvme_get_log(fd, 0x02)?;
    let ocp = nvme_get_log(fd, 0xC0)?;
    parse_nvme_log_pages(&smart, &ocp)
}

fn nvme_counters(path: &Path) -> Option<MediaCounters> {
    let run = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("nvme")
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let p = path.to_str()?;
    let smart = run(&["smart-log", p, "-o", "json"])?;
    let ocp = run(&["ocp", "smart-add-log", p, "-o", "json"])?;
    parse_nvme_counters(&smart, &ocp)
}

/// How to open a real target.
#[derive(Debug, Clone)]
pub struct OpenOpts {
    pub engine: Engine,
    pub direct: bool,
    pub max_qd: u32,
    /// Create a regular file of this size if the path does not exist.
    pub create_size: Option<u64>,
}

impl Target {
    /// Opens a real target. Call [`authorize`] first.
    pub fn open_real(path: &Path, o: &OpenOpts) -> anyhow::Result<(Target, TargetInfo)> {
        let fo = FileOptions {
            engine: IoEngine::Sync,
            queue_depth: o.max_qd.max(1),
            direct: o.direct,
            exclusive: true,
        };
        let dev = if path.exists() {
            FileDevice::open(path, &fo)?
        } else {
            let size = o.create_size.ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not exist (give --size to create a file)",
                    path.display()
                )
            })?;
            FileDevice::create(path, size, &fo)?
        };
        let kind = dev.kind();
        let direct = dev.is_direct();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(if direct { libc::O_DIRECT } else { 0 })
            .open(path)?;
        let mut notes = Vec::new();
        let mut engine = o.engine;
        if engine == Engine::Uring {
            if let Err(e) = engine::uring_available() {
                notes.push(format!("io_uring unavailable ({e}); using pread/pwrite"));
                engine = Engine::Psync;
            }
        }
        if let Some(r) = dev.direct_fallback_reason() {
            notes.push(format!(
                "not O_DIRECT: {r}; the page cache distorts every number"
            ));
        }
        let meta = std::fs::metadata(path)?;
        let is_block = meta.file_type().is_block_device();
        if kind == TargetKind::RegularFile {
            notes.push(
                "TARGET IS A FILE ON A FILE SYSTEM, NOT AN SSD: the file system, the page cache policy and the disk below \
                 decide these numbers; use them to try the tool, not to judge a drive"
                    .into(),
            );
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let nvme = is_block && name.starts_with("nvme");
        let mut counters = None;
        if nvme {
            if nvme_counters_ioctl(file.as_raw_fd()).is_some() {
                counters =
                    Some("OCP extended SMART log (0xC0) + SMART log, NVMe admin ioctl".to_string());
            } else if nvme_counters(path).is_some() {
                counters = Some("OCP extended SMART log + SMART log (nvme-cli)".to_string());
            } else {
                notes.push("no OCP counters readable (nvme-cli missing or no OCP log): WAF is implied from bandwidth only".into());
            }
        }
        let info = TargetInfo {
            kind: if is_block {
                "block device"
            } else {
                "regular file"
            }
            .into(),
            path: path.display().to_string(),
            capacity: dev.geometry().capacity,
            engine: engine.to_string(),
            direct,
            counters,
            sim: None,
            notes,
        };
        let nvme = info.counters.is_some();
        Ok((
            Target::Real(Box::new(RealTarget {
                dev,
                file,
                engine,
                nvme,
            })),
            info,
        ))
    }

    /// Creates a simulated SSD.
    pub fn open_sim(spec: &SimSpec) -> anyhow::Result<(Target, TargetInfo)> {
        let cfg = spec.ftl_config()?;
        let sim = SimSsd::new(cfg, spec.model)?;
        let l = sim.ftl().layout().clone();
        let info = TargetInfo {
            kind: "simulated SSD".into(),
            path: format!("sim:{}", super::fmt_bytes(spec.capacity)),
            capacity: sim.capacity(),
            engine: "virtual time (performance model)".into(),
            direct: true,
            counters: Some("FTL model (like an OCP log page)".into()),
            sim: Some(spec.clone()),
            notes: vec![format!(
                "simulated SSD: {} GC, OP {:.1}% spare/logical ({:.1}% spare/physical, alpha {:.4}), GC unit {} KiB; \
                 timing is a model: media writes {} MB/s, reads {} MB/s, +{} us read / +{} us write controller latency",
                spec.policy,
                l.op_spare_over_logical * 100.0,
                l.op_spare_over_physical * 100.0,
                l.alpha,
                l.unit_pages as u64 * PAGE_SIZE / 1024,
                spec.model.media_write_mb_s,
                spec.model.read_mb_s,
                spec.model.read_base_us,
                spec.model.write_base_us
            )],
        };
        Ok((Target::Sim(Box::new(sim)), info))
    }

    pub fn capacity(&self) -> u64 {
        match self {
            Target::Real(r) => r.dev.geometry().capacity,
            Target::Sim(s) => s.capacity(),
        }
    }

    /// The simulated SSD, if this is one.
    pub fn sim(&self) -> Option<&SimSsd> {
        match self {
            Target::Sim(s) => Some(s),
            Target::Real(_) => None,
        }
    }

    /// TRIM / discard of the whole range. Returns a note if the device ignored it.
    pub fn discard_all(&mut self) -> anyhow::Result<Option<String>> {
        match self {
            Target::Real(r) => {
                let cap = r.dev.geometry().capacity;
                r.dev.trim(0, cap)?;
                Ok((!r.dev.trim_supported())
                    .then(|| "discard not supported by the target: reset was a no-op".to_string()))
            }
            Target::Sim(s) => {
                s.trim_all()?;
                Ok(None)
            }
        }
    }

    /// NVMe sanitize (block erase), only on explicit request. Waits until it completes.
    pub fn sanitize(&mut self, path: &Path) -> anyhow::Result<()> {
        match self {
            Target::Sim(s) => s.trim_all(),
            Target::Real(r) => {
                anyhow::ensure!(
                    r.dev.kind() == TargetKind::BlockDevice,
                    "sanitize needs an NVMe block device"
                );
                let p = path.to_str().unwrap_or_default();
                let st = std::process::Command::new("nvme")
                    .args(["sanitize", p, "--sanact=2"])
                    .status()?;
                anyhow::ensure!(st.success(), "nvme sanitize failed ({st})");
                // Poll the sanitize log until the operation is no longer in progress.
                for _ in 0..7200 {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    let out = std::process::Command::new("nvme")
                        .args(["sanitize-log", p, "-o", "json"])
                        .output()?;
                    let v: serde_json::Value =
                        serde_json::from_slice(&out.stdout).unwrap_or_default();
                    let progress = json_find(&v, "sprog").and_then(json_u128).unwrap_or(65535);
                    if progress >= 65535 {
                        return Ok(());
                    }
                }
                anyhow::bail!("sanitize did not finish within 2 hours")
            }
        }
    }

    /// Runs jobs concurrently (see [`engine::run_jobs`]).
    pub fn run(&mut self, jobs: &[JobSpec], stop: &AtomicBool) -> anyhow::Result<Vec<JobResult>> {
        match self {
            Target::Real(r) => engine::run_jobs(&r.file, r.engine, jobs, stop),
            Target::Sim(s) => s.run_jobs(jobs, stop),
        }
    }

    /// Host and media bytes written, if the device exposes them.
    pub fn counters(&mut self) -> Option<MediaCounters> {
        match self {
            Target::Real(r) if r.nvme => {
                nvme_counters_ioctl(r.file.as_raw_fd()).or_else(|| nvme_counters(r.dev.path()))
            }
            Target::Real(_) => None,
            Target::Sim(s) => {
                let c = s.counters();
                Some(MediaCounters {
                    host_bytes: c.host_pages * PAGE_SIZE,
                    media_bytes: c.media_pages * PAGE_SIZE,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvme_json_parsing() {
        let smart = r#"{"critical_warning":0,"data_units_written":2000,"data_units_read":5}"#;
        let ocp = r#"{"Physical media units written":{"hi":0,"lo":3072000000},"Physical media units read":{"hi":0,"lo":1}}"#;
        let c = parse_nvme_counters(smart, ocp).unwrap();
        assert_eq!(c.host_bytes, 1_024_000_000);
        assert_eq!(c.media_bytes, 3_072_000_000);
        let later = MediaCounters {
            host_bytes: c.host_bytes + 1000,
            media_bytes: c.media_bytes + 3500,
        };
        assert!((later.waf_since(&c).unwrap() - 3.5).abs() < 1e-12);
        assert!(parse_nvme_counters(smart, "{}").is_none());
        // Plain numbers and nested objects work too.
        let ocp2 = r#"{"log":{"physical_media_units_written":123}}"#;
        assert_eq!(parse_nvme_counters(smart, ocp2).unwrap().media_bytes, 123);
    }

    #[test]
    fn nvme_raw_log_pages() {
        assert_eq!(std::mem::size_of::<NvmeAdminCmd>(), 72);
        assert_eq!(NVME_IOCTL_ADMIN_CMD, 0xC048_4E41);
        let mut smart = [0u8; 512];
        smart[48..64].copy_from_slice(&2000u128.to_le_bytes());
        let mut ocp = [0u8; 512];
        assert!(
            parse_nvme_log_pages(&smart, &ocp).is_none(),
            "all-zero OCP page = not supported"
        );
        ocp[0..16].copy_from_slice(&3_072_000_000u128.to_le_bytes());
        let c = parse_nvme_log_pages(&smart, &ocp).unwrap();
        assert_eq!(
            (c.host_bytes, c.media_bytes),
            (1_024_000_000, 3_072_000_000)
        );
    }
}
