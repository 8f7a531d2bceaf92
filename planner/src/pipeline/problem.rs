//! The problem planner: a MiniMalloc CSV problem (buffers with given lifetimes and sizes,
//! some at fixed offsets) planned on one bank, beside the model planner.

use std::borrow::Cow;
use std::boxed::Box;
use std::collections::BTreeMap;
use std::string::ToString;
use std::vec::Vec;

use super::{Planned, plan_lifetimes};
use crate::error::Result;
use crate::graph::{DType, Graph, Tensor, TensorIndex, TensorKind};
use crate::import::csv::CsvProblem;
use crate::lifetimes::Lifetimes;
use crate::manifest::{Aliasing, Manifest, Memory, ModelSource, Platform, Schedule};
use crate::pack;

/// How a CSV problem was solved against a capacity.
#[derive(Debug, Clone)]
pub enum ProblemOutcome {
    /// Planned; with a capacity, everything fits below it.
    Planned(Box<Planned>),
    /// Everything does not fit below the capacity. `proven` is true when an exhaustive search
    /// showed that no packing does; `best_height` is the lowest height found.
    DoesNotFit {
        /// The lowest height any planner found.
        best_height: u64,
        /// True when the exact search proved that nothing fits below the capacity.
        proven: bool,
    },
}

/// A CSV problem ready to plan: a one-bank manifest (`MEM`, 1-byte alignment), the graph of
/// its buffers, their lifetimes (`start_op = lower`, `end_op = upper - 1`) and the rows'
/// fixed offsets.
#[derive(Debug, Clone)]
pub struct ProblemInput {
    /// The one-bank manifest; its `planner` is the one [`ProblemInput::plan`] uses.
    pub manifest: Manifest,
    /// One `u8` activation per row.
    pub graph: Graph,
    /// The rows' lifetimes.
    pub lifetimes: Lifetimes,
    /// Fixed offsets by row.
    pub fixed: BTreeMap<TensorIndex, u64>,
}

impl ProblemInput {
    /// Plans with the input's own manifest.
    pub fn plan(&self) -> Result<Planned> {
        self.plan_as(&self.manifest)
    }

    /// Plans with `manifest` (the input's, with another planner).
    pub fn plan_as(&self, manifest: &Manifest) -> Result<Planned> {
        plan_lifetimes(
            manifest,
            Cow::Borrowed(&self.graph),
            &self.lifetimes,
            &self.fixed,
        )
    }

    /// Plans with the input's own manifest, moving the graph into the result instead of
    /// copying it.
    pub fn into_planned(self) -> Result<Planned> {
        plan_lifetimes(
            &self.manifest,
            Cow::Owned(self.graph),
            &self.lifetimes,
            &self.fixed,
        )
    }
}

/// Plans a MiniMalloc CSV problem.
///
/// Without `capacity` the planner minimises the height. With it, a plan above the capacity
/// is handed to the exact search ([`pack::optimal`]) under `node_budget`, which either finds
/// offsets below it or proves there are none.
pub fn plan_problem(
    csv: &CsvProblem,
    name: &str,
    planner: &pack::PlannerKind,
    capacity: Option<u64>,
    node_budget: u64,
) -> Result<ProblemOutcome> {
    let input = problem_input(csv, name, planner);
    let Some(cap) = capacity else {
        return Ok(ProblemOutcome::Planned(Box::new(input.into_planned()?)));
    };
    let planned = input.plan()?;
    let height = planned.plan.arena_usages.get("MEM").map_or(0, |a| a.used);
    if height <= cap {
        return Ok(ProblemOutcome::Planned(Box::new(planned)));
    }
    let opts = pack::optimal::OptimalOptions {
        node_budget,
        time_limit: None,
    };
    match pack::optimal::fits(&csv.problem, cap, &opts) {
        pack::optimal::Outcome::Fits(packing) => {
            let mut exact = input;
            for (i, o) in packing.offsets.iter().enumerate() {
                if let Some(o) = o {
                    exact.fixed.insert(TensorIndex(i as u32), *o);
                }
            }
            exact.manifest.planner = pack::PlannerKind::Greedy;
            let mut planned = exact.into_planned()?;
            planned.planner = "optimal".to_string();
            Ok(ProblemOutcome::Planned(Box::new(planned)))
        }
        pack::optimal::Outcome::DoesNotFit => Ok(ProblemOutcome::DoesNotFit {
            best_height: height,
            proven: true,
        }),
        pack::optimal::Outcome::Unknown(best) => Ok(ProblemOutcome::DoesNotFit {
            best_height: height.min(best.height),
            proven: false,
        }),
    }
}

/// The graph, lifetimes and fixed offsets of a CSV problem, and a one-bank manifest.
pub fn problem_input(csv: &CsvProblem, name: &str, planner: &pack::PlannerKind) -> ProblemInput {
    let tensors: Vec<Tensor> = csv
        .ids
        .iter()
        .zip(&csv.problem.items)
        .map(|(id, it)| Tensor {
            id: id.clone(),
            name: id.clone(),
            dtype: DType::U8,
            shape: vec![it.size],
            size: it.size,
            kind: TensorKind::Activation,
            quantization: None,
            align_hint: (it.align > 1).then_some(it.align),
            data: None,
        })
        .collect();
    let live = csv
        .problem
        .items
        .iter()
        .map(|it| Some((it.start, it.end)))
        .collect();
    let fixed = csv
        .problem
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| it.fixed.map(|o| (TensorIndex(i as u32), o)))
        .collect();
    let graph = Graph {
        name: name.to_string(),
        tensors,
        ..Graph::default()
    };
    let manifest = Manifest {
        path: std::path::PathBuf::from("<csv>"),
        name: name.to_string(),
        source: ModelSource::Graph(Box::new(graph.clone())),
        platform: Platform {
            name: "problem".to_string(),
            memories: vec![Memory {
                name: "MEM".to_string(),
                size: None,
                writable: true,
                readable_in_place: true,
                origin: None,
            }],
            min_alignment: 1,
        },
        planner: planner.clone(),
        constraints: Vec::new(),
        rules: Vec::new(),
        slabs: Vec::new(),
        aliasing: Aliasing::default(),
        schedule: Schedule::Fixed,
        max_zero_constants: crate::manifest::DEFAULT_MAX_ZERO_CONSTANTS,
        patches: Default::default(),
        kernels: Default::default(),
        budget_spans: Default::default(),
    };
    ProblemInput {
        manifest,
        graph,
        lifetimes: Lifetimes::explicit(live),
        fixed,
    }
}
