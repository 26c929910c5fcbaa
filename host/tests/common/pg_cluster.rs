//! A test's own PostgreSQL servers: one primary and any number of streaming
//! standbys, each on its own free port on 127.0.0.1 and in its own data
//! directory under a temporary directory, for tests of failover and read
//! replicas.
//!
//! The servers come from the machine's PostgreSQL server binaries: the
//! directory `pg_config --bindir` names if it holds `initdb`, else the highest
//! `/usr/lib/postgresql/*/bin` that does. Without them [`PgCluster::start`]
//! returns `None` (the test skips), or panics when `CI` is set. Under root every
//! server program runs as the `postgres` OS user, since PostgreSQL refuses to
//! run as root. Every server is stopped when the [`PgCluster`] is dropped.
//!
//! Every call blocks until done (from a Tokio test, call [`PgCluster::start`]
//! through `tokio::task::spawn_blocking` or directly). The servers trade
//! durability for speed (`fsync`, `synchronous_commit` and `full_page_writes`
//! off), so a standby sees a commit only after [`PgCluster::wait_replayed`].

#![allow(dead_code)] // each test binary uses its own subset

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long a server may take to start, promote or replay before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);

/// Settings of every server (the standbys copy them from the primary).
const SETTINGS: &str = "
wal_level = replica
max_wal_senders = 10
wal_keep_size = '256MB'
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 32MB
max_connections = 100
logging_collector = off
log_statement = 'none'
";

/// Who may connect: anyone from 127.0.0.1, for queries and replication alike.
const HBA: &str = "local all all trust
host replication all 127.0.0.1/32 trust
host all all 127.0.0.1/32 trust
";

/// One server of a [`PgCluster`], named by the role it had when the cluster
/// started: after [`PgCluster::promote`], `Standby(i)` is a primary too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// The server the cluster started as primary.
    Primary,
    /// The `i`-th standby (from 0), streaming from the primary.
    Standby(usize),
}

/// Whose account runs the server programs: the current user, or (under root)
/// `postgres` through `runuser -u postgres --`, or `su postgres -c` without `runuser`.
#[derive(Clone, Copy, PartialEq)]
enum RunAs {
    Me,
    Runuser,
    Su,
}

/// A primary with its streaming standbys; all are stopped when dropped.
pub struct PgCluster {
    bindir: PathBuf,
    run_as: RunAs,
    /// Each server's port and own directory (holding `data/`, its socket and
    /// `server.log`); the primary first.
    nodes: Vec<(u16, PathBuf)>,
    dir: TempDir,
}

impl PgCluster {
    /// Starts a primary and `standbys` standbys cloned from it with
    /// `pg_basebackup -R`, and returns once all accept connections. `None`
    /// (after saying why on stderr) when the server binaries are missing.
    pub fn start(standbys: usize) -> Option<PgCluster> {
        let Some(bindir) = find_bindir() else {
            return unavailable("no PostgreSQL server binaries (`initdb`) found through `pg_config --bindir` or in /usr/lib/postgresql/*/bin");
        };
        let root = is_root();
        let run_as = if !root {
            RunAs::Me
        } else if !succeeds(Command::new("id").arg("postgres")) {
            return unavailable("running as root, and there is no `postgres` OS user");
        } else if succeeds(Command::new("runuser").arg("--version")) {
            RunAs::Runuser
        } else {
            RunAs::Su
        };
        // In /tmp, where the postgres user can reach it, with a short socket path.
        let mut builder = tempfile::Builder::new();
        let dir = builder.prefix("gatehouse-pg-").tempdir_in("/tmp");
        let dir = dir.expect("a temporary directory for the PostgreSQL cluster");
        if root {
            use std::os::unix::fs::PermissionsExt;
            let open = fs::Permissions::from_mode(0o755);
            fs::set_permissions(dir.path(), open).expect("chmod the cluster directory");
        }
        // From here on a panic drops `cluster`, which stops what was started.
        let mut cluster = PgCluster {
            bindir,
            run_as,
            nodes: Vec::new(),
            dir,
        };
        let data = cluster.add_node().join("data");
        let words = "-U postgres --auth=trust -E UTF8 --no-locale --no-sync";
        cluster.run(Node::Primary, "initdb", &["-D", path_str(&data)], words);
        cluster.configure(Node::Primary, SETTINGS);
        fs::write(data.join("pg_hba.conf"), HBA).expect("write pg_hba.conf");
        cluster.start_node(Node::Primary);
        let primary = cluster.port(Node::Primary).to_string();
        for i in 0..standbys {
            let data = cluster.add_node().join("data");
            let args = ["-p", &primary, "-D", path_str(&data)];
            let words = "-h 127.0.0.1 -U postgres -R -X stream -c fast --no-sync";
            cluster.run(Node::Standby(i), "pg_basebackup", &args, words);
            cluster.configure(Node::Standby(i), "");
            cluster.start_node(Node::Standby(i));
        }
        Some(cluster)
    }

    /// The TCP port `node` listens on (on 127.0.0.1).
    pub fn port(&self, node: Node) -> u16 {
        self.nodes[self.index(node)].0
    }

    /// A connection URL for `node`: `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self, node: Node) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port(node))
    }

    /// The connection URL of the primary.
    pub fn primary_url(&self) -> String {
        self.url(Node::Primary)
    }

    /// The connection URL of standby `i`.
    pub fn standby_url(&self, i: usize) -> String {
        self.url(Node::Standby(i))
    }

    /// One URL naming every server, primary first, that connects only to one
    /// accepting writes (`target_session_attrs=read-write`).
    pub fn multi_host_url(&self) -> String {
        let hosts: Vec<_> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.0))
            .collect();
        let hosts = hosts.join(",");
        format!("postgres://postgres@{hosts}/postgres?target_session_attrs=read-write")
    }

    /// Runs `sql` on `node` with `psql` and returns its unaligned, tuples-only
    /// output without the final newline; panics when the statement fails.
    pub fn psql(&self, node: Node, sql: &str) -> String {
        let out = self.try_psql(node, sql);
        out.unwrap_or_else(|e| panic!("{node:?} failed to run `{sql}`: {e}"))
    }

    /// Like [`PgCluster::psql`], but returns `psql`'s error message when the
    /// statement fails (for example a write on a standby).
    pub fn try_psql(&self, node: Node, sql: &str) -> Result<String, String> {
        let port = self.port(node).to_string();
        let words = "-X -qAt -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d postgres";
        let out = self.output("psql", &["-p", &port, "-c", sql], words);
        let out = out.map_err(|e| format!("cannot run psql: {e}"))?;
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim_end().to_string();
        match out.status.success() {
            true => Ok(text(&out.stdout)),
            false => Err(text(&out.stderr)),
        }
    }

    /// Sets a server setting on `node` (for example `log_statement` to `all`,
    /// so [`PgCluster::log`] shows every statement it runs) and reloads the
    /// server if it is running; settings that need a restart apply at its next start.
    pub fn set_config(&self, node: Node, name: &str, value: &str) {
        self.configure(node, &format!("{name} = '{}'\n", value.replace('\'', "''")));
        if self.home(node).join("data/postmaster.pid").exists() {
            self.pg_ctl(node, &["reload"], "");
        }
    }

    /// Everything `node` has logged so far.
    pub fn log(&self, node: Node) -> String {
        let log = fs::read(self.home(node).join("server.log"));
        String::from_utf8_lossy(&log.unwrap_or_default()).into_owned()
    }

    /// Shuts `node` down cleanly (`pg_ctl stop -m fast`) and waits until it has.
    pub fn stop(&self, node: Node) {
        self.pg_ctl(node, &["stop"], "-m fast -w -t 30");
    }

    /// Kills `node` as a crash would (`pg_ctl stop -m immediate`): on its next
    /// start it recovers from its WAL.
    pub fn crash(&self, node: Node) {
        self.pg_ctl(node, &["stop"], "-m immediate -w -t 30");
    }

    /// Starts `node` (again, after [`PgCluster::stop`] or [`PgCluster::crash`])
    /// and returns once it accepts connections.
    pub fn start_node(&self, node: Node) {
        let log = self.home(node).join("server.log");
        self.pg_ctl(node, &["start", "-l", path_str(&log)], "-w -t 30");
        let ready = || self.try_psql(node, "SELECT 1").is_ok();
        self.wait_until(node, "accept connections", ready);
    }

    /// Promotes standby `i` to primary (`pg_ctl promote`) and returns once it
    /// accepts writes.
    pub fn promote(&self, i: usize) {
        let node = Node::Standby(i);
        self.pg_ctl(node, &["promote"], "-w -t 30");
        let sql = "SELECT NOT pg_is_in_recovery()";
        let writable = || self.try_psql(node, sql).is_ok_and(|out| out == "t");
        self.wait_until(node, "accept writes after promotion", writable);
    }

    /// Waits until standby `i` has replayed everything committed on the
    /// primary so far (up to the primary's `pg_current_wal_lsn()`).
    pub fn wait_replayed(&self, i: usize) {
        // Commits are asynchronous: a synchronous one that writes WAL (a
        // message only logical decoding reads) first writes out all earlier ones.
        let flush = "SET synchronous_commit = on; SELECT pg_logical_emit_message(true, 'sync', '')";
        self.psql(Node::Primary, flush);
        let lsn = self.psql(Node::Primary, "SELECT pg_current_wal_lsn()");
        let sql = format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn");
        let node = Node::Standby(i);
        let replayed = || self.try_psql(node, &sql).is_ok_and(|out| out == "t");
        self.wait_until(node, &format!("replay the WAL up to {lsn}"), replayed);
    }

    fn index(&self, node: Node) -> usize {
        let index = match node {
            Node::Primary => 0,
            Node::Standby(i) => i + 1,
        };
        assert!(index < self.nodes.len(), "the cluster has no {node:?}");
        index
    }

    fn home(&self, node: Node) -> &Path {
        &self.nodes[self.index(node)].1
    }

    /// Reserves a free port and a directory, owned by the servers' user, for
    /// the next server, and returns the directory.
    fn add_node(&mut self) -> PathBuf {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("a free port").port();
        let home = self.dir.path().join(format!("node{}", self.nodes.len()));
        fs::create_dir(&home).expect("create a server directory");
        if self.run_as != RunAs::Me {
            let chown = ["-R", "postgres:", path_str(&home)];
            let owned = succeeds(Command::new("chown").args(chown));
            assert!(owned, "cannot chown {home:?} to postgres");
        }
        self.nodes.push((port, home.clone()));
        home
    }

    /// Appends `settings` and then `node`'s own port and socket directory
    /// (which win over the ones a standby copied from the primary) to its
    /// `postgresql.conf`.
    fn configure(&self, node: Node, settings: &str) {
        let (port, home) = (self.port(node), self.home(node));
        let path = home.join("data/postgresql.conf");
        let mut conf = fs::read_to_string(&path).expect("read postgresql.conf");
        conf += &format!("{settings}\nlisten_addresses = '127.0.0.1'\nport = {port}\n");
        conf += &format!("unix_socket_directories = '{}'\n", home.display());
        fs::write(&path, conf).expect("write postgresql.conf");
    }

    /// Runs `pg_ctl ARGS -D DATA WORDS` on `node`.
    fn pg_ctl(&self, node: Node, args: &[&str], words: &str) {
        let data = self.home(node).join("data");
        let args = [args, &["-D", path_str(&data)]].concat();
        self.run(node, "pg_ctl", &args, words);
    }

    /// Runs a server program for `node`, panicking with its output and the end
    /// of the node's log when it fails.
    fn run(&self, node: Node, program: &str, args: &[&str], words: &str) {
        let out = self.output(program, args, words);
        let out = out.unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{program} {args:?} for {node:?} failed: {stdout}{stderr}\n--- its log ends ---\n{}",
            self.log_tail(node)
        );
    }

    /// Runs a program of the server binaries as the servers' user, with `args`
    /// and then the whitespace-separated `words` as its arguments.
    fn output(&self, program: &str, args: &[&str], words: &str) -> std::io::Result<Output> {
        let program = self.bindir.join(program);
        let mut argv = vec![path_str(&program)];
        argv.extend(args.iter().copied().chain(words.split_whitespace()));
        let mut command = match self.run_as {
            RunAs::Me => Command::new(argv[0]),
            RunAs::Runuser => Command::new("runuser"),
            RunAs::Su => Command::new("su"),
        };
        match self.run_as {
            RunAs::Me => command.args(&argv[1..]),
            RunAs::Runuser => command.args(["-u", "postgres", "--"]).args(&argv),
            RunAs::Su => {
                let quoted: Vec<_> = argv
                    .iter()
                    .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
                    .collect();
                command.args(["postgres", "-s", "/bin/sh", "-c", &quoted.join(" ")])
            }
        };
        // The servers' user may not be able to enter the test's working directory.
        command
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
    }

    /// Polls `done` every 100 ms, panicking with `node`'s log tail after [`DEADLINE`].
    fn wait_until(&self, node: Node, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{node:?} did not {what} within {DEADLINE:?}\n--- its log ends ---\n{}",
                self.log_tail(node)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tail(&self, node: Node) -> String {
        let log = self.log(node);
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        for (_, home) in &self.nodes {
            let data = home.join("data");
            if data.join("postmaster.pid").exists() {
                let args = ["stop", "-D", path_str(&data)];
                let _ = self.output("pg_ctl", &args, "-m immediate -w -t 30");
            }
        }
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn succeeds(command: &mut Command) -> bool {
    let status = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
    status.is_ok_and(|s| s.success())
}

/// Skips (returns `None` after saying why), or fails under `CI`.
fn unavailable(why: &str) -> Option<PgCluster> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    assert!(!ci, "CI needs a PostgreSQL test cluster, but {why}");
    eprintln!("skipping: no PostgreSQL test cluster: {why}");
    None
}

/// Whether this process runs as root (effective uid 0).
fn is_root() -> bool {
    if let Ok(status) = fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("Uid:")) {
            // Real, effective, saved and filesystem uid: the effective one counts.
            return line.split_whitespace().nth(2) == Some("0");
        }
    }
    let id = Command::new("id").arg("-u").output();
    id.is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `pg_config --bindir` if it holds `initdb`, else the highest
/// `/usr/lib/postgresql/VERSION/bin` that does.
fn find_bindir() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && dir.join("initdb").is_file() {
            return Some(dir);
        }
    }
    // The major version: "15", or "9" of "9.6".
    let version = |name: &str| name.split('.').next()?.parse::<u32>().ok();
    let versions = fs::read_dir("/usr/lib/postgresql").ok()?.flatten();
    let bins = versions.filter_map(|e| Some((version(e.file_name().to_str()?)?, e.path())));
    let bins = bins.map(|(v, dir)| (v, dir.join("bin")));
    bins.filter(|(_, bin)| bin.join("initdb").is_file())
        .max()
        .map(|(_, bin)| bin)
}
