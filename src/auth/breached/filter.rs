//! The filter file opened for queries: mapped into memory, its header and
//! shard table checked once, its fingerprints read in place.

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use sha1::{Digest, Sha1};
use xorf::{BinaryFuse16Ref, Filter, FilterRef};

use super::format::{shard_and_key, Damage, Layout, HEADER_LEN};
use super::BreachedError;

/// A filter's bytes with their checked layout; queries read the bytes in
/// place. `B` is a memory map in use and an aligned buffer in tests.
pub struct FilterView<B> {
    bytes: B,
    layout: Layout,
}

impl<B: AsRef<[u8]>> FilterView<B> {
    /// Checks the header and shard table of `bytes`, a whole filter file.
    pub fn new(bytes: B) -> Result<Self, Damage> {
        let all = bytes.as_ref();
        // Fingerprints are read as `u16`s where they lie: each shard starts
        // at a multiple of 64 from the start, so the start must be aligned
        // (a memory map starts on a page).
        if all.as_ptr().align_offset(std::mem::align_of::<u16>()) != 0 {
            return Err(Damage("its bytes are not aligned for reading in place".into()));
        }
        let layout = Layout::parse(all, all.len() as u64)?;
        Ok(Self { bytes, layout })
    }

    /// Whether the SHA-1 is (probably) in the filter: never a false
    /// negative, a false positive about once in 65,536.
    pub fn contains_sha1(&self, sha1: &[u8; 20]) -> bool {
        let (index, key) = shard_and_key(sha1, self.layout.shard_bits);
        let shard = &self.layout.shards[index];
        if shard.len == 0 {
            return false;
        }
        // In bounds, aligned and matching the descriptor: `Layout::parse`
        // checked all three, so neither xorf's assertions nor its indexing
        // can fail here.
        let start = shard.offset as usize;
        let fingerprints = &self.bytes.as_ref()[start..start + shard.len as usize];
        BinaryFuse16Ref::from_dma(&shard.descriptor, fingerprints).contains(&key)
    }

    /// Checks every shard's fingerprints against its checksum.
    pub fn verify(&self) -> Result<(), Damage> {
        let bytes = self.bytes.as_ref();
        for (i, shard) in self.layout.shards.iter().enumerate() {
            let start = shard.offset as usize;
            let fingerprints = &bytes[start..start + shard.len as usize];
            if crc32fast::hash(fingerprints) != shard.checksum {
                return Err(Damage(format!(
                    "the fingerprints of shard {i} do not match their checksum"
                )));
            }
        }
        Ok(())
    }
}

/// The breached-password filter file that `gatehouse breached import`
/// writes, opened for checks: about 2.2 bytes per hash, mapped into memory
/// rather than read (the process's own memory does not grow with the
/// file), each check a SHA-1 and three reads in place.
///
/// The file is replaced by renaming a new one over it, never rewritten, so
/// a map stays valid while an import runs; the new file is read by the
/// next [`open`](Self::open).
///
/// ```no_run
/// use gatehouse::BreachedPasswords;
///
/// let breached = BreachedPasswords::open("breached-passwords.bin")?;
/// assert!(breached.contains("password"));
/// # Ok::<(), gatehouse::breached::BreachedError>(())
/// ```
pub struct BreachedPasswords {
    path: PathBuf,
    view: FilterView<Mmap>,
}

impl BreachedPasswords {
    /// Maps the file at `path` and checks its magic, version, byte order,
    /// shard table and length; a damaged file is an error naming the file
    /// and what is wrong, never a panic later.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, BreachedError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(BreachedError::io("open", path))?;
        let metadata = file.metadata().map_err(BreachedError::io("read", path))?;
        if !metadata.is_file() {
            return Err(BreachedError::damaged(path, "it is not a regular file"));
        }
        if metadata.len() < HEADER_LEN as u64 {
            return Err(BreachedError::damaged(
                path,
                format!("it is {} bytes long, shorter than the header", metadata.len()),
            ));
        }
        // SAFETY: the map is only read. Gatehouse replaces the file by
        // renaming a new one over it, which leaves this map on the old
        // file; only a program truncating the file in place could make a
        // read fault.
        let map = unsafe { Mmap::map(&file) }.map_err(BreachedError::io("map", path))?;
        // Each check reads three fingerprints somewhere in the file: reading
        // ahead would fill the page cache with pages nobody asked for.
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Random);
        let view = FilterView::new(map).map_err(|d| BreachedError::damaged(path, d.0))?;
        Ok(Self {
            path: path.to_owned(),
            view,
        })
    }

    /// Whether `password` is listed: its SHA-1 is in the file. A password
    /// that is not listed is answered so about 65,535 times in 65,536; one
    /// that is listed always is.
    pub fn contains(&self, password: &str) -> bool {
        let mut sha1 = [0; 20];
        sha1.copy_from_slice(&Sha1::digest(password.as_bytes()));
        self.view.contains_sha1(&sha1)
    }

    /// Reads the whole file and checks every shard against its checksum.
    ///
    /// ```no_run
    /// # let breached = gatehouse::BreachedPasswords::open("breached-passwords.bin")?;
    /// breached.verify()?;
    /// # Ok::<(), gatehouse::breached::BreachedError>(())
    /// ```
    pub fn verify(&self) -> Result<(), BreachedError> {
        #[cfg(unix)]
        let _ = self.view.bytes.advise(memmap2::Advice::Sequential);
        let verified = self.view.verify();
        #[cfg(unix)]
        let _ = self.view.bytes.advise(memmap2::Advice::Random);
        verified.map_err(|d| BreachedError::damaged(&self.path, d.0))
    }

    /// The number of distinct hashes in the file.
    pub fn hashes(&self) -> u64 {
        self.view.layout.hashes
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.view.layout.file_len
    }
}

impl fmt::Debug for BreachedPasswords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreachedPasswords")
            .field("path", &self.path)
            .field("hashes", &self.hashes())
            .field("shards", &self.view.layout.shards.len())
            .finish()
    }
}

/// Bytes copied into a buffer aligned like a memory map's, for reading a
/// filter that is not a file (tests, fuzzing).
#[cfg(any(test, feature = "internals"))]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

#[cfg(any(test, feature = "internals"))]
impl AlignedBytes {
    /// A copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
            let mut word_bytes = [0; 8];
            word_bytes[..chunk.len()].copy_from_slice(chunk);
            *word = u64::from_ne_bytes(word_bytes);
        }
        Self {
            words,
            len: bytes.len(),
        }
    }
}

#[cfg(any(test, feature = "internals"))]
impl AsRef<[u8]> for AlignedBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the words are initialised and `len` is at most their size
        // in bytes; any byte is a valid `u8` and `u8` needs no alignment.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }
}
