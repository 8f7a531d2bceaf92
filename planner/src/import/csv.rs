//! MiniMalloc's offset-assignment CSV: one buffer a row.
//!
//! ```text
//! id,lower,upper,size[,offset]
//! b1,0,3,4
//! b2,3,9,4,0
//! ```
//!
//! A buffer is live over the half-open interval `[lower, upper)` of integer time steps and
//! takes `size` bytes; an `offset` value pins it there (an empty `offset` field leaves it
//! free). Columns may come in any order; ids are strings and must be unique. The packing
//! problem gets one [`Item`] per row: `start = lower`, `end = upper - 1` (inclusive), alignment
//! 1, not spillable, `fixed` from `offset`. [`write()`] prints the same rows with an `offset`
//! column, the format MiniMalloc writes its solutions in.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use crate::error::{Error, Result, Span};
use crate::pack::{Item, Packing, Problem};

/// A problem read from a CSV file: the buffer ids (in row order) and the packing problem
/// (`items[i]` is the buffer `ids[i]`). `problem.capacity` is `None`: the file does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvProblem {
    /// Buffer ids, in row order.
    pub ids: Vec<String>,
    /// One item per row.
    pub problem: Problem,
}

const COLUMNS: [&str; 5] = ["id", "lower", "upper", "size", "offset"];

/// The longest problem file read: 1 GiB, some 30 million rows of real traces; the rows,
/// their ids and the planner's lists take a few times the file's size in memory.
#[doc(hidden)]
pub const MAX_FILE: u64 = 1 << 30;

/// Reads a CSV problem file: a regular file or a pipe of at most [`MAX_FILE`] bytes (a
/// directory or a device such as `/dev/zero` is refused before any read).
pub fn read(path: &Path) -> Result<CsvProblem> {
    let bytes = super::limited::read(
        path,
        MAX_FILE,
        "problem",
        "a problem file is at most 1073741824 bytes (1 GiB)",
    )?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        Error::input(format!(
            "problem {} is not UTF-8 text: byte {at} starts no character",
            path.display()
        ))
        .help("save the file as UTF-8 (or plain ASCII) text")
    })?;
    parse(path, &text)
}

/// Parses CSV text; `path` names the file in error messages.
pub fn parse(path: &Path, text: &str) -> Result<CsvProblem> {
    let src = Source {
        path: path.to_path_buf(),
        text: Arc::from(text),
    };
    let text = src.text.clone();
    let mut lines = split_lines(&text).filter(|(_, l)| !l.trim().is_empty());
    let Some((mut hstart, mut header)) = lines.next() else {
        return Err(Error::input(format!(
            "{} has no header row; the first line must be `id,lower,upper,size` (optionally `,offset`)",
            path.display()
        )));
    };
    // A byte-order mark (spreadsheets write one) is not part of the first column's name.
    if hstart == 0
        && let Some(rest) = header.strip_prefix('\u{feff}')
    {
        header = rest;
        hstart = '\u{feff}'.len_utf8();
    }
    let header = src.header(header, hstart)?;
    let mut ids: Vec<String> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    // A hash map sized for every line up front, borrowing the ids from the text: a tree of
    // copied ids cost a third of reading 10^6 rows in comparisons, and more in freeing.
    let rows = text.bytes().filter(|&b| b == b'\n').count();
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(rows);
    // Where each row's offset value is, for an error about two pinned rows.
    let mut offset_at: Vec<Range<usize>> = Vec::new();
    for (lstart, line) in lines {
        let row = src.row(&header, lstart, line, &seen)?;
        seen.insert(row.id, ids.len());
        offset_at.push(row.offset_at);
        ids.push(row.id.to_string());
        items.push(row.item);
    }
    if let Some((a, b)) = fixed_clash(&items) {
        let (x, y) = (&items[a], &items[b]);
        let (xo, yo) = (x.fixed.unwrap_or(0), y.fixed.unwrap_or(0));
        let (lo, hi) = (xo.max(yo), (xo + x.size).min(yo + y.size));
        return Err(Error::input(format!(
            "rows `{}` and `{}` are pinned to offsets that share bytes {lo}..{hi} while both are live at step {}",
            ids[a],
            ids[b],
            x.start.max(y.start)
        ))
        .at(src.at(offset_at[b].clone()))
        .label("offset")
        .note(format!("`{}` is at offset {xo} with {} bytes", ids[a], x.size))
        .help("change one of the offsets, or leave one empty so the planner places it"));
    }
    Ok(CsvProblem {
        ids,
        problem: Problem {
            items,
            capacity: None,
        },
    })
}

/// The file being read, for error positions.
struct Source {
    path: PathBuf,
    text: Arc<str>,
}

/// The header row: its fields, and the position of each of [`COLUMNS`] among them.
struct Header {
    fields: Vec<(String, Range<usize>)>,
    pos: [Option<usize>; 5],
}

impl Header {
    /// The field index of column `k` (one of the four required ones).
    fn col(&self, k: usize) -> usize {
        self.pos[k].unwrap_or(0)
    }
}

/// One row read: its id, its item, and where its offset value is.
struct Row<'l> {
    id: &'l str,
    item: Item,
    offset_at: Range<usize>,
}

impl Source {
    fn at(&self, range: Range<usize>) -> Span {
        Span {
            path: self.path.clone(),
            text: self.text.clone(),
            range,
        }
    }

    /// Reads the header row (starting at byte `hstart`): every column known, none twice,
    /// the four required ones present.
    fn header(&self, header: &str, hstart: usize) -> Result<Header> {
        let mut pos: [Option<usize>; 5] = [None; 5];
        let fields = fields(header, hstart);
        for (c, (name, range)) in fields.iter().enumerate() {
            let Some(k) = COLUMNS.iter().position(|col| col == name) else {
                let hint = crate::error::did_you_mean(name, COLUMNS)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(Error::input(format!("unknown column `{name}`{hint}"))
                    .at(self.at(range.clone()))
                    .label("not a column of this format")
                    .help("the columns are id, lower, upper, size and optionally offset"));
            };
            if pos[k].is_some() {
                return Err(Error::input(format!("column `{name}` appears twice"))
                    .at(self.at(range.clone()))
                    .label("second time")
                    .help("keep one column of each name"));
            }
            pos[k] = Some(c);
        }
        for (k, col) in COLUMNS.iter().enumerate().take(4) {
            if pos[k].is_none() {
                let end = hstart + header.len();
                return Err(Error::input(format!("the header has no `{col}` column"))
                    .at(self.at(hstart..end))
                    .label("header")
                    .help(
                        "the header must name id, lower, upper and size (and optionally offset)",
                    ));
            }
        }
        let fields = fields
            .into_iter()
            .map(|(name, range)| (name.to_string(), range))
            .collect();
        Ok(Header { fields, pos })
    }

    /// Reads one row (starting at byte `lstart`); `seen` maps the ids of earlier rows to
    /// their row index.
    fn row<'l>(
        &self,
        header: &Header,
        lstart: usize,
        line: &'l str,
        seen: &HashMap<&str, usize>,
    ) -> Result<Row<'l>> {
        let f = fields(line, lstart);
        if f.len() != header.fields.len() {
            return Err(Error::input(format!(
                "row has {} columns, the header has {}",
                f.len(),
                header.fields.len()
            ))
            .at(self.at(lstart..lstart + line.len()))
            .label("this row")
            .help(format!(
                "give one value per header column: {}",
                header
                    .fields
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
        let (id, id_range) = f[header.col(0)].clone();
        if id.is_empty() {
            return Err(Error::input("empty buffer id")
                .at(self.at(id_range.clone()))
                .label("id")
                .help("give every row a unique id"));
        }
        if let Some(&first) = seen.get(id) {
            return Err(Error::input(format!("duplicate buffer id `{id}`"))
                .at(self.at(id_range.clone()))
                .label("used again here")
                .note(format!("first used on row {}", first + 1))
                .help("give every row a unique id"));
        }
        let num = |k: usize, max: u64| -> Result<u64> {
            let (v, r) = &f[header.col(k)];
            number(v, COLUMNS[k], max).map_err(|(msg, help)| {
                Error::input(msg)
                    .at(self.at(r.clone()))
                    .label(COLUMNS[k])
                    .help(help)
            })
        };
        // `end = upper - 1` must fit an op index (u32).
        let lower = num(1, u64::from(u32::MAX) - 1)?;
        let upper = num(2, u64::from(u32::MAX))?;
        let size = num(3, u64::MAX)?;
        if upper <= lower {
            let r = f[header.col(2)].1.clone();
            return Err(
                Error::input(format!("upper {upper} is not above lower {lower}"))
                    .at(self.at(r))
                    .label("upper")
                    .help(
                        "lifetimes are half-open [lower, upper): upper must be at least lower + 1",
                    ),
            );
        }
        let fixed = match header.pos[4] {
            Some(c) if !f[c].0.is_empty() => Some(num(4, u64::MAX)?),
            _ => None,
        };
        if let Some(o) = fixed
            && o.checked_add(size).is_none()
        {
            let r = f[header.col(4)].1.clone();
            return Err(Error::input(format!(
                "offset {o} plus size {size} passes the largest byte address"
            ))
            .at(self.at(r))
            .label("offset")
            .help("give a smaller offset"));
        }
        Ok(Row {
            id,
            item: Item {
                size,
                start: lower as u32,
                end: (upper - 1) as u32,
                align: 1,
                fixed,
                spillable: false,
            },
            offset_at: header.pos[4].map_or(lstart..lstart, |c| f[c].1.clone()),
        })
    }
}

/// The rows of `csv` with an `offset` column from `packing` (empty for a spilled item):
/// `id,lower,upper,size,offset`, one line each, in row order.
pub fn write(csv: &CsvProblem, packing: &Packing) -> String {
    let mut out = String::from("id,lower,upper,size,offset\n");
    for (i, (id, it)) in csv.ids.iter().zip(&csv.problem.items).enumerate() {
        let offset = packing
            .offsets
            .get(i)
            .copied()
            .flatten()
            .map(|o| o.to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "{id},{},{},{},{offset}\n",
            it.start,
            u64::from(it.end) + 1,
            it.size
        ));
    }
    out
}

/// The first two rows with fixed offsets that share bytes while both are live (rows in
/// `[start, end]` order, compared only with the pinned rows live at the same time: a sweep,
/// not all pairs). Offsets plus sizes do not overflow: [`parse`] checked each.
fn fixed_clash(items: &[Item]) -> Option<(usize, usize)> {
    use std::cmp::Reverse;
    use std::collections::{BTreeMap, BinaryHeap};
    let mut pinned: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].fixed.is_some() && items[i].size > 0)
        .collect();
    pinned.sort_by_key(|&i| (items[i].start, i));
    // Pinned rows live now, by offset: (end, row). Disjoint until a clash is found.
    let mut live: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut ending: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
    for &i in &pinned {
        let it = &items[i];
        while let Some(&Reverse((end, j))) = ending.peek() {
            if end >= it.start {
                break;
            }
            ending.pop();
            let o = items[j].fixed.unwrap_or(0);
            if live.get(&o).is_some_and(|&(_, k)| k == j) {
                live.remove(&o);
            }
        }
        let start = it.fixed.unwrap_or(0);
        let end = start.saturating_add(it.size);
        if let Some((_, &(e, j))) = live.range(..=start).next_back()
            && e > start
        {
            return Some((j, i));
        }
        if let Some((_, &(_, j))) = live.range(start..end).next() {
            return Some((j, i));
        }
        live.insert(start, (end, i));
        ending.push(Reverse((it.end, i)));
    }
    None
}

/// Lines with the byte offset where each starts (`\r\n` and `\n` endings).
fn split_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0usize;
    text.split('\n').map(move |l| {
        let s = start;
        start += l.len() + 1;
        (s, l.strip_suffix('\r').unwrap_or(l))
    })
}

/// Comma-separated fields, trimmed, with their byte ranges in the file.
fn fields(line: &str, line_start: usize) -> Vec<(&str, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = line_start;
    for raw in line.split(',') {
        let lead = raw.len() - raw.trim_start().len();
        let v = raw.trim();
        let s = at + lead;
        // An empty field points at its position, one character wide where there is one.
        let e = if v.is_empty() { s } else { s + v.len() };
        out.push((v, s..e));
        at += raw.len() + 1;
    }
    out
}

/// A whole number from 0 to `max`, or (message, help).
fn number(v: &str, column: &str, max: u64) -> std::result::Result<u64, (String, String)> {
    if v.is_empty() {
        return Err((
            format!("empty `{column}` value"),
            format!("give `{column}` as a whole number of 0 or more"),
        ));
    }
    if let Some(rest) = v.strip_prefix('-')
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        return Err((
            format!("`{column}` is negative: {v}"),
            format!("give `{column}` as a whole number of 0 or more"),
        ));
    }
    match v.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        Ok(n) => Err((
            format!("`{column}` is {n}, above the largest allowed {max}"),
            format!("give `{column}` as a whole number from 0 to {max}"),
        )),
        Err(_) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => Err((
            format!("`{column}` is {v}, above the largest allowed {max}"),
            format!("give `{column}` as a whole number from 0 to {max}"),
        )),
        Err(_) => Err((
            format!("`{column}` is `{v}`, not a whole number"),
            format!("give `{column}` as a whole number of 0 or more"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::optimal::{self, OptimalOptions, Outcome};

    fn parse_str(text: &str) -> Result<CsvProblem> {
        parse(Path::new("p.csv"), text)
    }

    /// The error's line, column and message, for compact assertions.
    fn where_(e: &Error) -> (usize, usize) {
        let (_, l, c) = e.location().expect("error without a position");
        (l, c)
    }

    #[test]
    fn reads_minimalloc_example() {
        let text = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n";
        let p = parse_str(text).unwrap();
        assert_eq!(p.ids, ["b1", "b2", "b3", "b4", "b5"]);
        let b2 = &p.problem.items[1];
        assert_eq!((b2.start, b2.end, b2.size, b2.align), (3, 8, 4, 1));
        assert_eq!(b2.fixed, None);
        assert!(!b2.spillable);
        // MiniMalloc's own example fits in 12 bytes; 11 is impossible (lower bound 12).
        let opts = OptimalOptions::default();
        let Outcome::Fits(k) = optimal::fits(&p.problem, 12, &opts) else {
            panic!("does not fit in 12");
        };
        assert!(optimal::is_valid(&p.problem, &k.offsets, 12));
        assert_eq!(optimal::fits(&p.problem, 11, &opts), Outcome::DoesNotFit);
    }

    #[test]
    fn pinned_rows_that_share_bytes_are_named() {
        let e = parse_str("id,lower,upper,size,offset\na,0,2,16,0\nb,1,3,16,8\n").unwrap_err();
        assert_eq!(
            e.message(),
            "rows `a` and `b` are pinned to offsets that share bytes 8..16 while both are live at step 1"
        );
        assert_eq!(where_(&e), (3, 10));
        // Not live together, or side by side: fine.
        assert!(parse_str("id,lower,upper,size,offset\na,0,1,16,0\nb,1,3,16,8\n").is_ok());
        assert!(parse_str("id,lower,upper,size,offset\na,0,2,8,0\nb,1,3,16,8\n").is_ok());
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_header() {
        let p = parse_str("\u{feff}id,lower,upper,size\na,0,1,4\n").unwrap();
        assert_eq!(p.ids, ["a"]);
    }

    #[test]
    fn round_trip_with_offsets() {
        let text = "id,lower,upper,size\nx,0,2,8\ny,1,3,4\nz,2,4,16\n";
        let p = parse_str(text).unwrap();
        let (k, proven) = optimal::minimize(&p.problem, &OptimalOptions::default(), None);
        assert!(proven);
        let out = write(&p, &k);
        assert!(out.starts_with("id,lower,upper,size,offset\n"), "{out}");
        let back = parse_str(&out).unwrap();
        assert_eq!(back.ids, p.ids);
        for ((a, b), o) in p
            .problem
            .items
            .iter()
            .zip(&back.problem.items)
            .zip(&k.offsets)
        {
            assert_eq!((a.start, a.end, a.size), (b.start, b.end, b.size));
            assert_eq!(b.fixed, *o);
        }
        // Written again, the same bytes.
        assert_eq!(write(&back, &k), out);
    }

    #[test]
    fn fixed_offsets_are_honoured() {
        // `a` is pinned high; the others must pack around it.
        let text = "id,lower,upper,size,offset\na,0,4,4,4\nb,0,2,4,\nc,1,3,4,\nd,3,4,2,\n";
        let p = parse_str(text).unwrap();
        assert_eq!(p.problem.items[0].fixed, Some(4));
        assert_eq!(p.problem.items[1].fixed, None);
        let opts = OptimalOptions::default();
        let (k, proven) = optimal::minimize(&p.problem, &opts, None);
        assert!(proven);
        assert_eq!(k.offsets[0], Some(4));
        assert!(optimal::is_valid(&p.problem, &k.offsets, k.height));
        // b and c overlap at time 1 and a takes bytes 4..8: one of them must go to 8.
        assert_eq!(k.height, 12);
        assert_eq!(optimal::fits(&p.problem, 11, &opts), Outcome::DoesNotFit);
    }

    #[test]
    fn columns_in_any_order_and_crlf() {
        let p = parse_str("size,upper,id,lower\r\n10,5,a,1\r\n\r\n").unwrap();
        assert_eq!(p.ids, ["a"]);
        let a = &p.problem.items[0];
        assert_eq!((a.start, a.end, a.size), (1, 4, 10));
    }

    #[test]
    fn bad_rows_name_line_and_column() {
        let cases: &[(&str, (usize, usize), &str)] = &[
            (
                "id,lower,upper,size\na,0,2\n",
                (2, 1),
                "row has 3 columns, the header has 4",
            ),
            (
                "id,lower,upper,size\na,0,x2,4\n",
                (2, 5),
                "`upper` is `x2`, not a whole number",
            ),
            (
                "id,lower,upper,size\na,0,2,4\nb,3,3,4\n",
                (3, 5),
                "upper 3 is not above lower 3",
            ),
            (
                "id,lower,upper,size\na,-1,2,4\n",
                (2, 3),
                "`lower` is negative: -1",
            ),
            (
                "id,lower,upper,size\na,0,2,4\na,1,2,4\n",
                (3, 1),
                "duplicate buffer id `a`",
            ),
            (
                "id,lower,upper,sise\n",
                (1, 16),
                "unknown column `sise` (did you mean `size`?)",
            ),
            (
                "id,lower,size\n",
                (1, 1),
                "the header has no `upper` column",
            ),
            (
                "id,lower,upper,size,offset\na,0,2,4,1.5\n",
                (2, 9),
                "`offset` is `1.5`, not a whole number",
            ),
            (
                "id,lower,upper,size\na,0,2,99999999999999999999\n",
                (2, 7),
                "`size` is 99999999999999999999",
            ),
        ];
        for (text, at, msg) in cases {
            let e = parse_str(text).unwrap_err();
            assert_eq!(where_(&e), *at, "{text:?}: {e}");
            assert!(e.message().starts_with(msg), "{text:?}: {}", e.message());
            let shown = e.to_string();
            assert!(
                shown.contains(&format!("p.csv:{}:{}", at.0, at.1)),
                "{shown}"
            );
        }
        assert!(
            parse_str("\n\n")
                .unwrap_err()
                .message()
                .contains("no header row")
        );
    }

    #[test]
    fn reads_the_bundled_challenging_instances() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/challenging");
        let mut n = 0;
        for name in ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"] {
            let p = read(&dir.join(format!("{name}.1048576.csv"))).unwrap();
            assert!(p.ids.len() >= 154, "{name}");
            assert!(optimal::exact_lower_bound(&p.problem) <= 1048576, "{name}");
            n += 1;
        }
        assert_eq!(n, 11);
        let a = read(&dir.join("A.1048576.csv")).unwrap();
        assert_eq!(optimal::exact_lower_bound(&a.problem), 1048576);
        let c = read(&dir.join("C.1048576.csv")).unwrap();
        assert_eq!(optimal::exact_lower_bound(&c.problem), 1039360);
    }

    #[test]
    fn devices_and_text_that_is_not_utf8_are_refused() {
        let dir = std::env::temp_dir().join(format!("planner-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        #[cfg(unix)]
        {
            // A symlink named like a problem, to an endless device: refused before any read.
            let z = dir.join("z.csv");
            let _ = std::fs::remove_file(&z);
            std::os::unix::fs::symlink("/dev/zero", &z).unwrap();
            let e = read(&z).unwrap_err();
            assert_eq!(
                e.message(),
                format!(
                    "problem {} is not a regular file (a device or socket)",
                    z.display()
                )
            );
        }
        let bad = dir.join("latin1.csv");
        crate::limited::refuses_bytes(
            &bad,
            b"id,lower,upper,size\n\xe9,0,1,4\n",
            read,
            "problem {} is not UTF-8 text: byte 20 starts no character",
        );
        let ok = dir.join("ok.csv");
        std::fs::write(&ok, "id,lower,upper,size\nb,0,1,4\n").unwrap();
        assert_eq!(read(&ok).unwrap().problem.items.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
