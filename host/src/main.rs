//! The `cairn` command; everything lives in the library's `cli` module.

/// mimalloc rather than the system allocator: a plan or an apply makes and
/// frees millions of small values from several threads at once, where
/// glibc's allocator spent a sixth of a 10,000-resource apply.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cairn::cli::main());
}
