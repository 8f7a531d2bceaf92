use std::collections::BTreeSet;
use std::vec::Vec;

use super::*;
use crate::options::{IN_PLACE_OPCODES, OpOptions};

#[test]
fn rows_are_sorted_by_name_with_distinct_names_and_codes() {
    for w in OP_KINDS.windows(2) {
        assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
    }
    // Builtin kinds have distinct codes; custom ones share `CUSTOM`'s (32) and a name
    // `CUSTOM:<custom code>`.
    let builtin: Vec<&OpKind> = OP_KINDS
        .iter()
        .filter(|k| !k.name.starts_with("CUSTOM:"))
        .collect();
    let codes: BTreeSet<u16> = builtin.iter().map(|k| k.code).collect();
    assert_eq!(codes.len(), builtin.len());
    assert!(!codes.contains(&32));
    for k in OP_KINDS.iter().filter(|k| k.name.starts_with("CUSTOM:")) {
        assert_eq!(k.code, 32, "{}", k.name);
    }
    for k in OP_KINDS {
        assert_eq!(OpKind::of(k.name), Some(k));
    }
    assert_eq!(OpKind::of("NO_SUCH_KIND"), None);
    assert_eq!(OpKind::of(""), None);
}

#[test]
fn typed_rows_are_the_kinds_with_typed_options() {
    let typed: BTreeSet<&str> = OpKind::with(|k| k.kernels, Kernels::Typed)
        .map(|k| k.name)
        .collect();
    let options: BTreeSet<&str> = OpOptions::OPCODES.iter().copied().collect();
    assert_eq!(typed, options);
}

#[test]
fn in_place_rows_are_the_kinds_with_in_place_kernel_traits() {
    let rows: BTreeSet<&str> = OP_KINDS
        .iter()
        .filter(|k| k.in_place != InPlace::Never)
        .map(|k| k.name)
        .collect();
    let traits: BTreeSet<&str> = IN_PLACE_OPCODES.iter().copied().collect();
    assert_eq!(rows, traits);
    // Only a depthwise convolution runs in place through a temporary.
    let depthwise: Vec<&str> = OpKind::with(|k| k.in_place, InPlace::Depthwise)
        .map(|k| k.name)
        .collect();
    assert_eq!(depthwise, ["DEPTHWISE_CONV_2D"]);
}

#[test]
fn facts_hang_together() {
    for k in OP_KINDS {
        // A kind the kernels run on regions reads the image locally.
        assert!(!k.regions || k.spatial != Spatial::Global, "{}", k.name);
        // Reshape-like outputs are the input's bytes: never computed, so never in place
        // and never patch-local.
        assert!(!k.reshape || (k.in_place == InPlace::Never && k.spatial == Spatial::Global));
        // Unary and binary in-place kinds compute each element from the same element.
        if matches!(k.in_place, InPlace::Unary | InPlace::Binary) {
            assert_eq!(k.spatial, Spatial::Pointwise, "{}", k.name);
        }
    }
    assert_eq!(in_place("RELU"), InPlace::Unary);
    assert_eq!(in_place("CUSTOM_THING"), InPlace::Never);
    assert_eq!(spatial("CONV_2D"), Spatial::Window);
    assert_eq!(spatial("CUSTOM_THING"), Spatial::Global);
    assert!(reshape("RESHAPE") && !reshape("CONV_2D"));
}
