//! `gatehouse breached …`: the Pwned Passwords corpus imported into a
//! filter file, one password checked against it, the file verified.
//!
//! Exit codes: 0 done (`check`: listed), 1 `check`: not listed, 2 any error.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use secrecy::{ExposeSecret, SecretString};

use gatehouse::breached::{import, ImportOptions, ImportProgress};
use gatehouse::{BreachedPasswords, Settings};

#[derive(Debug, Subcommand)]
pub(super) enum BreachedCommand {
    /// Read Pwned Passwords downloads (lines `SHA1HEX:COUNT`, plain or gzip)
    /// and write the filter file, replacing it atomically.
    Import {
        /// The downloaded files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Keep only the hashes seen at least this many times.
        #[arg(long, default_value_t = 1, value_name = "N")]
        min_count: u64,
        /// Where to write the filter file (default: `auth.breached_passwords`).
        #[arg(long, value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Check one password from standard input: prints `listed` (exit 0) or
    /// `not listed` (exit 1).
    Check {
        /// The filter file (default: `auth.breached_passwords`).
        #[arg(long, value_name = "PATH")]
        filter: Option<PathBuf>,
    },
    /// Read the whole filter file and check it against its checksums.
    Verify {
        /// The filter file (default: `auth.breached_passwords`).
        #[arg(long, value_name = "PATH")]
        filter: Option<PathBuf>,
    },
}

/// Exit code of every failure: 1 is `check`'s "not listed".
const ERROR: u8 = 2;

pub(super) fn run(command: BreachedCommand) -> ExitCode {
    let outcome = match command {
        BreachedCommand::Import {
            files,
            min_count,
            output,
        } => {
            configured(output, "--output").and_then(|output| run_import(&files, min_count, output))
        }
        BreachedCommand::Check { filter } => configured(filter, "--filter").and_then(check),
        BreachedCommand::Verify { filter } => configured(filter, "--filter").and_then(verify),
    };
    outcome.unwrap_or_else(|message| {
        eprintln!("error: {message}");
        ExitCode::from(ERROR)
    })
}

/// The path given on the command line, else `auth.breached_passwords`.
fn configured(given: Option<PathBuf>, flag: &str) -> Result<PathBuf, String> {
    if let Some(path) = given {
        return Ok(path);
    }
    let settings = Settings::from_figment(&rocket::Config::figment()).map_err(|e| e.to_string())?;
    settings
        .auth
        .breached_passwords
        .clone()
        .ok_or_else(|| format!("no filter file: pass {flag} PATH or set `auth.breached_passwords`"))
}

fn run_import(files: &[PathBuf], min_count: u64, output: PathBuf) -> Result<ExitCode, String> {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    let reading = ProgressStyle::with_template(
        "reading   [{bar:40}] {binary_bytes}/{binary_total_bytes}, {eta} left",
    )
    .expect("a valid template")
    .progress_chars("=> ");
    let building =
        ProgressStyle::with_template("building  [{bar:40}] shard {pos}/{len}, {eta} left")
            .expect("a valid template")
            .progress_chars("=> ");
    let mut phase = None;
    let summary = import(
        files,
        &output,
        &ImportOptions::new().min_count(min_count),
        |progress| {
            let (name, style, at, total) = match progress {
                ImportProgress::Reading { read, total } => ("reading", &reading, read, total),
                ImportProgress::Building { done, total } => ("building", &building, done, total),
                _ => return,
            };
            if phase != Some(name) {
                phase = Some(name);
                bar.set_style(style.clone());
                bar.set_length(total);
            }
            bar.set_position(at);
        },
    );
    bar.finish_and_clear();
    let summary = summary.map_err(|e| e.to_string())?;
    println!(
        "{} lines read; {} distinct hashes seen at least {min_count} time(s) written to {} \
         ({} bytes, {} shard(s))",
        summary.lines,
        summary.hashes,
        output.display(),
        summary.bytes,
        summary.shards,
    );
    Ok(ExitCode::SUCCESS)
}

fn check(filter: PathBuf) -> Result<ExitCode, String> {
    let breached = BreachedPasswords::open(&filter).map_err(|e| e.to_string())?;
    let password = read_password()?;
    if breached.contains(password.expose_secret()) {
        println!("listed");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("not listed");
        Ok(ExitCode::from(1))
    }
}

/// One line of standard input without its line ending; on a terminal,
/// asked for without echo.
fn read_password() -> Result<SecretString, String> {
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password("Password: ")
            .map(SecretString::from)
            .map_err(|e| format!("cannot read the password: {e}"));
    }
    let mut line = String::new();
    let read = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password: {e}"))?;
    if read == 0 {
        return Err("no password on standard input".into());
    }
    let line = line.strip_suffix('\n').unwrap_or(&line);
    Ok(line.strip_suffix('\r').unwrap_or(line).into())
}

fn verify(filter: PathBuf) -> Result<ExitCode, String> {
    let breached = BreachedPasswords::open(&filter).map_err(|e| e.to_string())?;
    breached.verify().map_err(|e| e.to_string())?;
    println!(
        "ok: {} hashes, {} bytes: {}",
        breached.hashes(),
        breached.file_len(),
        filter.display()
    );
    Ok(ExitCode::SUCCESS)
}
