//! Password hashing and verification, off the async workers.
//!
//! Hashes are computed on dedicated threads, one per core, each keeping its
//! argon2 working memory, at a lower scheduling priority ([`Workers`]): under
//! a burst of sign-ins, page requests still get the CPU first.
//! Argon2id uses OWASP's parameters (19 MiB, t=2, p=1); bcrypt `$2y$`/`$2b$`
//! hashes from a PHP application verify and are flagged for re-hashing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use argon2::password_hash::{PasswordHash, PasswordHasher as _, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::config::HashAlgorithm;
use crate::metrics::Metrics;
use crate::security::ClientBlock;
use crate::workers::{lower_priority, Workers};

/// bcrypt cost for new hashes (Laravel's default).
const BCRYPT_COST: u32 = 12;

/// The result of checking a password against a stored hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verification {
    /// The password matches.
    pub matches: bool,
    /// The hash uses another algorithm or weaker parameters than configured.
    pub needs_rehash: bool,
}

/// Hashes and verifies passwords with bounded parallelism.
#[derive(Clone)]
pub struct PasswordHasher {
    algorithm: HashAlgorithm,
    /// Where hashes are computed, one at a time per core, each thread with
    /// its argon2 working memory.
    threads: Workers<Vec<Block>>,
    /// A hash of a random password, verified when the account does not exist,
    /// so an unknown address costs the same time as a wrong password.
    dummy: Arc<String>,
    /// Places for sign-ins waiting for a hash (`auth.hash_queue`); `None`
    /// when unbounded.
    queue: Option<Arc<Semaphore>>,
    /// Sign-ins waiting per client on this instance.
    waiting: Waiting,
    /// Places one client may hold: a quarter of the queue, so a flood from
    /// one address (or one IPv6 /64) leaves the rest to everybody else.
    per_ip: usize,
    /// Where hashes and the queue are counted.
    metrics: Metrics,
}

/// Sign-ins waiting for a hash, per client (an IPv6 client by its /64).
type Waiting = Arc<Mutex<HashMap<ClientBlock, usize>>>;

/// A sign-in's place in the hash queue, given back when dropped.
pub struct QueuePlace {
    _permit: Option<OwnedSemaphorePermit>,
    client: Option<(Waiting, ClientBlock)>,
    /// The client had no other sign-in waiting: its hash goes before those
    /// of clients that have (a flooding address waits behind real users).
    first: bool,
    /// Where the queue's depth is counted.
    metrics: Metrics,
}

impl Drop for QueuePlace {
    fn drop(&mut self) {
        self.metrics.hash_queue(-1);
        if let Some((waiting, client)) = self.client.take() {
            let mut waiting = waiting.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(n) = waiting.get_mut(&client) {
                *n -= 1;
                if *n == 0 {
                    waiting.remove(&client);
                }
            }
        }
    }
}

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

fn hash_now(algorithm: HashAlgorithm, password: &str) -> Result<String, String> {
    match algorithm {
        HashAlgorithm::Argon2id => {
            let salt = SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
            argon2()
                .hash_password(password.as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| e.to_string())
        }
        HashAlgorithm::Bcrypt => bcrypt::hash_with_result(password, BCRYPT_COST)
            .map(|h| h.format_for_version(bcrypt::Version::TwoY))
            .map_err(|e| e.to_string()),
    }
}

/// Checks an argon2 hash, computing into `memory` (grown to the hash's
/// `m_cost` once and reused) instead of allocating and zeroing 19 MiB per call.
fn verify_argon2(password: &str, parsed: &PasswordHash<'_>, memory: &mut Vec<Block>) -> bool {
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let (Ok(params), Ok(algorithm)) = (
        Params::try_from(parsed),
        Algorithm::try_from(parsed.algorithm),
    ) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from).transpose() {
        Ok(version) => version.unwrap_or_default(),
        Err(_) => return false,
    };
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    let blocks = params.block_count();
    if memory.len() < blocks {
        memory.resize(blocks, Block::default());
    }
    let mut computed = vec![0u8; expected.len()];
    Argon2::new(algorithm, version, params)
        .hash_password_into_with_memory(
            password.as_bytes(),
            salt,
            &mut computed,
            &mut memory[..blocks],
        )
        .is_ok()
        && bool::from(computed.as_slice().ct_eq(expected.as_bytes()))
}

fn verify_now(
    algorithm: HashAlgorithm,
    password: &str,
    hash: &str,
    memory: &mut Vec<Block>,
) -> Verification {
    if hash.starts_with("$argon2") {
        let Ok(parsed) = PasswordHash::new(hash) else {
            return Verification {
                matches: false,
                needs_rehash: false,
            };
        };
        let matches = verify_argon2(password, &parsed, memory);
        let current = parsed.algorithm.as_str() == "argon2id"
            && Params::try_from(&parsed).is_ok_and(|p| p.m_cost() >= 19 * 1024 && p.t_cost() >= 2);
        Verification {
            matches,
            needs_rehash: algorithm != HashAlgorithm::Argon2id || !current,
        }
    } else if hash.starts_with("$2") {
        // bcrypt reads 72 bytes; a longer password would match on its
        // first 72 alone, so it never matches. (New passwords over 72 bytes
        // are refused before they are hashed: `Password::hashable_by`.)
        let matches = password.len() <= crate::domain::BCRYPT_MAX_BYTES
            && bcrypt::verify(password, hash).unwrap_or(false);
        let cost_ok = hash
            .get(4..6)
            .and_then(|c| c.parse::<u32>().ok())
            .is_some_and(|c| c >= BCRYPT_COST);
        Verification {
            matches,
            needs_rehash: algorithm != HashAlgorithm::Bcrypt || !cost_ok,
        }
    } else {
        Verification {
            matches: false,
            needs_rehash: false,
        }
    }
}

impl PasswordHasher {
    /// A hasher producing `algorithm` hashes, with one hashing thread per
    /// core, and at most `queue` sign-ins waiting for them (0 = unbounded).
    pub fn new(algorithm: HashAlgorithm, queue: u32) -> std::io::Result<Self> {
        Self::counted(algorithm, queue, Metrics::off())
    }

    /// As [`new`](Self::new), its hashes and queue counted in `metrics`.
    pub fn counted(algorithm: HashAlgorithm, queue: u32, metrics: Metrics) -> std::io::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let random = crate::domain::SecretToken::generate();
        let dummy = hash_now(algorithm, random.expose()).unwrap_or_default();
        Ok(Self {
            algorithm,
            threads: Workers::start("gatehouse-hash", cores, || {
                lower_priority();
                Vec::new()
            })?,
            dummy: Arc::new(dummy),
            queue: (queue > 0).then(|| Arc::new(Semaphore::new(queue as usize))),
            waiting: Arc::default(),
            per_ip: (queue as usize).div_ceil(4).max(1),
            metrics,
        })
    }

    /// A place in the hash queue for one sign-in from `ip`, or `None` when
    /// the queue is full or `ip` already holds its share of it (the caller
    /// answers 503 before doing any work). An IPv6 client's share is its
    /// /64's.
    pub fn reserve(&self, ip: IpAddr) -> Option<QueuePlace> {
        let client = ClientBlock::from(ip);
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let before = waiting.get(&client).copied().unwrap_or(0);
        let permit = match &self.queue {
            None => None,
            Some(_) if before >= self.per_ip => return None,
            Some(queue) => Some(queue.clone().try_acquire_owned().ok()?),
        };
        *waiting.entry(client).or_default() += 1;
        self.metrics.hash_queue(1);
        Some(QueuePlace {
            _permit: permit,
            client: Some((self.waiting.clone(), client)),
            first: before == 0,
            metrics: self.metrics.clone(),
        })
    }

    /// Hashes a new password with the configured algorithm.
    pub async fn hash(&self, password: &SecretString) -> Result<String, String> {
        let algorithm = self.algorithm;
        let password = password.clone();
        let metrics = self.metrics.clone();
        self.threads
            .run(move |_| {
                let started = Instant::now();
                let hashed = hash_now(algorithm, password.expose_secret());
                metrics.hashed(started.elapsed());
                hashed
            })
            .instrument(tracing::info_span!("password.hash"))
            .await
            .ok_or_else(|| "the hashing thread failed".to_owned())?
    }

    /// Checks `password` against `hash` for the sign-in holding `place`;
    /// with `None` (no such account) or an account without a password,
    /// checks against a dummy hash and never matches.
    pub async fn verify(
        &self,
        place: &QueuePlace,
        password: &SecretString,
        hash: Option<&str>,
    ) -> Verification {
        let algorithm = self.algorithm;
        let password = password.clone();
        // An account without a password (made by an OpenID provider) is
        // checked as an unknown one: against the dummy hash, never matching.
        let hash = hash.filter(|h| super::users::has_password(h));
        let known = hash.is_some();
        let hash = hash.map_or_else(|| self.dummy.as_str().to_owned(), str::to_owned);
        let metrics = self.metrics.clone();
        let job = move |memory: &mut Vec<Block>| {
            let started = Instant::now();
            let verified = verify_now(algorithm, password.expose_secret(), &hash, memory);
            metrics.hashed(started.elapsed());
            verified
        };
        let span = tracing::info_span!("password.hash");
        let verified = if place.first {
            self.threads.run_first(job).instrument(span).await
        } else {
            self.threads.run(job).instrument(span).await
        };
        let verified = verified.unwrap_or(Verification {
            matches: false,
            needs_rehash: false,
        });
        Verification {
            matches: verified.matches && known,
            needs_rehash: verified.needs_rehash && known,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_ipv6_slash_64_holds_one_share_of_the_hash_queue() {
        // A queue of 8: a client's share is 2 places.
        let hasher = PasswordHasher::new(HashAlgorithm::Argon2id, 8).unwrap();
        let first = hasher.reserve(ip("2001:db8:1:2::1")).expect("a place");
        assert!(first.first);
        let second = hasher.reserve(ip("2001:db8:1:2::2")).expect("a place");
        assert!(!second.first, "the second address of the /64 queues behind");
        assert!(
            hasher.reserve(ip("2001:db8:1:2:ffff::3")).is_none(),
            "a third address of the same /64 finds its share spent"
        );
        let neighbour = hasher.reserve(ip("2001:db8:1:3::1")).expect("another /64");
        assert!(neighbour.first);
        drop(first);
        assert!(
            hasher.reserve(ip("2001:db8:1:2::4")).is_some(),
            "a place given back is the /64's again"
        );
    }

    #[test]
    fn an_ipv4_mapped_address_shares_its_ipv4_address_s_place() {
        let hasher = PasswordHasher::new(HashAlgorithm::Argon2id, 4).unwrap();
        let _held = hasher.reserve(ip("203.0.113.9")).expect("a place");
        assert!(hasher.reserve(ip("::ffff:203.0.113.9")).is_none());
        assert!(hasher.reserve(ip("203.0.113.10")).is_some());
    }

    #[test]
    fn php_bcrypt_hashes_verify_and_ask_for_rehash() {
        let hash = bcrypt::hash_with_result("secret-password", 4)
            .unwrap()
            .format_for_version(bcrypt::Version::TwoY);
        let v = verify_now(
            HashAlgorithm::Argon2id,
            "secret-password",
            &hash,
            &mut Vec::new(),
        );
        assert_eq!(
            v,
            Verification {
                matches: true,
                needs_rehash: true
            }
        );
        assert!(!verify_now(HashAlgorithm::Argon2id, "other", &hash, &mut Vec::new()).matches);
    }

    #[test]
    fn argon2id_hashes_round_trip_without_rehash() {
        let hash = hash_now(HashAlgorithm::Argon2id, "secret-password").unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        let mut memory = Vec::new();
        let v = verify_now(
            HashAlgorithm::Argon2id,
            "secret-password",
            &hash,
            &mut memory,
        );
        assert_eq!(
            v,
            Verification {
                matches: true,
                needs_rehash: false
            }
        );
        assert!(
            !verify_now(
                HashAlgorithm::Argon2id,
                "secret-passwore",
                &hash,
                &mut memory
            )
            .matches
        );
        // Reused memory gives the same answers.
        assert!(
            verify_now(
                HashAlgorithm::Argon2id,
                "secret-password",
                &hash,
                &mut memory
            )
            .matches
        );
    }
}
