fn main() -> std::process::ExitCode {
    xeforge::cli::main()
}
