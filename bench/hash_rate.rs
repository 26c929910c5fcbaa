//! The machine's raw argon2id verification rate with Gatehouse's parameters
//! (m = 19 MiB, t = 2, p = 1): one verifier per core, no server around it.
//! This is the ceiling sign-in throughput is measured against.
//!
//! `cargo run --release --example hash_rate -- [seconds]`

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
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
                while !stop.load(Ordering::Relaxed) {
                    argon2
                        .verify_password(b"correct horse battery staple", &parsed)
                        .expect("verify");
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
        "cores={cores} verifies={total} seconds={elapsed:.2} rate={:.1}/s",
        total / elapsed
    );
}
