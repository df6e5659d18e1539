//! The `auto` rule: which method a set of boxes gets, from the spread of their centers.

use super::hash::cell_range;
use super::*;
use crate::bodies::GpuAabb;

/// Variance of the box centers per axis, taken relative to the first box's center (as the
/// GPU's statistics are, so large coordinates do not cancel). Zero for no boxes.
pub fn center_variance(aabbs: &[GpuAabb]) -> [f64; 3] {
    let Some(first) = aabbs.first() else {
        return [0.0; 3];
    };
    let center = |b: &GpuAabb| -> [f32; 3] { std::array::from_fn(|k| (b.min[k] + b.max[k]) * 0.5) };
    let r = center(first);
    let (mut sum, mut sq) = ([0f64; 3], [0f64; 3]);
    for b in aabbs {
        let c = center(b);
        for k in 0..3 {
            let d = f64::from(c[k] - r[k]);
            sum[k] += d;
            sq[k] += d * d;
        }
    }
    let n = aabbs.len() as f64;
    std::array::from_fn(|k| sq[k] / n - (sum[k] / n).powi(2))
}

/// Sweep axis (largest variance of centers, ties broken as the GPU does), used by the CPU
/// twin of sort-and-sweep.
pub fn sweep_axis(aabbs: &[GpuAabb]) -> usize {
    let var = center_variance(aabbs);
    if var[1] > var[0] && var[1] >= var[2] {
        1
    } else if var[2] > var[0] && var[2] > var[1] {
        2
    } else {
        0
    }
}

/// Boxes [`choose_method`] reads at most: of a larger set, a sample this size picked
/// evenly at random (the spread and the share of oversize boxes are statistics a sample
/// estimates; a 1 % share is 82 boxes of it). Every box of 100k took 4-6 ms on a core of
/// the shared 2-core machine, and 5-8 ms of every frame of swept boxes on an H100's host.
/// Random, not every k-th box: a crowd whose shapes repeat every k bodies would be sampled
/// as one shape.
pub const CHOOSE_SAMPLE: usize = 8192;

/// Picks a method from the boxes: sort-and-sweep when the spread is dominated by one axis
/// (variance along it over 16 times the next) or when over 1 % of the boxes would be
/// oversize in the hash grid (each is tested against every body there; measured on 200k
/// boxes, the hash is 14× faster with 5 of them, 1.7× with 0.3 %, even at 1 %, and 1.7×
/// slower at 3 %); the hash otherwise. Past [`CHOOSE_SAMPLE`] boxes, from a sample of
/// them (the same sample for the same count). Either method finds every pair: the choice
/// is only the faster one.
pub fn choose_method(aabbs: &[GpuAabb]) -> Method {
    if aabbs.len() > CHOOSE_SAMPLE {
        let mut rng = crate::rng::Rng::new(aabbs.len() as u64);
        let sample: Vec<GpuAabb> = (0..CHOOSE_SAMPLE)
            .map(|_| aabbs[rng.below(aabbs.len() as u64) as usize])
            .collect();
        return choose_method(&sample);
    }
    if aabbs.len() < 2 {
        return Method::Sweep;
    }
    let mut var = center_variance(aabbs).map(|v| v.max(0.0));
    var.sort_by(|a, b| b.total_cmp(a));
    if var[0] > 16.0 * var[1] {
        return Method::Sweep;
    }
    let g = hash_grid(aabbs);
    let oversize = aabbs.iter().filter(|b| cell_range(b, &g).is_none()).count();
    if oversize * 100 > aabbs.len() {
        Method::Sweep
    } else {
        Method::Hash
    }
}
