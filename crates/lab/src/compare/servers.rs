//! The engines that run as servers (PostgreSQL, MariaDB): started on the vssd's file system
//! as their own system user, reached over a Unix socket in their directory (no TCP port),
//! fed through their command-line clients, stopped at the end (also after an error).

use super::bed::{run_tool, Target};
use super::client::{Client, Dialect};
use super::engines::{
    find_tool, fs_dir, pg_dirs, pg_max_wal, pss, user_ids, with_children, ClientDriver,
};
use super::{EngineName, Spec};
use crate::Error;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A server process the driver stops at the end.
pub trait Server {
    /// Memory of its processes now (PSS, bytes).
    fn memory(&self) -> u64;
    /// SQL that makes the load durable and checkpointed, if the engine has it.
    fn after_load(&self) -> Option<&'static str>;
    /// Stops it cleanly.
    ///
    /// # Errors
    /// The stop command fails.
    fn stop(&mut self) -> Result<(), Error>;
}

/// A PostgreSQL server, run as the `postgres` user.
struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    ids: (u32, u32),
    running: bool,
}

/// Starts PostgreSQL (initdb, pg_ctl) on the target's file system and psql on it.
///
/// # Errors
/// A program is missing or fails.
pub(super) fn postgres(
    target: &Target,
    spec: &Spec,
    scratch: &Path,
) -> Result<ClientDriver, Error> {
    let dir = fs_dir(target, EngineName::Postgresql)?;
    let bin = find_tool("initdb", &pg_dirs())
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or_else(|| Error::Usage("--engines postgresql: no initdb".into()))?;
    let ids = user_ids("postgres")
        .ok_or_else(|| Error::Usage("--engines postgresql: no postgres user".into()))?;
    std::os::unix::fs::chown(&dir, Some(ids.0), Some(ids.1)).map_err(|e| Error::io(&dir, e))?;
    let data = dir.join("data");
    assert!(!data.exists(), "a fresh file system");
    let as_pg = |prog: &str| {
        let mut c = Command::new(bin.join(prog));
        c.uid(ids.0).gid(ids.1).current_dir(&dir);
        c
    };
    run_tool(
        "initdb",
        as_pg("initdb").args(["-A", "trust", "-D"]).arg(&data),
    )?;
    let opts = format!(
        "-k {} -c listen_addresses= -c shared_buffers={}kB -c max_wal_size={}MB",
        dir.display(),
        spec.memory >> 10,
        pg_max_wal(spec) >> 20
    );
    let mut start = as_pg("pg_ctl");
    start.arg("-D").arg(&data).args(["-o", &opts, "-l"]);
    run_tool(
        "pg_ctl start",
        start.arg(dir.join("log")).args(["-w", "start"]),
    )?;
    assert!(
        data.join("postmaster.pid").is_file(),
        "pg_ctl -w waited for the server"
    );
    let server = Postgres {
        bin,
        data,
        ids,
        running: true,
    };
    let psql = find_tool("psql", &pg_dirs()).unwrap_or_else(|| server.bin.join("psql"));
    let mut c = Command::new(psql);
    c.arg("-h").arg(&dir);
    c.args([
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-qAtX",
        "-v",
        "ON_ERROR_STOP=1",
    ]);
    let mut client = Client::start(c, Dialect::Postgres, scratch.join("psql.err"))?;
    client.exec("CREATE TABLE t(k bigint PRIMARY KEY, v bytea);")?;
    Ok(ClientDriver {
        client,
        server: Some(Box::new(server)),
        after_load: None,
    })
}

impl Server for Postgres {
    fn memory(&self) -> u64 {
        // The postmaster's pid is the first line of postmaster.pid.
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).unwrap_or_default();
        let pid = text.lines().next().and_then(|l| l.trim().parse().ok());
        pid.map_or(0, |p| with_children(p).into_iter().map(pss).sum())
    }

    fn after_load(&self) -> Option<&'static str> {
        Some("CHECKPOINT;")
    }

    fn stop(&mut self) -> Result<(), Error> {
        self.running = false;
        let mut c = Command::new(self.bin.join("pg_ctl"));
        c.uid(self.ids.0).gid(self.ids.1);
        c.arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "stop"]);
        run_tool("pg_ctl stop", &mut c).map(|_| ())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // After an error: the server must not outlive the file system it works on.
        if self.running {
            let _ = self.stop();
        }
    }
}

/// The directories Debian installs MariaDB's programs in.
pub(super) fn mariadb_dirs() -> Vec<PathBuf> {
    vec![PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")]
}

/// A MariaDB server (mariadbd), run as the `mysql` user.
struct Mariadb {
    child: Option<std::process::Child>,
    socket: PathBuf,
}

/// Starts MariaDB (mariadb-install-db, mariadbd) on the target's file system and the
/// mariadb client on it.
///
/// # Errors
/// A program is missing or fails, or the server does not answer within a minute.
pub(super) fn mariadb(target: &Target, spec: &Spec, scratch: &Path) -> Result<ClientDriver, Error> {
    let dir = fs_dir(target, EngineName::Mariadb)?;
    let tool = |name: &str| {
        find_tool(name, &mariadb_dirs())
            .ok_or_else(|| Error::Usage(format!("--engines mariadb: no {name}")))
    };
    let ids =
        user_ids("mysql").ok_or_else(|| Error::Usage("--engines mariadb: no mysql user".into()))?;
    std::os::unix::fs::chown(&dir, Some(ids.0), Some(ids.1)).map_err(|e| Error::io(&dir, e))?;
    let data = dir.join("data");
    let mut init = Command::new(tool("mariadb-install-db")?);
    init.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()));
    run_tool(
        "mariadb-install-db",
        init.args(["--user=mysql", "--skip-test-db"]),
    )?;
    let socket = dir.join("mariadb.sock");
    assert!(data.is_dir(), "mariadb-install-db made the data directory");
    let err =
        std::fs::File::create(scratch.join("mariadbd.err")).map_err(|e| Error::io(scratch, e))?;
    let mut d = Command::new(tool("mariadbd")?);
    d.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--innodb-buffer-pool-size={}", spec.memory))
        .args(["--skip-networking", "--user=mysql", "--skip-log-bin"])
        .stdout(std::process::Stdio::null())
        .stderr(err);
    let child = d.spawn().map_err(|e| Error::failed("mariadbd", e))?;
    let server = Mariadb {
        child: Some(child),
        socket,
    };
    server.wait_ready()?;
    let mut c = Command::new(tool("mariadb")?);
    c.arg("--no-defaults")
        .arg(format!("--socket={}", server.socket.display()));
    c.args(["-u", "root", "-N", "-B", "--unbuffered"]);
    let mut client = Client::start(c, Dialect::Mariadb, scratch.join("mariadb.err"))?;
    client.exec(
        "CREATE DATABASE c;\nUSE c;\nCREATE TABLE t(k BIGINT PRIMARY KEY, v VARBINARY(4000)) ENGINE=InnoDB;",
    )?;
    Ok(ClientDriver {
        client,
        server: Some(Box::new(server)),
        after_load: None,
    })
}

impl Mariadb {
    /// Waits until the server answers on its socket.
    fn wait_ready(&self) -> Result<(), Error> {
        let admin = find_tool("mariadb-admin", &mariadb_dirs())
            .ok_or_else(|| Error::Usage("--engines mariadb: no mariadb-admin".into()))?;
        let t = std::time::Instant::now();
        loop {
            let mut c = Command::new(&admin);
            c.arg("--no-defaults")
                .arg(format!("--socket={}", self.socket.display()));
            if c.args(["-u", "root", "ping"])
                .output()
                .is_ok_and(|o| o.status.success())
            {
                return Ok(());
            }
            if t.elapsed() > std::time::Duration::from_secs(60) {
                return Err(Error::failed(
                    "mariadbd",
                    std::io::Error::other("no answer on its socket after 60 s"),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Server for Mariadb {
    fn memory(&self) -> u64 {
        self.child.as_ref().map_or(0, |c| pss(c.id()))
    }

    fn after_load(&self) -> Option<&'static str> {
        // InnoDB has no CHECKPOINT statement: a table flushed for export has all its changes
        // written to its file, so the load's dirty pages are not written in the measured phase.
        Some("FLUSH TABLES t FOR EXPORT;\nUNLOCK TABLES;")
    }

    fn stop(&mut self) -> Result<(), Error> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        assert!(self.child.is_none(), "stopped once");
        let admin = find_tool("mariadb-admin", &mariadb_dirs()).unwrap_or_default();
        let mut c = Command::new(admin);
        c.arg("--no-defaults")
            .arg(format!("--socket={}", self.socket.display()));
        let r = run_tool("mariadb-admin shutdown", c.args(["-u", "root", "shutdown"]));
        if r.is_err() {
            let _ = child.kill();
        }
        let _ = child.wait();
        r.map(|_| ())
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
