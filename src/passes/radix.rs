//! Stable least-significant-digit radix sort of (u32 key, u32 value) pairs on the GPU,
//! 4 bits per pass (16 digits), three dispatches a pass: a digit histogram per block of
//! 1024 keys (also added into the pass's digit totals), a scan of each digit's row of
//! block counts from the digit's first slot (one workgroup per digit), and a stable
//! scatter. Only as many passes as the key has bits. Within the default 16 KiB of
//! workgroup memory, so a renderer's device runs it. CPU twin: [`sort_pairs_cpu`] (a
//! stable sort by the same bits gives the same order).
//!
//! The spine replaced a scan of all the counts (three dispatches of its own): on an H100,
//! side by side in one run (`cargo bench --bench sort`, wall time of a submission), 1M
//! pairs 1.61 -> 1.24 ms, 16M 5.50 -> 5.38 ms.
//!
//! The scatter sorts each block by digit in workgroup memory before writing it, so that
//! neighbouring threads write neighbouring slots, and keeps its per-thread digit counts in
//! workgroup memory (radix_block.wgsl says why and what was tried): on the H100, a pass's
//! scatter at 1M pairs 46 -> 24.5 us, 16M 442 -> 303; the sort's GPU time (`proxima bench
//! gpu`) 1M 0.453 -> 0.294 ms, 16M 4.08 -> 2.98; `cargo bench --bench sort` 1M 0.87 ->
//! 0.77 ms, 16M 4.89 -> 3.88 (lampshade 2.42 and 8.44 in that run).
//!
//! Every pass's parameters are uploaded before the first dispatch, so the 3 · passes
//! dispatches share one compute pass (the engine puts a barrier between them, no copy):
//! on the H100, 1M pairs 1.10 -> 0.87 ms, 100k 0.87 -> 0.56 (the same `cargo bench --bench
//! sort`, against a compute pass per dispatch with the uploads between them).
//!
//! Chosen over lampshade 0.13's sort: a pass of our own keeps the CPU twin, the stages'
//! timings and the buffer pool in one frame graph. Side by side on resident buffers on an
//! H100 (`cargo bench --bench sort`, benches/figures/README.md) ours was the faster where
//! lampshade's device had no subgroups (1M 0.84 against 2.34 ms, 16M 3.84 against 8.38);
//! given them, lampshade's 8-bit sort ranks its blocks by subgroup ballots and is the
//! faster from 1M pairs (1M 0.62 by look-back against 0.50, 16M 3.80 against 3.47).
//!
//! A second path, [`record_sort_pairs_lookback`], takes one dispatch a pass: every pass's
//! digit totals come from one read of the keys first (radix_histogram), and each block
//! finds its slots by decoupled look-back over the blocks before it (radix_lookback)
//! instead of a count and a spine over all of them. 2 + passes dispatches where this
//! takes 3 · passes, and on the H100 the count and the spine took 7.6 and 10.3 µs of each
//! pass's 42 at 1M pairs. A block waits on blocks that started before it (each takes a
//! ticket as it starts), but not without end: a block that has not published its counts
//! after [`LOOKBACK_PATIENCE`] reads is counted by the one waiting on it (decoupled
//! fallback), so a device that parks a running workgroup (no API promises it does not)
//! makes the sort slower, never hung ([`Lookback::fallbacks`] counts how often it
//! happened; on an H100 never at the default patience, and with none the sort took 2.4
//! times as long). [`record_sort_pairs_best`] takes this path below [`LOOKBACK_BELOW`]
//! keys and the three-dispatch one from there, as the H100 measured them; the broadphase's
//! sweep sorts by it.
//!
//! A third path, [`record_sort_pairs_radix8`], sorts by look-back with 8-bit digits: half
//! the passes, so a pair is read and written 4 times for a 32-bit key instead of 8 (the
//! floor `proxima bench gpu` measures the sorts against assumes 4; no 4-bit sort can
//! reach half of it), in 2 + passes dispatches (6 against 10 and 24). Each block sorts
//! itself by the digit in workgroup memory by two stable 4-bit splits, within the default
//! 16 KiB, and walks back over 256 digits. Its status words take two regions a pass uses
//! in turn, each block clearing its words in the next pass's (a pass's words for every
//! block and digit would be 64 MB at 16M keys). On lavapipe it takes 1.04-1.56 times the
//! 4-bit look-back's time, on an H100 1.35-1.71 times the three-dispatch sort's from 1M
//! keys: a pass costs 2.5 times a 4-bit one there (1M keys 94 against 38 µs, 16M 1,198
//! against 479; a ranking by subgroup ballots over blocks of 2,048 instead of the two
//! splits was slower still, 1,637 µs at 16M: not kept). No one sorts by it; its
//! histogram (radix_histogram, shared with the 4-bit look-back), first slots and status
//! regions are what a faster 8-bit ranking would build on (lampshade's, by subgroup
//! ballots, sorts 16M pairs in 3.47 ms of wall time, 0.87 ms a pass at most:
//! benches/figures/README.md).
//!
//! Lavapipe, this machine, the sort's GPU time (best of 5, the two paths alternating):
//! 10k pairs 15.1-20.1 -> 4.0-4.3 ms, 100k 24.5-48.8 -> 19.8-33.9, 1M 196-323 ->
//! 199-221 (a loaded machine's spread; the waiting's patience, 0 to 256 reads, changed
//! nothing beyond it).

use crate::gpu::sizes::{DEFAULT_MAX_GROUPS_X, dispatch_grid};
use crate::graph::{BufferProxy, Recording};
use crate::shaders::ShaderId;
use crate::wgsl_twin;

/// Keys per radix workgroup (128 threads × 8); twin of `RADIX_BLOCK` in radix_common.wgsl.
pub const RADIX_BLOCK: u32 = 1024;
/// Bits per pass.
pub const RADIX_BITS: u32 = 4;

// The scatter counts a block's keys in 16-bit halves of words.
const _: () = assert!(RADIX_BLOCK < 1 << 16);

wgsl_twin! {
    /// Twin of `RadixParams` in `shaders/shared/radix_common.wgsl`.
    pub struct GpuRadixParams as "RadixParams" {
        /// Number of keys.
        pub count: u32,
        /// Bit position of the pass's digit.
        pub shift: u32,
        /// Number of blocks.
        pub blocks: u32,
        /// Number of passes.
        pub passes: u32,
        /// The look-back's rounds of waiting on a block's counts before counting them
        /// itself ([`LOOKBACK_PATIENCE`]).
        pub patience: u32,
        /// The key bits sorted by: the low ⌈key_bits / 4⌉ · 4 (so that the 8-bit sort
        /// orders by the same bits as the 4-bit ones).
        pub mask: u32,
        /// Bits of a pass's digit: [`RADIX_BITS`] or [`RADIX8_BITS`].
        pub digit_bits: u32,
    }
}

/// Records a stable sort of `count` pairs by the low `key_bits` bits of the keys. The
/// input buffers are used as scratch; the returned pair of buffers holds the result
/// (either the inputs or a pair allocated here; the caller frees both pairs).
pub fn record_sort_pairs(
    rec: &mut Recording,
    keys: BufferProxy,
    values: BufferProxy,
    count: u32,
    key_bits: u32,
) -> (BufferProxy, BufferProxy) {
    record_sort(rec, (keys, values), count, key_bits, false)
}

/// The stages a 4-bit look-back sort by dispatch ([`Lookback::by_dispatch`]) puts its
/// dispatches in: the histogram once, then one a pass.
pub const LOOKBACK_STAGES: [&str; 2] = ["sort/histogram", "sort/lookback"];

/// The most keys the look-back path sorts: a status word holds a count in 30 bits.
pub const LOOKBACK_MAX_KEYS: u32 = (1 << 30) - 1;

/// Reads of a block's status word a look-back block makes while that block has not
/// published its counts, before counting that block's keys itself: a read is an atomic's
/// round trip, the count one thread's pass over the other block's 1,024 keys (tens of
/// microseconds on a GPU, so the patience covers far more than a block's usual wait).
pub const LOOKBACK_PATIENCE: u32 = 256;

/// Below this many keys [`record_sort_pairs_best`] sorts by look-back, from it by count,
/// spine and scatter. On an H100 (`proxima bench gpu`, the sort's GPU time) the 4-bit
/// look-back took 0.60 of the three-dispatch sort's time at 10k keys, 0.69 at 100k, 0.80
/// at 300k, 1.04 at 1M (0.90 of its submission's wall time: 10 dispatches to encode, not
/// 24), 1.31 at 4M and 1.33 at 16M, where the chain of look-backs costs more than the
/// dispatches it saves; on lavapipe 0.33 at 10k and 1.02 at 1M.
pub const LOOKBACK_BELOW: u32 = 2 << 20;

/// [`record_sort_pairs`] by the faster path for `count` keys: by look-back below
/// [`LOOKBACK_BELOW`], else count, spine and scatter. The same result either way.
pub fn record_sort_pairs_best(
    rec: &mut Recording,
    keys: BufferProxy,
    values: BufferProxy,
    count: u32,
    key_bits: u32,
) -> (BufferProxy, BufferProxy) {
    if count < LOOKBACK_BELOW {
        record_sort_pairs_lookback(rec, keys, values, count, key_bits)
    } else {
        record_sort_pairs(rec, keys, values, count, key_bits)
    }
}

/// [`record_sort_pairs`] by decoupled look-back (see the module comment): the same result,
/// one dispatch a pass after one histogram of all passes. More than
/// [`LOOKBACK_MAX_KEYS`] keys take the three-dispatch path.
pub fn record_sort_pairs_lookback(
    rec: &mut Recording,
    keys: BufferProxy,
    values: BufferProxy,
    count: u32,
    key_bits: u32,
) -> (BufferProxy, BufferProxy) {
    record_sort_pairs_lookback_with(
        rec,
        (keys, values),
        count,
        key_bits,
        Lookback::new(Digits::Four),
    )
}

/// Bits per pass of [`record_sort_pairs_radix8`].
pub const RADIX8_BITS: u32 = 8;

/// The stages an 8-bit look-back sort by dispatch ([`Lookback::by_dispatch`]) puts its
/// dispatches in: the histogram and the digits' first slots once, then one a pass.
pub const RADIX8_STAGES: [&str; 2] = ["sort8/histogram", "sort8/lookback"];

/// [`record_sort_pairs_lookback`] with 8-bit digits: half the passes (see
/// `shaders/radix8_lookback.wgsl`), the same result.
/// More than [`LOOKBACK_MAX_KEYS`] keys take the three-dispatch path.
pub fn record_sort_pairs_radix8(
    rec: &mut Recording,
    keys: BufferProxy,
    values: BufferProxy,
    count: u32,
    key_bits: u32,
) -> (BufferProxy, BufferProxy) {
    record_sort_pairs_lookback_with(
        rec,
        (keys, values),
        count,
        key_bits,
        Lookback::new(Digits::Eight),
    )
}

/// Which digits a look-back sort takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// 4 bits ([`record_sort_pairs_lookback`]).
    Four,
    /// 8 bits ([`record_sort_pairs_radix8`]).
    Eight,
}

impl Digits {
    /// Bits per pass: [`RADIX_BITS`] or [`RADIX8_BITS`].
    pub fn bits(self) -> u32 {
        match self {
            Digits::Four => RADIX_BITS,
            Digits::Eight => RADIX8_BITS,
        }
    }
}

/// How [`record_sort_pairs_lookback_with`] records a look-back sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookback {
    /// Its digits.
    pub digits: Digits,
    /// Each dispatch in a stage of its own ([`LOOKBACK_STAGES`], [`RADIX8_STAGES`]), as
    /// [`record_sort_pairs_by_dispatch`] does for the three-dispatch path.
    pub by_dispatch: bool,
    /// Reads of a late block's status word before counting its keys
    /// ([`LOOKBACK_PATIENCE`]; 0 counts every block not yet published when first looked
    /// at).
    pub patience: u32,
    /// A buffer of at least 4 bytes to get, as a u32, how many times a block counted a late
    /// block's keys of a digit itself over the whole sort (0 where the three-dispatch path
    /// sorts, past [`LOOKBACK_MAX_KEYS`]).
    pub fallbacks: Option<BufferProxy>,
}

impl Lookback {
    /// `digits`, in the caller's stage, at [`LOOKBACK_PATIENCE`].
    pub fn new(digits: Digits) -> Self {
        Lookback {
            digits,
            by_dispatch: false,
            patience: LOOKBACK_PATIENCE,
            fallbacks: None,
        }
    }
}

/// The stages [`record_sort_pairs_by_dispatch`] puts each pass's dispatches in.
pub const DISPATCH_STAGES: [&str; 3] = ["sort/count", "sort/spine", "sort/scatter"];

/// [`record_sort_pairs`] with every dispatch in a stage of its own ([`DISPATCH_STAGES`],
/// one of each a pass), so that a frame's profile times each: what a change to one of
/// the three shaders does, measured apart from the others. The stages split the sort's
/// compute pass into one a dispatch, with the cost that adds; the commands the caller
/// records after it are in the last of these stages until it names another.
pub fn record_sort_pairs_by_dispatch(
    rec: &mut Recording,
    keys: BufferProxy,
    values: BufferProxy,
    count: u32,
    key_bits: u32,
) -> (BufferProxy, BufferProxy) {
    record_sort(rec, (keys, values), count, key_bits, true)
}

fn record_sort(
    rec: &mut Recording,
    (keys, values): (BufferProxy, BufferProxy),
    count: u32,
    key_bits: u32,
    by_dispatch: bool,
) -> (BufferProxy, BufferProxy) {
    let [count_stage, spine_stage, scatter_stage] = DISPATCH_STAGES;
    let plan = Plan::new(rec, count, key_bits, by_dispatch, 0, RADIX_BITS);
    let (blocks, grid, totals) = (plan.blocks, plan.grid, plan.totals);
    let counts = rec.array_buffer::<u32>(16 * blocks as usize, "radix counts");
    let (mut src, mut dst) = ((keys, values), scratch_pair(rec, count));
    for &params in &plan.params {
        plan.stage(rec, count_stage);
        rec.dispatch(ShaderId::RadixCount, grid, &[params, src.0, counts, totals]);
        plan.stage(rec, spine_stage);
        rec.dispatch(ShaderId::RadixSpine, [16, 1, 1], &[params, totals, counts]);
        plan.stage(rec, scatter_stage);
        rec.dispatch(
            ShaderId::RadixScatter,
            grid,
            &[params, src.0, src.1, counts, dst.0, dst.1],
        );
        rec.free(params);
        std::mem::swap(&mut src, &mut dst);
    }
    rec.free(totals);
    rec.free(counts);
    free_scratch(rec, keys, dst);
    src
}

/// A look-back sort recorded as `how` says ([`record_sort_pairs_lookback`] and
/// [`record_sort_pairs_radix8`] with the defaults; see the module comment): the digit
/// totals of every pass (with 8-bit digits, scanned into first slots), then a pass a
/// dispatch; past [`LOOKBACK_MAX_KEYS`] keys, the three-dispatch path.
pub fn record_sort_pairs_lookback_with(
    rec: &mut Recording,
    (keys, values): (BufferProxy, BufferProxy),
    count: u32,
    key_bits: u32,
    how: Lookback,
) -> (BufferProxy, BufferProxy) {
    if count > LOOKBACK_MAX_KEYS {
        if let Some(f) = how.fallbacks {
            rec.clear(f);
        }
        return record_sort(rec, (keys, values), count, key_bits, how.by_dispatch);
    }
    let ([histogram_stage, pass_stage], histogram, pass) = match how.digits {
        Digits::Four => (
            LOOKBACK_STAGES,
            ShaderId::RadixHistogram,
            ShaderId::RadixLookback,
        ),
        Digits::Eight => (
            RADIX8_STAGES,
            ShaderId::RadixHistogram,
            ShaderId::Radix8Lookback,
        ),
    };
    let bits = how.digits.bits();
    let plan = Plan::new(rec, count, key_bits, how.by_dispatch, how.patience, bits);
    let (blocks, grid, totals, params) = (plan.blocks, plan.grid, plan.totals, &plan.params);
    // After each pass's ticket counter and the fallbacks' count (before radix_common's
    // STATUS), a word a block and digit: every pass's with 4-bit digits; with 8-bit ones,
    // two regions the passes take in turn, each block clearing its words in the next
    // pass's (a pass's words would be 64 MB at 16M keys).
    let regions = match how.digits {
        Digits::Four => params.len(),
        Digits::Eight => 2,
    };
    let status = rec.array_buffer::<u32>(
        LOOKBACK_STATUS + (1 << bits) * blocks as usize * regions,
        "radix look-back status",
    );
    rec.clear(status);
    let (mut src, mut dst) = ((keys, values), scratch_pair(rec, count));
    plan.stage(rec, histogram_stage);
    rec.dispatch(histogram, grid, &[params[0], src.0, totals]);
    if how.digits == Digits::Eight {
        rec.dispatch(ShaderId::Radix8Starts, [1, 1, 1], &[params[0], totals]);
    }
    for &params in params {
        plan.stage(rec, pass_stage);
        rec.dispatch(
            pass,
            grid,
            &[params, src.0, src.1, totals, status, dst.0, dst.1],
        );
        rec.free(params);
        std::mem::swap(&mut src, &mut dst);
    }
    if let Some(f) = how.fallbacks {
        rec.copy(status, 4 * LOOKBACK_FALLBACKS as u64, f, 0, 4);
    }
    rec.free(status);
    rec.free(totals);
    free_scratch(rec, keys, dst);
    src
}

/// The look-back's status buffer: a ticket counter for each of up to 8 passes, then the
/// fallbacks' count at this word, then the blocks' words from [`LOOKBACK_STATUS`]
/// (`FALLBACKS` and `STATUS` in radix_common.wgsl).
const LOOKBACK_FALLBACKS: usize = 8;

/// See [`LOOKBACK_FALLBACKS`].
const LOOKBACK_STATUS: usize = 9;

/// The pair of buffers the passes write to and read from in turn with the input's.
fn scratch_pair(rec: &mut Recording, count: u32) -> (BufferProxy, BufferProxy) {
    (
        rec.array_buffer::<u32>(count as usize, "radix keys"),
        rec.array_buffer::<u32>(count as usize, "radix values"),
    )
}

/// Frees the scratch pair `dst` unless it is the input pair (whose first buffer is
/// `keys`): after an even number of passes the result is in the input's buffers.
fn free_scratch(rec: &mut Recording, keys: BufferProxy, dst: (BufferProxy, BufferProxy)) {
    if dst.0 != keys {
        rec.free(dst.0);
        rec.free(dst.1);
    }
}

/// What both paths set up first for `count` keys of `key_bits` bits.
struct Plan {
    /// Blocks of [`RADIX_BLOCK`] keys, and the grid of a workgroup each.
    blocks: u32,
    grid: [u32; 3],
    /// Each pass's digit totals, cleared.
    totals: BufferProxy,
    /// Every pass's parameters, uploaded before the first dispatch, so that the passes'
    /// dispatches follow one another with no copy between them and share one compute
    /// pass.
    params: Vec<BufferProxy>,
    /// Whether each dispatch goes in a stage of its own.
    by_dispatch: bool,
}

impl Plan {
    fn new(
        rec: &mut Recording,
        count: u32,
        key_bits: u32,
        by_dispatch: bool,
        patience: u32,
        digit_bits: u32,
    ) -> Self {
        let passes = key_bits.clamp(1, 32).div_ceil(digit_bits);
        let blocks = count.div_ceil(RADIX_BLOCK).max(1);
        let totals =
            rec.array_buffer::<u32>((1 << digit_bits) * passes as usize, "radix digit totals");
        rec.clear(totals);
        let params = (0..passes)
            .map(|pass| {
                let params = rec.buffer(size_of::<GpuRadixParams>() as u64, "radix params");
                rec.upload(
                    params,
                    &[GpuRadixParams {
                        count,
                        shift: pass * digit_bits,
                        blocks,
                        passes,
                        patience,
                        mask: sort_mask(key_bits),
                        digit_bits,
                    }],
                );
                params
            })
            .collect();
        Plan {
            blocks,
            grid: dispatch_grid(blocks, 1, DEFAULT_MAX_GROUPS_X),
            totals,
            params,
            by_dispatch,
        }
    }

    /// Starts stage `name` for the next dispatch, when each dispatch takes one.
    fn stage(&self, rec: &mut Recording, name: &'static str) {
        if self.by_dispatch {
            rec.stage(name);
        }
    }
}

/// The key bits the sorts order by: the low ⌈key_bits / 4⌉ · 4, whole 4-bit digits.
fn sort_mask(key_bits: u32) -> u32 {
    let bits = key_bits.clamp(1, 32).div_ceil(RADIX_BITS) * RADIX_BITS;
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// CPU twin: stable sort of the pairs by the low `key_bits` bits of the keys.
pub fn sort_pairs_cpu(keys: &mut [u32], values: &mut [u32], key_bits: u32) {
    // The GPU sorts by whole digits: the low ⌈key_bits / 4⌉ · 4 bits.
    let mask = sort_mask(key_bits);
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|&(k, _)| k & mask);
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        keys[i] = k;
        values[i] = v;
    }
}
