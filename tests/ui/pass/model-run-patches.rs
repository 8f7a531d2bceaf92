// Plans with a patch stage: two MAX_POOL_2D (3x3 SAME, then 2x2 stride 2) run once per
// patch of a 2x2 grid over the split tensor `b` (4x4), each over its tensors' regions, then
// RELU runs once over the whole of `b`. The input `x` (8x8) is resident in `patches` and
// streamed in `patches_streamed`. The outputs, and every region a stage op writes, equal a
// whole-tensor reference; the streaming callback sees each input region once per run.
planner_macros::include_model!("../plans/patches.plan.json");
planner_macros::include_model!("../plans/patches-streamed.plan.json");

use planner::rt::kernel::{Hooks, Kernel, MaxPool2d, OpView, Patches, Region, Relu, Tap};
use planner::rt::options::{NoOptions, Padding, Pool2dOptions};

struct Regions;

impl Kernel for Regions {
    type Error = &'static str;
}

impl Patches for Regions {}

/// The region a view covers: its own, or the whole tensor.
fn covered(region: Option<Region>, shape: &[usize]) -> Region {
    region.unwrap_or_else(|| Region::whole(shape).unwrap())
}

impl MaxPool2d for Regions {
    fn max_pool_2d(&mut self, op: OpView<'_, '_>, o: &Pool2dOptions) -> Result<(), &'static str> {
        let x = op.input(0).ok_or("input 0")?;
        let (xs, xr) = (x.shape, covered(x.region, x.shape));
        let xd = x.i8().ok_or("input 0 is not i8")?;
        let ys = op.outputs[0].shape;
        let yr = covered(op.outputs[0].region, ys);
        let y = op.outputs[0].i8().ok_or("output 0 is not i8")?;
        let (s, fh, fw) = (o.stride_h as usize, o.filter_h as usize, o.filter_w as usize);
        // TFLite's SAME: the padding before is half the total, rounded down.
        let pad = |out: usize, inp: usize, k: usize| match o.padding {
            Padding::Same => ((out - 1) * s + k).saturating_sub(inp) / 2,
            _ => 0,
        };
        let (pt, pl) = (pad(ys[1], xs[1], fh), pad(ys[2], xs[2], fw));
        for oy in yr.top..yr.top + yr.height {
            for ox in yr.left..yr.left + yr.width {
                let mut m = i8::MIN;
                for ky in 0..fh {
                    for kx in 0..fw {
                        let (iy, ix) = ((oy * s + ky).wrapping_sub(pt), (ox * s + kx).wrapping_sub(pl));
                        // Padding only outside the image; inside it, the input region holds
                        // the pixel (or the region is wrong, which is an error).
                        if iy >= xs[1] || ix >= xs[2] {
                            continue;
                        }
                        let at = xr.pixel(xs, xd.len(), iy, ix).ok_or("input pixel outside its region")?;
                        m = m.max(xd[at]);
                    }
                }
                let at = yr.pixel(ys, y.len(), oy, ox).ok_or("output pixel outside its region")?;
                y[at] = m;
            }
        }
        Ok(())
    }
}

impl Relu for Regions {
    fn relu(&mut self, op: OpView<'_, '_>, _: &NoOptions) -> Result<(), &'static str> {
        assert!(op.input(0).unwrap().region.is_none(), "RELU runs after the stage, whole");
        let x = op.input(0).unwrap().i8().ok_or("input 0")?;
        let zero = op.outputs[0].quant.unwrap().zero_point[0] as i8;
        let y = op.outputs[0].i8().ok_or("output 0")?;
        for (y, x) in y.iter_mut().zip(x) {
            *y = (*x).max(zero);
        }
        Ok(())
    }
}

/// Whole-tensor max pooling of an `h`x`w` single-channel image.
fn pool(x: &[i8], h: usize, w: usize, k: usize, s: usize, pad: usize) -> Vec<i8> {
    let (oh, ow) = ((h + 2 * pad - k) / s + 1, (w + 2 * pad - k) / s + 1);
    let mut y = vec![i8::MIN; oh * ow];
    for oy in 0..oh {
        for ox in 0..ow {
            for ky in 0..k {
                for kx in 0..k {
                    let (iy, ix) = ((oy * s + ky) as isize - pad as isize, (ox * s + kx) as isize - pad as isize);
                    if (0..h as isize).contains(&iy) && (0..w as isize).contains(&ix) {
                        let v = x[iy as usize * w + ix as usize];
                        y[oy * ow + ox] = y[oy * ow + ox].max(v);
                    }
                }
            }
        }
    }
    y
}

/// Every op call, and every stage op's output region with its elements.
#[derive(Default)]
struct Record {
    calls: Vec<usize>,
    regions: Vec<(usize, Region, Vec<i8>)>,
}

impl Hooks for Record {
    fn before_op(&mut self, index: usize, _: &'static str) {
        self.calls.push(index);
    }
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let y = op.output(0).unwrap();
        if let Some(r) = y.region {
            self.regions.push((op.index, r, y.i8().unwrap().to_vec()));
        }
    }
}

/// Region `r` of an `h`x`w` single-channel image, row after row.
fn crop(x: &[i8], w: usize, r: Region) -> Vec<i8> {
    let mut out = Vec::new();
    for y in r.top..r.top + r.height {
        out.extend_from_slice(&x[y * w + r.left..y * w + r.left + r.width]);
    }
    out
}

fn main() {
    let image: Vec<i8> = (0..64u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as i8).collect();
    let a = pool(&image, 8, 8, 3, 1, 1);
    let b = pool(&a, 8, 8, 2, 2, 0);
    let y: Vec<i8> = b.iter().map(|&v| v.max(-128)).collect();
    assert_eq!(patches::PATCHES, 4);
    assert_eq!(patches::patch_regions::B, [[0, 0, 2, 2], [0, 2, 2, 2], [2, 0, 2, 2], [2, 2, 2, 2]]);

    // Resident input.
    let mut m = patches::Model::take().unwrap().init();
    m.input_x_mut().copy_from_slice(&image);
    let mut rec = Record::default();
    m.run_with(&mut Regions, &mut rec).unwrap();
    assert_eq!(m.output_y(), &y[..]);
    assert_eq!(m.tensor_b(), &b[..]);
    // Hooks see each stage op once per patch, then the rest once.
    assert_eq!(rec.calls, [0, 1, 0, 1, 0, 1, 0, 1, 2]);
    assert_eq!(rec.regions.len(), 8);
    for (p, pair) in rec.regions.chunks(2).enumerate() {
        let (ra, rb) = (patches::patch_regions::A[p], patches::patch_regions::B[p]);
        assert_eq!(pair[0].0, 0);
        assert_eq!(pair[0].1, patches::patch_regions::region(ra));
        // A dense view: only the region's elements, equal to the whole run's, cropped.
        assert_eq!(pair[0].2, crop(&a, 8, pair[0].1));
        assert_eq!(pair[1].0, 1);
        assert_eq!(pair[1].1, patches::patch_regions::region(rb));
        // The split tensor is viewed whole: its tile is in place.
        assert_eq!(pair[1].2.len(), 16);
        let tile = crop(&pair[1].2, 4, pair[1].1);
        assert_eq!(tile, crop(&b, 4, pair[1].1));
    }

    // Streamed input: no whole input buffer, a callback per patch.
    let mut s = patches_streamed::Model::take().unwrap().init();
    for _ in 0..2 {
        let mut seen = Vec::new();
        s.run_streamed(&mut Regions, |r: Region, buf: &mut [i8]| {
            assert_eq!(buf.len(), r.height * r.width);
            buf.copy_from_slice(&crop(&image, 8, r));
            seen.push(r);
        })
        .unwrap();
        let want: Vec<Region> = patches_streamed::patch_regions::X
            .iter()
            .map(|&r| patches_streamed::patch_regions::region(r))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(s.output_y(), &y[..]);
    }
    // The streamed input's slot holds one region: 5x5, not 8x8.
    assert_eq!(s.tensor_x().len(), 25);
    assert_eq!(patches_streamed::tensors::X.elements, 25);
}
