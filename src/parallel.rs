//! Work on all cores: parts handed to one pool of threads that lives as long as the
//! process (rayon's global pool), each part's answer returned in the parts' order, so the
//! results never depend on how many threads ran them.
//!
//! Every CPU twin, the narrowphase and the World's per-body passes cut their work into
//! one part a thread and run the parts here. A thread spawned per part and joined after
//! it cost more than the parts' work on many cores: the main job runs about 33 such
//! regions a frame, and a region of 16 fresh threads took 470-540 µs where the pool takes
//! 42 µs (2 threads: 84 against 10 µs; a region of 2,000 multiply-adds a part, 300 times,
//! on this project's 2-core build machine).

use rayon::prelude::*;

use crate::Result;

/// Threads the parts are cut for: the pool's (the cores this process may use, or
/// `RAYON_NUM_THREADS`).
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// `f` over each part on the pool, the answers in the parts' order; a single part runs on
/// this thread. A panic in `f` reaches the caller.
pub fn on_threads<P: Send, R: Send>(parts: Vec<P>, f: impl Fn(P) -> R + Sync + Send) -> Vec<R> {
    if parts.len() <= 1 {
        return parts.into_iter().map(f).collect();
    }
    parts.into_par_iter().map(f).collect()
}

/// The length of the chunks `n` items are cut into: one a thread, and at least
/// `at_least` (positive).
pub fn chunk_len(n: usize, at_least: usize) -> usize {
    n.div_ceil(threads()).max(at_least)
}

/// `f` over consecutive chunks of `items`, in place (each with the index of its first
/// item), on all cores, a chunk of at least `at_least` a thread: the first chunk's error,
/// if any.
pub fn par_chunks_mut<T: Send>(
    items: &mut [T],
    at_least: usize,
    f: impl Fn(usize, &mut [T]) -> Result<()> + Sync,
) -> Result<()> {
    let chunk = chunk_len(items.len(), at_least);
    let parts = items.chunks_mut(chunk).enumerate();
    on_threads(parts.collect(), |(c, part)| f(c * chunk, part))
        .into_iter()
        .collect()
}

/// `f` over `items` (with each one's index), in order, on all cores in chunks of at least
/// `at_least`.
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    at_least: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    par_chunks(items, at_least, |offset, part| {
        part.iter()
            .enumerate()
            .map(|(k, x)| f(offset + k, x))
            .collect()
    })
}

/// `f` over consecutive chunks of `items` (each with the index of its first item) on all
/// cores, a chunk of at least `at_least` a thread, the chunks' answers joined in order.
pub fn par_chunks<T: Sync, R: Send>(
    items: &[T],
    at_least: usize,
    f: impl Fn(usize, &[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let chunk = chunk_len(items.len(), at_least);
    let parts = items.chunks(chunk).enumerate();
    let answers = on_threads(parts.collect(), |(c, part)| f(c * chunk, part));
    // One allocation of the right size (a flattening collect grows it by doubling).
    let mut all = Vec::with_capacity(answers.iter().map(Vec::len).sum());
    for answer in answers {
        all.extend(answer);
    }
    all
}
