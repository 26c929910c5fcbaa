//! What can go wrong reading downloads or a filter file.

use std::io;
use std::path::{Path, PathBuf};

/// A failed import, opening or check; its message names the file (and the
/// line, for a bad line of a download) and says what is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BreachedError {
    /// A file could not be opened, read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done: `open`, `read`, `write` …
        action: &'static str,
        /// The file (or directory) concerned.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The filter file is damaged, truncated, of another version or byte
    /// order, or not a filter file at all.
    #[error("{} is not a usable breached-password filter: {reason}", path.display())]
    Damaged {
        /// The filter file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A line of a download is not `SHA1HEX:COUNT`.
    #[error("{}:{line}: {reason}", path.display())]
    Line {
        /// The download.
        path: PathBuf,
        /// The line's number, from 1.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A shard's filter could not be built (the keys were not distinct).
    #[error("the filter of shard {shard} could not be built: {reason}")]
    Build {
        /// The shard's number.
        shard: usize,
        /// The filter library's reason.
        reason: &'static str,
    },
}

impl BreachedError {
    /// A closure turning an I/O error about `path` into this error.
    pub(crate) fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Self + 'a {
        move |source| BreachedError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }

    /// A damaged filter file.
    pub(crate) fn damaged(path: &Path, reason: impl Into<String>) -> Self {
        BreachedError::Damaged {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}
