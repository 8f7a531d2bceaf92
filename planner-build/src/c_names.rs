//! The names of the macros the C header defines for a plan file. The header's writer and
//! the check of what a compiled header defines (`tests/support/header_check.rs`, shared
//! with the `generated_names` fuzz target) both take them from here, so they name alike;
//! the check still compares every value with the plan file's own.

use planner::planfile::{IoEntry, PlanFile, naming};

/// The stems of a plan's C macros: a macro is a stem, `_` and a field (`SIZE`, `OFFSET`, ..).
#[derive(Debug, Clone)]
pub struct CNames<'a> {
    /// `PLANNER_<MODEL>`, which every name starts with.
    pub prefix: String,
    /// Per arena, in plan order: `<prefix>_REGION_<ARENA>`, its `enum` constant.
    pub regions: Vec<String>,
    /// Per tensor, in plan order: `<prefix>_T_<TENSOR>`, each unique.
    pub tensors: Vec<String>,
    /// The model's inputs, then its outputs; one whose tensor the plan lacks is left out.
    pub ios: Vec<IoNames<'a>>,
}

/// The names of a model input's or output's macros, which repeat its tensor's.
#[derive(Debug, Clone)]
pub struct IoNames<'a> {
    /// `INPUT` or `OUTPUT`.
    pub kind: &'static str,
    /// The plan file's entry.
    pub io: &'a IoEntry,
    /// `<prefix>_<KIND>_<NAME>`, each unique among the inputs (outputs).
    pub stem: String,
    /// The stem of its tensor's macros.
    pub tensor: String,
}

impl<'a> CNames<'a> {
    /// The names of `plan`'s macros.
    pub fn of(plan: &'a PlanFile) -> CNames<'a> {
        let prefix = naming::c_prefix(&plan.model);
        let regions = plan
            .arenas
            .iter()
            .map(|a| {
                format!(
                    "{prefix}_REGION_{}",
                    naming::arena_static(a.role, &a.memory)
                )
            })
            .collect();
        let tensors: Vec<String> =
            naming::unique_idents(plan.tensors.iter().map(|t| t.name.as_str()))
                .into_iter()
                .map(|ident| format!("{prefix}_T_{}", ident.to_ascii_uppercase()))
                .collect();
        let mut ios = Vec::new();
        for (kind, list) in [("INPUT", &plan.inputs), ("OUTPUT", &plan.outputs)] {
            let names = naming::unique_idents(list.iter().map(|io| io.name.as_str()));
            for (io, name) in list.iter().zip(names) {
                if let Some(tensor) = tensors.get(io.tensor as usize) {
                    ios.push(IoNames {
                        kind,
                        io,
                        stem: format!("{prefix}_{kind}_{}", name.to_ascii_uppercase()),
                        tensor: tensor.clone(),
                    });
                }
            }
        }
        CNames {
            prefix,
            regions,
            tensors,
            ios,
        }
    }
}
