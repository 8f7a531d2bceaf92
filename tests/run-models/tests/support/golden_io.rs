//! Reading the goldens `scripts/tflm_goldens.py` wrote (`goldens/`): a model's golden file,
//! its inputs made again from their seeds (checked against the script's hashes), and bytes
//! as the files write them. Shared by the model goldens (`model_goldens.rs`) and the group
//! tests.

use std::path::PathBuf;

use run_models::{fnv1a64, input};
use serde_json::Value;

/// The golden file of model (or file stem) `name`.
pub fn golden(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("goldens")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run scripts/tflm_goldens.py", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The golden inputs of a model, made from their seeds and checked against their hashes.
pub fn inputs(g: &Value) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in g["inputs"].as_array().unwrap() {
        let count: u64 = i["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .product();
        let bytes = input(
            i["dtype"].as_str().unwrap(),
            count as usize,
            i["seed"].as_u64().unwrap(),
        )
        .expect("an input type the generator knows");
        assert_eq!(
            fnv1a64(&bytes),
            i["fnv1a64"].as_str().unwrap(),
            "input differs from the script's"
        );
        out.push(bytes);
    }
    out
}

/// `bytes` in lower-case hex, as the golden files write outputs.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
