//! The threads passwords are hashed on: one per core, each keeping its own
//! argon2 working memory and taking the next queued hash the moment it
//! finishes one. Between two queued hashes nothing has to be woken — no
//! async task, no pool thread — so under a burst of sign-ins the cores never
//! sit idle waiting for the scheduler. The threads run at a lower priority
//! (Linux `nice` 10), so request handling always gets the CPU first.

use std::panic::{catch_unwind, AssertUnwindSafe};

use argon2::Block;

/// One hash to compute, given its thread's working memory.
type Job = Box<dyn FnOnce(&mut Vec<Block>) + Send>;

/// The queue of hashes and the threads that compute them. Clones share both;
/// the threads end when the last clone is dropped.
#[derive(Clone)]
pub struct HashThreads {
    jobs: flume::Sender<Job>,
}

impl HashThreads {
    /// Starts `count` hashing threads (at least one).
    pub fn start(count: usize) -> std::io::Result<HashThreads> {
        let (jobs, queue) = flume::unbounded::<Job>();
        for i in 0..count.max(1) {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("gatehouse-hash-{i}"))
                .spawn(move || {
                    lower_priority();
                    let mut memory = Vec::new();
                    while let Ok(job) = queue.recv() {
                        // A job that panics loses its own answer, not the thread.
                        let _ = catch_unwind(AssertUnwindSafe(|| job(&mut memory)));
                    }
                })?;
        }
        Ok(HashThreads { jobs })
    }

    /// Computes `job` on the next free hashing thread; `None` if it panicked.
    /// A job whose caller has gone (a closed connection) is skipped.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Vec<Block>) -> T + Send + 'static,
    ) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |memory| {
            if !answer.is_closed() {
                let _ = answer.send(job(memory));
            }
        });
        self.jobs.send(job).ok()?;
        answered.await.ok()
    }
}

/// Lowers the calling thread's scheduling priority (Linux `nice` 10).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread; no memory is shared.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_queued_job_is_answered_in_its_own_thread_memory() {
        let threads = HashThreads::start(2).unwrap();
        let answers = futures::future::join_all((0..16u64).map(|n| {
            threads.run(move |memory: &mut Vec<Block>| {
                // Each thread's memory persists from one job to the next.
                memory.push(Block::default());
                (n * n, memory.len())
            })
        }))
        .await;
        let mut grown = 0;
        for (n, answer) in answers.into_iter().enumerate() {
            let (square, len) = answer.expect("answered");
            assert_eq!(square, (n * n) as u64);
            grown = grown.max(len);
        }
        // 16 jobs on 2 threads: some thread ran at least 8 of them.
        assert!(grown >= 8, "memory kept across jobs: {grown}");
    }

    #[tokio::test]
    async fn a_job_that_panics_answers_none_and_the_thread_goes_on() {
        let threads = HashThreads::start(1).unwrap();
        let failed = threads
            .run(|_: &mut Vec<Block>| -> u8 { panic!("broken hash") })
            .await;
        assert_eq!(failed, None);
        assert_eq!(threads.run(|_: &mut Vec<Block>| 7u8).await, Some(7));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn hashing_threads_run_at_nice_10() {
        let threads = HashThreads::start(1).unwrap();
        // SAFETY: getpriority reads the calling (hashing) thread's priority.
        let nice = threads
            .run(|_: &mut Vec<Block>| unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            })
            .await;
        assert_eq!(nice, Some(10));
    }
}
