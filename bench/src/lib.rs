//! The planner's benchmark harnesses (`src/bin/*`, run with `cargo run --release -p
//! planner-bench --bin NAME`) and the criterion bench `benches/pack.rs`, with the inputs
//! they share: the MiniMalloc CSV instances under `bench/`, read with `planner::import::csv`, deterministic synthetic and
//! real-trace-like problems, and the classic greedy heights a packing is compared with.

use std::path::{Path, PathBuf};

use planner::pack::{Item, Problem};
use planner_kernels::golden::SplitMix64;

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

/// The CSV files of `bench/<set>/` in the repository; empty when there is no such folder.
pub fn csv_set(set: &str) -> Vec<Instance> {
    let dir = repo_root().join("bench").join(set);
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&dir) {
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

/// SplitMix64 (the golden scripts' stream, [`SplitMix64`]), so the synthetic graphs (and the
/// examples' instances) are the same everywhere.
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)] // An endless generator, not an iterator.
    pub fn next(&mut self) -> u64 {
        let mut stream = SplitMix64(self.0);
        let v = stream.next_u64();
        self.0 = stream.0;
        v
    }
    /// Uniform enough in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// An index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
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

impl Rng {
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Log-uniform in `[lo, hi]` (`0 < lo <= hi`).
    pub fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
        ((a + (b - a) * self.unit()).exp() as u64).clamp(lo, hi)
    }
}

fn buffer(size: u64, start: u32, end: u32) -> Item {
    Item::new(size, start, end)
}

/// A problem shaped like the allocation traces of compiler-scheduled networks (the MiniMalloc
/// CSV kind): `n` buffers over about `n / 3` ops, alignment 1.
///
/// - 1 % parameters live over the whole program, 64 B to 64 MiB (log-uniform);
/// - 5 % prefetched weights, 64 B to 64 MiB, loaded 1 to 1000 ops (heavy tail) before the
///   op that uses them;
/// - 94 % activations, 4 B to 256 MiB, mostly live 1 to 3 ops, 20 % of them 4 to 30 ops,
///   8 % 30 to 300 and 2 % (skip connections) up to 3000.
///
/// So sizes spread over eight orders of magnitude, lifetimes are mostly short with a heavy
/// tail, and the whole-program parameters take about half of the peak. The program runs in
/// phases of 500 to 2000 ops; one buffer in 200 crosses its phase's bounds (a skip
/// connection, an early load), so only some phase boundaries are free time boundaries.
pub fn real_trace_like(n: usize, seed: u64) -> Problem {
    let mut rng = Rng(seed ^ 0x7ace_0000 ^ (n as u64).rotate_left(17));
    let ops = (n as u64 / 3).max(8) as u32;
    let mut items = Vec::with_capacity(n);
    let (mut phase_start, mut phase_end) = (0u32, 0u32);
    for k in 0..n {
        // The k-th buffer is written near op k * ops / n: a schedule in order.
        let op = (k as u64 * u64::from(ops) / n as u64) as u32;
        if op >= phase_end {
            phase_start = op;
            phase_end = op + 500 + rng.below(1500) as u32;
        }
        // One buffer in 200 crosses its phase's bounds (a skip connection, an early load).
        let crosses = rng.below(200) == 0;
        let roll = rng.below(100);
        let item = if roll < 1 {
            buffer(rng.log_uniform(64, 64 << 20), 0, ops - 1)
        } else if roll < 6 {
            let lead = heavy_tail(&mut rng, 1000);
            let first = if crosses { 0 } else { phase_start };
            let start = op.saturating_sub(lead).max(first);
            buffer(rng.log_uniform(64, 64 << 20), start, op)
        } else {
            let r = rng.below(100);
            let len = if r < 70 {
                1 + rng.below(3) as u32
            } else if r < 90 {
                4 + rng.below(27) as u32
            } else if r < 98 {
                30 + rng.below(271) as u32
            } else {
                heavy_tail(&mut rng, 3000)
            };
            let last = if crosses { ops - 1 } else { phase_end - 1 };
            let end = (op + len - 1).min(last).min(ops - 1).max(op);
            buffer(rng.log_uniform(4, 256 << 20), op, end)
        };
        items.push(item);
    }
    Problem {
        items,
        capacity: None,
    }
}

/// 1 to `max`, heavy-tailed (log-uniform).
fn heavy_tail(rng: &mut Rng, max: u64) -> u32 {
    rng.log_uniform(1, max) as u32
}

/// The random problems: `n` buffers over `ops` ops; 80 % live 1 to 20 ops, the rest
/// 1 to 1000; sizes log-uniform from 64 B to 1 MiB; starts uniform.
pub fn random_problem(n: usize, ops: u32, seed: u64) -> Problem {
    let mut rng = Rng(seed ^ 0xa11d_0000 ^ (n as u64).rotate_left(29));
    let items = (0..n)
        .map(|_| {
            let len = if rng.below(10) < 8 {
                1 + rng.below(20) as u32
            } else {
                1 + rng.below(1000) as u32
            };
            let start = rng.below(u64::from(ops)) as u32;
            let end = (start + len - 1).min(ops - 1);
            buffer(rng.log_uniform(64, 1 << 20), start, end)
        })
        .collect();
    Problem {
        items,
        capacity: None,
    }
}

/// Writes `problem` as a MiniMalloc CSV (`id,lower,upper,size`, live over `[lower, upper)`),
/// which `planner plan` reads.
pub fn write_csv(problem: &Problem, path: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "id,lower,upper,size")?;
    for (i, it) in problem.items.iter().enumerate() {
        writeln!(
            out,
            "{i},{},{},{}",
            it.start,
            u64::from(it.end) + 1,
            it.size
        )?;
    }
    out.flush()
}

/// The packer `name` with integer options `options` (`[("threads", 1)]`); panics with the
/// registry's message on a name or option it refuses (a harness's argument error).
pub fn packer(name: &str, options: &[(String, i64)]) -> planner::pack::PlannerKind {
    let o: std::collections::BTreeMap<String, planner::pack::OptionValue> = options
        .iter()
        .map(|(k, v)| (k.clone(), planner::pack::OptionValue::Int(*v)))
        .collect();
    planner::pack::PlannerKind::from_name(name, &o).unwrap_or_else(|e| panic!("{}", e.message))
}

/// The lowest of the classic greedy heights, with its name: TFLM's planner (the `tflm`
/// packer: sizes rounded up to 16, largest first), size-descending first fit at byte
/// granularity (`greedy_by_size`), Vela's (start order, best fit) and best-of-greedy (six
/// orders times two gap rules).
pub fn best_classic(problem: &Problem) -> (u64, &'static str) {
    use planner::pack::{GapRule, greedy_order, pack_report, place_in_order_by};
    let height = |name: &str| pack_report(&packer(name, &[]), problem).packing.height;
    let mut all = [
        (height("tflm"), "tflm"),
        (height("greedy_by_size"), "by size"),
        (
            place_in_order_by(problem, &greedy_order(problem), GapRule::BestFit).height,
            "vela",
        ),
        (height("best_of_greedy"), "best of"),
    ];
    all.sort_by_key(|&(h, _)| h);
    all[0]
}

/// CPU seconds this process has used (user + system, all threads, from `/proc/self/stat`
/// in clock ticks of 10 ms; 0 where there is no such file). On a loaded machine the CPU
/// time of a single-threaded run is what its wall time would be on an idle one.
pub fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime and stime are the
    // 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

/// Peak resident memory of this process in KiB (`VmHWM` of `/proc/self/status`), when the
/// system says.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
