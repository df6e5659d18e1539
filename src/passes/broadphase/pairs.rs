//! Sorting pairs of body indices on every thread.

use super::*;

/// Sorts pairs lexicographically on every thread, with no pass on one thread: each thread
/// scatters its chunk of the pairs into 256 buckets by the top bits of their first half
/// (a counting sort of the chunk), then each thread gathers a contiguous run of buckets
/// from every chunk into its run of the output and sorts each bucket there (a bucket
/// holds about 1/256 of the pairs, so its sort is short and stays in cache). Small inputs
/// take `sort_unstable`.
pub fn sort_body_pairs(pairs: &mut [[u32; 2]]) {
    const BUCKETS: usize = 256;
    let n = pairs.len();
    let threads = threads();
    if n < 1 << 15 || threads < 2 {
        sort_as_keys(pairs, &mut Vec::new());
        return;
    }
    let chunk = n.div_ceil(threads);
    let high = on_threads(pairs.chunks(chunk).collect(), |part| {
        part.iter().fold(0u32, |h, p| h | p[0])
    })
    .into_iter()
    .fold(0u32, |h, x| h | x);
    let shift = (u32::BITS - high.leading_zeros()).saturating_sub(BUCKETS.ilog2());
    let bucket = |p: &[u32; 2]| (p[0] >> shift) as usize;
    // Each chunk counted and scattered by bucket: (its bucket starts, its pairs).
    let scattered: Vec<([usize; BUCKETS + 1], Vec<[u32; 2]>)> =
        on_threads(pairs.chunks(chunk).collect(), |part| {
            let mut start = [0usize; BUCKETS + 1];
            for p in part {
                start[bucket(p) + 1] += 1;
            }
            for k in 0..BUCKETS {
                start[k + 1] += start[k];
            }
            let mut out = vec![[0u32; 2]; part.len()];
            let mut cursor = start;
            for p in part {
                let k = bucket(p);
                out[cursor[k]] = *p;
                cursor[k] += 1;
            }
            (start, out)
        });
    // Where each bucket starts in the output.
    let mut start = [0usize; BUCKETS + 1];
    for k in 0..BUCKETS {
        let size: usize = scattered.iter().map(|(s, _)| s[k + 1] - s[k]).sum();
        start[k + 1] = start[k] + size;
    }
    // Contiguous runs of buckets of about n / threads pairs each, one per thread.
    let mut runs = Vec::with_capacity(threads);
    let mut rest: &mut [[u32; 2]] = pairs;
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
    let scattered = &scattered;
    on_threads(runs, |(from, to, run)| {
        let (mut at, mut keys) = (0, Vec::new());
        for k in from..to {
            let first = at;
            for (s, part) in scattered {
                let piece = &part[s[k]..s[k + 1]];
                run[at..at + piece.len()].copy_from_slice(piece);
                at += piece.len();
            }
            sort_as_keys(&mut run[first..at], &mut keys);
        }
    });
}

/// Sorts pairs as the 64-bit keys `a << 32 | b` (one comparison a pair, where comparing
/// two-element arrays takes two and a branch), through `keys` (scratch).
fn sort_as_keys(pairs: &mut [[u32; 2]], keys: &mut Vec<u64>) {
    keys.clear();
    keys.extend(
        pairs
            .iter()
            .map(|p| u64::from(p[0]) << 32 | u64::from(p[1])),
    );
    keys.sort_unstable();
    for (p, k) in pairs.iter_mut().zip(keys.iter()) {
        *p = [(k >> 32) as u32, *k as u32];
    }
}
