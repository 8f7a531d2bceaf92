//! Reports of a CSV problem planned on its own items ([`crate::solve_problem`]): a table for
//! people and the JSON object of the model reports, written row by row (no plan maps: on
//! 10^6 rows they cost more than planning).

use std::fmt::Write as _;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::SolvedProblem;
use crate::import::csv::CsvProblem;

/// The problem's figures, then one row per buffer in file order: id, lower, upper, size,
/// offset.
pub fn problem_table(name: &str, csv: &CsvProblem, solved: &SolvedProblem) -> String {
    let items = &csv.problem.items;
    let c = &solved.certificate;
    let steps = items
        .iter()
        .map(|it| u64::from(it.end) + 1)
        .max()
        .unwrap_or(0);
    let mut s = String::with_capacity(64 * items.len() + 512);
    let _ = writeln!(
        s,
        "problem {name} · planner {} · {} buffers · {steps} steps",
        solved.planner,
        items.len()
    );
    let _ = writeln!(s);
    let optimal = if c.optimal { "yes" } else { "-" };
    let summary = [
        [
            "height",
            "lower bound",
            "above the bound",
            "ratio",
            "optimal",
        ]
        .map(String::from),
        [
            c.height.to_string(),
            c.lower_bound.to_string(),
            c.gap().to_string(),
            format!("{:.6}", c.ratio()),
            optimal.into(),
        ],
    ];
    super::write_columns(&mut s, &summary, |_, _| true);
    let _ = writeln!(s);
    // Widths first, so the rows go straight into the output.
    let head = ["id", "lower", "upper", "size", "offset"];
    let mut w = head.map(str::len);
    let digits = |v: u64| v.checked_ilog10().map_or(1, |d| d as usize + 1);
    for (i, it) in items.iter().enumerate() {
        let off = solved.packing.offsets[i].unwrap_or(0);
        w[0] = w[0].max(csv.ids[i].chars().count());
        w[1] = w[1].max(digits(u64::from(it.start)));
        w[2] = w[2].max(digits(u64::from(it.end) + 1));
        w[3] = w[3].max(digits(it.size));
        w[4] = w[4].max(digits(off));
    }
    let _ = writeln!(
        s,
        "{:<a$}  {:>b$}  {:>c$}  {:>d$}  {:>e$}",
        head[0],
        head[1],
        head[2],
        head[3],
        head[4],
        a = w[0],
        b = w[1],
        c = w[2],
        d = w[3],
        e = w[4]
    );
    for (i, it) in items.iter().enumerate() {
        let off = solved.packing.offsets[i].unwrap_or(0);
        // Pad by characters, not bytes, so ids beyond ASCII line up too.
        let id = &csv.ids[i];
        let pad = w[0] - id.chars().count();
        let _ = writeln!(
            s,
            "{id}{:pad$}  {:>b$}  {:>c$}  {:>d$}  {:>e$}",
            "",
            it.start,
            u64::from(it.end) + 1,
            it.size,
            off,
            b = w[1],
            c = w[2],
            d = w[3],
            e = w[4]
        );
    }
    s
}

/// The JSON object [`super::json`] prints for a model plan, for a CSV problem: one scratch
/// arena `MEM`, each buffer a tensor whose lifetime is its steps (`end_op = upper - 1`),
/// keys in id order, pretty-printed the same way.
pub fn problem_json(name: &str, csv: &CsvProblem, solved: &SolvedProblem) -> String {
    let items = &csv.problem.items;
    let mut order: Vec<u32> = (0..items.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| csv.ids[a as usize].cmp(&csv.ids[b as usize]));
    let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
    let mut s = String::with_capacity(400 * items.len() + 1024);
    let _ = write!(
        s,
        "{{\n  \"format_version\": {},\n  \"model\": {},\n  \"planner\": {},\n  \"op_order\": [],\n  \"tensor_allocs\": {{",
        super::JSON_FORMAT_VERSION,
        q(name),
        q(&solved.planner)
    );
    for (k, &i) in order.iter().enumerate() {
        let i = i as usize;
        let id = q(&csv.ids[i]);
        let off = solved.packing.offsets[i].unwrap_or(0);
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(
            s,
            "{sep}\n    {id}: {{\n      \"tensor_id\": {id},\n      \"memory\": \"MEM\",\n      \"offset\": {off},\n      \"size\": {},\n      \"binding\": {{\n        \"role\": \"scratch\",\n        \"memory\": \"MEM\",\n        \"source_memory\": \"MEM\",\n        \"offset\": {off}\n      }}\n    }}",
            items[i].size
        );
    }
    let close = if order.is_empty() { "}" } else { "\n  }" };
    let height = solved.packing.height;
    // The alignment the model pipeline gives every arena's base (16 bytes), as its report
    // says; the buffers themselves need none.
    let _ = write!(
        s,
        "{close},\n  \"arena_usages\": {{\n    \"MEM\": {{\n      \"memory\": \"MEM\",\n      \"total_size\": {height},\n      \"used\": {height},\n      \"role\": \"scratch\",\n      \"source_memory\": \"MEM\",\n      \"alignment\": 16\n    }}\n  }},\n  \"persistent_arenas\": {{}},\n  \"constant_arenas\": {{}},\n  \"tensor_lifetimes\": {{"
    );
    for (k, &i) in order.iter().enumerate() {
        let i = i as usize;
        let id = q(&csv.ids[i]);
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(
            s,
            "{sep}\n    {id}: {{\n      \"tensor_id\": {id},\n      \"start_op\": {},\n      \"end_op\": {}\n    }}",
            items[i].start, items[i].end
        );
    }
    let _ = write!(s, "{close}\n}}");
    s
}

/// Why a buffer of a CSV problem is where it is: there is one memory and one role, so the
/// reason is its lifetime and the planner that packed it.
fn problem_reason(csv: &CsvProblem, solved: &SolvedProblem, i: usize) -> String {
    let it = &csv.problem.items[i];
    format!(
        "live over steps {}..{} (upper exclusive), packed by planner {}",
        it.start,
        u64::from(it.end) + 1,
        solved.planner
    )
}

/// `planner explain` for a CSV problem planned on its own items ([`crate::solve_problem`],
/// the plan `planner plan X.csv` prints): one line per buffer in file order, `only` keeping
/// the buffer of that id. Written straight from the rows: no plan maps.
pub fn problem_explain(csv: &CsvProblem, solved: &SolvedProblem, only: Option<&str>) -> String {
    let items = &csv.problem.items;
    let mut s = String::with_capacity(if only.is_some() { 256 } else { 120 * items.len() });
    for (i, it) in items.iter().enumerate() {
        let id = &csv.ids[i];
        if only.is_some_and(|o| o != id) {
            continue;
        }
        let off = solved.packing.offsets[i].unwrap_or(0);
        let _ = writeln!(
            s,
            "{id} {id}: scratch/MEM @{off} +{} — {}",
            it.size,
            problem_reason(csv, solved, i)
        );
    }
    s
}

/// The rows of [`crate::report::explain_rows`] for a CSV problem: the same header, one row
/// per buffer (`only` keeping one id), model `name`.
#[doc(hidden)]
pub fn problem_explain_rows(
    name: &str,
    csv: &CsvProblem,
    solved: &SolvedProblem,
    only: Option<&str>,
) -> Vec<Vec<String>> {
    let mut rows = vec![
        crate::report::EXPLAIN_HEADER
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>(),
    ];
    for (i, it) in csv.problem.items.iter().enumerate() {
        let id = &csv.ids[i];
        if only.is_some_and(|o| o != id) {
            continue;
        }
        rows.push(vec![
            name.to_string(),
            id.clone(),
            id.clone(),
            "scratch".into(),
            "MEM".into(),
            "MEM".into(),
            solved.packing.offsets[i].unwrap_or(0).to_string(),
            it.size.to_string(),
            problem_reason(csv, solved, i),
        ]);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Solution;
    use crate::graph::TensorIndex;
    use crate::pack::PlannerKind;
    use std::path::Path;

    #[test]
    fn json_is_the_model_reports_and_the_table_lists_every_row() {
        let text = "id,lower,upper,size\nx\"1,0,3,40\nb,1,2,8\na,2,5,16\nz,5,6,0\n";
        let csv = crate::import::csv::parse(Path::new("t.csv"), text).unwrap();
        let Solution::Solved(s) =
            crate::solve_problem(&csv, &PlannerKind::default(), None, 0).unwrap()
        else {
            panic!("no capacity")
        };
        // The model pipeline with every offset fixed where the solution put it.
        let mut input = crate::problem_input(&csv, "t", &PlannerKind::Greedy);
        for (i, o) in s.packing.offsets.iter().enumerate() {
            input.fixed.insert(TensorIndex(i as u32), o.unwrap());
        }
        let mut planned = input.plan().unwrap();
        planned.planner = s.planner.clone();
        assert_eq!(problem_json("t", &csv, &s), crate::report::json(&planned));
        let table = problem_table("t", &csv, &s);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "problem t · planner auto · 4 buffers · 6 steps");
        assert_eq!(
            lines[2],
            "height  lower bound  above the bound     ratio  optimal"
        );
        assert_eq!(
            lines[3],
            "    56           56                0  1.000000      yes"
        );
        assert_eq!(lines[5], "id   lower  upper  size  offset");
        assert_eq!(lines.len(), 10);
        assert!(lines[6].starts_with("x\"1      0      3    40"), "{table}");
    }
}
