//! `nowa ssdiq` flags.
use clap::Args;

#[derive(Args, Debug)]
pub struct SsdiqArgs {}

pub fn run(_a: SsdiqArgs) -> anyhow::Result<()> {
    Err(crate::usage("nowa ssdiq is not implemented yet"))
}
