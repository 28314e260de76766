//! The `cairn` command; everything lives in the library's `cli` module.

fn main() {
    std::process::exit(cairn::cli::main());
}
