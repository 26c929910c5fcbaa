//! `gatehouse`: the reference host and its command line.

fn main() -> std::process::ExitCode {
    limit_allocator_arenas();
    unpool_mysql_buffers();
    gatehouse_host::cli::main()
}

/// `mysql_async` (the OData reads on MySQL and MariaDB) takes each packet's
/// buffer from a process-wide lock-free queue and puts it back; with pages
/// of a thousand rows, threads pass those buffers between them on every
/// row. Plain allocation instead served 6–19 % more large pages per second
/// (BENCHMARKS.md). An explicit `MYSQL_ASYNC_BUFFER_POOL_CAP` is kept.
fn unpool_mysql_buffers() {
    const POOL_CAP: &str = "MYSQL_ASYNC_BUFFER_POOL_CAP";
    if std::env::var_os(POOL_CAP).is_none() {
        // No other thread exists yet to read the environment meanwhile.
        std::env::set_var(POOL_CAP, "0");
    }
}

/// glibc gives each thread that allocates its own arena (up to eight per
/// core) and keeps what a thread frees there for reuse by that arena alone;
/// with OData pages built on read threads that holds many idle copies of
/// large buffers. Two arenas and a fixed threshold above which buffers are
/// mapped (and unmapped when freed) keep the resident size near what is in
/// use.
fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator tuning; it is called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
