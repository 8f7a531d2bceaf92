//! Arbitrary names through what `planner-build` writes. The input is text split by NUL into
//! tensor names, model names and concurrent sets (each list split by `\x01`; a set is bytes,
//! each picking a model):
//!
//! - the tensor names name a chain of RELU ops; the plan's C header must compile with
//!   `cc -Wall -Wextra -Werror` and define exactly the macros the plan states, with its
//!   values (`planner-build/tests/support/header_check.rs`), and no linker-script line may
//!   hold a backslash or an unbalanced quote;
//! - the model names and sets make a group manifest: refused with a message, or accepted,
//!   and then every generated module, lending method and header file name is distinct and
//!   the group's build writes one header per model (none overwrites another).
//!
//! The Rust side (`include_model!`'s expansion parsed with syn, exactly the expected items)
//! is checked by `planner-macros`' property tests: a proc-macro crate cannot be linked here.
#![no_main]

#[path = "../../planner-build/tests/support/header_check.rs"]
mod header_check;
#[path = "../../planner-macros/src/props/toml_text.rs"]
mod toml_text;

use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planner::manifest::{Group, Manifest};
use planner::planfile::naming;
use toml_text::toml_string;

fn graph(names: &[&str]) -> String {
    let tensors: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let q = if k == 0 {
                ", quantization = { scale = [0.25], zero_point = [1] }"
            } else {
                ""
            };
            format!(
                "{{ id = \"t{k}\", name = {}, dtype = \"i8\", shape = [{}]{q} }}",
                toml_string(n),
                16 * (k + 1)
            )
        })
        .collect();
    let ops: Vec<String> = (1..names.len())
        .map(|k| {
            format!(
                "{{ opcode = \"RELU\", inputs = [\"t{}\"], outputs = [\"t{k}\"] }}",
                k - 1
            )
        })
        .collect();
    format!(
        "tensors = [{}]\nops = [{}]\n",
        tensors.join(", "),
        ops.join(", ")
    )
}

fn header(tensors: &[&str]) {
    let text = format!("[model]\nname = \"names\"\n{}", graph(tensors));
    let Ok(manifest) = Manifest::parse(&text, Path::new("/nonexistent/names.toml")) else {
        return;
    };
    let Ok(g) = planner::import::load(&manifest) else {
        return;
    };
    let Ok(planned) = planner::plan_graph(&manifest, &g) else {
        return;
    };
    let generated =
        planner_build::generate(&manifest, &planned, &planner_build::Options::default())
            .expect("a planned model generates");
    let h = &generated.files["planner_names.h"];
    let h = std::str::from_utf8(h).expect("the header is UTF-8");
    if let Err(e) = header_check::check(h, &generated.plan) {
        panic!("tensor names {tensors:?}: {e}");
    }
    let x = std::str::from_utf8(&generated.files["planner_names.x"]).expect("UTF-8");
    for line in x.lines() {
        assert!(!line.contains('\\'), "backslash in the fragment: {line}");
        assert!(
            line.matches('"').count() % 2 == 0,
            "unbalanced quote: {line}"
        );
    }
}

fn group(models: &[&str], sets: &[Vec<usize>]) {
    let mut text = String::from("[group]\nname = \"g\"\nconcurrent = [");
    let sets: Vec<String> = sets
        .iter()
        .map(|s| {
            let names: Vec<String> = s.iter().map(|&k| toml_string(models[k])).collect();
            format!("[{}]", names.join(", "))
        })
        .collect();
    text.push_str(&sets.join(", "));
    text.push_str("]\n");
    for m in models {
        text.push_str(&format!(
            "\n[[model]]\nname = {}\n{}",
            toml_string(m),
            graph(&["in", "out"])
        ));
    }
    let group = match Group::parse(&text, Path::new("/nonexistent/g.toml")) {
        Ok(g) => g,
        Err(e) => {
            assert!(!e.message().is_empty());
            return;
        }
    };
    let names: Vec<&str> = group.models.iter().map(|m| m.name.as_str()).collect();
    let distinct = |what: &str, v: Vec<String>| {
        let n = v.len();
        let set: BTreeSet<String> = v.into_iter().collect();
        assert_eq!(
            set.len(),
            n,
            "two {what} alike for models {names:?}, sets {:?}",
            group.concurrent
        );
    };
    distinct(
        "modules",
        names.iter().map(|m| naming::model_module(m)).collect(),
    );
    distinct(
        "header files",
        names.iter().map(|m| naming::header_file(m)).collect(),
    );
    distinct(
        "C prefixes",
        names.iter().map(|m| naming::c_prefix(m)).collect(),
    );
    let mut methods: Vec<String> = names.iter().map(|m| naming::group_method(m)).collect();
    methods.extend(
        group
            .concurrent
            .iter()
            .map(|s| naming::set_method(s.iter().map(|&k| names[k]))),
    );
    methods.extend(["take", "init", "from_buffers", "arena_ptrs"].map(String::from));
    distinct("methods", methods);
    let Ok(planned) = planner::plan_group(&group) else {
        return;
    };
    let generated =
        planner_build::generate_group(&group, &planned, &planner_build::Options::default())
            .expect("a planned group generates");
    let headers = generated.files.keys().filter(|f| f.ends_with(".h")).count();
    assert_eq!(
        headers,
        names.len(),
        "a header overwrote another: {:?}",
        generated.files.keys()
    );
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let tensors: Vec<&str> = parts.next().unwrap_or("").split('\u{1}').take(6).collect();
    header(&tensors);
    let models: Vec<&str> = parts.next().unwrap_or("").split('\u{1}').take(5).collect();
    let sets: Vec<Vec<usize>> = parts
        .next()
        .unwrap_or("")
        .split('\u{1}')
        .take(4)
        .map(|s| {
            s.bytes()
                .take(4)
                .map(|b| b as usize % models.len().max(1))
                .collect()
        })
        .filter(|s: &Vec<usize>| !s.is_empty())
        .collect();
    if !models.is_empty() && models.iter().all(|m| !m.is_empty()) {
        group(&models, &sets);
    }
});
