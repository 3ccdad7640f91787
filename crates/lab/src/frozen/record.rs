//! `--record-writes FILE` (`nowa ycsb`, `nowa tpcc`): the engine's write log in
//! `nowa-frozen`'s format (docs/sepfrozen.md), so `nowa frozen train|replay` read it as is.
//!
//! The engine reports every mapping change of its out-of-place store (user write, GC move,
//! compensation) and every release, with zones, class and the version's hotness records,
//! under the store's lock ([`nowa_engine::WriteObserver`]). The log's timer is the
//! DB-written-page timer: a user write's is its HR_current's write time (the buffer pool's
//! timer), raised to the previous record's if a concurrent batch reached the store first
//! (the log's timer never decreases); a GC move or a free carries the timer of the last user
//! write before it.

use crate::Error;
use nowa_engine::{Engine, PageWrite, PageWriteKind, Stats, WriteObserver};
use nowa_frozen::{LogSummary, LogWriter, WriteKind, WriteRecord, NO_CLASS, NO_ZONE};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

type Writer = LogWriter<BufWriter<File>>;

/// An open write log, attached to an engine with [`WriteLog::attach`].
pub struct WriteLog {
    path: PathBuf,
    inner: Mutex<State>,
}

struct State {
    writer: Option<Writer>,
    timer: u64,
    /// The first append error (the engine cannot take one: the run goes on, the log is
    /// refused at the end).
    error: Option<nowa_frozen::FrozenError>,
    /// The engine's counters when the log was attached.
    base: Option<Stats>,
}

impl WriteLog {
    /// Create the log file (refused if it exists: nothing is overwritten).
    ///
    /// # Errors
    /// The file exists or cannot be created.
    pub fn create(path: &Path) -> Result<Arc<WriteLog>, Error> {
        let writer = LogWriter::create(path, false, 4096).map_err(|e| match e {
            nowa_frozen::FrozenError::Exists { .. } => {
                Error::Usage(format!("record_writes: {}: {e}", path.display()))
            }
            e => Error::io(path, e),
        })?;
        Ok(Arc::new(WriteLog {
            path: path.to_path_buf(),
            inner: Mutex::new(State {
                writer: Some(writer),
                timer: 0,
                error: None,
                base: None,
            }),
        }))
    }

    /// Record `engine`'s page writes from now on (and hand each one to `also` too).
    ///
    /// # Errors
    /// The engine's write path records no write log (in place).
    pub fn attach(
        self: &Arc<Self>,
        engine: &Engine,
        also: Option<Arc<dyn WriteObserver>>,
    ) -> Result<(), Error> {
        self.lock().base = Some(engine.stats());
        let me = Arc::clone(self) as Arc<dyn WriteObserver>;
        let obs = match also {
            Some(o) => Arc::new(Tee([me, o])) as Arc<dyn WriteObserver>,
            None => me,
        };
        if !engine.record_writes(obs) {
            return Err(Error::Usage(IN_PLACE.into()));
        }
        Ok(())
    }

    /// Seal the log (trailer, flush) and check its counts against the engine's page-write
    /// counters since [`WriteLog::attach`].
    ///
    /// # Errors
    /// An append or I/O error during the run; counts that disagree with the engine's.
    ///
    /// # Panics
    /// If the log holds a record of another kind (a bug of the writer).
    pub fn finish(&self, engine: &Engine) -> Result<LogSummary, Error> {
        let mut s = self.lock();
        if let Some(e) = s.error.take() {
            return Err(Error::io(&self.path, e));
        }
        let w = s.writer.take().ok_or_else(|| Error::Failed {
            what: "the write log",
            source: "finished twice".into(),
        })?;
        let sum = w.finish().map_err(|e| Error::io(&self.path, e))?;
        assert_eq!(
            sum.records,
            sum.user + sum.gc + sum.free,
            "every record is a user write, a GC move or a free"
        );
        if let Some(base) = s.base.as_ref() {
            check_counts(&sum, base, &engine.stats()).map_err(|m| Error::Failed {
                what: "the write log",
                source: format!("{}: {m}", self.path.display()).into(),
            })?;
        }
        Ok(sum)
    }

    /// Where the log is written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(s: &mut State, w: &PageWrite) -> WriteRecord {
        let kind = match w.kind {
            PageWriteKind::User => WriteKind::User,
            PageWriteKind::Gc => WriteKind::Gc,
            _ => WriteKind::Free,
        };
        let before = s.timer;
        if kind == WriteKind::User {
            s.timer = s.timer.max(w.records.current.wt());
        }
        assert!(s.timer >= before, "the log's timer never decreases");
        WriteRecord {
            timer: s.timer,
            page: w.pid,
            zone: w.zone.unwrap_or(NO_ZONE),
            from_zone: w.from_zone.unwrap_or(NO_ZONE),
            kind,
            class: w
                .class
                .map_or(NO_CLASS, |c| u8::try_from(c).unwrap_or(NO_CLASS - 1)),
            hr_current: w.records.current,
            hr_last: w.records.last,
        }
    }
}

impl WriteObserver for WriteLog {
    fn page_write(&self, w: &PageWrite) {
        let mut s = self.lock();
        if s.error.is_some() {
            return;
        }
        let r = Self::record(&mut s, w);
        if let Some(writer) = s.writer.as_mut() {
            if let Err(e) = writer.append(&r) {
                s.error = Some(e);
            }
        }
    }
}

/// Two observers of one engine (the engine attaches one), in order.
struct Tee([Arc<dyn WriteObserver>; 2]);

impl WriteObserver for Tee {
    fn page_write(&self, w: &PageWrite) {
        for o in &self.0 {
            o.page_write(w);
        }
    }
}

/// The log holds exactly the engine's page writes since `base`: user writes = eviction +
/// checkpoint (and bulk) page writes, GC moves = GC + compensation page writes.
fn check_counts(sum: &LogSummary, base: &Stats, now: &Stats) -> Result<(), String> {
    let user = (now.eviction_page_writes + now.checkpoint_page_writes)
        - (base.eviction_page_writes + base.checkpoint_page_writes);
    let gc = (now.gc_page_writes + now.compensation_page_writes)
        - (base.gc_page_writes + base.compensation_page_writes);
    if sum.user != user || sum.gc != gc {
        return Err(format!(
            "the log holds {} user writes and {} GC moves, the engine counted {user} and {gc}",
            sum.user, sum.gc
        ));
    }
    Ok(())
}

/// The refusal of a write log on the in-place write path.
const IN_PLACE: &str =
    "--record-writes: only the out-of-place write path records a write log (add --write-path oop)";

/// `--record-writes`: the log, created before the run (an existing file is refused), or None
/// without the flag. `oop`: the run uses the out-of-place write path.
///
/// # Errors
/// [`Error::Usage`]: the flag with the in-place write path, a file that exists; else the
/// file cannot be created.
pub fn open(path: Option<&Path>, oop: bool) -> Result<Option<Arc<WriteLog>>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    if !oop {
        return Err(Error::Usage(IN_PLACE.into()));
    }
    if path.exists() {
        return Err(Error::Usage(format!(
            "--record-writes {}: exists (remove it or name another file)",
            path.display()
        )));
    }
    WriteLog::create(path).map(Some)
}

/// The line saying what a finished log holds.
#[must_use]
pub fn summary_line(path: &Path, s: &LogSummary) -> String {
    format!(
        "write log {}: {} records ({} user writes, {} GC moves, {} frees), timer {}..{}",
        path.display(),
        s.records,
        s.user,
        s.gc,
        s.free,
        s.first_timer,
        s.last_timer
    )
}
