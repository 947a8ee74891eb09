fn main() -> std::process::ExitCode {
    arena_perf::cli::main()
}
