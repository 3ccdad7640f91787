//! Building an engine on the out-of-place store while keeping a handle to that store, so a
//! test can inspect it (zone metadata, counters) next to the engine.

use nowa_engine::{OopConfig, OutOfPlaceStore, PageStore, StoreContext};
use parking_lot::Mutex;
use std::sync::Arc;

/// Where [`builder`] leaves the store it built.
pub type Slot = Arc<Mutex<Option<Arc<OutOfPlaceStore>>>>;

/// A store builder for `Engine::create_with_store` / `open_with_store` that records the store.
pub fn builder(
    cfg: OopConfig,
    slot: Slot,
) -> impl Fn(StoreContext) -> nowa_engine::Result<Arc<dyn PageStore>> + Send + Sync {
    move |ctx| {
        let s = Arc::new(OutOfPlaceStore::new(ctx, cfg.clone())?);
        *slot.lock() = Some(s.clone());
        Ok(s as Arc<dyn PageStore>)
    }
}
