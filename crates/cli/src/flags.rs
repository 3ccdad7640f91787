//! clap value parsers for the flags of every subcommand: `nowa-units` underneath, so a size, a
//! fraction, a count or a duration means the same everywhere (the README's "Numbers and
//! sizes"), and a bad value is refused while parsing, in one line naming the flag (clap adds
//! `for '--flag <FLAG>'` to the message).

pub use nowa_lab::flags::{
    count, fraction, number, parsed, seconds, size, size_4k, SimTiming, MAX_THREADS,
};
