//! `gatehouse breached import`, `check` and `verify`, run as a real process
//! on corpora the tests write in the Pwned Passwords download's format.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use flate2::write::GzEncoder;
use sha1::{Digest, Sha1};

use crate::common::{run, Run};

/// The `gatehouse` binary in `dir`, on the package's Rocket.toml and
/// nothing from the caller's `ROCKET_*` environment.
fn gatehouse(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ROCKET_") {
            command.env_remove(key);
        }
    }
    command
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env(
            "ROCKET_CONFIG",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../Rocket.toml"),
        )
        .env("ROCKET_LOG_LEVEL", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn breached(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut command = gatehouse(dir);
    command.arg("breached").args(args);
    run(command, stdin)
}

fn line(password: &str, count: u64) -> String {
    format!(
        "{}:{count}",
        hex::encode_upper(Sha1::digest(password.as_bytes()))
    )
}

/// A download of `lines` with CRLF endings, as the downloader writes it.
fn plain(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
    fs::write(&path, text).unwrap();
    path
}

/// The same, gzip-compressed, with LF endings.
fn gzip(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
    for l in lines {
        writeln!(gz, "{l}").unwrap();
    }
    fs::write(&path, gz.finish().unwrap()).unwrap();
    path
}

fn exit_code(run: &Run) -> Option<i32> {
    run.status.code()
}

/// Some hashes of passwords nobody checks here, and `password` (seen
/// often) and `sunshine` (seen once) in two downloads, plain and gzip.
fn corpus(dir: &Path) -> [PathBuf; 2] {
    let mut first: Vec<String> = (0..300).map(|i| line(&format!("other {i}"), 2)).collect();
    first.push(line("password", 9_545_824));
    let mut second: Vec<String> = (300..600).map(|i| line(&format!("other {i}"), 2)).collect();
    second.push(line("sunshine", 1));
    [
        plain(dir, "pwned-1.txt", &first),
        gzip(dir, "pwned-2.txt.gz", &second),
    ]
}

fn import(dir: &Path, files: &[PathBuf], extra: &[&str]) -> Run {
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend_from_slice(extra);
    breached(dir, &args, None)
}

#[test]
fn breached_import_then_check_answers_listed_or_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    let imported = import(dir.path(), &files, &["--output", "filter.bin"]);
    imported.assert_success();
    assert!(
        imported.stdout.contains("602 lines read") && imported.stdout.contains("filter.bin"),
        "{}",
        imported.stdout
    );
    assert_eq!(
        imported.stderr, "",
        "no progress bar when standard error is not a terminal"
    );

    let listed = ("listed\n", Some(0));
    let not_listed = ("not listed\n", Some(1));
    for (input, expected) in [
        ("password\n", listed),
        ("password\r\n", listed),
        ("password", listed),
        ("sunshine\n", listed),
        ("password \n", not_listed),
        ("Password\n", not_listed),
        ("correct horse battery staple\n", not_listed),
    ] {
        let check = breached(
            dir.path(),
            &["check", "--filter", "filter.bin"],
            Some(input),
        );
        assert_eq!(
            (check.stdout.as_str(), exit_code(&check)),
            expected,
            "{input:?}: {}",
            check.stderr
        );
    }
}

#[test]
fn breached_import_min_count_leaves_out_rarer_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    import(
        dir.path(),
        &files,
        &["--min-count", "2", "--output", "filter.bin"],
    )
    .assert_success();
    let check = |password: &str| {
        breached(
            dir.path(),
            &["check", "--filter", "filter.bin"],
            Some(&format!("{password}\n")),
        )
        .stdout
    };
    assert_eq!(check("password"), "listed\n");
    assert_eq!(check("sunshine"), "not listed\n");
}

#[test]
fn breached_commands_use_the_configured_file_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    let filter = dir.path().join("configured.bin");
    let configured = |args: &[&str], stdin: Option<&str>| {
        let mut command = gatehouse(dir.path());
        command
            .env(
                "ROCKET_AUTH",
                format!("{{breached_passwords=\"{}\"}}", filter.display()),
            )
            .arg("breached")
            .args(args);
        run(command, stdin)
    };
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    configured(&args, None).assert_success();
    assert!(filter.is_file(), "written to auth.breached_passwords");
    let check = configured(&["check"], Some("password\n"));
    assert_eq!(check.stdout, "listed\n", "{}", check.stderr);
    configured(&["verify"], None).assert_success();
}

#[test]
fn breached_commands_without_a_file_exit_2_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    let runs = [
        import(dir.path(), &files, &[]),
        breached(dir.path(), &["check"], Some("password\n")),
        breached(dir.path(), &["verify"], None),
    ];
    for refused in runs {
        refused.assert_failure(&["--", "auth.breached_passwords"]);
        assert_eq!(exit_code(&refused), Some(2), "{}", refused.what);
    }
}

#[test]
fn breached_import_refuses_an_ntlm_download_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let ntlm = plain(
        dir.path(),
        "ntlm.txt",
        &[
            line("a", 1),
            line("b", 1),
            "8846F7EAEE8FB117AD06BDD830B7586C:3".to_owned(),
        ],
    );
    let before: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    let refused = import(dir.path(), &[ntlm], &["--output", "filter.bin"]);
    refused.assert_failure(&["ntlm.txt:3:", "NTLM"]);
    assert_eq!(exit_code(&refused), Some(2));
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        before.len(),
        "no filter and no temporary file written"
    );
}

#[test]
fn breached_verify_says_ok_for_a_good_file_and_exits_2_for_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path());
    import(dir.path(), &files, &["--output", "filter.bin"]).assert_success();
    let verified = breached(dir.path(), &["verify", "--filter", "filter.bin"], None);
    verified.assert_success();
    assert!(
        verified.stdout.starts_with("ok: 602 hashes"),
        "{}",
        verified.stdout
    );

    let path = dir.path().join("filter.bin");
    let good = fs::read(&path).unwrap();
    let mut damaged = good.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0xFF;
    fs::write(&path, &damaged).unwrap();
    let verified = breached(dir.path(), &["verify", "--filter", "filter.bin"], None);
    verified.assert_failure(&["filter.bin", "checksum"]);
    assert_eq!(exit_code(&verified), Some(2));

    fs::write(&path, &good[..good.len() - 10]).unwrap();
    for args in [&["verify"][..], &["check"][..]] {
        let mut args = args.to_vec();
        args.extend(["--filter", "filter.bin"]);
        let refused = breached(dir.path(), &args, Some("password\n"));
        refused.assert_failure(&[
            "filter.bin is not a usable breached-password filter",
            "truncated",
        ]);
        assert_eq!(exit_code(&refused), Some(2));
    }
}

#[test]
fn breached_check_of_a_missing_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let check = breached(
        dir.path(),
        &["check", "--filter", "missing.bin"],
        Some("password\n"),
    );
    check.assert_failure(&["cannot open", "missing.bin"]);
    assert_eq!(exit_code(&check), Some(2));
    assert_eq!(check.stdout, "");
}

/// `user add` and `user set-password` refuse a password the configured
/// file lists (exit 1, the reason on stderr) and take one it does not.
#[tokio::test]
async fn user_commands_refuse_a_listed_password() {
    let test = crate::common::TestDb::new().await;
    let leaked = "Quixotic-Lantern-Harbour-91";
    let dir = tempfile::tempdir().unwrap();
    let download = plain(dir.path(), "download.txt", &[line(leaked, 41)]);
    import(dir.path(), &[download], &["--output", "filter.bin"]).assert_success();
    let filter = dir.path().join("filter.bin");
    let user = |args: &[&str], password: &str| {
        let mut command = crate::common::gatehouse(&test);
        command
            .env(
                "ROCKET_AUTH",
                format!("{{breached_passwords=\"{}\"}}", filter.display()),
            )
            .arg("user")
            .args(args);
        run(command, Some(&format!("{password}\n")))
    };
    let add = [
        "add",
        "ada@example.org",
        "--name",
        "Ada",
        "--password-stdin",
    ];
    let refused = user(&add, leaked);
    refused.assert_failure(&["breach"]);
    assert_eq!(exit_code(&refused), Some(1), "{}", refused.stderr);
    user(&add, "violet meadow lantern orbit").assert_success();
    let set = ["set-password", "ada@example.org", "--password-stdin"];
    let refused = user(&set, leaked);
    refused.assert_failure(&["breach"]);
    assert_eq!(exit_code(&refused), Some(1), "{}", refused.stderr);
}
