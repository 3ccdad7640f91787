//! Infer an SSD's GC unit from outside (how-to-write-to-ssds.md 5.3).
//!
//! With one write front that trims a zone and rewrites it sequentially (the ZNS-like pattern of
//! ssd-iq.md 4.5), SSD WAF falls to 1 once the zone is at least as large as the SSD's internal
//! GC unit: every GC unit then holds one zone's pages only and dies whole. So: for zone sizes
//! growing by powers of two, reset the device, fill it sequentially, run the pattern, and
//! report the first zone size whose WAF is ~1. That is an upper bound of the GC unit, and the
//! zone size the engine should use when the device does not say (FDP gives the RU size).

use nowa_device::{BlockDevice, DeviceError, BLOCK_SIZE};
use serde::Serialize;

/// One step of the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Zone size of this step.
    pub zone_bytes: u64,
    /// SSD WAF of the pattern with this zone size (None: nothing written).
    pub waf: Option<f64>,
    /// Bytes the device received in the pattern.
    pub host_bytes: u64,
    /// Bytes it wrote to flash.
    pub media_bytes: u64,
}

/// The outcome of the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Inference {
    /// Seed of the pattern.
    pub seed: u64,
    /// Every zone size tried, in order.
    pub steps: Vec<Step>,
    /// The first zone size with WAF <= threshold, if any.
    pub gc_unit_bytes: Option<u64>,
    /// WAF at or below which a zone size counts as aligned.
    pub threshold: f64,
    /// Ctrl-C ended the sweep early.
    pub interrupted: bool,
}

/// Why the sweep could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InferError {
    /// Device I/O failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The device cannot tell its media writes.
    #[error("the device reports no media (physical) write counter, so its WAF cannot be measured; OCP counters or a simulated device are needed")]
    NoMediaCounter,
    /// The zone-size range is not powers of two >= 4 KiB with min <= max.
    #[error("zone sizes must be powers of two >= 4 KiB with min <= max (got {min} .. {max})")]
    ZoneRange {
        /// Smallest zone size asked.
        min: u64,
        /// Largest zone size asked.
        max: u64,
    },
}

/// Parameters of the sweep.
#[derive(Debug, Clone)]
pub struct InferSpec {
    /// Smallest zone size tried (bytes, a power of two >= 4 KiB).
    pub min_zone: u64,
    /// Largest zone size tried; must leave at least 8 zones on the device.
    pub max_zone: u64,
    /// Pattern volume per step, in multiples of the device capacity.
    pub volume: f64,
    /// Size of one write request.
    pub write_bytes: u64,
    /// WAF at or below which a zone size counts as aligned.
    pub threshold: f64,
    /// Seed of the zone order.
    pub seed: u64,
}

impl Default for InferSpec {
    fn default() -> Self {
        InferSpec {
            min_zone: 64 << 10,
            max_zone: 1 << 30,
            volume: 2.0,
            write_bytes: 128 << 10,
            threshold: 1.01,
            seed: 42,
        }
    }
}

fn rng_next(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Measure the single-front ZNS-like pattern's WAF with zones of `zone` bytes on `dev`, which
/// must be freshly reset. Fills the device sequentially first (ssd-iq.md 3.1).
///
/// # Errors
/// Device I/O, or a device without a media write counter.
///
/// # Panics
/// If `zone` is 0 or larger than the device.
pub fn measure(dev: &dyn BlockDevice, zone: u64, spec: &InferSpec) -> Result<Step, InferError> {
    // Everything the measurement needs is checked before anything is written.
    dev.counters()
        .media_bytes_written
        .ok_or(InferError::NoMediaCounter)?;
    let cap = dev.geometry().capacity;
    assert!(
        zone > 0 && zone <= cap,
        "zone of {zone} bytes on {cap} bytes"
    );
    let zones = cap / zone;
    let wb = spec.write_bytes.min(zone).max(BLOCK_SIZE as u64);
    let wb_len = usize::try_from(wb).expect("a write of at most one zone fits in memory");
    let buf = vec![0xA5u8; wb_len];
    let mut off = 0;
    while off + wb <= zones * zone {
        dev.write_at(off, &buf)?;
        off += wb;
    }
    let c0 = dev.counters();
    let m0 = c0.media_bytes_written.ok_or(InferError::NoMediaCounter)?;
    let target = crate::round_u64(spec.volume * cap as f64);
    let mut written = 0u64;
    let mut rng = spec.seed ^ zone;
    while written < target {
        let z = rng_next(&mut rng) % zones;
        dev.trim(z * zone, zone)?;
        let mut o = 0;
        while o < zone {
            let n = wb.min(zone - o);
            let len = usize::try_from(n).expect("n <= wb, which fits a usize");
            dev.write_at(z * zone + o, &buf[..len])?;
            o += n;
        }
        written += zone;
    }
    let c1 = dev.counters();
    let host = c1.host_bytes_written - c0.host_bytes_written;
    let media = c1.media_bytes_written.ok_or(InferError::NoMediaCounter)? - m0;
    assert!(media >= host, "media bytes {media} below host bytes {host}");
    Ok(Step {
        zone_bytes: zone,
        waf: nowa_units::waf(media, host),
        host_bytes: host,
        media_bytes: media,
    })
}

/// Run the sweep. `fresh` returns a reset device for each step (a new simulated SSD, or the
/// real device after a whole-range discard). Ctrl-C ([`crate::interrupt`]) ends it after the
/// step running.
///
/// # Errors
/// A bad zone-size range, device I/O, a device without a media write counter.
pub fn infer(
    fresh: &mut dyn FnMut() -> Result<Box<dyn BlockDevice>, InferError>,
    spec: &InferSpec,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Inference, InferError> {
    if !spec.min_zone.is_power_of_two()
        || spec.min_zone < BLOCK_SIZE as u64
        || spec.max_zone < spec.min_zone
    {
        return Err(InferError::ZoneRange {
            min: spec.min_zone,
            max: spec.max_zone,
        });
    }
    let mut steps = Vec::new();
    let mut zone = spec.min_zone;
    let mut gc_unit_bytes = None;
    while zone <= spec.max_zone && !crate::interrupt::requested() {
        let dev = fresh()?;
        if dev.geometry().capacity / zone < 8 {
            break;
        }
        let s = measure(dev.as_ref(), zone, spec)?;
        on_step(&s);
        let done = s.waf.is_some_and(|w| w <= spec.threshold);
        steps.push(s);
        if done {
            gc_unit_bytes = Some(zone);
            break;
        }
        let Some(next) = zone.checked_mul(2) else {
            break;
        };
        zone = next;
    }
    Ok(Inference {
        seed: spec.seed,
        gc_unit_bytes,
        steps,
        threshold: spec.threshold,
        interrupted: crate::interrupt::requested() && gc_unit_bytes.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nowa_device::{SimConfig, SimDevice, SimMode};
    use nowa_flash::FtlConfig;

    fn sim(unit_pages: u32) -> Result<Box<dyn BlockDevice>, InferError> {
        let ftl = FtlConfig {
            logical_pages: 16384,
            op: 0.1,
            pages_per_block: unit_pages / 4,
            blocks_per_superblock: 4,
            ..FtlConfig::default()
        };
        Ok(Box::new(SimDevice::new(SimConfig::new(
            SimMode::Conventional,
            ftl,
        ))?))
    }

    #[test]
    fn finds_the_configured_superblock() {
        for unit_pages in [64u32, 256] {
            let spec = InferSpec {
                min_zone: 16 << 10,
                max_zone: 8 << 20,
                volume: 2.0,
                write_bytes: 64 << 10,
                ..Default::default()
            };
            let r = infer(&mut || sim(unit_pages), &spec, &mut |_| {}).unwrap();
            assert_eq!(
                r.gc_unit_bytes,
                Some(u64::from(unit_pages) * 4096),
                "steps: {:?}",
                r.steps
            );
            // Smaller zones really did cost GC copies.
            assert!(r.steps[0].waf > Some(1.05), "{:?}", r.steps);
        }
    }

    #[test]
    fn a_device_without_media_counters_is_refused() {
        let spec = InferSpec {
            min_zone: 16 << 10,
            max_zone: 64 << 10,
            ..Default::default()
        };
        let e = infer(
            &mut || Ok(Box::new(nowa_device::MemDevice::new(8 << 20))),
            &spec,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(e, InferError::NoMediaCounter));
    }
}
