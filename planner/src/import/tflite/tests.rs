use super::*;

#[test]
fn builtin_names_follow_the_schema_numbering() {
    for (code, name) in [
        (0, "ADD"),
        (3, "CONV_2D"),
        (9, "FULLY_CONNECTED"),
        (25, "SOFTMAX"),
        (32, "CUSTOM"),
        (44, "UNIDIRECTIONAL_SEQUENCE_LSTM"),
        (87, "LOGICAL_NOT"),
        (117, "HARD_SWISH"),
        (118, "IF"),
        (119, "WHILE"),
        (127, "PLACEHOLDER_FOR_GREATER_OP_CODES"),
        (129, "CALL_ONCE"),
        (150, "GELU"),
        (162, "STABLEHLO_LOGISTIC"),
        (205, "REDUCE_WINDOW"),
        (209, "STABLEHLO_CASE"),
        (225, "TEMP_STREAMING_CONV_2D"),
    ] {
        assert_eq!(builtin_name(code), Some(name), "code {code}");
    }
    for code in [-1, 210, 224, 226, i32::MAX] {
        assert_eq!(builtin_name(code), None, "code {code}");
    }
    let unique: std::collections::BTreeSet<_> = BUILTIN_NAMES.iter().collect();
    assert_eq!(unique.len(), BUILTIN_NAMES.len());
    for name in RUNS_SUBGRAPHS {
        assert!(BUILTIN_NAMES.contains(&name), "{name}");
    }
    // The op-kind table's codes are the schema's (a custom op's is CUSTOM's).
    for kind in crate::rt::op_kinds::OP_KINDS {
        let name = if kind.name.starts_with("CUSTOM:") {
            "CUSTOM"
        } else {
            kind.name
        };
        assert_eq!(builtin_name(i32::from(kind.code)), Some(name), "{kind:?}");
    }
}

#[test]
fn tensor_types_have_their_element_sizes() {
    let bits = |code| dtype(code).ok().and_then(DType::bits);
    assert_eq!(bits(0), Some(32)); // FLOAT32
    assert_eq!(bits(1), Some(16)); // FLOAT16
    assert_eq!(bits(9), Some(8)); // INT8
    assert_eq!(bits(7), Some(16)); // INT16
    assert_eq!(bits(4), Some(64)); // INT64
    assert_eq!(bits(11), Some(128)); // COMPLEX128
    assert_eq!(bits(17), Some(4)); // INT4
    assert_eq!(bits(18), Some(16)); // BFLOAT16
    assert_eq!(bits(5), None); // STRING
    assert!(dtype(19).is_err() && dtype(-1).is_err() && dtype(23).is_err());
    // Every code up to BFLOAT16 maps to a distinct dtype.
    let all: std::collections::BTreeSet<_> = (0..=18).map(|c| dtype(c).unwrap()).collect();
    assert_eq!(all.len(), 19);
}

#[test]
fn verifier_reports_become_one_line() {
    assert_eq!(
        one_line(
            "Range [4, 8) is out of bounds.\n\twhile verifying table field `x` at position 4\n\n"
        ),
        "range [4, 8) is out of bounds, while verifying table field `x` at position 4"
    );
    assert_eq!(one_line(""), "");
}

#[test]
fn field_offsets_are_the_vtable_slots() {
    for id in 0..16 {
        assert_eq!(
            field_offset(id),
            flatbuffers::field_index_to_field_offset(id)
        );
    }
}
