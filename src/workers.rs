//! Dedicated threads for blocking work — password hashing, SQLite reads —
//! each keeping its own state (argon2 working memory, a connection) and
//! taking the next queued job the moment it finishes one. Between two
//! queued jobs nothing has to be woken (no async task, no pool thread), so
//! under load the cores never sit idle waiting for the scheduler.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// One job, given its thread's state.
type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// A queue of jobs and the threads that run them, each with a state `S`.
/// Clones share both; the threads end when the last clone is dropped.
pub struct Workers<S> {
    /// What the threads wait on: a job, or word that an urgent one waits.
    jobs: flume::Sender<Slot<S>>,
    /// Jobs taken before any in `jobs` (a client's first sign-in).
    urgent: flume::Sender<Job<S>>,
}

/// One entry of the queue the threads block on. Every urgent job is
/// announced by one [`Slot::Urgent`], sent after it; a thread takes an
/// urgent job, if one waits, before whatever it took from the queue. So
/// announcements always outnumber the urgent jobs left, no urgent job is
/// stranded, and a thread blocks on one channel only.
enum Slot<S> {
    Job(Job<S>),
    Urgent,
}

impl<S> Clone for Workers<S> {
    fn clone(&self) -> Self {
        Workers {
            jobs: self.jobs.clone(),
            urgent: self.urgent.clone(),
        }
    }
}

impl<S> std::fmt::Debug for Workers<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("queued", &self.jobs.len())
            .finish()
    }
}

impl<S: 'static> Workers<S> {
    /// Starts `count` threads (at least one) named `<name>-<i>`; each first
    /// makes its state with `init`, on itself.
    pub fn start(
        name: &str,
        count: usize,
        init: impl Fn() -> S + Send + Clone + 'static,
    ) -> std::io::Result<Workers<S>> {
        let (jobs, queue) = flume::unbounded::<Slot<S>>();
        let (urgent, first) = flume::unbounded::<Job<S>>();
        for i in 0..count.max(1) {
            let (queue, first, init) = (queue.clone(), first.clone(), init.clone());
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    let mut state = init();
                    // A job that panics loses its own answer, not the thread.
                    let mut run = |job: Job<S>| {
                        let _ = catch_unwind(AssertUnwindSafe(|| job(&mut state)));
                    };
                    while let Ok(slot) = queue.recv() {
                        if let Ok(job) = first.try_recv() {
                            run(job);
                        }
                        if let Slot::Job(job) = slot {
                            run(job);
                        }
                    }
                })?;
        }
        Ok(Workers { jobs, urgent })
    }

    /// Runs `job` on the next free thread, before every job queued with
    /// [`Workers::run`]; `None` if it panicked or the threads are gone.
    pub async fn run_first<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut S) -> T + Send + 'static,
    ) -> Option<T> {
        let (job, answered) = Self::answered(job);
        self.urgent.send(job).ok()?;
        self.jobs.send(Slot::Urgent).ok()?;
        answered.await.ok()
    }

    /// Runs `job` on the next free thread; `None` if it panicked or the
    /// threads are gone. A job whose caller has gone (a closed connection)
    /// is skipped.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut S) -> T + Send + 'static,
    ) -> Option<T> {
        let (job, answered) = Self::answered(job);
        self.jobs.send(Slot::Job(job)).ok()?;
        answered.await.ok()
    }

    /// `job` boxed to send its result back, and where the result arrives.
    /// A job whose caller has gone is skipped.
    fn answered<T: Send + 'static>(
        job: impl FnOnce(&mut S) -> T + Send + 'static,
    ) -> (Job<S>, tokio::sync::oneshot::Receiver<T>) {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job<S> = Box::new(move |state| {
            if !answer.is_closed() {
                let _ = answer.send(job(state));
            }
        });
        (job, answered)
    }
}

/// Lowers the calling thread's scheduling priority (Linux `nice` 10), so
/// that request handling gets the CPU first.
pub fn lower_priority() {
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
    async fn every_queued_job_is_answered_and_each_thread_keeps_its_state() {
        let workers = Workers::start("test", 2, Vec::<u64>::new).unwrap();
        let answers = futures::future::join_all((0..16u64).map(|n| {
            workers.run(move |seen: &mut Vec<u64>| {
                seen.push(n);
                (n * n, seen.len())
            })
        }))
        .await;
        let mut longest = 0;
        for (n, answer) in answers.into_iter().enumerate() {
            let (square, len) = answer.expect("answered");
            assert_eq!(square, (n * n) as u64);
            longest = longest.max(len);
        }
        // 16 jobs on 2 threads: one of them ran at least 8, keeping its state.
        assert!(longest >= 8, "state kept across jobs: {longest}");
    }

    #[tokio::test]
    async fn urgent_jobs_run_before_queued_ones() {
        let workers = Workers::start("test-urgent", 1, || ()).unwrap();
        // Hold the one thread until both kinds of jobs are queued.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let blocker = workers.run(move |_| held.recv().ok());
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (a, b) = (order.clone(), order.clone());
        let queued = workers.run(move |_| a.lock().unwrap().push("queued"));
        let urgent = workers.run_first(move |_| b.lock().unwrap().push("urgent"));
        let releaser = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            release.send(()).unwrap();
        };
        let _ = tokio::join!(blocker, queued, urgent, releaser);
        assert_eq!(*order.lock().unwrap(), ["urgent", "queued"]);
    }

    #[tokio::test]
    async fn a_job_that_panics_answers_none_and_the_thread_goes_on() {
        let workers = Workers::start("test", 1, || ()).unwrap();
        let failed = workers.run(|_| -> u8 { panic!("broken job") }).await;
        assert_eq!(failed, None);
        assert_eq!(workers.run(|_| 7u8).await, Some(7));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn threads_started_with_lower_priority_run_at_nice_10() {
        let workers = Workers::start("test", 1, lower_priority).unwrap();
        // SAFETY: getpriority reads the calling (worker) thread's priority.
        let nice = workers
            .run(|_| unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            })
            .await;
        assert_eq!(nice, Some(10));
    }
}
