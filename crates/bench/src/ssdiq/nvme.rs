//! NVMe device counters for the measured WAF: host bytes from the SMART / Health log (Data
//! Units Written) and media bytes from the OCP extended SMART log (0xC0), read with the NVMe
//! admin ioctl (Get Log Page) or, failing that, with nvme-cli's JSON output.

use super::target::MediaCounters;
use std::path::Path;

/// Parses a JSON number or an nvme-cli 128-bit {"hi":..,"lo":..} object.
pub(crate) fn json_u128(v: &serde_json::Value) -> Option<u128> {
    if let Some(n) = v.as_u64() {
        return Some(u128::from(n));
    }
    if let Some(f) = v.as_f64() {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a finite, non-negative counter printed as a float; saturating is fine"
        )]
        return (f.is_finite() && f >= 0.0).then_some(f as u128);
    }
    if let Some(s) = v.as_str() {
        return s.replace(',', "").trim().parse().ok();
    }
    let o = v.as_object()?;
    let hi = u128::from(o.get("hi").and_then(serde_json::Value::as_u64).unwrap_or(0));
    let lo = u128::from(o.get("lo").and_then(serde_json::Value::as_u64)?);
    Some((hi << 64) | lo)
}

/// Finds a key by case-insensitive, space/underscore-insensitive name.
pub(crate) fn json_find<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
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
    counters(host_units, media)
}

/// Host bytes from SMART data units (512,000 bytes each) and media bytes; None beyond 2^64.
fn counters(host_units: u128, media: u128) -> Option<MediaCounters> {
    Some(MediaCounters {
        host_bytes: u64::try_from(host_units.checked_mul(512_000)?).ok()?,
        media_bytes: u64::try_from(media).ok()?,
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
    const LOG_BYTES: u32 = 512;
    let mut buf = [0u8; LOG_BYTES as usize];
    let numd = LOG_BYTES / 4 - 1;
    let mut cmd = NvmeAdminCmd {
        opcode: 0x02,
        nsid: 0xffff_ffff,
        addr: buf.as_mut_ptr() as u64,
        data_len: LOG_BYTES,
        cdw10: ((numd & 0xffff) << 16) | u32::from(lid),
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
    counters(le128(&smart[48..64]), le128(&ocp[0..16]))
}

pub(crate) fn nvme_counters_ioctl(fd: i32) -> Option<MediaCounters> {
    let smart = nvme_get_log(fd, 0x02)?;
    let ocp = nvme_get_log(fd, 0xC0)?;
    parse_nvme_log_pages(&smart, &ocp)
}

pub(crate) fn nvme_counters(path: &Path) -> Option<MediaCounters> {
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
