//! Inputs shared by `benches/pack.rs` and `examples/pack_quality.rs`: the MiniMalloc CSV
//! instances under `bench/` (or `../shared/bench/` when the repository has no copy), read
//! with `planner::import::csv`, and deterministic synthetic problems.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use planner::pack::{Item, Problem};

/// A named problem, with the capacity its file name asks for (`A.1048576.csv`).
pub struct Instance {
    pub name: String,
    pub problem: Problem,
    pub capacity: Option<u64>,
}

/// Reads a MiniMalloc CSV (`id,lower,upper,size`, live over `[lower, upper)`) with the
/// crate's importer.
pub fn load_csv(path: &Path) -> Result<Problem, String> {
    planner::import::csv::read(path)
        .map(|csv| csv.problem)
        .map_err(|e| e.to_string())
}

/// Repository root (the workspace).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The CSV files of `bench/<set>/` in the repository, or of `../shared/bench/<set>/` when the
/// repository has none; empty when neither exists.
pub fn csv_set(set: &str) -> Vec<Instance> {
    let root = repo_root();
    let dirs = [
        root.join("bench").join(set),
        root.join("..").join("shared").join("bench").join(set),
    ];
    let Some(dir) = dirs.iter().find(|d| d.is_dir()) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect(),
        Err(_) => return Vec::new(),
    };
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let capacity = stem.rsplit_once('.').and_then(|(_, c)| c.parse().ok());
        match load_csv(&path) {
            Ok(problem) => out.push(Instance {
                name: format!("{set}/{stem}"),
                problem,
                capacity,
            }),
            Err(e) => eprintln!("skipping {e}"),
        }
    }
    out
}

/// SplitMix64, so the synthetic graphs (and the examples' instances) are the same
/// everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform enough in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A synthetic model of `n` tensors with realistic lifetimes: a chain of ops, each writing
/// one activation read by the next op; some activations also feed a residual add 2-12 ops
/// later, a few feed a decoder stage hundreds of ops later (U-Net style), and some ops get
/// a scratch buffer live only at that op. Sizes shrink over five stages and vary by channel
/// count; alignments are 4 to 64 bytes, sizes not always multiples of them.
pub fn synthetic(n: usize, seed: u64) -> Problem {
    let mut rng = Rng(seed ^ 0x5eed_0000 ^ n as u64);
    let mut items = Vec::with_capacity(n);
    let mut op = 0u32;
    let ops_estimate = (n as u64 * 10 / 12).max(1);
    while items.len() < n {
        let stage = (u64::from(op) * 5 / ops_estimate).min(4);
        let spatial = [12544u64, 3136, 784, 196, 49][stage as usize];
        let channels = [8u64, 16, 24, 32, 48, 64, 96, 128][rng.below(8) as usize];
        let mut size = spatial * channels;
        if rng.below(4) == 0 {
            size += rng.below(15) + 1; // odd tails: padding matters
        }
        let align = [4u64, 8, 16, 16, 16, 32, 64][rng.below(7) as usize];
        let roll = rng.below(1000);
        let reach = if roll < 5 {
            50 + rng.below(450) as u32
        } else if roll < 150 {
            2 + rng.below(11) as u32
        } else {
            1
        };
        items.push(Item {
            size,
            start: op,
            end: op + reach,
            align,
            fixed: None,
            spillable: false,
        });
        if items.len() < n && rng.below(10) == 0 {
            items.push(Item {
                size: (spatial * 4).max(64) + rng.below(256),
                start: op,
                end: op,
                align: 16,
                fixed: None,
                spillable: false,
            });
        }
        op += 1;
    }
    Problem {
        items,
        capacity: None,
    }
}

/// The synthetic sets the benchmarks and the quality table use.
pub fn synthetic_set() -> Vec<Instance> {
    [1_000usize, 5_000, 20_000]
        .into_iter()
        .map(|n| Instance {
            name: format!("synthetic/{}k", n / 1000),
            problem: synthetic(n, 0),
            capacity: None,
        })
        .collect()
}
