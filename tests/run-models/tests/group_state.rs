//! A model of a group starts from the state a model alone starts from: the int8 variables
//! with a non-zero zero point (an SVDF's activation state, an LSTM's hidden state) hold that
//! zero point after the group's `init()`, as TFLite Micro resets them. Each model of group
//! `state_pair` (`GROUPED`) runs the two state golden runs through the group's handle, the
//! models in turn over their shared scratch arena, and its outputs must equal the model's
//! alone (`MODELS`) and TFLM's two consecutive invokes (`goldens/state/`), bit for bit.
//!
//! The bytes are checked directly too (`init_sets_...`): on these goldens the outputs
//! alone would not show a state that starts at 0 instead of its zero point.
//!
//! The runs test is the only one of this binary that takes the statics: every handle's
//! state starts fresh at its first run.

use planner::graph::{DType, TensorKind};
use planner::planfile::group::{AnyPlan, read};
use run_models::{GROUPED, MODELS, STATE_SALT, Set, golden_json, run_inputs, state_pair, unhex};

/// `len` bytes of `buf` (which has 64 more) starting at a 64-byte boundary.
fn aligned(buf: &mut [u8], len: usize) -> &mut [u8] {
    let start = buf.as_ptr().align_offset(64);
    &mut buf[start..start + len]
}

#[test]
fn init_sets_each_models_int8_variables_to_their_zero_point() {
    let text = std::str::from_utf8(state_pair::PLAN_FILE).unwrap();
    let Ok(AnyPlan::Group(plan)) = read(text, "state_pair") else {
        panic!("state_pair's plan is no group plan")
    };
    let size = |name: &str| {
        let a = plan.arenas.iter().find(|a| a.arena.name == name);
        a.map(|a| a.arena.size as usize).unwrap()
    };
    let (scratch_len, state_len) = (size("scratch.SRAM"), size("persistent.SRAM"));
    // Filled with 0xAA, so that neither "zeroed" nor "left alone" passes for a zero point.
    let mut scratch = vec![0xAA; scratch_len + 64];
    let mut state = vec![0xAA; state_len + 64];
    let group = state_pair::Handle::from_buffers(state_pair::Buffers {
        scratch_sram: aligned(&mut scratch, scratch_len),
        persistent_sram: aligned(&mut state, state_len),
    })
    .unwrap();
    let _ = group.init();
    let state = aligned(&mut state, state_len);
    let mut checked = 0;
    let mut problems = Vec::new();
    for m in &plan.models {
        for t in &m.tensors {
            let zero = t.quantization.as_ref().and_then(|q| q.zero_point.first());
            let Some(&zero) = zero.filter(|&&z| z != 0) else {
                continue;
            };
            if t.kind != TensorKind::Variable || t.dtype != DType::I8 || t.alias_of.is_some() {
                continue;
            }
            assert_eq!(m.arenas[t.arena as usize].name, "persistent.SRAM");
            // Offsets in a model's plan count from the group arena's start.
            let (start, end) = (t.offset as usize, (t.offset + t.size) as usize);
            let bytes = &state[start..end];
            let want = zero as i8 as u8;
            checked += 1;
            if let Some(i) = bytes.iter().position(|&b| b != want) {
                problems.push(format!(
                    "model `{}` tensor `{}`: byte {i} is {:#04x} after the group's init(), not its zero point {zero} ({want:#04x})",
                    m.model, t.name, bytes[i]
                ));
            }
        }
    }
    assert!(checked >= 8, "{checked} int8 variables with a zero point");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_model_of_a_group_runs_from_the_state_it_has_alone() {
    assert!(GROUPED.len() >= 2, "{} grouped models", GROUPED.len());
    let goldens: Vec<_> = GROUPED
        .iter()
        .map(|(stem, _)| golden_json(&format!("state/{stem}"), "scripts/tflm_single_ops_lstm.py"))
        .collect();
    let mut problems = Vec::new();
    // Run by run, the models in turn: each model's state must survive the others' runs.
    for r in 0..2 {
        for ((stem, member), golden) in GROUPED.iter().zip(&goldens) {
            let alone = MODELS
                .iter()
                .find(|m| m.name() == *stem)
                .unwrap_or_else(|| panic!("{stem} is no bundled model"));
            let inputs = run_inputs(golden, r, STATE_SALT);
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let grouped = member.run(&refs, Set::Reference, &mut ());
            let single = alone.run(&refs, Set::Reference, &mut ());
            let (grouped, single) = match (grouped, single) {
                (Ok(g), Ok(s)) => (g, s),
                (g, s) => {
                    problems.push(format!("{stem} run {r}: {:?} / {:?}", g.err(), s.err()));
                    continue;
                }
            };
            let want: Vec<Vec<u8>> = golden["runs"][r]["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| unhex(o.as_str().unwrap()))
                .collect();
            if grouped != single {
                problems.push(format!(
                    "{stem} run {r}: through group `state_pair` its outputs differ from the model's alone"
                ));
            }
            if grouped != want {
                problems.push(format!(
                    "{stem} run {r}: through group `state_pair` its outputs differ from TFLM's"
                ));
            }
            println!(
                "{stem} run {r} (as `{}` of the group): {}",
                member.name(),
                if grouped == single && grouped == want {
                    "outputs equal the model's alone and TFLM's"
                } else {
                    "differs"
                }
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
