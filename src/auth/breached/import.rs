//! Pwned Passwords downloads into a filter file, in two passes whose memory
//! is bounded by one shard however large the corpus.
//!
//! Reading: every line is parsed, and the key of each hash seen often
//! enough is appended to its shard's temporary bucket file (8 bytes a hash).
//! Building: one shard at a time, its bucket is read, sorted, freed of
//! duplicates and made into a binary fuse filter, which is appended to the
//! output's temporary file; the header and shard table go in last. The
//! temporary files live next to the output, so the finished file is
//! renamed into place (a reader sees the old file or the new one, never a
//! part), and every one of them is removed when the import fails.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xorf::{BinaryFuse16, DmaSerializable};

use super::format::{
    align, shard_and_key, table_end, Layout, Shard, DESCRIPTOR_LEN, MAX_SHARD_BITS,
};
use super::line::parse_line;
use super::BreachedError;

const _: () = assert!(<BinaryFuse16 as DmaSerializable>::DESCRIPTOR_LEN == DESCRIPTOR_LEN);
const _: () = assert!(MAX_IMPORT_SHARD_BITS <= MAX_SHARD_BITS);

/// A shard is sized for about this many hashes: building its filter takes
/// about 34 bytes a hash, some 140 MB.
const HASHES_PER_SHARD: u64 = 1 << 22;
/// The most shards an import makes by itself: one open bucket file each.
const MAX_IMPORT_SHARD_BITS: u32 = 9;
/// A plain download's bytes per line (`SHA1HEX:COUNT\r\n`), rounded down
/// so that the number of lines is rather over- than underestimated.
const PLAIN_BYTES_PER_LINE: u64 = 44;
/// The same, gzip-compressed (hex digits compress to about half).
const GZIP_BYTES_PER_LINE: u64 = 20;
/// Longer lines are not `SHA1HEX:COUNT` (a count has at most 20 digits).
const MAX_LINE: u64 = 256;
/// Progress is reported every this many lines.
const PROGRESS_LINES: u64 = 1 << 16;

/// How an [`import`] filters and lays out the hashes.
///
/// ```
/// let options = gatehouse::breached::ImportOptions::new().min_count(10);
/// ```
#[derive(Debug, Clone)]
pub struct ImportOptions {
    min_count: u64,
    shard_bits: Option<u32>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            min_count: 1,
            shard_bits: None,
        }
    }
}

impl ImportOptions {
    /// Every hash seen at least once, shards sized from the downloads.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps only the hashes whose line counts them at least `n` times
    /// (default 1).
    pub fn min_count(mut self, n: u64) -> Self {
        self.min_count = n;
        self
    }

    /// Splits the file into 2^`k` shards rather than sizing them from the
    /// downloads (tests that need several shards from a small corpus).
    #[cfg(test)]
    pub(crate) fn shard_bits(mut self, k: u32) -> Self {
        self.shard_bits = Some(k.min(MAX_SHARD_BITS));
        self
    }
}

/// Where an [`import`] has got to, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportProgress {
    /// Reading the downloads: bytes of them read so far, of their total size.
    Reading {
        /// Bytes read so far (compressed bytes for a gzip download).
        read: u64,
        /// The downloads' total size.
        total: u64,
    },
    /// Building the filters: shards written so far, of all.
    Building {
        /// Shards written.
        done: u64,
        /// Shards in the file.
        total: u64,
    },
}

/// What an [`import`] read and wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportSummary {
    /// Hash lines read.
    pub lines: u64,
    /// Of them, those counted at least the minimum count.
    pub kept: u64,
    /// Distinct hashes in the file.
    pub hashes: u64,
    /// Shards in the file.
    pub shards: u64,
    /// The file's size in bytes.
    pub bytes: u64,
}

/// Reads the Pwned Passwords `downloads` (lines `SHA1HEX:COUNT`, any order,
/// CRLF or LF, plain or gzip) and writes the filter file to `output`,
/// replacing it atomically. `progress` is called now and then.
///
/// A line of another kind (an NTLM hash, a suffix without its prefix) or
/// any malformed line fails the import with the file's name and the line's
/// number; then nothing is written and no temporary file is left.
///
/// ```no_run
/// use gatehouse::breached::{import, ImportOptions};
///
/// let summary = import(
///     &["pwnedpasswords.txt"],
///     "breached-passwords.bin".as_ref(),
///     &ImportOptions::new(),
///     |_progress| {},
/// )?;
/// println!("{} hashes", summary.hashes);
/// # Ok::<(), gatehouse::breached::BreachedError>(())
/// ```
pub fn import<P: AsRef<Path>>(
    downloads: &[P],
    output: &Path,
    options: &ImportOptions,
    mut progress: impl FnMut(ImportProgress),
) -> Result<ImportSummary, BreachedError> {
    let mut total = 0;
    let mut estimated_lines = 0;
    for download in downloads {
        let path = download.as_ref();
        let (len, gzip) = sniff(path)?;
        total += len;
        estimated_lines += len
            / if gzip {
                GZIP_BYTES_PER_LINE
            } else {
                PLAIN_BYTES_PER_LINE
            };
    }
    let shard_bits = options
        .shard_bits
        .unwrap_or_else(|| shard_bits_for(estimated_lines));

    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let scratch = tempfile::Builder::new()
        .prefix(".breached-import-")
        .tempdir_in(dir)
        .map_err(BreachedError::io("create a temporary directory in", dir))?;
    let mut buckets = Buckets::create(scratch.path(), shard_bits)?;
    let mut summary = ImportSummary {
        lines: 0,
        kept: 0,
        hashes: 0,
        shards: 1 << shard_bits,
        bytes: 0,
    };
    let mut read_before = 0;
    for download in downloads {
        let path = download.as_ref();
        let read = read_download(path, options.min_count, &mut buckets, &mut summary, |read| {
            progress(ImportProgress::Reading {
                read: read_before + read,
                total,
            })
        })?;
        read_before += read;
    }
    progress(ImportProgress::Reading { read: total, total });
    let buckets = buckets.finish()?;
    build(
        &buckets,
        shard_bits,
        options.min_count,
        dir,
        output,
        &mut summary,
        &mut progress,
    )?;
    Ok(summary)
}

/// The smallest k that gives shards of about [`HASHES_PER_SHARD`] hashes.
fn shard_bits_for(estimated_lines: u64) -> u32 {
    let mut k = 0;
    while k < MAX_IMPORT_SHARD_BITS && estimated_lines >> k > HASHES_PER_SHARD {
        k += 1;
    }
    k
}

/// The file's size and whether it is gzip (its first two bytes).
fn sniff(path: &Path) -> Result<(u64, bool), BreachedError> {
    let file = File::open(path).map_err(BreachedError::io("open", path))?;
    let len = file.metadata().map_err(BreachedError::io("read", path))?.len();
    let mut magic = Vec::with_capacity(2);
    file.take(2)
        .read_to_end(&mut magic)
        .map_err(BreachedError::io("read", path))?;
    Ok((len, magic == [0x1f, 0x8b]))
}

/// A reader that counts the bytes read through it.
struct Counted<'a, R> {
    inner: R,
    read: &'a Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// Reads one download into the buckets; answers the bytes read from it.
fn read_download(
    path: &Path,
    min_count: u64,
    buckets: &mut Buckets,
    summary: &mut ImportSummary,
    mut progress: impl FnMut(u64),
) -> Result<u64, BreachedError> {
    let file = File::open(path).map_err(BreachedError::io("open", path))?;
    let read = Cell::new(0);
    let mut raw = BufReader::with_capacity(
        1 << 16,
        Counted {
            inner: file,
            read: &read,
        },
    );
    let gzip = raw
        .fill_buf()
        .map_err(BreachedError::io("read", path))?
        .starts_with(&[0x1f, 0x8b]);
    let mut lines = Lines {
        path,
        min_count,
        buckets,
        summary,
        number: 0,
        progress: || progress(read.get()),
    };
    if gzip {
        let inflated = flate2::bufread::MultiGzDecoder::new(raw);
        lines.read(BufReader::with_capacity(1 << 16, inflated))?;
    } else {
        lines.read(raw)?;
    }
    Ok(read.get())
}

/// The line loop of one download.
struct Lines<'a, F> {
    path: &'a Path,
    min_count: u64,
    buckets: &'a mut Buckets,
    summary: &'a mut ImportSummary,
    number: u64,
    progress: F,
}

impl<F: FnMut()> Lines<'_, F> {
    fn read(&mut self, mut reader: impl BufRead) -> Result<(), BreachedError> {
        let mut line = Vec::with_capacity(MAX_LINE as usize);
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_LINE)
                .read_until(b'\n', &mut line)
                .map_err(BreachedError::io("read", self.path))?;
            if n == 0 {
                return Ok(());
            }
            self.number += 1;
            let text = match line.strip_suffix(b"\n") {
                Some(text) => text,
                None if n as u64 == MAX_LINE => {
                    return Err(self.refuse(format!(
                        "a line longer than {MAX_LINE} bytes; expected `SHA1HEX:COUNT`"
                    )))
                }
                None => &line,
            };
            match parse_line(text) {
                Ok(Some(entry)) => {
                    self.summary.lines += 1;
                    if entry.count >= self.min_count {
                        self.summary.kept += 1;
                        self.buckets.push(&entry.sha1)?;
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(self.refuse(e.to_string())),
            }
            if self.number.is_multiple_of(PROGRESS_LINES) {
                (self.progress)();
            }
        }
    }

    fn refuse(&self, reason: String) -> BreachedError {
        BreachedError::Line {
            path: self.path.to_owned(),
            line: self.number,
            reason,
        }
    }
}

/// One temporary file per shard, holding its keys as they were read.
struct Buckets {
    shard_bits: u32,
    files: Vec<(PathBuf, BufWriter<File>)>,
}

impl Buckets {
    fn create(dir: &Path, shard_bits: u32) -> Result<Self, BreachedError> {
        let files = (0..1usize << shard_bits)
            .map(|shard| -> Result<_, BreachedError> {
                let path = dir.join(format!("{shard:05}"));
                let file = File::create(&path).map_err(BreachedError::io("create", &path))?;
                Ok((path, BufWriter::with_capacity(1 << 16, file)))
            })
            .collect::<Result<_, BreachedError>>()?;
        Ok(Self { shard_bits, files })
    }

    fn push(&mut self, sha1: &[u8; 20]) -> Result<(), BreachedError> {
        let (shard, key) = shard_and_key(sha1, self.shard_bits);
        let (path, file) = &mut self.files[shard];
        file.write_all(&key.to_ne_bytes())
            .map_err(BreachedError::io("write", path))
    }

    /// Flushes and closes every bucket; answers their paths in shard order.
    fn finish(self) -> Result<Vec<PathBuf>, BreachedError> {
        self.files
            .into_iter()
            .map(|(path, file)| -> Result<PathBuf, BreachedError> {
                file.into_inner()
                    .map_err(|e| BreachedError::io("write", &path)(e.into_error()))?;
                Ok(path)
            })
            .collect()
    }
}

/// A bucket's keys, sorted and without duplicates; the bucket is removed.
fn sorted_keys(path: &Path) -> Result<Vec<u64>, BreachedError> {
    let mut file = File::open(path).map_err(BreachedError::io("open", path))?;
    let len = file.metadata().map_err(BreachedError::io("read", path))?.len();
    let mut keys = Vec::with_capacity((len / 8) as usize);
    let mut chunk = vec![0; 1 << 16];
    let mut filled = 0;
    loop {
        let n = file
            .read(&mut chunk[filled..])
            .map_err(BreachedError::io("read", path))?;
        filled += n;
        let whole = filled - filled % 8;
        keys.extend(chunk[..whole].chunks_exact(8).map(|word| {
            let mut bytes = [0; 8];
            bytes.copy_from_slice(word);
            u64::from_ne_bytes(bytes)
        }));
        chunk.copy_within(whole..filled, 0);
        filled -= whole;
        if n == 0 {
            break;
        }
    }
    drop(file);
    std::fs::remove_file(path).map_err(BreachedError::io("remove", path))?;
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// Builds one filter per bucket into a temporary file next to `output`,
/// then renames it to `output`.
fn build(
    buckets: &[PathBuf],
    shard_bits: u32,
    min_count: u64,
    dir: &Path,
    output: &Path,
    summary: &mut ImportSummary,
    progress: &mut impl FnMut(ImportProgress),
) -> Result<(), BreachedError> {
    let mut file = tempfile::Builder::new()
        .prefix(".breached-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(BreachedError::io("create a temporary file in", dir))?;
    let temp = file.path().to_owned();
    let mut out = BufWriter::with_capacity(1 << 20, &mut file);
    let mut position = table_end(shard_bits);
    // The header and table are written last, when the offsets are known.
    io::copy(&mut io::repeat(0).take(position), &mut out).map_err(BreachedError::io("write", &temp))?;
    let mut shards = Vec::with_capacity(buckets.len());
    for (index, bucket) in buckets.iter().enumerate() {
        let padding = align(position) - position;
        io::copy(&mut io::repeat(0).take(padding), &mut out).map_err(BreachedError::io("write", &temp))?;
        position += padding;
        let keys = sorted_keys(bucket)?;
        if keys.is_empty() {
            shards.push(Shard::empty(position));
        } else {
            let filter = BinaryFuse16::try_from(&keys).map_err(|reason| BreachedError::Build {
                shard: index,
                reason,
            })?;
            let mut descriptor = [0; DESCRIPTOR_LEN];
            filter.dma_copy_descriptor_to(&mut descriptor);
            let fingerprints = filter.dma_fingerprints();
            out.write_all(fingerprints)
                .map_err(BreachedError::io("write", &temp))?;
            shards.push(Shard {
                descriptor,
                offset: position,
                len: fingerprints.len() as u64,
                hashes: keys.len() as u64,
                checksum: crc32fast::hash(fingerprints),
            });
            position += fingerprints.len() as u64;
            summary.hashes += keys.len() as u64;
        }
        progress(ImportProgress::Building {
            done: index as u64 + 1,
            total: buckets.len() as u64,
        });
    }
    out.flush().map_err(BreachedError::io("write", &temp))?;
    drop(out);
    let layout = Layout {
        shard_bits,
        file_len: position,
        hashes: summary.hashes,
        min_count,
        shards,
    };
    let head = layout.encode();
    let finish = |file: &mut File| -> io::Result<()> {
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&head)?;
        file.sync_all()?;
        // Written by an operator, read by the server's own user.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
        Ok(())
    };
    finish(file.as_file_mut()).map_err(BreachedError::io("write", &temp))?;
    file.persist(output)
        .map_err(|e| BreachedError::io("write", output)(e.error))?;
    // The rename itself survives a crash once the directory is synced.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    summary.bytes = position;
    Ok(())
}

#[cfg(test)]
mod tests;
