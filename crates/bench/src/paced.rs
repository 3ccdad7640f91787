//! [`Paced`]: a device wrapper that makes a simulated SSD I/O-bound. It lives in nowa-device
//! now, beside the one timing model it applies (`nowa_device::timing`); this re-export keeps
//! the benchmark drivers' path.

pub use nowa_device::Paced;
