//! Sorting pairs of body indices on every thread.

use super::*;

/// Sorts pairs lexicographically on every thread: one pass scatters them into 256
/// buckets by the top bits of their first half, then the threads sort contiguous runs of
/// buckets, each bucket on its own (a bucket holds about 1/256 of the pairs, so its sort
/// is short and stays in cache). Small inputs take `sort_unstable`.
pub fn sort_body_pairs(pairs: &mut [[u32; 2]]) {
    const BUCKETS: usize = 256;
    let n = pairs.len();
    let threads = threads();
    if n < 1 << 15 || threads < 2 {
        pairs.sort_unstable();
        return;
    }
    let high = pairs.iter().fold(0u32, |h, p| h | p[0]);
    let shift = (u32::BITS - high.leading_zeros()).saturating_sub(BUCKETS.ilog2());
    let bucket = |p: &[u32; 2]| (p[0] >> shift) as usize;
    let mut start = [0usize; BUCKETS + 1];
    for p in pairs.iter() {
        start[bucket(p) + 1] += 1;
    }
    for k in 0..BUCKETS {
        start[k + 1] += start[k];
    }
    let mut scratch = vec![[0u32; 2]; n];
    let mut cursor = start;
    for p in pairs.iter() {
        let k = bucket(p);
        scratch[cursor[k]] = *p;
        cursor[k] += 1;
    }
    // Contiguous runs of buckets of about n / threads pairs each, one per thread.
    let mut runs = Vec::with_capacity(threads);
    let mut rest: &mut [[u32; 2]] = &mut scratch;
    let mut from = 0;
    for t in 1..=threads {
        let target = n * t / threads;
        let mut to = from;
        while to < BUCKETS && (start[to + 1] <= target || t == threads) {
            to += 1;
        }
        let (run, tail) = rest.split_at_mut(start[to] - start[from]);
        runs.push((from, to, run));
        rest = tail;
        from = to;
    }
    std::thread::scope(|scope| {
        for (from, to, run) in runs {
            let start = &start;
            scope.spawn(move || {
                let base = start[from];
                for k in from..to {
                    run[start[k] - base..start[k + 1] - base].sort_unstable();
                }
            });
        }
    });
    pairs.copy_from_slice(&scratch);
}
