//! The write-path seam: an engine runs on a custom `PageStore` (here a wrapper around the
//! in-place store that records every batch), across create / checkpoint / reopen.

use nowa_device::MemDevice;
use nowa_engine::{
    in_place_store, store_builder, Config, Engine, PageStore, Pid, StoreBuilder, StoreContext,
    StoreRecovery, WriteKind, WritePath, WritePathKind,
};
use parking_lot::Mutex;
use std::sync::Arc;

struct Recording {
    inner: Arc<dyn PageStore>,
    batches: Arc<Mutex<Vec<(WriteKind, usize)>>>,
}

impl PageStore for Recording {
    fn write_path(&self) -> WritePath {
        self.inner.write_path()
    }
    fn write_pages(&self, batch: &[(Pid, &[u8])], kind: WriteKind) -> nowa_engine::Result<()> {
        self.batches.lock().push((kind, batch.len()));
        self.inner.write_pages(batch, kind)
    }
    fn read_page(&self, pid: Pid, buf: &mut [u8]) -> nowa_engine::Result<()> {
        self.inner.read_page(pid, buf)
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn recover(&self) -> nowa_engine::Result<StoreRecovery> {
        self.inner.recover()
    }
    fn format(&self) -> nowa_engine::Result<()> {
        self.inner.format()
    }
    fn checkpoint(&self) -> nowa_engine::Result<Vec<u8>> {
        Ok(b"meta-v1".to_vec())
    }
}

#[test]
fn custom_store_behind_the_seam() {
    let batches = Arc::new(Mutex::new(Vec::new()));
    let seen_meta = Arc::new(Mutex::new(Vec::new()));
    let (b, m) = (batches.clone(), seen_meta.clone());
    let build = store_builder(WritePathKind::InPlace, move |ctx: StoreContext| {
        m.lock().push(ctx.metadata.clone());
        Ok(Arc::new(Recording {
            inner: in_place_store().build(ctx)?,
            batches: b.clone(),
        }) as Arc<dyn PageStore>)
    });
    let dev = Arc::new(MemDevice::new(32 << 20));
    let cfg = Config {
        pool_bytes: 64 * 4096,
        wal_limit_bytes: Some(256 << 10),
        dw_pages: 8,
        ..Config::default()
    };
    let e = Engine::create_with_store(dev.clone(), cfg.clone(), &build).unwrap();
    for i in 0..5000u32 {
        e.put(&(i * 7919 % 5000).to_be_bytes(), &[3u8; 100])
            .unwrap();
    }
    e.close().unwrap();
    let e = Engine::open_with_store(dev, cfg, &build).unwrap();
    assert_eq!(e.get(&4999u32.to_be_bytes()).unwrap(), Some(vec![3u8; 100]));
    let b = batches.lock();
    assert!(b.iter().any(|(k, _)| *k == WriteKind::Eviction));
    assert!(b.iter().any(|(k, _)| *k == WriteKind::Checkpoint));
    // The metadata of the last checkpoint is handed back to the store at open.
    assert_eq!(*seen_meta.lock(), vec![Vec::new(), b"meta-v1".to_vec()]);
}
