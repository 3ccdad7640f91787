//! The devices the engine experiments (`ycsb`, `tpcc`) run on: a fresh simulated SSD or memory
//! device of a spec's capacity, the zone (DB GC unit) size resolved on a device, and a device
//! whose requests are recorded as a trace. One implementation of each for the CLI, `nowa run`
//! and Python.

use crate::Error;
use nowa_device::{BlockDevice, MemDevice, SimConfig, SimDevice, SimMode};
use std::path::Path;
use std::sync::Arc;

/// A device and, when it is a simulated SSD, that SSD.
pub type Opened = (Arc<dyn BlockDevice>, Option<Arc<SimDevice>>);

/// The smallest device a database is made on (the specs' lower bound on `capacity`).
pub const MIN_DATABASE_BYTES: u64 = 1 << 20;

/// An existing file or block device is opened at its own size: refuse one too small for a
/// database, naming `--device`, before the run's plan (else a spec error about `capacity`
/// came after it).
///
/// # Errors
/// [`Error::Usage`] naming `--device` and the size found.
pub fn check_opened_size(device: &str, dev: &dyn BlockDevice) -> Result<(), Error> {
    let opened = dev.geometry().capacity;
    if opened < MIN_DATABASE_BYTES {
        return Err(Error::Usage(format!(
            "--device {device}: {opened} bytes, below the 1 MiB a database needs (give a larger file or a new path)"
        )));
    }
    Ok(())
}

/// A fresh in-memory device of `capacity` bytes: `sim` (a simulated SSD with `op` and `mode`)
/// or `mem`; None for any other name (a file or block device, which the caller opens).
///
/// # Errors
/// [`Error::Usage`] naming `--capacity / --op / --sim-mode` when the SSD cannot be built.
///
/// # Panics
/// If `capacity` is not whole 4 KiB blocks (the flags' parsers refuse that).
pub fn in_memory(
    device: &str,
    capacity: u64,
    op: f64,
    mode: SimMode,
) -> Result<Option<Opened>, Error> {
    assert!(capacity % 4096 == 0, "a device of whole 4 KiB blocks");
    Ok(match device {
        "sim" => {
            let cfg = SimConfig::for_capacity(capacity, op, mode)
                .map_err(|e| Error::Usage(format!("--capacity / --op / --sim-mode: {e}")))?;
            let d = Arc::new(
                SimDevice::new(cfg).map_err(|e| Error::Usage(format!("--sim-mode: {e}")))?,
            );
            Some((d.clone(), Some(d)))
        }
        "mem" => Some((Arc::new(MemDevice::new(capacity)), None)),
        _ => None,
    })
}

/// `--zone-size`: a size, or taken from the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneSize {
    /// This many bytes.
    Bytes(u64),
    /// The device's unit (see [`resolve_zone_size`]).
    Auto,
    /// The GC unit inferred by the ZNS-like sweep on identical simulated devices.
    Infer,
}

/// `--zone-size`: a size (a multiple of 4 KiB, 32 KiB to 4 GiB), `auto` or `infer`.
///
/// # Errors
/// Any other text.
pub fn zone_size(s: &str) -> Result<ZoneSize, String> {
    match s {
        "auto" => Ok(ZoneSize::Auto),
        "infer" => Ok(ZoneSize::Infer),
        _ => crate::flags::size_4k(32 << 10, (4 << 30) - 4096)(s).map(ZoneSize::Bytes),
    }
}

/// `--zone-size auto` where the device tells no unit (files, block devices, memory).
const AUTO_ZONE_FALLBACK: u64 = 1 << 20;

/// `--zone-size auto` on a conventional SSD whose GC unit is `unit` bytes: the unit split
/// over the `open` zones of an active group, rounded up to 4 KiB, so the group (NoWA's GC
/// unit) covers at least one SSD unit (issue 31: 1 MiB x 4 zones on an 8 MiB superblock left
/// SSD WAF at 1.44-1.75).
pub(crate) fn zone_for_unit(unit: u64, open: u32) -> u64 {
    let z = unit.div_ceil(u64::from(open.max(1))).div_ceil(4096) * 4096;
    let z = z.max(32 << 10);
    assert!(
        z * u64::from(open.max(1)) >= unit,
        "a group covers the unit"
    );
    z
}

/// The zone size `zone` asks for on `dev` (`sim`: its configuration, when it is a simulated
/// SSD), with `open_zones` zones in an active group: a size as given; `auto` the device's
/// FDP RU / ZNS zone size, on a conventional simulated SSD its GC unit split over the open
/// zones, else 1 MiB; `infer` the GC unit of the sweep (`nowa infer-gc-unit`).
///
/// # Errors
/// [`Error::Usage`]: `infer` off the simulated SSD; [`Error::Failed`]: the inference failed
/// or found no unit.
pub fn resolve_zone_size(
    zone: ZoneSize,
    open_zones: u32,
    dev: &dyn BlockDevice,
    sim: Option<&SimConfig>,
) -> Result<u64, Error> {
    let g = dev.geometry();
    match zone {
        ZoneSize::Bytes(b) => Ok(b),
        ZoneSize::Auto => Ok(g.reclaim_unit_size.or(g.zone_size).unwrap_or_else(|| {
            sim.map_or(AUTO_ZONE_FALLBACK, |s| {
                zone_for_unit(s.resolved_ftl().unit_pages() * 4096, open_zones)
            })
        })),
        ZoneSize::Infer => {
            let sim =
                sim.ok_or_else(|| Error::Usage("--zone-size infer needs --device sim".into()))?;
            let spec = nowa_bench::gcunit::InferSpec {
                volume: 1.5,
                max_zone: (g.capacity / 8).next_power_of_two() / 2,
                ..Default::default()
            };
            let mut fresh = || -> Result<Box<dyn BlockDevice>, nowa_bench::gcunit::InferError> {
                Ok(Box::new(SimDevice::new(sim.clone())?))
            };
            let r = nowa_bench::gcunit::infer(&mut fresh, &spec, &mut |_| {})
                .map_err(|e| Error::failed("inferring the GC unit", e))?;
            r.gc_unit_bytes.ok_or_else(|| Error::Failed {
                what: "inferring the GC unit",
                source: format!("no zone size with WAF <= {}", r.threshold).into(),
            })
        }
    }
}

/// `dev` recording every request in the nowa trace CSV `path` (`--record-trace`); `dev`
/// itself without a path. An existing file is refused.
///
/// # Errors
/// [`Error::Usage`] naming `--record-trace`: the file exists or cannot be created.
///
/// # Panics
/// If the recorder changes the device's size (a bug).
pub fn record_trace(
    dev: Arc<dyn BlockDevice>,
    path: Option<&Path>,
) -> Result<Arc<dyn BlockDevice>, Error> {
    let Some(path) = path else { return Ok(dev) };
    if path.exists() {
        return Err(Error::Usage(format!(
            "--record-trace {}: exists (remove it or name another file)",
            path.display()
        )));
    }
    let capacity = dev.geometry().capacity;
    let rec: Arc<dyn BlockDevice> = Arc::new(
        nowa_trace::RecordingDevice::new(dev, path, false)
            .map_err(|e| Error::Usage(format!("--record-trace: {e}")))?,
    );
    assert_eq!(
        rec.geometry().capacity,
        capacity,
        "the recorder is the same device"
    );
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--zone-size auto` on a conventional SSD: the active group covers the GC unit (the
    /// default was 1 MiB zones: a 4 MiB group on an 8 MiB superblock).
    #[test]
    fn auto_zone_group_covers_the_ssd_unit() {
        assert_eq!(zone_for_unit(8 << 20, 4), 2 << 20);
        assert_eq!(zone_for_unit(8 << 20, 1), 8 << 20);
        // Not a divisor: rounded up, never a group smaller than the unit.
        let z = zone_for_unit(8 << 20, 3);
        assert!(z * 3 >= 8 << 20 && z % 4096 == 0);
        // Small units keep the smallest zone size the flag allows.
        assert_eq!(zone_for_unit(64 << 10, 8), 32 << 10);
    }

    #[test]
    fn in_memory_devices_have_the_capacity_and_paths_are_the_callers() {
        let (d, sim) = in_memory("sim", 64 << 20, 0.07, SimMode::Conventional)
            .expect("valid")
            .expect("a simulated SSD");
        assert_eq!(d.geometry().capacity, 64 << 20);
        assert!(sim.is_some());
        let (m, sim) = in_memory("mem", 1 << 20, 0.07, SimMode::Conventional)
            .expect("valid")
            .expect("a memory device");
        assert!(sim.is_none() && m.geometry().capacity == 1 << 20);
        assert!(in_memory("/dev/x", 1 << 20, 0.07, SimMode::Conventional)
            .expect("no error")
            .is_none());
        let auto = resolve_zone_size(ZoneSize::Auto, 4, m.as_ref(), None).expect("auto");
        assert_eq!(auto, AUTO_ZONE_FALLBACK, "memory tells no unit");
        let e = resolve_zone_size(ZoneSize::Infer, 4, m.as_ref(), None).expect_err("not sim");
        assert!(e.is_usage() && e.to_string().contains("--zone-size infer"));
    }
}
