//! The README stays a page, and every relative link of the README, the book (`docs/`) and
//! `bench/RESULTS.md` reaches a file, and a heading of it when the link names one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Markdown files the checks cover, relative to the repository root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![
        PathBuf::from("README.md"),
        PathBuf::from("bench/RESULTS.md"),
    ];
    let mut book: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    book.sort();
    pages.extend(book);
    pages
}

/// The lines of `text` outside fenced code blocks, with their 1-based line numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// GitHub's anchor of a heading: lowercase, spaces to `-`, punctuation other than `-` and
/// `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, l)| l.strip_prefix('#'))
        .map(|h| anchor(h.trim_start_matches('#')))
        .collect()
}

/// The targets of the inline links `[text](target)` on a line.
fn links(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &line[i + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect()
}

#[test]
fn the_readme_is_a_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines, more than 300; move the detail into a chapter of docs/"
    );
}

#[test]
fn every_relative_link_reaches_a_file_and_heading() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).expect("a page");
        for (n, line) in prose(&text) {
            for target in links(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, heading) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() {
                    root().join(&page)
                } else {
                    root().join(page.parent().expect("a folder")).join(path)
                };
                if !file.exists() {
                    broken.push(format!("{}:{n}: `{target}`: no such file", page.display()));
                    continue;
                }
                let markdown = path.is_empty() || path.ends_with(".md");
                if heading.is_empty() || !markdown {
                    continue;
                }
                let linked = std::fs::read_to_string(&file).expect("a linked page");
                if !anchors(&linked).contains(heading) {
                    broken.push(format!(
                        "{}:{n}: `{target}`: no heading has the anchor `{heading}`",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links; fix the link or the heading:\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        anchor("What `planner plan` accepts, `include_model!` compiles"),
        "what-planner-plan-accepts-include_model-compiles"
    );
    assert_eq!(
        anchor("Through `planner plan X.csv`"),
        "through-planner-plan-xcsv"
    );
    assert_eq!(
        anchor("Large problems: 10k to 100k buffers"),
        "large-problems-10k-to-100k-buffers"
    );
}

/// Every `step "..."` of `.ci/run` (but the closing `done`) is a row of the CI table in
/// `docs/development.md`, whose first cell starts the step's name: the book's list of CI steps
/// cannot fall behind the script.
#[test]
fn the_development_chapter_names_every_ci_step() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run is readable");
    let book = std::fs::read_to_string(root().join("docs/development.md"))
        .expect("docs/development.md is readable");
    let rows: Vec<&str> = book
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let steps: Vec<&str> = ci
        .lines()
        .filter_map(|l| l.trim().strip_prefix("step \""))
        .filter_map(|l| l.split('"').next())
        .filter(|s| *s != "done")
        .collect();
    assert!(
        steps.len() >= 10,
        "found only {} steps in .ci/run",
        steps.len()
    );
    let missing: Vec<&&str> = steps
        .iter()
        .filter(|s| !rows.iter().any(|r| !r.is_empty() && s.starts_with(r)))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/development.md's CI table has no row for these .ci/run steps: {missing:?}; add a row whose first cell starts the step's name"
    );
}

/// Every "format version N" the book and the README name is the plan-file version the
/// writer emits, so a version bump cannot leave a page behind.
#[test]
fn the_docs_name_the_current_plan_format_version() {
    let current = planner::planfile::FORMAT_VERSION;
    let mut wrong = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).expect("a page is readable");
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("format version ") {
                let digits: String = line[at + "format version ".len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if digits.parse::<u32>().is_ok_and(|v| v != current) {
                    wrong.push(format!(
                        "{}:{}: format version {digits}",
                        page.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the plan-file format is version {current}; these say otherwise:\n{}",
        wrong.join("\n")
    );
}
