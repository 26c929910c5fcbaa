//! `gatehouse`: the reference host and its command line.

fn main() -> std::process::ExitCode {
    gatehouse::host::cli::main()
}
