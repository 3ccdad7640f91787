//! Building an engine on the out-of-place store while keeping a handle to that store, so a
//! test can inspect it (zone metadata, counters) next to the engine.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test by panicking"
)]

use nowa_engine::{
    store_builder, OopConfig, OutOfPlaceStore, PageStore, StoreBuilder, StoreContext, WritePathKind,
};
use parking_lot::Mutex;
use std::sync::Arc;

/// Where [`builder`] leaves the store it built.
pub type Slot = Arc<Mutex<Option<Arc<OutOfPlaceStore>>>>;

/// A store builder for `Engine::create_with_store` / `open_with_store` that records the store.
pub fn builder(cfg: OopConfig, slot: Slot) -> impl StoreBuilder {
    store_builder(WritePathKind::OutOfPlace, move |ctx: StoreContext| {
        let s = Arc::new(OutOfPlaceStore::new(ctx, cfg.clone())?);
        *slot.lock() = Some(s.clone());
        Ok(s as Arc<dyn PageStore>)
    })
}

/// Every key of `model` reads back its value.
#[allow(dead_code)]
pub fn assert_model(e: &nowa_engine::Engine, model: &std::collections::BTreeMap<u64, Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(
            e.get(&k.to_be_bytes()).unwrap().as_ref(),
            Some(v),
            "key {k}"
        );
    }
}

/// A small engine: 64-page pool, 256 KiB WAL, async commits (GC-heavy tests).
#[allow(dead_code)]
pub fn small_engine_cfg() -> nowa_engine::Config {
    nowa_engine::Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        durability: nowa_engine::Durability::Async,
        ..nowa_engine::Config::default()
    }
}
