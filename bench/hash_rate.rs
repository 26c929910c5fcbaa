//! The machine's raw argon2id verification rate with Gatehouse's parameters
//! (m = 19 MiB, t = 2, p = 1): one verifier per core, no server around it.
//! This is the ceiling sign-in throughput is measured against.
//!
//! `cargo run --release --example hash_rate -- [seconds] [reuse]`
//!
//! With `reuse`, each verifier computes into one working memory kept across
//! verifications, as the server does, instead of argon2's `verify_password`,
//! which allocates and zeroes 19 MiB each time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let reuse = std::env::args().nth(2).as_deref() == Some("reuse");
    let params = Params::new(19 * 1024, 2, 1, None).expect("params");
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let salt = SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
    let hash = argon2
        .hash_password(b"correct horse battery staple", &salt)
        .expect("hash")
        .to_string();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..cores)
        .map(|_| {
            let (done, stop, hash, argon2) =
                (done.clone(), stop.clone(), hash.clone(), argon2.clone());
            std::thread::spawn(move || {
                let parsed = PasswordHash::new(&hash).expect("parse");
                let mut memory = vec![Block::default(); params_of(&parsed).block_count()];
                let mut salt = [0u8; 64];
                let salt = parsed
                    .salt
                    .expect("salt")
                    .decode_b64(&mut salt)
                    .expect("salt");
                let expected = parsed.hash.expect("hash");
                let mut computed = vec![0u8; expected.len()];
                while !stop.load(Ordering::Relaxed) {
                    if reuse {
                        argon2
                            .hash_password_into_with_memory(
                                b"correct horse battery staple",
                                salt,
                                &mut computed,
                                &mut memory,
                            )
                            .expect("hash");
                        assert_eq!(computed, expected.as_bytes());
                    } else {
                        argon2
                            .verify_password(b"correct horse battery staple", &parsed)
                            .expect("verify");
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().expect("worker");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total = done.load(Ordering::Relaxed) as f64;
    println!(
        "cores={cores} reuse={reuse} verifies={total} seconds={elapsed:.2} rate={:.1}/s",
        total / elapsed
    );
}

fn params_of(parsed: &PasswordHash<'_>) -> Params {
    Params::try_from(parsed).expect("params")
}
