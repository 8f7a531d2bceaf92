//! Memory-aware op order (`schedule = "memory"`): peaks and scheduling times.
//!
//! 1. An unrolled-LSTM-shaped graph (a float input quantised, unpacked into time steps, four
//!    gates per step from an input and a recurrent projection), generated with its ops in
//!    "as soon as possible" order: every step's input projection before the recurrence
//!    reaches it. Printed: the model order's peak, the reordered peak and the lower bound over
//!    every order.
//! 2. 50 multi-branch synthetic graphs of 100-2000 ops (inception-like blocks of parallel
//!    branches that widen and narrow, with skip connections; ops listed branch by branch
//!    interleaved, or in a shuffled topological order): the distribution of the reordered
//!    peak over the bound and over the best start order.
//! 3. The bundled models (`models/*.tflite`): the packed scratch arena with the model's order
//!    and with `schedule = "memory"`, with and without reshape aliasing.
//! 4. Scheduling time for 1000-op graphs.
//!
//! ```text
//! cargo run --release -p planner-bench --bin schedule_bench
//! ```

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use planner::graph::{DType, Graph, IoName, Op, Tensor, TensorIndex, TensorKind};
use planner::manifest::{Manifest, Schedule};
use planner::schedule::{self, Scheduled};

use planner_bench::Rng;

/// Builds a graph tensor by tensor and op by op.
#[derive(Default)]
struct Builder {
    g: Graph,
}

impl Builder {
    fn tensor(&mut self, name: &str, dtype: DType, shape: &[u64], kind: TensorKind) -> u32 {
        let elements: u64 = shape.iter().product();
        self.g.tensors.push(Tensor {
            id: self.g.tensors.len().to_string(),
            name: name.to_string(),
            dtype,
            shape: shape.to_vec(),
            size: dtype.bytes_for(elements).unwrap_or(0),
            kind,
            quantization: None,
            align_hint: None,
            data: None,
        });
        (self.g.tensors.len() - 1) as u32
    }
    fn act(&mut self, name: &str, dtype: DType, shape: &[u64]) -> u32 {
        self.tensor(name, dtype, shape, TensorKind::Activation)
    }
    fn weight(&mut self, name: &str, shape: &[u64]) -> u32 {
        self.tensor(name, DType::I8, shape, TensorKind::Constant)
    }
    fn op(&mut self, opcode: &str, inputs: &[u32], outputs: &[u32]) {
        self.g.ops.push(Op {
            opcode: opcode.to_string(),
            inputs: inputs.iter().map(|&i| Some(TensorIndex(i))).collect(),
            outputs: outputs.iter().map(|&i| TensorIndex(i)).collect(),
            scratch: Vec::new(),
            options: Default::default(),
        });
    }
    fn io(&mut self, input: u32, output: u32) {
        self.g.inputs.push(IoName {
            name: "input".into(),
            tensor: TensorIndex(input),
        });
        self.g.outputs.push(IoName {
            name: "output".into(),
            tensor: TensorIndex(output),
        });
    }
}

/// Reorders `g`'s ops "as soon as possible": by longest path from the inputs, ties by the
/// order they were built in.
fn asap(mut g: Graph) -> Graph {
    let n = g.ops.len();
    let mut writer = vec![usize::MAX; g.tensors.len()];
    let mut level = vec![0usize; n];
    for (k, op) in g.ops.iter().enumerate() {
        level[k] = op
            .inputs
            .iter()
            .flatten()
            .filter_map(|t| writer.get(t.get()).copied().filter(|&w| w != usize::MAX))
            .map(|w| level[w] + 1)
            .max()
            .unwrap_or(0);
        for t in &op.outputs {
            writer[t.get()] = k;
        }
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by_key(|&k| (level[k], k));
    g.ops = idx.iter().map(|&k| g.ops[k].clone()).collect();
    g
}

/// An unrolled LSTM: `steps` time steps of `features` float inputs, `hidden` units, int8
/// activations and an int16 cell state, then a classifier on the last hidden state.
fn lstm(steps: u64, features: u64, hidden: u64) -> Graph {
    let mut b = Builder::default();
    let x = b.act("input", DType::F32, &[steps, 1, features]);
    let xq = b.act("input_q", DType::I8, &[steps, 1, features]);
    b.op("QUANTIZE", &[x], &[xq]);
    let xs: Vec<u32> = (0..steps)
        .map(|t| b.act(&format!("x{t}"), DType::I8, &[1, features]))
        .collect();
    b.op("UNPACK", &[xq], &xs);
    let wx = b.weight("w_input", &[4 * hidden, features]);
    let wh = b.weight("w_recurrent", &[4 * hidden, hidden]);
    let mut h = b.act("h_init", DType::I8, &[1, hidden]);
    let mut c = b.act("c_init", DType::I16, &[1, hidden]);
    b.op("FILL", &[], &[h]);
    b.op("FILL", &[], &[c]);
    for (t, &xt) in xs.iter().enumerate() {
        let gx = b.act(&format!("gx{t}"), DType::I8, &[1, 4 * hidden]);
        b.op("FULLY_CONNECTED", &[xt, wx], &[gx]);
        let gh = b.act(&format!("gh{t}"), DType::I8, &[1, 4 * hidden]);
        b.op("FULLY_CONNECTED", &[h, wh], &[gh]);
        let gates = b.act(&format!("g{t}"), DType::I8, &[1, 4 * hidden]);
        b.op("ADD", &[gx, gh], &[gates]);
        let parts: Vec<u32> = ["i", "f", "u", "o"]
            .iter()
            .map(|p| b.act(&format!("{p}{t}"), DType::I8, &[1, hidden]))
            .collect();
        b.op("SPLIT", &[gates], &parts);
        let act: Vec<u32> = ["i", "f", "u", "o"]
            .iter()
            .zip(&parts)
            .map(|(p, &src)| {
                let out = b.act(&format!("{p}{t}_act"), DType::I16, &[1, hidden]);
                b.op(if *p == "u" { "TANH" } else { "LOGISTIC" }, &[src], &[out]);
                out
            })
            .collect();
        let fc = b.act(&format!("fc{t}"), DType::I16, &[1, hidden]);
        b.op("MUL", &[act[1], c], &[fc]);
        let iu = b.act(&format!("iu{t}"), DType::I16, &[1, hidden]);
        b.op("MUL", &[act[0], act[2]], &[iu]);
        let c_next = b.act(&format!("c{t}"), DType::I16, &[1, hidden]);
        b.op("ADD", &[fc, iu], &[c_next]);
        let tc = b.act(&format!("tc{t}"), DType::I16, &[1, hidden]);
        b.op("TANH", &[c_next], &[tc]);
        let h_next = b.act(&format!("h{t}"), DType::I8, &[1, hidden]);
        b.op("MUL", &[act[3], tc], &[h_next]);
        (h, c) = (h_next, c_next);
    }
    let w_out = b.weight("w_out", &[12, hidden]);
    let logits = b.act("logits", DType::I8, &[1, 12]);
    b.op("FULLY_CONNECTED", &[h, w_out], &[logits]);
    let out = b.act("output", DType::I8, &[1, 12]);
    b.op("SOFTMAX", &[logits], &[out]);
    b.io(x, out);
    b.g.name = "unrolled_lstm".into();
    asap(b.g)
}

/// Inception-like blocks until about `target` ops: each block fans one tensor out to 2-6
/// branches of 1-6 ops whose tensors widen then narrow, joins them, and sometimes keeps a
/// skip connection to a later block. `shuffled` lists the ops in a random topological order;
/// otherwise the branches are interleaved op by op.
fn branchy(rng: &mut Rng, target: usize, shuffled: bool) -> Graph {
    let mut b = Builder::default();
    let input = b.act("input", DType::I8, &[1024]);
    let mut cur = input;
    let mut skips: Vec<u32> = Vec::new();
    let mut block = 0;
    while b.g.ops.len() < target {
        let width = 2 + rng.index(5);
        let mut chains: Vec<Vec<(Vec<u32>, u32)>> = Vec::new();
        let mut ends = Vec::new();
        for br in 0..width {
            let len = 1 + rng.index(6);
            let mut prev = cur;
            let mut chain = Vec::new();
            for j in 0..len {
                let size = 64 * (1 + rng.index(if j + 1 == len { 4 } else { 24 })) as u64;
                let t = b.act(&format!("b{block}_{br}_{j}"), DType::I8, &[size]);
                chain.push((vec![prev], t));
                prev = t;
            }
            ends.push(prev);
            chains.push(chain);
        }
        let joined = b.act(
            &format!("join{block}"),
            DType::I8,
            &[512 * (1 + rng.index(3)) as u64],
        );
        let mut join_inputs = ends.clone();
        if let Some(s) = skips.pop() {
            join_inputs.push(s);
        }
        // Interleave the branches op by op (what a breadth-first converter writes).
        let longest = chains.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..longest {
            for chain in &chains {
                if let Some((ins, out)) = chain.get(j) {
                    b.op("CONV_2D", ins, &[*out]);
                }
            }
        }
        b.op("CONCATENATION", &join_inputs, &[joined]);
        if rng.index(3) == 0 {
            skips.push(joined);
        }
        cur = joined;
        block += 1;
    }
    let out = b.act("output", DType::I8, &[16]);
    b.op("FULLY_CONNECTED", &[cur], &[out]);
    b.io(input, out);
    b.g.name = "branchy".into();
    if shuffled {
        b.g = random_topological(rng, b.g);
    }
    b.g
}

/// A uniformly chosen ready op at each step: a random valid order.
fn random_topological(rng: &mut Rng, mut g: Graph) -> Graph {
    let n = g.ops.len();
    let mut writer = vec![usize::MAX; g.tensors.len()];
    let mut preds = vec![Vec::new(); n];
    for (k, op) in g.ops.iter().enumerate() {
        for t in op.inputs.iter().flatten() {
            if writer[t.get()] != usize::MAX {
                preds[k].push(writer[t.get()]);
            }
        }
        for t in &op.outputs {
            writer[t.get()] = k;
        }
    }
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let ready: Vec<usize> = (0..n)
            .filter(|&k| !done[k] && preds[k].iter().all(|&p| done[p]))
            .collect();
        let k = ready[rng.index(ready.len())];
        done[k] = true;
        order.push(k);
    }
    g.ops = order.iter().map(|&k| g.ops[k].clone()).collect();
    g
}

fn quantiles(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    format!(
        "min {:.3}  median {:.3}  p90 {:.3}  max {:.3}",
        q(0.0),
        q(0.5),
        q(0.9),
        q(1.0)
    )
}

fn timed(g: &Graph) -> (Scheduled, f64) {
    // Best of three, so a cold first run does not decide the figure.
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..3 {
        let start = Instant::now();
        let s = schedule::reorder(g, 16);
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        out = Some(s);
    }
    (out.expect("three runs"), best)
}

fn lstm_figures() -> bool {
    println!("== unrolled LSTM (align 16)");
    let mut ok = true;
    for (steps, features, hidden) in [(49, 10, 20), (32, 40, 16)] {
        let g = lstm(steps, features, hidden);
        let (s, ms) = timed(&g);
        ok &= schedule::is_valid_order(&g, &s.order);
        println!(
            "{steps} steps x {features} features, {hidden} units: {} ops, {} tensors; model order peak {} B, reordered {} B, all-orders bound {} B{}; {} ops moved; {ms:.2} ms",
            g.ops.len(),
            g.tensors.len(),
            s.peak_before,
            s.peak_after,
            s.lower_bound,
            if s.peak_after == s.lower_bound {
                " (reached)"
            } else {
                ""
            },
            schedule::moved(&s.order).len()
        );
    }
    ok
}

fn branchy_figures() -> bool {
    println!("\n== 50 multi-branch graphs, 100-2000 ops (align 16)");
    let mut rng = Rng(2020);
    let (mut vs_bound, mut vs_start, mut start_vs_bound, mut model_vs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut reached, mut worst_ms, mut ok) = (0, 0f64, true);
    for i in 0..50 {
        let target = 100 + rng.index(1901);
        let g = branchy(&mut rng, target, i % 2 == 1);
        let (s, ms) = timed(&g);
        ok &= schedule::is_valid_order(&g, &s.order) && s.peak_after <= s.peak_before;
        worst_ms = worst_ms.max(ms / g.ops.len() as f64 * 1000.0);
        let bound = s.lower_bound.max(1) as f64;
        vs_bound.push(s.peak_after as f64 / bound);
        start_vs_bound.push(s.start_peak as f64 / bound);
        vs_start.push(s.peak_after as f64 / s.start_peak.max(1) as f64);
        model_vs.push(s.peak_before as f64 / bound);
        reached += usize::from(s.peak_after == s.lower_bound);
    }
    println!("model order / bound:       {}", quantiles(model_vs));
    println!("best start order / bound:  {}", quantiles(start_vs_bound));
    println!("reordered / bound:         {}", quantiles(vs_bound));
    println!("reordered / best start:    {}", quantiles(vs_start));
    println!("reordered peak reaches the bound on {reached} of 50 graphs");
    println!("slowest scheduling, scaled to 1000 ops: {worst_ms:.2} ms");
    ok
}

fn models_figures() -> Result<bool, Box<dyn std::error::Error>> {
    println!("\n== bundled models: packed scratch bytes (generic platform, align 16)");
    println!(
        "{:<34} {:>6} {:>9} {:>9} {:>9} {:>9}  {:>8} {:>8}",
        "model", "ops", "fixed", "memory", "fixed+rs", "memory+rs", "peak", "bound"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    files.sort();
    let mut ok = true;
    for path in files {
        let base = Manifest::for_model_file(&path);
        let graph = planner::import::load(&base)?;
        let mut used = Vec::new();
        for (sched, reshapes) in [
            (Schedule::Fixed, false),
            (Schedule::Memory, false),
            (Schedule::Fixed, true),
            (Schedule::Memory, true),
        ] {
            let mut m = base.clone();
            m.schedule = sched;
            m.aliasing.reshapes = reshapes;
            let p = planner::plan_graph(&m, &graph)?;
            planner::verify::verify(&p.graph, &p.plan)
                .map_err(|v| format!("{}: the plan fails verification: {v:?}", path.display()))?;
            used.push(p.scratch_reports.iter().map(|r| r.used).sum::<u64>());
        }
        let s = schedule::reorder(&graph, base.platform.min_alignment);
        ok &= used[1] <= used[0] && used[3] <= used[2];
        println!(
            "{:<34} {:>6} {:>9} {:>9} {:>9} {:>9}  {:>8} {:>8}{}",
            path.file_stem()
                .map(|s| s.to_string_lossy())
                .unwrap_or_default(),
            graph.ops.len(),
            used[0],
            used[1],
            used[2],
            used[3],
            format!("{}->{}", s.peak_before, s.peak_after),
            s.lower_bound,
            if s.optimal { " optimal" } else { "" }
        );
    }
    Ok(ok)
}

fn timing_figures() {
    println!("\n== scheduling time, 1000 ops (best of 3)");
    let mut rng = Rng(1000);
    for shuffled in [false, true] {
        let mut g = branchy(&mut rng, 1000, shuffled);
        g.ops.truncate(1000);
        if let Some(last) = g.ops.last().and_then(|o| o.outputs.first().copied()) {
            g.outputs[0].tensor = last;
        }
        let (s, ms) = timed(&g);
        println!(
            "branchy ({}): {} ops, {ms:.2} ms, {} work units, peak {} -> {} (bound {})",
            if shuffled { "shuffled" } else { "interleaved" },
            g.ops.len(),
            s.work,
            s.peak_before,
            s.peak_after,
            s.lower_bound
        );
    }
    let g = lstm(77, 10, 20);
    let (s, ms) = timed(&g);
    println!(
        "unrolled LSTM: {} ops, {ms:.2} ms, {} work units",
        g.ops.len(),
        s.work
    );
}

fn main() -> ExitCode {
    let mut ok = lstm_figures();
    ok &= branchy_figures();
    match models_figures() {
        Ok(m) => ok &= m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    timing_figures();
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: an order was invalid or worse than the model's");
        ExitCode::FAILURE
    }
}
