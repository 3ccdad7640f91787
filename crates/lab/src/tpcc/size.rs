//! How big `nowa tpcc`'s device, data region and WAL are (docs/tpcc.md section 10).
//!
//! "The data fills F of the device" for a database that grows: the data is the loaded pages
//! plus, for standard TPC-C run for `--transactions N`, N times the growth per transaction
//! (so the fill is F at the end of the run); with `--steady` (flat size) or `--duration` it
//! is the loaded pages. F is the data's share of the device's page space: the device minus
//! the WAL region and the engine's fixed areas.

use crate::Error;
use nowa_engine::Config;

// The loaded size is `nowa_tpcc::load::loaded_bytes` (also the base of `nowa ckpt`'s buffer
// fractions).
pub use nowa_tpcc::load::loaded_bytes;
/// Bytes of pages standard TPC-C adds per transaction, rounded up from the measured 420 at 2
/// warehouses on both write paths (`db_bytes` over a run of 150 k transactions, `--device mem
/// --pool 2GiB`), so the fill at the end of a run is at most the one asked for.
pub const GROWTH_PER_TXN: u64 = 500;
/// The engine's device space besides pages and WAL (superblocks, doublewrite area, the
/// out-of-place mapping snapshots), rounded up.
const FIXED_BYTES: u64 = 8 << 20;
/// The smallest default WAL limit when the device is too small for a WAL as large as the
/// pool (an explicit `--wal-limit` may be smaller).
const MIN_WAL: u64 = 8 << 20;

/// What sizing needs from the flags.
pub struct Want {
    /// Warehouses loaded.
    pub warehouses: u32,
    /// Standard TPC-C run for this many transactions (None: steady or timed).
    pub growing_txns: Option<u64>,
    /// `--capacity` (None: sized from the fill).
    pub capacity: Option<u64>,
    /// `--dataset-fill`.
    pub fill: f64,
    /// `--wal-limit`.
    pub wal_limit: Option<u64>,
    /// `--separate-wal`.
    pub separate_wal: bool,
}

/// The sizes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    /// Device bytes (whole 4 KiB blocks).
    pub capacity: u64,
    /// The WAL limit the engine gets.
    pub wal_limit: u64,
    /// Estimated pages after the load, in bytes.
    pub loaded: u64,
    /// Estimated pages at the end of the run, in bytes.
    pub end: u64,
    /// The device's page space: capacity minus WAL region and fixed areas.
    pub page_space: u64,
}

impl Want {
    fn loaded(&self) -> u64 {
        loaded_bytes(self.warehouses)
    }

    fn end(&self) -> u64 {
        let growth = self
            .growing_txns
            .map_or(0, |n| n.saturating_mul(GROWTH_PER_TXN));
        self.loaded().saturating_add(growth)
    }
}

/// The WAL region a limit takes on the device (none when the WAL is separate).
fn wal_region(cfg: &Config, limit: u64, separate: bool) -> u64 {
    if separate {
        return 0;
    }
    let c = Config {
        wal_limit_bytes: Some(limit),
        ..cfg.clone()
    };
    nowa_engine::wal_region_bytes(&c)
}

/// The largest WAL limit whose region fits `room` bytes (None: not even [`MIN_WAL`]).
fn largest_wal(cfg: &Config, room: u64, separate: bool) -> Option<u64> {
    // The region is limit + limit/4 + 1 MiB of slack, rounded up to a block.
    let mut limit = room.saturating_sub((1 << 20) + 4096) / 5 * 4 / 4096 * 4096;
    while limit >= MIN_WAL && wal_region(cfg, limit, separate) > room {
        limit -= 4096;
    }
    assert!(
        limit < MIN_WAL || wal_region(cfg, limit, separate) <= room,
        "the chosen WAL region fits its room"
    );
    (limit >= MIN_WAL).then_some(limit)
}

/// Sizes the device and the WAL for `want` with the engine configuration `cfg` (its pool
/// and doublewrite area). The WAL limit defaults to the pool size (the paper's setting) but
/// never takes space the data needs: on a given `--capacity` it shrinks (down to 8 MiB) so
/// the page space holds the data at the end of the run, and a device that cannot hold the
/// loaded data is refused (one line naming the flag).
///
/// # Errors
/// [`Error::Usage`] naming `--capacity` (and `--wal-limit`) when the device cannot hold the
/// loaded data.
///
/// # Panics
/// If the sizes do not add up (a bug).
pub fn size(want: &Want, cfg: &Config) -> Result<Sizing, Error> {
    let (loaded, end) = (want.loaded(), want.end());
    let fixed = FIXED_BYTES + cfg.dw_pages * 4096;
    let pool = cfg.pool_bytes;
    let (capacity, wal_limit) = match (want.capacity, want.wal_limit) {
        (None, limit) => {
            let limit = limit.unwrap_or(pool);
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "a device size in bytes, far below 2^52, positive"
            )]
            let space = (end as f64 / want.fill).ceil() as u64;
            let c = space + wal_region(cfg, limit, want.separate_wal) + fixed;
            (c.div_ceil(4096) * 4096, limit)
        }
        (Some(c), Some(limit)) => (c, limit),
        (Some(c), None) => {
            let for_end = c.saturating_sub(fixed + end);
            let for_loaded = c.saturating_sub(fixed + loaded);
            let limit = largest_wal(cfg, for_end, want.separate_wal)
                .map(|l| l.min(pool))
                .or_else(|| {
                    largest_wal(cfg, for_loaded, want.separate_wal).map(|_| MIN_WAL.min(pool))
                });
            let limit = limit.ok_or_else(|| too_small(want, c, loaded, fixed, "--capacity"))?;
            (c, limit)
        }
    };
    let page_space = capacity.saturating_sub(fixed + wal_region(cfg, wal_limit, want.separate_wal));
    if page_space < loaded {
        let flag = if want.wal_limit.is_some() {
            "--capacity / --wal-limit"
        } else {
            "--capacity"
        };
        return Err(too_small(want, capacity, loaded, fixed, flag));
    }
    assert!(end >= loaded, "a run never shrinks the estimate");
    assert!(
        capacity % 4096 == 0 || want.capacity.is_some(),
        "a computed device is whole blocks"
    );
    assert!(
        page_space + fixed + wal_region(cfg, wal_limit, want.separate_wal) <= capacity,
        "page space, WAL region and engine areas fit the device"
    );
    Ok(Sizing {
        capacity,
        wal_limit,
        loaded,
        end,
        page_space,
    })
}

fn too_small(want: &Want, capacity: u64, loaded: u64, fixed: u64, flag: &str) -> Error {
    Error::Usage(format!(
        "{flag}: a {} MiB device cannot hold the ~{} MiB of pages {} warehouses load plus a WAL \
         and {} MiB of engine areas: give a larger --capacity, fewer --warehouses{}",
        capacity >> 20,
        loaded >> 20,
        want.warehouses,
        fixed >> 20,
        if want.wal_limit.is_some() {
            " or a smaller --wal-limit"
        } else {
            ""
        }
    ))
}

impl Sizing {
    /// The data's share of the page space after the load and at the end of the run.
    #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
    #[must_use]
    pub fn fills(&self) -> (f64, f64) {
        let s = self.page_space.max(1) as f64;
        (self.loaded as f64 / s, self.end as f64 / s)
    }

    /// The page space and the data's share of it, and a warning when the estimated data at
    /// the end of the run does not fit: lines for the run's banner.
    #[must_use]
    pub fn describe(&self) -> Vec<String> {
        let (start, end) = self.fills();
        let at_end = if self.end > self.loaded {
            format!(", ~{} MiB at the end ({:.0}%)", self.end >> 20, 100.0 * end)
        } else {
            String::new()
        };
        let mut lines = vec![format!(
            "page space ~{} MiB (device minus WAL region and engine areas): data ~{} MiB after the load ({:.0}%){at_end}, WAL limit {} MiB",
            self.page_space >> 20,
            self.loaded >> 20,
            100.0 * start,
            self.wal_limit >> 20
        )];
        if end > 1.0 {
            lines.push(format!(
                "warning: the estimated data at the end ({} MiB) exceeds the page space; the run may fill the device",
                self.end >> 20
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pool: u64) -> Config {
        Config {
            pool_bytes: pool,
            ..Config::default()
        }
    }

    fn want(warehouses: u32, txns: Option<u64>, capacity: Option<u64>) -> Want {
        Want {
            warehouses,
            growing_txns: txns,
            capacity,
            fill: 0.9,
            wal_limit: None,
            separate_wal: false,
        }
    }

    #[test]
    fn the_fill_holds_at_the_end_of_a_growing_run_and_throughout_a_flat_one() {
        let c = cfg(32 << 20);
        let flat = size(&want(2, None, None), &c).expect("sized");
        assert_eq!(flat.wal_limit, 32 << 20, "the WAL matches the pool");
        let (start, end) = flat.fills();
        assert!((start - 0.9).abs() < 0.001 && (end - 0.9).abs() < 0.001);
        let grow = size(&want(2, Some(200_000), None), &c).expect("sized");
        let (start, end) = grow.fills();
        assert!((end - 0.9).abs() < 0.001, "{end}");
        assert!(start < 0.7 && grow.capacity > flat.capacity, "{start}");
    }

    #[test]
    fn a_large_pool_does_not_take_the_datas_space_on_a_given_capacity() {
        // docs/tpcc.md section 10, item 7: the WAL limit defaulted to the 150 MiB pool, whose
        // region left less than the loaded data, and the load failed.
        let c = cfg(150 << 20);
        let s = size(&want(2, Some(150_000), Some(450 << 20)), &c).expect("sized");
        assert!(s.page_space >= s.loaded, "{s:?}");
        assert!(s.wal_limit < 150 << 20 && s.wal_limit >= MIN_WAL, "{s:?}");
        // With room for the data at the end, the WAL shrinks only as far as needed.
        let s = size(&want(2, Some(50_000), Some(450 << 20)), &c).expect("sized");
        assert!(s.page_space >= s.end, "{s:?}");
        assert!(s.wal_limit > MIN_WAL, "{s:?}");
        // A small pool keeps its WAL.
        let s = size(&want(2, None, Some(450 << 20)), &cfg(16 << 20)).expect("sized");
        assert_eq!(s.wal_limit, 16 << 20);
    }

    #[test]
    fn a_device_smaller_than_the_loaded_data_is_refused_naming_the_flag() {
        let e = size(&want(2, None, Some(150 << 20)), &cfg(32 << 20)).expect_err("too small");
        let m = e.to_string();
        assert!(
            m.starts_with("--capacity: a 150 MiB device") && m.contains("186 MiB"),
            "{m}"
        );
        let mut w = want(2, None, Some(400 << 20));
        w.wal_limit = Some(200 << 20);
        let m = size(&w, &cfg(32 << 20)).expect_err("too small").to_string();
        assert!(
            m.starts_with("--capacity / --wal-limit") && m.contains("--wal-limit"),
            "{m}"
        );
    }
}
