//! `planner plan --format svg`: the picture parses as XML, has one panel per arena and one
//! rectangle per planned tensor, each with a title naming it, aliases marked, and the lower
//! bound and peak op marked in each scratch panel.

use std::path::{Path, PathBuf};

use planner::export::svg::svg;
use planner::manifest;
use roxmltree::{Document, Node};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `class` attribute of `n` (empty without one).
fn class(n: &Node<'_, '_>) -> String {
    n.attribute("class").unwrap_or("").to_string()
}

/// The `tag` elements of `doc` with `word` among their classes.
fn tagged<'a, 'i>(doc: &'a Document<'i>, tag: &str, word: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && class(n).split(' ').any(|c| c == word))
        .collect()
}

fn check(planned: &planner::Planned) {
    let text = svg(planned);
    let doc = Document::parse(&text).expect("well-formed SVG");
    let rects = tagged(&doc, "rect", "tensor");
    assert_eq!(
        rects.len(),
        planned.plan.tensor_allocs.len(),
        "{}",
        planned.model
    );
    for r in &rects {
        let id = r.attribute("data-id").unwrap();
        assert!(planned.plan.tensor_allocs.contains_key(id), "{id}");
        let title = r.children().find(|c| c.has_tag_name("title")).unwrap();
        let t = title.text().unwrap();
        let a = &planned.plan.tensor_allocs[id];
        assert!(
            t.contains(&format!("{} bytes at offset {}", a.size, a.offset)),
            "{t}"
        );
        for k in ["x", "y", "width", "height"] {
            let v: f64 = r.attribute(k).unwrap().parse().unwrap();
            assert!(v.is_finite() && v >= 0.0, "{k}={v}");
        }
    }
    let panels = doc
        .descendants()
        .filter(|n| n.has_tag_name("g") && class(n) == "arena")
        .count();
    assert_eq!(panels, planned.plan.arenas().count());
    let bounds = doc
        .descendants()
        .filter(|n| class(n) == "lower-bound")
        .count();
    assert_eq!(bounds, planned.scratch_reports.len());
    let aliases = rects.iter().filter(|r| class(r).contains("alias")).count();
    assert_eq!(aliases, planned.graph.aliases.len());
    let staged = planned
        .plan
        .tensor_allocs
        .values()
        .filter(|a| a.binding.as_ref().is_some_and(|b| b.is_staged()))
        .count();
    let staged_rects = rects.iter().filter(|r| class(r).contains("staged")).count();
    assert_eq!(staged_rects, staged);
    // Deterministic.
    assert_eq!(svg(planned), text);
}

#[test]
fn svg_has_one_rect_per_planned_tensor() {
    let mut staged_seen = false;
    for m in ["examples/kws/kws.toml", "examples/inline/kws.toml"] {
        let mut man = manifest::load(&root().join(m)).unwrap();
        for reshapes in [false, true] {
            man.aliasing.reshapes = reshapes;
            let g = planner::import::load(&man).unwrap();
            let planned = planner::plan_graph(&man, &g).unwrap();
            check(&planned);
            staged_seen |= svg(&planned).contains("class=\"tensor staged");
        }
    }
    assert!(staged_seen, "the examples stage constants");
    let path = root().join("models/tflm_person_detect_int8.tflite");
    let man = manifest::Manifest::for_model_file(&path);
    let g = planner::import::load(&man).unwrap();
    let planned = planner::plan_graph(&man, &g).unwrap();
    check(&planned);
}

/// A model with control flow: each subgraph range is a band over every panel, its tooltip
/// naming the op that runs it, its label drawn over the tensors.
#[test]
fn svg_shades_each_subgraph_range() {
    let path = root().join("tests/run-models/control/cf_nested.tflite");
    let man = manifest::Manifest::for_model_file(&path);
    let g = planner::import::load(&man).unwrap();
    let planned = planner::plan_graph(&man, &g).unwrap();
    check(&planned);
    let text = svg(&planned);
    let doc = Document::parse(&text).unwrap();
    let panels = planned.plan.arenas().count();
    let bands = tagged(&doc, "rect", "subgraph");
    // CALL_ONCE (init), WHILE (condition, body), IF (then, else): five ranges per panel.
    assert_eq!(bands.len(), 5 * panels);
    let titles: Vec<&str> = bands[..5]
        .iter()
        .map(|b| {
            b.children()
                .find(|c| c.has_tag_name("title"))
                .unwrap()
                .text()
                .unwrap()
        })
        .collect();
    assert_eq!(
        titles,
        [
            "init of the CALL_ONCE over ops 0..1: ops 0..1",
            "condition of the WHILE `cond/more` over ops 4..17: ops 4..5",
            "body of the WHILE `cond/more` over ops 4..17: ops 5..17",
            "then of the IF `body/big` over ops 6..9: ops 6..8",
            "else of the IF `body/big` over ops 6..9: ops 8..9",
        ]
    );
    let labels = tagged(&doc, "text", "subgraph-label");
    assert_eq!(labels.len(), 5 * panels);
    // Drawn after the panel's tensors.
    let last_tensor = text.find("class=\"tensor").unwrap();
    assert!(text.find("class=\"subgraph-label").unwrap() > last_tensor);
}

/// A group's picture marks what a model's does: every scratch panel has one dashed
/// lower-bound line at the group's bound and one shaded peak op in a model that uses the
/// arena; the group JSON calls the budget's share `budget` (null without a budget), never
/// `total_size`.
#[test]
fn group_svg_marks_bound_and_peak_and_the_json_names_the_budget() {
    use planner::plan::ArenaRole;
    for f in ["kws_vww.toml", "three.toml", "concurrent_spill.toml"] {
        let path = root().join("planner/tests/data/groups").join(f);
        let group = manifest::load_group(&path).unwrap();
        let planned = planner::plan_group(&group).unwrap();
        let text = planner::export::svg::group_svg(&planned);
        let doc = Document::parse(&text).expect("well-formed SVG");
        let panels = tagged(&doc, "g", "arena");
        assert_eq!(panels.len(), planned.arenas.len(), "{f}");
        for (panel, ga) in panels.iter().zip(&planned.arenas) {
            let scratch = ga.arena.role == ArenaRole::Scratch;
            let inside = |c: &str| {
                panel
                    .descendants()
                    .filter(|n| class(n) == c)
                    .collect::<Vec<_>>()
            };
            let bounds = inside("lower-bound");
            let peaks = inside("peak");
            assert_eq!(
                bounds.len(),
                usize::from(scratch),
                "{f} {}",
                ga.arena.memory
            );
            assert_eq!(peaks.len(), usize::from(scratch), "{f} {}", ga.arena.memory);
            if let (Some(line), Some(peak)) = (bounds.first(), peaks.first()) {
                let title = |n: &Node<'_, '_>| {
                    n.children()
                        .find(|c| c.has_tag_name("title"))
                        .and_then(|t| t.text())
                        .unwrap_or("")
                        .to_string()
                };
                assert_eq!(
                    title(line),
                    format!("lower bound: {} bytes", ga.lower_bound)
                );
                let model = peak.attribute("data-model").unwrap();
                let k = planned
                    .models
                    .iter()
                    .position(|m| m.model == model)
                    .unwrap();
                assert!(ga.users.iter().any(|u| u.model == k), "{f}: {model}");
                // "peak: model M op N, B bytes live": live bytes fit in the arena.
                let t = title(peak);
                let live: u64 = t
                    .rsplit(", ")
                    .next()
                    .and_then(|b| b.strip_suffix(" bytes live"))
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(live > 0 && live <= ga.arena.used, "{f}: {t}");
            }
        }
        let json: serde_json::Value =
            serde_json::from_str(&planner::report::group_json(&planned)).unwrap();
        let arenas = json["arenas"].as_array().unwrap();
        assert_eq!(arenas.len(), planned.arenas.len());
        for (a, ga) in arenas.iter().zip(&planned.arenas) {
            assert!(a.get("total_size").is_none(), "{f}: {a}");
            assert_eq!(a["budget"], serde_json::json!(ga.budget), "{f}");
            assert_eq!(a["used"], serde_json::json!(ga.arena.used), "{f}");
        }
        assert!(
            planned.arenas.iter().any(|ga| ga.budget.is_some()),
            "{f}: the preset's memories have budgets"
        );
    }
}
