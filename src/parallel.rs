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
