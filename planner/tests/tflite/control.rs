//! Models with several subgraphs: IF, WHILE and CALL_ONCE put their subgraphs' ops into the
//! one op list with a control entry, resource variables become persistent tensors read and
//! written by copies, and every malformed case is an error naming the op and its subgraph.

use super::builder::*;
use planner::graph::{Control, DType, OpRange, TensorKind};
use planner::lifetimes;
use planner::manifest::Manifest;
use planner::verify;

const IF: i32 = 118;
const WHILE: i32 = 119;
const CALL_ONCE: i32 = 129;
const VAR_HANDLE: i32 = 142;
const READ_VARIABLE: i32 = 143;
const ASSIGN_VARIABLE: i32 = 144;
const RELU: i32 = 19;
const LESS: i32 = 58;
const ADD: i32 = 0;

fn bool_tensor(name: &'static str) -> TensorSpec {
    TensorSpec {
        ty: 6,
        ..tensor(name, &[1], 0)
    }
}

/// Asserts that reading `model()` after `edit` is refused with an error containing
/// `expected`.
fn assert_refused(model: fn() -> ModelSpec, edit: impl FnOnce(&mut ModelSpec), expected: &str) {
    let mut m = model();
    edit(&mut m);
    let e = error_of(&m);
    assert!(e.contains(expected), "{e}");
}

/// `n` RELUs in a row from input `a` to output `o` ([1, 4] int8; code index 1).
fn relus(n: usize) -> SubgraphSpec {
    const NAMES: [&str; 4] = ["a", "h1", "h2", "o"];
    let mut tensors = vec![tensor("a", &[1, 4], 0)];
    let mut ops = Vec::new();
    for k in 0..n {
        let name = if k + 1 == n { "o" } else { NAMES[k + 1] };
        tensors.push(tensor(name, &[1, 4], 0));
        ops.push(op(1, &[k as i32], &[k as i32 + 1]));
    }
    SubgraphSpec {
        tensors,
        ops,
        inputs: vec![0],
        outputs: vec![n as i32],
    }
}

/// `y = IF(cond, x)` with a one-RELU then branch and a three-RELU else branch.
fn if_model() -> ModelSpec {
    let mut iff = op(0, &[0, 1], &[2]);
    iff.options = Some((92, Some(vec![(0, 1), (1, 2)])));
    ModelSpec {
        version: 3,
        codes: vec![code(IF), code(RELU)],
        subgraphs: vec![
            SubgraphSpec {
                tensors: vec![
                    bool_tensor("cond"),
                    tensor("x", &[1, 4], 0),
                    tensor("y", &[1, 4], 0),
                ],
                ops: vec![iff],
                inputs: vec![0, 1],
                outputs: vec![2],
            },
            relus(1),
            relus(3),
        ],
        buffers: vec![BufferSpec::Empty],
        signature: None,
    }
}

#[test]
fn an_if_puts_both_branches_in_the_op_list_one_after_the_other() {
    let g = read_built(&if_model()).unwrap();
    assert_eq!(
        g.control,
        [Control::If {
            cond: 0,
            then_ops: OpRange { start: 0, end: 1 },
            else_ops: OpRange { start: 1, end: 4 },
        }]
    );
    let opcodes: Vec<&str> = g.ops.iter().map(|o| o.opcode.as_str()).collect();
    assert_eq!(opcodes, ["RELU"; 4]);
    // Each branch reads `x` and writes `y` itself: no copies.
    assert_eq!(g.ops[0].inputs, [Some(g.find("1").unwrap())]);
    assert_eq!(g.ops[0].outputs, [g.find("2").unwrap()]);
    assert_eq!(g.ops[3].outputs, [g.find("2").unwrap()]);
    assert!(
        g.tensors[g.ops[1].outputs[0].get()]
            .name
            .starts_with("subgraph2/")
    );
    // The else branch's temporaries reuse bytes; the condition lives to the first op.
    let lt = lifetimes::compute(&g).unwrap();
    assert_eq!(lt.live[0], Some((0, 0)));
    assert_eq!(lt.live[2], Some((0, 3)));
    let planned =
        planner::plan_graph(&Manifest::for_model_file(std::path::Path::new(BUILT)), &g).unwrap();
    verify::verify(&planned.graph, &planned.plan).unwrap();
    // In place, a memory schedule or patches are refused by name for such a model.
    let mut m = Manifest::for_model_file(std::path::Path::new(BUILT));
    m.aliasing.in_place = true;
    let e = planner::plan_graph(&m, &g).unwrap_err();
    assert!(
        e.message()
            .contains("runs other subgraphs (IF over ops 0..4)")
            && e.message().contains("memory.in_place"),
        "{}",
        e.message()
    );
}

#[test]
fn malformed_ifs_are_refused_naming_the_op() {
    assert_refused(
        if_model,
        |m| m.subgraphs[0].tensors[0] = tensor("cond", &[1], 0),
        "op 0 (IF) of subgraph0 has condition `cond` of type i8",
    );
    assert_refused(
        if_model,
        |m| m.subgraphs[0].ops[0].options = Some((92, Some(vec![(0, 1), (1, 7)]))),
        "runs subgraph 7, but the model has 3 subgraphs",
    );
    // A branch that runs the IF's own subgraph: recursion.
    assert_refused(
        if_model,
        |m| m.subgraphs[0].ops[0].options = Some((92, Some(vec![(0, 1), (1, 0)]))),
        "runs subgraph0, which is already running",
    );
    // No options at all (subgraph indices unknown).
    assert_refused(
        if_model,
        |m| m.subgraphs[0].ops[0].options = None,
        "has no options of its kind",
    );
    // A bad op inside a branch: the error says which subgraph its numbers count in.
    let mut m = if_model();
    m.subgraphs[2].ops[1].inputs = vec![9];
    let e = read_built(&m).unwrap_err();
    assert!(
        e.message().contains("op 1 (RELU) input 0 names tensor 9"),
        "{}",
        e.message()
    );
    assert!(
        e.to_string()
            .contains("note: op and tensor numbers count in subgraph2 (subgraph 2)"),
        "{e}"
    );
    // A branch with two inputs for one argument.
    assert_refused(
        if_model,
        |m| m.subgraphs[2].inputs = vec![0, 1],
        "gives subgraph2 1 inputs",
    );
}

/// A chain of 20 subgraphs, each running the next from both branches of an IF: 2^19 copies
/// of the last, refused once the copies pass 2^16, quickly.
#[test]
fn subgraphs_copied_exponentially_are_refused() {
    let depth = 20;
    let mut subgraphs = Vec::new();
    for i in 0..depth {
        let mut iff = op(0, &[0], &[]);
        iff.options = Some((92, Some(vec![(0, i + 1), (1, i + 1)])));
        subgraphs.push(SubgraphSpec {
            tensors: vec![bool_tensor("c")],
            ops: vec![iff],
            inputs: vec![],
            outputs: vec![],
        });
    }
    subgraphs.push(SubgraphSpec {
        tensors: vec![],
        ops: vec![],
        inputs: vec![],
        outputs: vec![],
    });
    let m = ModelSpec {
        version: 3,
        codes: vec![code(IF)],
        subgraphs,
        buffers: vec![BufferSpec::Empty],
        signature: None,
    };
    let e = error_of(&m);
    assert!(
        e.contains("are run from more than 65536 places in all"),
        "{e}"
    );
}

/// `(i, v) = WHILE(i0, v0)`: cond `i < limit`, body `i = i + one`, `v = RELU(v)`.
fn while_model() -> ModelSpec {
    let mut w = op(0, &[0, 1], &[2, 3]);
    w.options = Some((93, Some(vec![(0, 1), (1, 2)])));
    let cond = SubgraphSpec {
        tensors: vec![
            tensor("i", &[1], 0),
            tensor("v", &[1, 4], 0),
            tensor("limit", &[1], 1),
            bool_tensor("more"),
        ],
        ops: vec![op(1, &[0, 2], &[3])],
        inputs: vec![0, 1],
        outputs: vec![3],
    };
    let body = SubgraphSpec {
        tensors: vec![
            tensor("i", &[1], 0),
            tensor("v", &[1, 4], 0),
            tensor("one", &[1], 2),
            tensor("i_next", &[1], 0),
            tensor("v_next", &[1, 4], 0),
        ],
        ops: vec![op(2, &[0, 2], &[3]), op(3, &[1], &[4])],
        inputs: vec![0, 1],
        outputs: vec![3, 4],
    };
    ModelSpec {
        version: 3,
        codes: vec![code(WHILE), code(LESS), code(ADD), code(RELU)],
        subgraphs: vec![
            SubgraphSpec {
                tensors: vec![
                    tensor("i0", &[1], 0),
                    tensor("v0", &[1, 4], 0),
                    tensor("i", &[1], 0),
                    tensor("v", &[1, 4], 0),
                ],
                ops: vec![w],
                inputs: vec![0, 1],
                outputs: vec![2, 3],
            },
            cond,
            body,
        ],
        buffers: vec![
            BufferSpec::Empty,
            BufferSpec::Data(vec![5]),
            BufferSpec::Data(vec![1]),
        ],
        signature: None,
    }
}

#[test]
fn a_while_loop_carries_its_values_and_they_live_over_the_whole_loop() {
    let g = read_built(&while_model()).unwrap();
    let opcodes: Vec<&str> = g.ops.iter().map(|o| o.opcode.as_str()).collect();
    // Two copies in, the condition, the body, two copies back.
    assert_eq!(
        opcodes,
        [
            "RESHAPE", "RESHAPE", "LESS", "ADD", "RELU", "RESHAPE", "RESHAPE"
        ]
    );
    let Control::While {
        cond,
        cond_ops,
        body_ops,
    } = g.control[0]
    else {
        panic!("{:?}", g.control);
    };
    assert_eq!(
        (cond_ops, body_ops),
        (OpRange { start: 2, end: 3 }, OpRange { start: 3, end: 7 })
    );
    assert_eq!(g.tensors[cond as usize].name, "subgraph1/more");
    let lt = lifetimes::compute(&g).unwrap();
    // `v` is copied in at op 1 and read by the body at op 4: it lives to the loop's end.
    assert_eq!(lt.live[3], Some((1, 6)));
    // `i0` is read only before the loop.
    assert_eq!(lt.live[0], Some((0, 0)));
    // The body's `i_next` lives inside one pass.
    let i_next = g.ops[3].outputs[0].get();
    assert_eq!(lt.live[i_next], Some((3, 5)));
    let planned =
        planner::plan_graph(&Manifest::for_model_file(std::path::Path::new(BUILT)), &g).unwrap();
    verify::verify(&planned.graph, &planned.plan).unwrap();
    // The verifier holds plans to the loop rule: `v` cut short inside the loop is refused.
    let mut plan = planned.plan.clone();
    let l = plan.tensor_lifetimes.get_mut("3").unwrap();
    l.end_op = 5;
    let e = verify::verify(&planned.graph, &plan).unwrap_err();
    let text = format!("{e:?}");
    assert!(
        text.contains("tensor `3` lives over ops 1..=5, into or out of the loop"),
        "{text}"
    );
    // A body that hands back the other value swaps them through a temporary.
    let mut m = while_model();
    m.subgraphs[2].tensors[4] = tensor("v_next", &[1], 0);
    m.subgraphs[2].ops.truncate(1);
    m.subgraphs[2].tensors[3] = tensor("i_next", &[1], 0);
    m.subgraphs[0].tensors[1] = tensor("v0", &[1], 0);
    m.subgraphs[0].tensors[3] = tensor("v", &[1], 0);
    m.subgraphs[1].tensors[1] = tensor("v", &[1], 0);
    m.subgraphs[2].tensors[1] = tensor("v", &[1], 0);
    m.subgraphs[2].outputs = vec![1, 0];
    let g = read_built(&m).unwrap();
    let tail: Vec<(usize, usize)> = g.ops[4..]
        .iter()
        .map(|o| (o.inputs[0].unwrap().get(), o.outputs[0].get()))
        .collect();
    let temp = tail[0].1;
    assert_eq!(tail, [(3, temp), (2, temp + 1), (temp, 2), (temp + 1, 3)]);
}

#[test]
fn a_while_condition_must_be_bool_and_values_must_match() {
    assert_refused(
        while_model,
        |m| m.subgraphs[1].tensors[3] = tensor("more", &[1], 0),
        "whose output `subgraph1/more` is i8 of shape [1], not bool",
    );
    assert_refused(
        while_model,
        |m| m.subgraphs[2].tensors[4] = tensor("v_next", &[1, 2], 0),
        "passes `subgraph2/v_next` (i8 [1, 2]) as `v` (i8 [1, 4])",
    );
    assert_refused(
        while_model,
        |m| m.subgraphs[0].ops[0].outputs = vec![2],
        "has 2 inputs and 1 outputs",
    );
}

/// `CALL_ONCE(init)`, then `acc = READ(h)`, `out = ADD(acc, x)`, `ASSIGN(h, out)`; the init
/// subgraph assigns a constant.
fn variables_model() -> ModelSpec {
    let mut once = op(0, &[], &[]);
    once.options = Some((103, Some(vec![(0, 1)])));
    let mut handle = op(1, &[], &[1]);
    handle.options = Some((111, None));
    let mut init_handle = op(1, &[], &[0]);
    init_handle.options = Some((111, None));
    let resource = |name| TensorSpec {
        ty: 13,
        ..tensor(name, &[], 0)
    };
    ModelSpec {
        version: 3,
        codes: vec![
            code(CALL_ONCE),
            code(VAR_HANDLE),
            code(READ_VARIABLE),
            code(ADD),
            code(ASSIGN_VARIABLE),
        ],
        subgraphs: vec![
            SubgraphSpec {
                tensors: vec![
                    tensor("x", &[1, 4], 0),
                    resource("h"),
                    tensor("acc", &[1, 4], 0),
                    tensor("out", &[1, 4], 0),
                ],
                ops: vec![
                    once,
                    handle,
                    op(2, &[1], &[2]),
                    op(3, &[2, 0], &[3]),
                    op(4, &[1, 3], &[]),
                ],
                inputs: vec![0],
                outputs: vec![3],
            },
            SubgraphSpec {
                tensors: vec![resource("h"), tensor("start", &[1, 4], 1)],
                ops: vec![init_handle, op(4, &[0, 1], &[])],
                inputs: vec![],
                outputs: vec![],
            },
        ],
        buffers: vec![BufferSpec::Empty, BufferSpec::Data(vec![1, 2, 3, 4])],
        signature: None,
    }
}

#[test]
fn call_once_and_resource_variables_become_state_and_copies() {
    let g = read_built(&variables_model()).unwrap();
    let opcodes: Vec<&str> = g.ops.iter().map(|o| o.opcode.as_str()).collect();
    assert_eq!(opcodes, ["RESHAPE", "RESHAPE", "ADD", "RESHAPE"]);
    let Control::Once { flag, ops } = g.control[0] else {
        panic!("{:?}", g.control);
    };
    assert_eq!(ops, OpRange { start: 0, end: 1 });
    let flag = &g.tensors[flag as usize];
    assert_eq!((flag.dtype, flag.kind), (DType::Bool, TensorKind::Variable));
    // One variable, written by the init and the last op, read by op 1.
    let var = g.ops[0].outputs[0];
    assert_eq!(g.tensors[var.get()].name, "variable");
    assert_eq!(g.tensors[var.get()].kind, TensorKind::Variable);
    assert_eq!(g.ops[1].inputs, [Some(var)]);
    assert_eq!(g.ops[3].outputs, [var]);
    let planned =
        planner::plan_graph(&Manifest::for_model_file(std::path::Path::new(BUILT)), &g).unwrap();
    verify::verify(&planned.graph, &planned.plan).unwrap();
    // A handle no VAR_HANDLE wrote.
    assert_refused(
        variables_model,
        |m| {
            m.subgraphs[0].ops.remove(1);
        },
        "reads handle `h`, which no VAR_HANDLE of the model wrote",
    );
    // An int8 variable starts at its zero point (`init()` fills it so): every use must
    // agree on it.
    let mut m = variables_model();
    m.subgraphs[1].tensors[1].quantization = Some((vec![0.5], vec![3], 0));
    let e = error_of(&m);
    assert!(
        e.contains("variable `` is used with zero point 0, but it was created with zero point 3"),
        "{e}"
    );
    for t in [2, 3] {
        m.subgraphs[0].tensors[t].quantization = Some((vec![0.5], vec![3], 0));
    }
    let g = read_built(&m).unwrap();
    let var = &g.tensors[g.ops[0].outputs[0].get()];
    assert_eq!(var.quantization.as_ref().unwrap().zero_point, [3]);
}
