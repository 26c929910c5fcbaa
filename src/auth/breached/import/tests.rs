//! Imports of corpora the tests write themselves, read back through
//! [`BreachedPasswords`] as the server and the command line read them.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use rand::Rng;
use sha1::{Digest, Sha1};

use super::{import, ImportOptions, ImportProgress};
use crate::auth::breached::{BreachedError, BreachedPasswords};

/// Passwords every corpus here lists.
const LISTED: [&str; 3] = ["password", "123456", "correct horse battery staple"];

/// How a download is written.
#[derive(Clone, Copy)]
enum Shape {
    Lf,
    Crlf,
    Gzip,
}

fn sha1_hex(password: &str) -> String {
    hex::encode_upper(Sha1::digest(password.as_bytes()))
}

fn line(password: &str, count: u64) -> String {
    format!("{}:{count}", sha1_hex(password))
}

/// Writes `lines` to `dir/name` in `shape`; answers the path.
fn download(dir: &Path, name: &str, lines: &[String], shape: Shape) -> PathBuf {
    let path = dir.join(name);
    let ending = match shape {
        Shape::Crlf => "\r\n",
        Shape::Lf | Shape::Gzip => "\n",
    };
    let text: String = lines.iter().map(|l| format!("{l}{ending}")).collect();
    match shape {
        Shape::Gzip => {
            let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text.as_bytes()).unwrap();
            fs::write(&path, gz.finish().unwrap()).unwrap();
        }
        Shape::Lf | Shape::Crlf => fs::write(&path, text).unwrap(),
    }
    path
}

/// Random passwords, none of them in [`LISTED`].
fn random_passwords(n: usize) -> Vec<String> {
    let mut rng = rand::thread_rng();
    (0..n)
        .map(|_| format!("random {:032x}", rng.gen::<u128>()))
        .collect()
}

/// The files in `dir`, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_imported_password_is_listed_from_plain_crlf_and_gzip_downloads() {
    let dir = tempfile::tempdir().unwrap();
    let passwords = random_passwords(6_000);
    let mut lines: Vec<Vec<String>> = passwords
        .chunks(2_000)
        .map(|chunk| chunk.iter().map(|p| line(p, 3)).collect())
        .collect();
    lines[0].extend(LISTED.iter().map(|p| line(p, 1_000)));
    // Case does not matter: the downloader writes upper case.
    lines[1].push(line(LISTED[0], 7).to_lowercase());
    let files = [
        download(dir.path(), "a.txt", &lines[0], Shape::Lf),
        download(dir.path(), "b.txt", &lines[1], Shape::Crlf),
        download(dir.path(), "c.txt.gz", &lines[2], Shape::Gzip),
    ];
    let output = dir.path().join("breached.bin");

    let summary = import(
        &files,
        &output,
        &ImportOptions::new().shard_bits(3),
        |_| {},
    )
    .unwrap();

    assert_eq!(summary.lines, 6_004);
    assert_eq!(summary.hashes, 6_003, "the repeated hash is kept once");
    assert_eq!(summary.shards, 8);
    assert_eq!(summary.bytes, fs::metadata(&output).unwrap().len());
    let breached = BreachedPasswords::open(&output).unwrap();
    assert_eq!(breached.hashes(), 6_003);
    breached.verify().unwrap();
    for password in LISTED.iter().copied().chain(passwords.iter().map(|p| p.as_str())) {
        assert!(breached.contains(password), "{password} is listed");
    }
    let others = random_passwords(20_000);
    let false_positives = others.iter().filter(|p| breached.contains(p)).count();
    assert!(
        false_positives <= 5,
        "{false_positives} of 20,000 unlisted passwords were listed"
    );
    assert_eq!(
        names_in(dir.path()),
        ["a.txt", "b.txt", "breached.bin", "c.txt.gz"],
        "no temporary file is left"
    );
}

#[test]
fn duplicates_within_and_across_downloads_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let a = download(
        dir.path(),
        "a.txt",
        &[line("one", 1), line("two", 1), line("one", 4)],
        Shape::Lf,
    );
    let b = download(dir.path(), "b.txt", &[line("two", 2)], Shape::Gzip);
    let output = dir.path().join("breached.bin");
    let summary = import(&[a, b], &output, &ImportOptions::new(), |_| {}).unwrap();
    assert_eq!((summary.lines, summary.kept, summary.hashes), (4, 4, 2));
    let breached = BreachedPasswords::open(&output).unwrap();
    assert!(breached.contains("one") && breached.contains("two"));
    assert!(!breached.contains("three"));
}

#[test]
fn min_count_keeps_only_hashes_seen_that_often() {
    let dir = tempfile::tempdir().unwrap();
    let file = download(
        dir.path(),
        "counts.txt",
        &[line("seen once", 1), line("seen five", 5), line("seen ten", 10)],
        Shape::Crlf,
    );
    let output = dir.path().join("breached.bin");
    let summary = import(&[file], &output, &ImportOptions::new().min_count(5), |_| {}).unwrap();
    assert_eq!((summary.lines, summary.kept, summary.hashes), (3, 2, 2));
    let breached = BreachedPasswords::open(&output).unwrap();
    assert!(!breached.contains("seen once"));
    assert!(breached.contains("seen five"));
    assert!(breached.contains("seen ten"));
}

#[test]
fn shards_without_hashes_answer_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let file = download(dir.path(), "one.txt", &[line(LISTED[0], 9)], Shape::Lf);
    let output = dir.path().join("breached.bin");
    let summary = import(&[file], &output, &ImportOptions::new().shard_bits(4), |_| {}).unwrap();
    assert_eq!((summary.hashes, summary.shards), (1, 16));
    let breached = BreachedPasswords::open(&output).unwrap();
    breached.verify().unwrap();
    assert!(breached.contains(LISTED[0]));
    for password in random_passwords(2_000) {
        assert!(!breached.contains(&password), "{password} is not listed");
    }
}

/// Runs an import that must fail; answers its message after checking that
/// nothing was written next to the downloads.
fn refused(dir: &Path, files: &[PathBuf]) -> String {
    let before = names_in(dir);
    let output = dir.join("breached.bin");
    let error = import(files, &output, &ImportOptions::new(), |_| {})
        .expect_err("the import is refused");
    assert!(matches!(error, BreachedError::Line { .. }), "{error:?}");
    assert_eq!(names_in(dir), before, "no output and no temporary file");
    error.to_string()
}

#[test]
fn an_ntlm_download_is_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = download(dir.path(), "good.txt", &[line("a", 1)], Shape::Lf);
    let ntlm = download(
        dir.path(),
        "ntlm.txt",
        &[
            line("b", 1),
            "8846F7EAEE8FB117AD06BDD830B7586C:2".to_owned(),
        ],
        Shape::Crlf,
    );
    let message = refused(dir.path(), &[good, ntlm.clone()]);
    assert!(
        message.starts_with(&format!("{}:2: ", ntlm.display())),
        "{message}"
    );
    assert!(message.contains("NTLM"), "{message}");
}

#[test]
fn a_suffix_only_download_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let suffix = format!("{}:4", &sha1_hex("x")[5..]);
    let file = download(dir.path(), "range.txt", &[suffix], Shape::Lf);
    let message = refused(dir.path(), std::slice::from_ref(&file));
    assert!(message.starts_with(&format!("{}:1: ", file.display())), "{message}");
    assert!(message.contains("prefix"), "{message}");
}

#[test]
fn a_malformed_line_in_a_gzip_download_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = (0..100).map(|i| line(&format!("p{i}"), 1)).collect();
    lines[76] = "not a hash".to_owned();
    let file = download(dir.path(), "bad.txt.gz", &lines, Shape::Gzip);
    let message = refused(dir.path(), std::slice::from_ref(&file));
    assert!(message.starts_with(&format!("{}:77: ", file.display())), "{message}");
    assert!(message.contains("SHA1HEX:COUNT"), "{message}");
}

#[test]
fn an_endless_line_is_refused_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("binary.txt");
    fs::write(&file, vec![b'A'; 1 << 20]).unwrap();
    let message = refused(dir.path(), &[file]);
    assert!(message.contains(":1: a line longer than"), "{message}");
}

#[test]
fn a_failed_import_leaves_the_previous_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let good = download(dir.path(), "good.txt", &[line(LISTED[1], 1)], Shape::Lf);
    let output = dir.path().join("breached.bin");
    import(&[good], &output, &ImportOptions::new(), |_| {}).unwrap();
    let written = fs::read(&output).unwrap();
    let bad = download(dir.path(), "bad.txt", &["xyz:1".to_owned()], Shape::Lf);
    import(&[bad], &output, &ImportOptions::new(), |_| {}).expect_err("a bad line");
    assert_eq!(fs::read(&output).unwrap(), written);
    assert!(BreachedPasswords::open(&output).unwrap().contains(LISTED[1]));
}

#[test]
fn a_missing_download_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let error = import(&[&missing], &dir.path().join("out.bin"), &ImportOptions::new(), |_| {})
        .expect_err("nothing to read");
    assert!(
        error.to_string().starts_with(&format!("cannot open {}", missing.display())),
        "{error}"
    );
    assert!(names_in(dir.path()).is_empty());
}

#[test]
fn progress_ends_with_everything_read_and_every_shard_built() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..70_000).map(|i| line(&format!("p{i}"), 1)).collect();
    let file = download(dir.path(), "many.txt", &lines, Shape::Lf);
    let size = fs::metadata(&file).unwrap().len();
    let mut seen = Vec::new();
    import(
        &[file],
        &dir.path().join("out.bin"),
        &ImportOptions::new().shard_bits(2),
        |p| seen.push(p),
    )
    .unwrap();
    let reads: Vec<u64> = seen
        .iter()
        .filter_map(|p| match p {
            ImportProgress::Reading { read, total } => {
                assert_eq!(*total, size);
                Some(*read)
            }
            _ => None,
        })
        .collect();
    assert!(reads.len() >= 2, "reported while reading: {reads:?}");
    assert!(reads.windows(2).all(|w| w[0] <= w[1]), "{reads:?}");
    assert_eq!(reads.last(), Some(&size));
    let built: Vec<&ImportProgress> = seen
        .iter()
        .filter(|p| matches!(p, ImportProgress::Building { .. }))
        .collect();
    assert_eq!(built.len(), 4);
    assert_eq!(
        built.last(),
        Some(&&ImportProgress::Building { done: 4, total: 4 })
    );
}

/// An import of a few hashes into four shards; answers the file's path.
fn small_filter(dir: &Path) -> PathBuf {
    let lines: Vec<String> = (0..500).map(|i| line(&format!("p{i}"), 1)).collect();
    let file = download(dir, "d.txt", &lines, Shape::Lf);
    let output = dir.join("breached.bin");
    import(&[file], &output, &ImportOptions::new().shard_bits(2), |_| {}).unwrap();
    output
}

fn open_error(path: &Path) -> String {
    let error = BreachedPasswords::open(path).expect_err("a damaged file is refused");
    assert!(matches!(error, BreachedError::Damaged { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "{} is not a usable breached-password filter: ",
            path.display()
        )),
        "{message}"
    );
    message
}

#[test]
fn a_changed_fingerprint_opens_but_fails_verify() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_filter(dir.path());
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let breached = BreachedPasswords::open(&path).unwrap();
    let message = breached.verify().expect_err("damaged").to_string();
    assert!(message.contains("shard 3 do not match their checksum"), "{message}");
}

#[test]
fn a_damaged_header_table_or_length_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = small_filter(dir.path());
    let good = fs::read(&path).unwrap();

    fs::write(&path, &good[..good.len() - 1]).unwrap();
    assert!(open_error(&path).contains("truncated or changed"));

    let mut table = good.clone();
    table[64 + 64 + 30] ^= 0x40;
    fs::write(&path, &table).unwrap();
    assert!(open_error(&path).contains("checksum"));

    let mut version = good.clone();
    version[8] = 9;
    fs::write(&path, &version).unwrap();
    assert!(open_error(&path).contains("version 9"));

    fs::write(&path, "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:1\n".repeat(4)).unwrap();
    assert!(open_error(&path).contains("does not start like a breached-password filter"));

    fs::write(&path, b"").unwrap();
    assert!(open_error(&path).contains("shorter than the header"));

    fs::write(&path, &good).unwrap();
    BreachedPasswords::open(&path).unwrap().verify().unwrap();
}

#[test]
fn the_file_read_from_memory_answers_like_the_mapped_one() {
    use crate::auth::breached::filter::{AlignedBytes, FilterView};
    let dir = tempfile::tempdir().unwrap();
    let path = small_filter(dir.path());
    let view = FilterView::new(AlignedBytes::copy_of(&fs::read(&path).unwrap())).unwrap();
    let sha1 = |password: &[u8]| {
        let mut sha1 = [0; 20];
        sha1.copy_from_slice(&Sha1::digest(password));
        sha1
    };
    let (listed, unlisted) = (sha1(b"p42"), sha1(b"p500"));
    assert!(view.contains_sha1(&listed));
    assert!(!view.contains_sha1(&unlisted));
    view.verify().unwrap();
}

/// The bytes of a small real filter of four shards, made once.
fn small_filter_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        fs::read(small_filter(dir.path())).unwrap()
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// What the `breached_header` fuzz target checks, on a real file: with
    /// any bytes of its header and table changed and the checksum made to
    /// match, it opens to an error or to a filter whose checks and verify
    /// do not panic.
    #[test]
    fn a_changed_table_with_a_matching_checksum_opens_safely_or_not_at_all(
        changes in proptest::collection::vec((0usize..64 + 4 * 64, proptest::prelude::any::<u8>()), 1..6),
        probe in proptest::prelude::any::<[u8; 20]>(),
    ) {
        use crate::auth::breached::filter::{AlignedBytes, FilterView};
        use crate::auth::breached::format::{seal, table_end, MAX_SHARD_BITS};
        let mut file = small_filter_bytes().to_vec();
        for (at, byte) in changes {
            file[at] = byte;
        }
        let shard_bits = u32::from(file[13]);
        if shard_bits <= MAX_SHARD_BITS && table_end(shard_bits) <= file.len() as u64 {
            let end = table_end(shard_bits) as usize;
            seal(&mut file[..end]);
        }
        if let Ok(view) = FilterView::new(AlignedBytes::copy_of(&file)) {
            let _ = view.contains_sha1(&probe);
            let _ = view.verify();
        }
    }
}
