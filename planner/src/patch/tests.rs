use super::*;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random window for an input of `len` and its output length: kernel 1..=7,
/// stride 1..=2 (3 now and then), dilation 1..=2, SAME, VALID or explicit padding.
fn random_window(r: &mut Rng, len: u64) -> (Window, u64) {
    loop {
        let kernel = 1 + r.below(7);
        let stride = if r.below(8) == 0 { 3 } else { 1 + r.below(2) };
        let dilation = 1 + r.below(2) * r.below(2);
        let extent = (kernel - 1) * dilation + 1;
        let mut w = Window {
            kernel,
            stride,
            dilation,
            before: 0,
        };
        let out = match r.below(3) {
            0 => {
                let out = len.div_ceil(stride);
                w.before = pad_before(Padding::Same, None, len, out, w);
                out
            }
            1 if len >= extent => (len - extent + 1).div_ceil(stride),
            1 => continue,
            _ => {
                let (b, a) = (r.below(extent), r.below(extent));
                if len + b + a < extent {
                    continue;
                }
                w.before = b as i64;
                (len + b + a - extent) / stride + 1
            }
        };
        // Rows are traced apart from columns, so an output pixel that reads only
        // padding along one axis would still widen the other: real models have none
        // (padding narrower than the kernel's extent), and the brute force would see
        // the region as a strict superset there.
        if out >= 1 && (0..out).all(|y| w.reads(y, y, len).is_some()) {
            return (w, out);
        }
    }
}

/// A random chain of windows from a `h x w` input (odd and even sizes), with an
/// elementwise op now and then that reads the last two tensors (a residual branch).
fn random_stage(r: &mut Rng) -> Stage {
    let mut dims = BTreeMap::new();
    let (h, w) = (1 + r.below(40), 1 + r.below(40));
    dims.insert(TensorIndex(0), [h, w]);
    let mut steps = Vec::new();
    let ops = 1 + r.below(5);
    for k in 0..ops as usize {
        let input = TensorIndex(k as u32);
        let out = TensorIndex(k as u32 + 1);
        let [ih, iw] = dims[&input];
        let prev = (k > 0).then(|| TensorIndex(k as u32 - 1));
        if let Some(p) = prev
            && dims[&p] == [ih, iw]
            && r.below(4) == 0
        {
            dims.insert(out, [ih, iw]);
            steps.push(Step {
                op: k,
                output: out,
                inputs: vec![(input, [Window::SAME; 2]), (p, [Window::SAME; 2])],
                macs_per_pixel: 1,
            });
            continue;
        }
        let (wh, oh) = random_window(r, ih);
        let (ww, ow) = random_window(r, iw);
        dims.insert(out, [oh, ow]);
        steps.push(Step {
            op: k,
            output: out,
            inputs: vec![(input, [wh, ww])],
            macs_per_pixel: wh.kernel * ww.kernel,
        });
    }
    Stage {
        split_op: ops as usize - 1,
        split: TensorIndex(ops as u32),
        steps,
        dims,
        inputs: vec![TensorIndex(0)],
    }
}

type Marks = BTreeMap<TensorIndex, Vec<Vec<bool>>>;

/// Marks every pixel each tensor's pixels read, from `tile` of the split tensor back:
/// `boxed` marks the reads of every pixel of the bounding box of an output's marks (an
/// op computes its whole region), otherwise only of the marked pixels.
fn brute(stage: &Stage, tile: [u64; 4], boxed: bool) -> Marks {
    let mut marks: Marks = stage
        .dims
        .iter()
        .map(|(&t, &[h, w])| (t, vec![vec![false; w as usize]; h as usize]))
        .collect();
    let [top, left, th, tw] = tile;
    for y in top..top + th {
        for x in left..left + tw {
            marks.get_mut(&stage.split).unwrap()[y as usize][x as usize] = true;
        }
    }
    for step in stage.steps.iter().rev() {
        let out = marks[&step.output].clone();
        let pixels: Vec<(u64, u64)> = match (boxed, bbox(&out)) {
            (true, Some([t, l, h, w])) => (t..t + h)
                .flat_map(|y| (l..l + w).map(move |x| (y, x)))
                .collect(),
            (true, None) => Vec::new(),
            (false, _) => (0..out.len())
                .flat_map(|y| (0..out[y].len()).map(move |x| (y as u64, x as u64)))
                .filter(|&(y, x)| out[y as usize][x as usize])
                .collect(),
        };
        for &(t, [wh, ww]) in &step.inputs {
            let [h, w] = stage.dims[&t];
            let m = marks.get_mut(&t).unwrap();
            for &(y, x) in &pixels {
                for i in 0..wh.kernel {
                    let yy = (y * wh.stride + i * wh.dilation) as i64 - wh.before;
                    if yy < 0 || yy >= h as i64 {
                        continue;
                    }
                    for j in 0..ww.kernel {
                        let xx = (x * ww.stride + j * ww.dilation) as i64 - ww.before;
                        if xx >= 0 && xx < w as i64 {
                            m[yy as usize][xx as usize] = true;
                        }
                    }
                }
            }
        }
    }
    marks
}

/// `[top, left, height, width]` of the marked pixels; `None` when there are none.
fn bbox(m: &[Vec<bool>]) -> Option<[u64; 4]> {
    let mut b: Option<[u64; 4]> = None;
    for (y, row) in m.iter().enumerate() {
        for (x, &on) in row.iter().enumerate() {
            if on {
                let (y, x) = (y as u64, x as u64);
                b = Some(match b {
                    None => [y, x, y, x],
                    Some([t, l, bm, r]) => [t.min(y), l.min(x), bm.max(y), r.max(x)],
                });
            }
        }
    }
    b.map(|[t, l, bm, r]| [t, l, bm - t + 1, r - l + 1])
}

#[test]
fn traced_regions_equal_brute_force_on_random_chains() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..400 {
        let stage = random_stage(&mut r);
        let [sh, sw] = stage.dims[&stage.split];
        let grid = [1 + r.below(sh.min(6)) as u32, 1 + r.below(sw.min(6)) as u32];
        let traced = stage.trace(grid);
        let rows = tiles(sh, grid[0] as u64);
        let cols = tiles(sw, grid[1] as u64);
        for (i, &(top, th)) in rows.iter().enumerate() {
            for (j, &(left, tw)) in cols.iter().enumerate() {
                let boxed = brute(&stage, [top, left, th, tw], true);
                let sparse = brute(&stage, [top, left, th, tw], false);
                for &t in stage.dims.keys() {
                    let region = traced.regions(t)[i * grid[1] as usize + j];
                    let region = region.map(|v| v as u64);
                    let want = bbox(&boxed[&t]);
                    match want {
                        Some(b) => {
                            assert_eq!(region, b, "tensor {t:?} patch ({i}, {j}) of {stage:?}")
                        }
                        None => {
                            assert_eq!(region[2] * region[3], 0, "tensor {t:?} reads nothing")
                        }
                    }
                    // Every pixel read from the tile's own pixels is in the region.
                    for (y, row) in sparse[&t].iter().enumerate() {
                        for (x, &on) in row.iter().enumerate() {
                            if on {
                                let (y, x) = (y as u64, x as u64);
                                assert!(
                                    y >= region[0]
                                        && y < region[0] + region[2]
                                        && x >= region[1]
                                        && x < region[1] + region[3],
                                    "pixel ({y}, {x}) of {t:?} is outside {region:?}"
                                );
                            }
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn tiles_differ_by_at_most_one() {
    assert_eq!(tiles(7, 3), vec![(0, 2), (2, 2), (4, 3)]);
    assert_eq!(tiles(8, 3), vec![(0, 2), (2, 3), (5, 3)]);
    for len in 1..40 {
        for n in 1..=len.min(8) {
            let t = tiles(len, n);
            let min = t.iter().map(|x| x.1).min().unwrap();
            let max = t.iter().map(|x| x.1).max().unwrap();
            assert!(max - min <= 1);
            assert_eq!(t.iter().map(|x| x.1).sum::<u64>(), len);
        }
    }
}

#[test]
fn same_padding_puts_the_odd_pixel_after() {
    // 3x3 stride 2 on 8: out 4, total pad (4-1)*2+3-8 = 1, none before.
    let w = Window {
        kernel: 3,
        stride: 2,
        dilation: 1,
        before: 0,
    };
    assert_eq!(pad_before(Padding::Same, None, 8, 4, w), 0);
    // 7x7 stride 1 on 9: total 6, 3 before.
    let w7 = Window {
        kernel: 7,
        stride: 1,
        ..w
    };
    assert_eq!(pad_before(Padding::Same, None, 9, 9, w7), 3);
    // Output rows 0..=1 of the stride-2 window read input rows 0..=4.
    assert_eq!(w.reads(0, 1, 8), Some((0, 4)));
    // Output row 3 reads 6, 7 and 8 (padding): 6..=7.
    assert_eq!(w.reads(3, 3, 8), Some((6, 7)));
}
