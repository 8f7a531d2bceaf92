//! Control flow in a plan: the regions of the op list that run conditionally, in a loop or
//! once ([`Control`]), since format version 5.
//!
//! A model with several subgraphs (TFLite's `IF`, `WHILE` and `CALL_ONCE` run subgraphs of
//! their own) is planned as one op list: each subgraph an op may run is copied into the list
//! where the op stood, and a [`Control`] entry says how the ops of that range run. Every
//! tensor of every subgraph is a tensor of the one plan, so one layout and one `const` check
//! cover them all, and the ops of the two branches of an `IF`, which never run together,
//! reuse each other's bytes as any two ops at different times do.
//!
//! Lifetimes stay op ranges of the one list. For a loop that is not enough on its own: a
//! tensor that lives into or out of a loop's ops must keep its bytes over every op of the
//! loop (the ops run again), so its lifetime spans the whole loop ([`check`] refuses a plan
//! where it does not), while a tensor that lives and dies within one pass reuses bytes as
//! usual.

use serde::{Deserialize, Serialize};

/// A range of ops, `start..end` (end exclusive) in the plan's op order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpRange {
    /// First op.
    pub start: u32,
    /// One past the last op.
    pub end: u32,
}

impl OpRange {
    /// True when `op` is in the range.
    pub fn contains(&self, op: u32) -> bool {
        self.start <= op && op < self.end
    }

    /// True when the range has no op.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// How a range of ops runs; tensor numbers are the plan's (the graph's in the planner).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Control {
    /// TFLite `IF`: when element 0 of the bool tensor `cond` is true the ops of `then_ops`
    /// run, otherwise those of `else_ops`, which start where `then_ops` end.
    If {
        /// The condition, read before either branch runs.
        cond: u32,
        /// The ops of the `then` subgraph.
        then_ops: OpRange,
        /// The ops of the `else` subgraph.
        else_ops: OpRange,
    },
    /// TFLite `WHILE`: the ops of `cond_ops` run; when element 0 of the bool tensor `cond`
    /// is then true the ops of `body_ops` (which start where `cond_ops` end) run and it
    /// starts over, otherwise the loop ends.
    While {
        /// The condition, written by the condition's ops (or one of the loop's values).
        cond: u32,
        /// The ops of the condition subgraph.
        cond_ops: OpRange,
        /// The ops of the body subgraph.
        body_ops: OpRange,
    },
    /// TFLite `CALL_ONCE`: the ops of `ops` run on the first run after the state is reset
    /// only. `flag` is a one-element bool variable (persistent, zeroed with the rest of the
    /// state) that is set once they ran.
    Once {
        /// The variable that records that the ops ran.
        flag: u32,
        /// The ops of the initialisation subgraph.
        ops: OpRange,
    },
}

impl Control {
    /// Every op the entry governs: `start..end` over its ranges.
    pub fn span(&self) -> OpRange {
        match *self {
            Control::If {
                then_ops, else_ops, ..
            } => OpRange {
                start: then_ops.start,
                end: else_ops.end,
            },
            Control::While {
                cond_ops, body_ops, ..
            } => OpRange {
                start: cond_ops.start,
                end: body_ops.end,
            },
            Control::Once { ops, .. } => ops,
        }
    }

    /// Its ranges, in op order.
    pub fn parts(&self) -> Vec<OpRange> {
        match *self {
            Control::If {
                then_ops, else_ops, ..
            } => vec![then_ops, else_ops],
            Control::While {
                cond_ops, body_ops, ..
            } => vec![cond_ops, body_ops],
            Control::Once { ops, .. } => vec![ops],
        }
    }

    /// The tensor the entry reads (the condition, or the once flag).
    pub fn tensor(&self) -> u32 {
        match *self {
            Control::If { cond, .. } | Control::While { cond, .. } => cond,
            Control::Once { flag, .. } => flag,
        }
    }

    /// The TFLite op the entry stands for.
    pub fn name(&self) -> &'static str {
        match self {
            Control::If { .. } => "IF",
            Control::While { .. } => "WHILE",
            Control::Once { .. } => "CALL_ONCE",
        }
    }

    /// The op before which the condition is read: the first op of `then_ops` for an `IF`,
    /// the first op after `cond_ops` for a `WHILE`; `None` for a once flag, which is state.
    pub fn read_before(&self) -> Option<u32> {
        match *self {
            Control::If { then_ops, .. } => Some(then_ops.start),
            Control::While { cond_ops, .. } => Some(cond_ops.end),
            Control::Once { .. } => None,
        }
    }

    /// True for a `WHILE`, whose ops run more than once.
    pub fn is_loop(&self) -> bool {
        matches!(self, Control::While { .. })
    }
}

/// Checks the entries' structure against a plan of `ops` ops and `tensors` tensors: ranges
/// inside the op list, each entry's ranges adjacent, entries in order (by first op, an
/// enclosing entry before those inside it) and nested, never crossing (an entry inside
/// another lies within one of its ranges), and tensor numbers in range. The message names the
/// entry.
pub fn check(control: &[Control], ops: usize, tensors: usize) -> Result<(), String> {
    let what = |i: usize, c: &Control| format!("control entry {i} ({})", c.name());
    for (i, c) in control.iter().enumerate() {
        let parts = c.parts();
        for p in &parts {
            if p.start > p.end || p.end as usize > ops {
                return Err(format!(
                    "{} has op range {}..{}, outside the plan's {ops} ops",
                    what(i, c),
                    p.start,
                    p.end
                ));
            }
        }
        if parts.windows(2).any(|w| w[0].end != w[1].start) {
            return Err(format!(
                "{} has ranges that do not follow one another",
                what(i, c)
            ));
        }
        if c.tensor() as usize >= tensors {
            return Err(format!(
                "{} names tensor #{}, but the plan has {tensors} tensors",
                what(i, c),
                c.tensor()
            ));
        }
    }
    for (i, pair) in control.windows(2).enumerate() {
        let (a, b) = (pair[0].span(), pair[1].span());
        if (a.start, core::cmp::Reverse(a.end)) > (b.start, core::cmp::Reverse(b.end)) {
            return Err(format!(
                "{} is listed after an entry that starts later",
                what(i + 1, &pair[1])
            ));
        }
    }
    for (i, outer) in control.iter().enumerate() {
        let span = outer.span();
        for (j, inner) in control.iter().enumerate().skip(i + 1) {
            let s = inner.span();
            if s.start >= span.end {
                break;
            }
            let inside = outer
                .parts()
                .iter()
                .any(|p| p.start <= s.start && s.end <= p.end);
            if !inside {
                return Err(format!(
                    "{} (ops {}..{}) crosses {} (ops {}..{})",
                    what(j, inner),
                    s.start,
                    s.end,
                    what(i, outer),
                    span.start,
                    span.end
                ));
            }
        }
    }
    Ok(())
}

/// Checks the entries against the tensors' lifetimes (`live[t]`: first and last op,
/// inclusive; `None` for a tensor no op touches): each condition is live when it is read (it
/// holds its value from the op before the read, or is live from op 0 when the read is before
/// op 0), and every tensor that lives into or out of a loop lives over all of it. The
/// message names the entry and the tensor (`name(t)`).
pub fn check_lifetimes(
    control: &[Control],
    live: &dyn Fn(u32) -> Option<(u32, u32)>,
    tensors: u32,
    name: &dyn Fn(u32) -> String,
) -> Result<(), String> {
    for (i, c) in control.iter().enumerate() {
        if let Some(at) = c.read_before() {
            let ok = match (live(c.tensor()), at.checked_sub(1)) {
                (Some((s, e)), Some(before)) => s <= before && before <= e,
                (Some((s, _)), None) => s == 0,
                (None, _) => false,
            };
            if !ok {
                return Err(format!(
                    "control entry {i} ({}) reads tensor {} before op {at}, but its lifetime {} does not reach there",
                    c.name(),
                    name(c.tensor()),
                    lifetime_text(live(c.tensor()))
                ));
            }
        }
        if !c.is_loop() {
            continue;
        }
        let span = c.span();
        if span.is_empty() {
            continue;
        }
        let last = span.end - 1;
        for t in 0..tensors {
            let Some((s, e)) = live(t) else { continue };
            let inside = span.start <= s && e <= last;
            let apart = e < span.start || s > last;
            let spans = s <= span.start && last <= e;
            if !(inside || apart || spans) {
                return Err(format!(
                    "tensor {} lives over ops {s}..={e}, into or out of the loop of control entry {i} (WHILE, ops {}..{}), so it must live over the whole loop",
                    name(t),
                    span.start,
                    span.end
                ));
            }
        }
    }
    Ok(())
}

fn lifetime_text(l: Option<(u32, u32)>) -> String {
    match l {
        Some((s, e)) => format!("(ops {s}..={e})"),
        None => "(it is not live)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u32, end: u32) -> OpRange {
        OpRange { start, end }
    }

    #[test]
    fn nested_entries_pass_and_crossing_ones_are_named() {
        let outer = Control::While {
            cond: 0,
            cond_ops: r(1, 2),
            body_ops: r(2, 6),
        };
        let inner = Control::If {
            cond: 1,
            then_ops: r(3, 4),
            else_ops: r(4, 6),
        };
        assert_eq!(check(&[outer, inner], 7, 2), Ok(()));
        // The IF straddles the WHILE's condition and body.
        let crossing = Control::If {
            cond: 1,
            then_ops: r(1, 3),
            else_ops: r(3, 4),
        };
        let e = check(&[outer, crossing], 7, 2).unwrap_err();
        assert!(
            e.contains("control entry 1 (IF) (ops 1..4) crosses control entry 0"),
            "{e}"
        );
        // Listed inner first.
        let e = check(&[inner, outer], 7, 2).unwrap_err();
        assert!(e.contains("listed after"), "{e}");
        let e = check(&[outer], 5, 2).unwrap_err();
        assert!(e.contains("op range 2..6, outside the plan's 5 ops"), "{e}");
        let gap = Control::If {
            cond: 0,
            then_ops: r(0, 1),
            else_ops: r(2, 3),
        };
        assert!(check(&[gap], 3, 1).unwrap_err().contains("do not follow"));
        assert!(
            check(&[inner], 7, 1)
                .unwrap_err()
                .contains("names tensor #1")
        );
    }

    #[test]
    fn a_tensor_crossing_a_loop_edge_must_span_the_loop() {
        let w = Control::While {
            cond: 0,
            cond_ops: r(2, 3),
            body_ops: r(3, 5),
        };
        let name = |t: u32| format!("`t{t}`");
        // t0: the condition, written at op 2; t1 spans the loop; t2 lives inside it.
        let ok = |t: u32| [Some((2, 2)), Some((0, 6)), Some((3, 4))][t as usize];
        assert_eq!(check_lifetimes(&[w], &ok, 3, &name), Ok(()));
        // t1 is read in the body at op 3 for the last time: the next pass needs it again.
        let short = |t: u32| [Some((2, 2)), Some((0, 3)), Some((3, 4))][t as usize];
        let e = check_lifetimes(&[w], &short, 3, &name).unwrap_err();
        assert!(
            e.contains("tensor `t1` lives over ops 0..=3, into or out of the loop"),
            "{e}"
        );
        // The condition is read after op 2: it must be live there.
        let dead = |t: u32| [Some((1, 1)), Some((0, 6)), None][t as usize];
        let e = check_lifetimes(&[w], &dead, 3, &name).unwrap_err();
        assert!(e.contains("reads tensor `t0` before op 3"), "{e}");
        let first = Control::If {
            cond: 0,
            then_ops: r(0, 1),
            else_ops: r(1, 2),
        };
        let input = |_: u32| Some((0, 1));
        assert_eq!(check_lifetimes(&[first], &input, 1, &name), Ok(()));
        let late = |_: u32| Some((1, 1));
        assert!(check_lifetimes(&[first], &late, 1, &name).is_err());
    }
}
