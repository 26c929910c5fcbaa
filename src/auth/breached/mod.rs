//! Breached passwords: the Pwned Passwords corpus, checked offline.
//!
//! [`import`] reads the corpus as its official downloader writes it (lines
//! `SHA1HEX:COUNT`, plain or gzip) and writes one file of 2^k binary fuse
//! filters with 16-bit fingerprints: about 2.2 bytes a hash, a false
//! positive about once in 65,536, never a false negative.
//! [`BreachedPasswords`] maps that file and answers whether a password is
//! in it, reading the fingerprints in place.
//!
//! ```no_run
//! use gatehouse::breached::{import, ImportOptions};
//! use gatehouse::BreachedPasswords;
//!
//! import(
//!     &["pwnedpasswords.txt"],
//!     "breached-passwords.bin".as_ref(),
//!     &ImportOptions::new(),
//!     |_progress| {},
//! )?;
//! let breached = BreachedPasswords::open("breached-passwords.bin")?;
//! assert!(breached.contains("password"));
//! # Ok::<(), gatehouse::breached::BreachedError>(())
//! ```

mod error;
crate::internal! { mod filter, format, import, line; }

pub use error::BreachedError;
pub use filter::BreachedPasswords;
pub use import::{import, ImportOptions, ImportProgress, ImportSummary};
