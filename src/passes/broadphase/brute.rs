//! The oracle: every pair tested.

use super::*;
use crate::bodies::GpuAabb;

/// Brute force: every pair tested (the oracle). Multi-threaded; sorted output.
pub fn brute_pairs(aabbs: &[GpuAabb]) -> Vec<[u32; 2]> {
    let n = aabbs.len();
    // Rows are uneven (row i has n − i − 1 tests): interleave them over the threads.
    let t = threads().max(1);
    let mut pairs: Vec<[u32; 2]> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..t)
            .map(|k| {
                scope.spawn(move || {
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
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("brute worker panicked"))
            .collect()
    });
    sort_body_pairs(&mut pairs);
    pairs
}
