//! clap value parsers for the flags of every subcommand: `nowa-units` underneath, so a size, a
//! fraction, a count or a duration means the same everywhere (the README's "Numbers and
//! sizes"), and a bad value is refused while parsing, in one line naming the flag (clap adds
//! `for '--flag <FLAG>'` to the message).

pub use nowa_lab::flags::{
    count, fraction, number, on_off, parsed, seconds, size, size_4k, MAX_THREADS,
};

/// `--sim-timing`: how the simulated SSD is timed, one timing model for every command
/// (`nowa ssdiq`, `nowa ycsb`, `nowa table1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimTiming {
    /// One media server at the command's write and read bandwidths (the default).
    Bandwidth,
    /// FEMU's chips: 8 channels x 8 chips of 4 KiB pages, read 40 us, program 200 us.
    Femu,
    /// MQSim's chips: 8 channels x 8 chips of 4 KiB pages with MQSim's latencies.
    Mqsim,
}

impl SimTiming {
    /// The chips of a preset (None: the bandwidth model).
    #[must_use]
    pub fn chips(self) -> Option<nowa_device::timing::ChipParams> {
        use nowa_device::timing::ChipParams;
        match self {
            SimTiming::Bandwidth => None,
            SimTiming::Femu => Some(ChipParams::femu(8, 8, 4096)),
            SimTiming::Mqsim => Some(ChipParams::mqsim(8, 8, 4096)),
        }
    }
}
