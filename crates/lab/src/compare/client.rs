//! Feeding an engine through its own command-line client (sqlite3, psql, mariadb): SQL on
//! its standard input, one transaction at a time, each followed by a marker query whose
//! answer tells that the transaction is done. The time from sending a transaction to reading
//! its marker is its latency (the client's pipe round trip included: a few microseconds).

use super::stream::{Kind, Op, Stream};
use crate::Error;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The SQL dialect of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// sqlite3: `x'..'` blobs.
    Sqlite,
    /// PostgreSQL: `'\x..'` bytea.
    Postgres,
    /// MariaDB: `x'..'` varbinary.
    Mariadb,
    /// The key-value driver of RocksDB and LMDB (kv_driver.py): `P key hex`, `G key`, `C`.
    Kv,
}

/// A running client process.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    dialect: Dialect,
    markers: u64,
}

fn failed(msg: String) -> Error {
    Error::failed("the engine's client", std::io::Error::other(msg))
}

impl Client {
    /// Starts `cmd` with piped stdin/stdout and stderr into the file `stderr`.
    ///
    /// # Errors
    /// The program cannot be started.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    pub fn start(mut cmd: Command, dialect: Dialect, stderr: PathBuf) -> Result<Client, Error> {
        let err = std::fs::File::create(&stderr).map_err(|e| Error::io(&stderr, e))?;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .map_err(|e| failed(format!("{cmd:?}: {e}")))?;
        assert!(child.id() > 0, "a started process has a pid");
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(failed(format!("{cmd:?}: no pipes")));
        };
        Ok(Client {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            stderr,
            dialect,
            markers: 0,
        })
    }

    /// The client's process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the client said on stderr (its last lines), for an error.
    fn said(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(3).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join("; ")
    }

    /// Sends `sql` and a marker, waits for the marker; returns the lines printed before it.
    ///
    /// # Errors
    /// The client exited (an SQL error stops it: each is started to stop on the first).
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    pub fn exec(&mut self, sql: &str) -> Result<Vec<String>, Error> {
        self.markers += 1;
        assert!(!sql.contains("nowa-done-"), "the SQL cannot forge a marker");
        let marker = format!("nowa-done-{}", self.markers);
        let text = if self.dialect == Dialect::Kv {
            format!("{sql}\nM {marker}\n")
        } else {
            format!("{sql}\nSELECT '{marker}';\n")
        };
        let sent = match self.stdin.as_mut() {
            Some(i) => i.write_all(text.as_bytes()).and_then(|()| i.flush()),
            None => Err(std::io::Error::other("stdin closed")),
        };
        if let Err(e) = sent {
            return Err(failed(format!(
                "writing to the client: {e}; {}",
                self.said()
            )));
        }
        let mut out = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap_or(0);
            if n == 0 {
                return Err(failed(format!("the client exited: {}", self.said())));
            }
            let line = line.trim_end();
            if line == marker {
                assert!(out.len() < 1 << 20, "a transaction prints a line per read");
                return Ok(out);
            }
            out.push(line.to_owned());
        }
    }

    /// Closes stdin and waits for the client to exit.
    ///
    /// # Errors
    /// It exits with a failure.
    pub fn finish(mut self) -> Result<(), Error> {
        drop(self.stdin.take());
        let st = self
            .child
            .wait()
            .map_err(|e| failed(format!("waiting for the client: {e}")))?;
        if st.success() {
            Ok(())
        } else {
            let said = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            Err(failed(format!("the client exited with {st}: {said}")))
        }
    }

    /// A value as an SQL literal of the dialect.
    fn literal(&self, v: &[u8]) -> String {
        let mut hex = String::with_capacity(v.len() * 2 + 8);
        for b in v {
            let _ = write!(hex, "{b:02x}");
        }
        assert_eq!(hex.len(), v.len() * 2, "two hex digits a byte");
        match self.dialect {
            Dialect::Sqlite | Dialect::Mariadb => format!("x'{hex}'"),
            Dialect::Postgres => format!("'\\x{hex}'"),
            Dialect::Kv => hex,
        }
    }

    /// Loads rows `from..to` of the stream as one multi-row insert.
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn insert_rows(&self, s: &Stream, from: u64, to: u64) -> String {
        assert!(from < to && to <= s.loaded, "rows of the load");
        if self.dialect == Dialect::Kv {
            let mut cmds = String::new();
            for k in from..to {
                let _ = writeln!(cmds, "P {k} {}", self.literal(&s.value(k, 0)));
            }
            cmds.push('C');
            return cmds;
        }
        let mut sql = String::from("INSERT INTO t VALUES ");
        for k in from..to {
            let sep = if k + 1 == to { ";" } else { "," };
            let _ = write!(sql, "({k},{}){sep}", self.literal(&s.value(k, 0)));
        }
        sql
    }

    /// One transaction as SQL: its statements, inside BEGIN/COMMIT when it has more than one
    /// (a single statement commits on its own).
    ///
    /// # Panics
    /// On a broken invariant (a bug): the assertions state them.
    #[must_use]
    pub fn txn(&self, s: &Stream, ops: &[Op]) -> String {
        if self.dialect == Dialect::Kv {
            return self.kv_txn(s, ops);
        }
        let mut sql = String::new();
        let multi = ops.len() > 1;
        if multi {
            sql.push_str("BEGIN;\n");
        }
        for o in ops {
            let _ = match o.kind {
                Kind::Read => writeln!(sql, "SELECT length(v) FROM t WHERE k={};", o.key),
                Kind::Update => writeln!(
                    sql,
                    "UPDATE t SET v={} WHERE k={};",
                    self.literal(&s.value(o.key, o.ver)),
                    o.key
                ),
                Kind::Insert => writeln!(
                    sql,
                    "INSERT INTO t VALUES ({},{});",
                    o.key,
                    self.literal(&s.value(o.key, o.ver))
                ),
            };
        }
        if multi {
            sql.push_str("COMMIT;");
        }
        assert_eq!(
            sql.lines().count(),
            ops.len() + if multi { 2 } else { 0 },
            "one line per statement"
        );
        sql
    }
}

impl Client {
    /// One transaction as kv_driver.py's commands: reads and writes, then one commit (a
    /// transaction of reads only commits nothing).
    fn kv_txn(&self, s: &Stream, ops: &[Op]) -> String {
        let mut cmds = String::new();
        for o in ops {
            let _ = match o.kind {
                Kind::Read => writeln!(cmds, "G {}", o.key),
                Kind::Update | Kind::Insert => {
                    writeln!(cmds, "P {} {}", o.key, self.literal(&s.value(o.key, o.ver)))
                }
            };
        }
        cmds.push('C');
        assert_eq!(cmds.lines().count(), ops.len() + 1, "a line per operation");
        cmds
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // After an error: the client must not outlive the file system it works on.
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Checks that every read of a transaction found its row with a whole value: `lines` are
/// what the client printed (one `length(v)` per read).
///
/// # Errors
/// A read found nothing, or a value of the wrong length.
///
/// # Panics
/// On a broken invariant (a bug): the assertions state them.
pub fn check_reads(lines: &[String], ops: &[Op], value_size: usize) -> Result<(), Error> {
    let reads = ops.iter().filter(|o| o.kind == Kind::Read).count();
    assert!(reads <= ops.len(), "reads are some of the ops");
    let want = value_size.to_string();
    if lines.len() != reads || lines.iter().any(|l| *l != want) {
        return Err(failed(format!(
            "{reads} reads of {value_size}-byte values answered {lines:?}"
        )));
    }
    Ok(())
}
