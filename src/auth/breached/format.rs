//! The filter file's layout: a header, a shard table and 2^k binary fuse
//! filters with 16-bit fingerprints, each at an aligned offset.
//!
//! ```text
//! header (64 bytes, integers little-endian)
//!    0  magic "GHBRPW\r\n"
//!    8  version (u32)
//!   12  byte order of the fingerprints (u8: 1 little, 2 big)
//!   13  k: the file holds 2^k shards (u8)
//!   16  CRC-32 of header and shard table, this field read as zero (u32)
//!   24  length of the whole file (u64)
//!   32  distinct hashes in the file (u64)
//!   40  the import's minimum count (u64)
//! shard table: 2^k entries of 64 bytes
//!    0  the filter's descriptor (xorf's 20 bytes)
//!   24  offset of its fingerprints (u64, a multiple of 64)
//!   32  length of its fingerprints in bytes (u64; 0 for a shard without hashes)
//!   40  hashes in the shard (u64)
//!   48  CRC-32 of the fingerprints (u32)
//! fingerprints, shard after shard, each padded to a multiple of 64
//! ```
//!
//! A SHA-1's leading k bits choose its shard and the 64 bits after them are
//! its key there. The fingerprints are in the byte order of the machine that
//! wrote them, because they are read in place as `u16`s; the header says
//! which, and another machine refuses the file rather than misread it.
//!
//! [`Layout::parse`] checks everything a query relies on (magic, version,
//! byte order, the table's checksum, the file's length, each shard's bounds
//! and descriptor), so that a damaged or foreign file is an error at opening
//! and never an out-of-bounds read later. The fingerprints' own checksums
//! are read by `verify` only: checking them means reading the whole file.

use std::fmt;

/// The first eight bytes of every filter file.
pub const MAGIC: [u8; 8] = *b"GHBRPW\r\n";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;
/// Length of the fixed header.
pub const HEADER_LEN: usize = 64;
/// Length of one shard's entry in the table.
pub const ENTRY_LEN: usize = 64;
/// Every shard's fingerprints start at a multiple of this.
pub const ALIGN: u64 = 64;
/// The most shards a file may have: 2^16.
pub const MAX_SHARD_BITS: u32 = 16;
/// Length of xorf's binary fuse descriptor.
pub const DESCRIPTOR_LEN: usize = 20;

const LITTLE_ENDIAN: u8 = 1;
const BIG_ENDIAN: u8 = 2;
const CHECKSUM_AT: usize = 16;

/// This machine's byte order, as the header writes it.
fn native_order() -> u8 {
    if cfg!(target_endian = "little") {
        LITTLE_ENDIAN
    } else {
        BIG_ENDIAN
    }
}

/// One shard's entry in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// xorf's descriptor of the shard's filter (all zero without hashes).
    pub descriptor: [u8; DESCRIPTOR_LEN],
    /// Where its fingerprints start in the file.
    pub offset: u64,
    /// Their length in bytes; 0 when the shard has no hashes.
    pub len: u64,
    /// Distinct hashes in the shard.
    pub hashes: u64,
    /// CRC-32 of the fingerprints.
    pub checksum: u32,
}

impl Shard {
    /// A shard without hashes: no fingerprints, every query answers no.
    pub fn empty(offset: u64) -> Self {
        Self {
            descriptor: [0; DESCRIPTOR_LEN],
            offset,
            len: 0,
            hashes: 0,
            checksum: crc32fast::hash(&[]),
        }
    }
}

/// Header and shard table, as written at the start of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// k: the file holds 2^k shards.
    pub shard_bits: u32,
    /// Length of the whole file.
    pub file_len: u64,
    /// Distinct hashes over all shards.
    pub hashes: u64,
    /// The import's `--min-count`, kept for the record.
    pub min_count: u64,
    /// 2^k entries, in shard order.
    pub shards: Vec<Shard>,
}

/// Why a file is not a usable filter; the message says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage(pub String);

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn damage(reason: impl Into<String>) -> Damage {
    Damage(reason.into())
}

/// Bytes taken by the header and a table of 2^`shard_bits` entries.
pub fn table_end(shard_bits: u32) -> u64 {
    HEADER_LEN as u64 + ((ENTRY_LEN as u64) << shard_bits)
}

/// `offset` rounded up to the next multiple of [`ALIGN`].
pub fn align(offset: u64) -> u64 {
    offset.next_multiple_of(ALIGN)
}

/// The shard a SHA-1 belongs to and its key there: the leading
/// `shard_bits` bits, then the 64 bits after them.
pub fn shard_and_key(sha1: &[u8; 20], shard_bits: u32) -> (usize, u64) {
    let mut leading = [0; 16];
    leading.copy_from_slice(&sha1[..16]);
    let leading = u128::from_be_bytes(leading);
    let shard = leading.checked_shr(128 - shard_bits).unwrap_or(0) as usize;
    let key = ((leading << shard_bits) >> 64) as u64;
    (shard, key)
}

/// The CRC-32 of a header and shard table, its checksum field read as zero.
fn checksum(head: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&head[..CHECKSUM_AT]);
    hasher.update(&[0; 4]);
    hasher.update(&head[CHECKSUM_AT + 4..]);
    hasher.finalize()
}

/// Writes the checksum of `head`, a header and its whole shard table, into
/// its header.
pub fn seal(head: &mut [u8]) {
    let sum = checksum(head);
    head[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&sum.to_le_bytes());
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

impl Layout {
    /// Header and table as bytes, with their checksum.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0; table_end(self.shard_bits) as usize];
        out[..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&VERSION.to_le_bytes());
        out[12] = native_order();
        out[13] = self.shard_bits as u8;
        out[24..32].copy_from_slice(&self.file_len.to_le_bytes());
        out[32..40].copy_from_slice(&self.hashes.to_le_bytes());
        out[40..48].copy_from_slice(&self.min_count.to_le_bytes());
        for (shard, entry) in self
            .shards
            .iter()
            .zip(out[HEADER_LEN..].chunks_exact_mut(ENTRY_LEN))
        {
            entry[..DESCRIPTOR_LEN].copy_from_slice(&shard.descriptor);
            entry[24..32].copy_from_slice(&shard.offset.to_le_bytes());
            entry[32..40].copy_from_slice(&shard.len.to_le_bytes());
            entry[40..48].copy_from_slice(&shard.hashes.to_le_bytes());
            entry[48..52].copy_from_slice(&shard.checksum.to_le_bytes());
        }
        seal(&mut out);
        out
    }

    /// Reads and checks the header and shard table at the start of `file`
    /// (the whole file, or at least its table), `file_len` bytes long.
    pub fn parse(file: &[u8], file_len: u64) -> Result<Layout, Damage> {
        if file.len() < HEADER_LEN || file_len < HEADER_LEN as u64 {
            return Err(damage(format!(
                "it is {file_len} bytes long, shorter than the header"
            )));
        }
        if file[..8] != MAGIC {
            return Err(damage("it does not start like a breached-password filter"));
        }
        let version = u32_at(file, 8);
        if version != VERSION {
            return Err(damage(format!(
                "it is of format version {version}; this Gatehouse reads version {VERSION} \
                 (import the corpus again)"
            )));
        }
        match file[12] {
            order if order == native_order() => {}
            LITTLE_ENDIAN | BIG_ENDIAN => {
                return Err(damage(
                    "it was written on a machine of the other byte order \
                     (import the corpus again on this one)",
                ))
            }
            order => return Err(damage(format!("its byte order mark {order} is unknown"))),
        }
        let shard_bits = u32::from(file[13]);
        if shard_bits > MAX_SHARD_BITS {
            return Err(damage(format!(
                "its header names 2^{shard_bits} shards, more than 2^{MAX_SHARD_BITS}"
            )));
        }
        let table_end = table_end(shard_bits);
        if (file.len() as u64) < table_end || file_len < table_end {
            return Err(damage(format!(
                "it is truncated: {file_len} bytes, shorter than its shard table \
                 ({table_end} bytes)"
            )));
        }
        let head = &file[..table_end as usize];
        if checksum(head) != u32_at(head, CHECKSUM_AT) {
            return Err(damage(
                "its header or shard table is damaged (the checksum does not match)",
            ));
        }
        let recorded_len = u64_at(head, 24);
        if recorded_len != file_len {
            return Err(damage(format!(
                "it is {file_len} bytes long where its header says {recorded_len} \
                 (truncated or changed)"
            )));
        }
        let mut shards = Vec::with_capacity(1 << shard_bits);
        let mut end = table_end;
        let mut hashes = 0u64;
        for (i, entry) in head[HEADER_LEN..].chunks_exact(ENTRY_LEN).enumerate() {
            let mut descriptor = [0; DESCRIPTOR_LEN];
            descriptor.copy_from_slice(&entry[..DESCRIPTOR_LEN]);
            let shard = Shard {
                descriptor,
                offset: u64_at(entry, 24),
                len: u64_at(entry, 32),
                hashes: u64_at(entry, 40),
                checksum: u32_at(entry, 48),
            };
            let shard_end = shard.offset.checked_add(shard.len);
            if !shard.offset.is_multiple_of(ALIGN)
                || shard.offset < end
                || shard_end.is_none_or(|shard_end| shard_end > file_len)
            {
                return Err(damage(format!(
                    "shard {i} lies outside the file or over another shard"
                )));
            }
            check_descriptor(&shard).map_err(|why| damage(format!("shard {i}: {why}")))?;
            end = shard_end.unwrap_or(end);
            hashes = hashes.saturating_add(shard.hashes);
            shards.push(shard);
        }
        let recorded_hashes = u64_at(head, 32);
        if hashes != recorded_hashes {
            return Err(damage(format!(
                "its shards hold {hashes} hashes where its header says {recorded_hashes}"
            )));
        }
        Ok(Layout {
            shard_bits,
            file_len,
            hashes,
            min_count: u64_at(head, 40),
            shards,
        })
    }
}

/// Whether every index a query computes from the descriptor falls inside
/// the shard's fingerprints: xorf indexes them without checking. A query
/// reads three fingerprints below `segment_count_length + 2 *
/// segment_length`, exactly the number an import writes; its sums are
/// `u32`s and must not overflow.
fn check_descriptor(shard: &Shard) -> Result<(), &'static str> {
    if shard.len == 0 {
        return if shard.hashes == 0 {
            Ok(())
        } else {
            Err("it counts hashes but has no fingerprints")
        };
    }
    if shard.hashes == 0 {
        return Err("it has fingerprints but counts no hashes");
    }
    let d = &shard.descriptor;
    let segment_length = u64::from(u32_at(d, 8));
    let segment_length_mask = u64::from(u32_at(d, 12));
    let segment_count_length = u64::from(u32_at(d, 16));
    let fingerprints = segment_count_length + 2 * segment_length;
    if !segment_length.is_power_of_two()
        || segment_length_mask != segment_length - 1
        || segment_count_length == 0
        || !segment_count_length.is_multiple_of(segment_length)
        || fingerprints > u64::from(u32::MAX)
        || shard.len != fingerprints * 2
    {
        return Err("its filter's descriptor does not match its fingerprints");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layout of four shards over fake fingerprints, as bytes.
    fn sample() -> (Layout, Vec<u8>) {
        let shard_bits = 2;
        let mut offset = align(table_end(shard_bits));
        let mut shards = Vec::new();
        for i in 0..4u32 {
            if i == 2 {
                shards.push(Shard::empty(offset));
                continue;
            }
            let segment_length = 4u32;
            let segment_count_length = 4 * (i + 1);
            let mut descriptor = [0; DESCRIPTOR_LEN];
            descriptor[..8].copy_from_slice(&u64::from(i).to_le_bytes());
            descriptor[8..12].copy_from_slice(&segment_length.to_le_bytes());
            descriptor[12..16].copy_from_slice(&(segment_length - 1).to_le_bytes());
            descriptor[16..20].copy_from_slice(&segment_count_length.to_le_bytes());
            let len = u64::from(segment_count_length + 2 * segment_length) * 2;
            shards.push(Shard {
                descriptor,
                offset,
                len,
                hashes: u64::from(i) + 1,
                checksum: 0,
            });
            offset = align(offset + len);
        }
        let file_len = shards.last().map(|s| s.offset + s.len).unwrap();
        let layout = Layout {
            shard_bits,
            file_len,
            hashes: shards.iter().map(|s| s.hashes).sum(),
            min_count: 1,
            shards,
        };
        let mut file = layout.encode();
        file.resize(file_len as usize, 0);
        (layout, file)
    }

    fn reason(file: &[u8]) -> String {
        Layout::parse(file, file.len() as u64)
            .expect_err("a damaged file is refused")
            .0
    }

    #[test]
    fn a_layout_reads_back_as_written() {
        let (layout, file) = sample();
        assert_eq!(Layout::parse(&file, file.len() as u64), Ok(layout));
    }

    #[test]
    fn a_file_shorter_than_its_header_is_refused() {
        assert!(reason(&[]).contains("shorter than the header"));
        let (_, file) = sample();
        assert!(reason(&file[..HEADER_LEN - 1]).contains("shorter than the header"));
        assert!(reason(&file[..HEADER_LEN + 10]).contains("truncated"));
    }

    #[test]
    fn another_magic_is_not_a_filter() {
        let (_, mut file) = sample();
        file[0] = b'X';
        assert!(reason(&file).contains("does not start like a breached-password filter"));
    }

    #[test]
    fn another_version_is_refused_naming_it() {
        let (_, mut file) = sample();
        file[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(reason(&file).contains("version 2"));
    }

    #[test]
    fn the_other_byte_order_is_refused() {
        let (_, mut file) = sample();
        file[12] = if native_order() == LITTLE_ENDIAN {
            BIG_ENDIAN
        } else {
            LITTLE_ENDIAN
        };
        assert!(reason(&file).contains("other byte order"));
        file[12] = 9;
        assert!(reason(&file).contains("byte order mark 9"));
    }

    #[test]
    fn any_changed_byte_of_header_or_table_is_refused() {
        let (_, file) = sample();
        for at in (CHECKSUM_AT..table_end(2) as usize).step_by(3) {
            let mut damaged = file.clone();
            damaged[at] ^= 0x10;
            let why = reason(&damaged);
            assert!(why.contains("checksum"), "byte {at}: {why}");
        }
    }

    #[test]
    fn a_truncated_or_extended_file_is_refused() {
        let (_, mut file) = sample();
        let why = reason(&file[..file.len() - 2]);
        assert!(why.contains("header says"), "{why}");
        file.push(0);
        assert!(reason(&file).contains("header says"));
    }

    /// A table that passes its checksum but points outside the file, or
    /// has a descriptor that would index past the fingerprints, is refused:
    /// what a query relies on is checked, not only the checksum.
    #[test]
    fn a_consistent_but_impossible_table_is_refused() {
        let (layout, _) = sample();
        let rewritten = |change: &dyn Fn(&mut Layout)| {
            let mut layout = layout.clone();
            change(&mut layout);
            let mut file = layout.encode();
            file.resize(layout.file_len as usize, 0);
            reason(&file)
        };
        let why = rewritten(&|l| l.shards[1].offset += 1);
        assert!(why.contains("shard 1 lies outside"), "{why}");
        let why = rewritten(&|l| l.shards[3].len += 64);
        assert!(why.contains("shard 3 lies outside"), "{why}");
        let why = rewritten(&|l| l.shards[1].offset = l.shards[0].offset);
        assert!(why.contains("over another shard"), "{why}");
        let why = rewritten(&|l| l.shards[0].descriptor[16] = 200);
        assert!(why.contains("shard 0: its filter's descriptor"), "{why}");
        let why = rewritten(&|l| l.shards[0].descriptor[12] = 0);
        assert!(why.contains("descriptor"), "{why}");
        let why = rewritten(&|l| l.shards[2].hashes = 1);
        assert!(why.contains("shard 2"), "{why}");
        let why = rewritten(&|l| l.hashes += 1);
        assert!(why.contains("header says"), "{why}");
        let why = rewritten(&|l| l.shard_bits = MAX_SHARD_BITS + 1);
        assert!(why.contains("more than"), "{why}");
    }

    #[test]
    fn the_leading_bits_choose_the_shard_and_the_next_64_are_the_key() {
        let mut sha1 = [0u8; 20];
        sha1[0] = 0b1010_0000;
        sha1[8] = 0xFF;
        assert_eq!(shard_and_key(&sha1, 0), (0, 0xA000_0000_0000_0000));
        assert_eq!(shard_and_key(&sha1, 3), (0b101, 0x0000_0000_0000_0007));
        let all = [0xFF; 20];
        assert_eq!(shard_and_key(&all, MAX_SHARD_BITS), (0xFFFF, u64::MAX));
    }
}
