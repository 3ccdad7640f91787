//! Engine errors.

use nowa_device::DeviceError;

/// Page identifier: index of a page in the data region (in-place: its fixed home slot).
pub type Pid = u64;

/// Every fallible engine operation returns this.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("device error: {0}")]
    Device(#[from] DeviceError),
    /// A page failed validation (checksum, header, layout): never read silently.
    #[error("corrupt page {pid}: {detail}")]
    Corruption { pid: Pid, detail: String },
    /// The WAL is unusable at `offset` (an LSN): for a tail this is reported, not raised.
    #[error("corrupt WAL at lsn {offset}: {detail}")]
    WalCorrupt { offset: u64, detail: String },
    /// The superblock (both copies) is missing or invalid.
    #[error("bad superblock: {0}")]
    Superblock(String),
    /// Data region or WAL region exhausted.
    #[error("out of space: {0}")]
    Full(String),
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Key or value exceeds the size limits.
    #[error("key/value too large: key {key_len} bytes, value {value_len} bytes")]
    TooLarge { key_len: usize, value_len: usize },
    #[error("engine is closed or poisoned: {0}")]
    Closed(String),
}

pub type Result<T> = std::result::Result<T, EngineError>;

pub(crate) fn corrupt(pid: Pid, detail: impl Into<String>) -> EngineError {
    EngineError::Corruption {
        pid,
        detail: detail.into(),
    }
}
