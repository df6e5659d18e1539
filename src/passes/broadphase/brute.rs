//! The oracle: every pair tested.

use super::*;
use crate::bodies::GpuAabb;

/// Brute force: every pair tested (the oracle). Multi-threaded; sorted output.
pub fn brute_pairs(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    let n = aabbs.len();
    // Rows are uneven (row i has n − i − 1 tests): interleave them over the threads.
    let t = threads();
    let mut pairs: Vec<[u32; 2]> = on_threads((0..t).collect(), |k| {
        let mut out = Vec::new();
        for i in (k..n).step_by(t) {
            for j in i + 1..n {
                if overlap(&aabbs[i], &aabbs[j]) {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    })
    .concat();
    sort_body_pairs(&mut pairs);
    pairs
}
