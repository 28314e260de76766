//! The random DAG of `null_resource`s the `scale` and `phases` benchmarks
//! give the `cairn` binary (and `scripts/bench-vs-terraform.sh` gives cairn
//! and Terraform): the same graph for the same N and seed.

use std::fmt::Write as _;

/// N `null_resource`s `r0`…, each referring to up to two earlier ones
/// chosen by a seeded generator.
pub fn random_dag(n: usize, seed: u64) -> String {
    let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = String::new();
    for i in 0..n {
        let k = (rng.next() % 3).min(i as u64) as usize;
        let mut deps: Vec<usize> = Vec::new();
        while deps.len() < k {
            let d = (rng.next() % i as u64) as usize;
            if !deps.contains(&d) {
                deps.push(d);
            }
        }
        deps.sort();
        if deps.is_empty() {
            writeln!(out, "resource \"null_resource\" \"r{i}\" {{}}\n").unwrap();
        } else {
            writeln!(out, "resource \"null_resource\" \"r{i}\" {{\n  triggers = {{").unwrap();
            for (j, d) in deps.iter().enumerate() {
                writeln!(out, "    {} = null_resource.r{d}.id", ["a", "b"][j]).unwrap();
            }
            writeln!(out, "  }}\n}}\n").unwrap();
        }
    }
    out
}

/// A small seeded generator: the benchmark needs the same graph every
/// run, not good randomness.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
