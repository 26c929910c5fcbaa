//! `gatehouse`: the reference host and its command line.

fn main() -> std::process::ExitCode {
    limit_allocator_arenas();
    gatehouse_host::cli::main()
}

/// glibc gives each thread that allocates its own arena (up to eight per
/// core) and keeps what a thread frees there for reuse by that arena alone;
/// with OData pages built on read threads that holds many idle copies of
/// large buffers. Two arenas and a fixed threshold above which buffers are
/// mapped (and unmapped when freed) keep the resident size near what is in
/// use. Fixing that threshold also fixes the one above which an arena's
/// free top is handed back to the kernel at 128 KiB: SQLite's temporary
/// tables (a tree read's walk, a sort) take and free more than that on
/// every statement, so each one faulted fresh zeroed pages in again
/// (BENCHMARKS.md, tree tables at a million nodes). Up to 8 MiB of free top
/// per arena is kept.
fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator tuning; it is called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 * 1024 * 1024);
    }
}
