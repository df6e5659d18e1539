//! The GPU prefix scan and radix sort against their CPU twins, at the sizes where block
//! boundaries bite (0, 1, 2, 1023, 1025, 1M) and on the key patterns that break sorts
//! (random, all equal, sorted, reverse sorted). Values carry the input index, so the
//! comparison also checks stability. And the CPU's body-pair sort against `sort_unstable`.

mod common;

use proxima::gpu::Engine;
use proxima::graph::{BufferProxy, Recording};
use proxima::passes::broadphase::sort_body_pairs;
use proxima::passes::radix::{
    DISPATCH_STAGES, Digits, LOOKBACK_BELOW, LOOKBACK_STAGES, Lookback, RADIX_BLOCK, RADIX8_STAGES,
    record_sort_pairs, record_sort_pairs_best, record_sort_pairs_by_dispatch,
    record_sort_pairs_lookback, record_sort_pairs_lookback_with, record_sort_pairs_radix8,
    sort_pairs_cpu,
};
use proxima::passes::scan::{exclusive_scan_cpu, record_exclusive_scan};
use proxima::rng::Rng;

const SIZES: &[usize] = &[0, 1, 2, 1023, 1024, 1025, 5000, 1_000_000];

fn patterns(n: usize, seed: u64) -> Vec<(&'static str, Vec<u32>)> {
    let mut rng = Rng::new(seed);
    vec![
        ("random", (0..n).map(|_| rng.next_u64() as u32).collect()),
        ("all equal", vec![0xdead_beef; n]),
        (
            "sorted",
            (0..n as u32)
                .map(|i| i.wrapping_mul(4099))
                .collect::<Vec<_>>()
                .into_iter()
                .scan(0u32, |s, x| {
                    *s = s.wrapping_add(x % 7919);
                    Some(*s)
                })
                .collect(),
        ),
        (
            "reverse sorted",
            (0..n as u32).rev().map(|i| i * 3).collect(),
        ),
    ]
}

#[test]
fn gpu_scan_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu scan") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for &n in SIZES {
        for (name, values) in patterns(n, n as u64) {
            // Small values too, so sums do not just wrap.
            let values: Vec<u32> = if name == "random" {
                values.iter().map(|v| v % 1000).collect()
            } else {
                values
            };
            let mut rec = Recording::new();
            let data = rec.array_buffer::<u32>(n, "data");
            rec.upload(data, &values);
            let total = record_exclusive_scan(&mut rec, data, n as u32);
            let rb = rec.readback_range(data, 0, 4 * n as u64);
            let rb_total = rec.readback(total);
            let out = engine
                .run(&rec, &[])
                .unwrap_or_else(|e| panic!("n = {n} {name}: {e}"));
            let mut want = values.clone();
            let want_total = exclusive_scan_cpu(&mut want);
            assert_eq!(out.values::<u32>(rb), want, "n = {n}, {name}");
            assert_eq!(
                out.values::<u32>(rb_total),
                vec![want_total],
                "n = {n}, {name}: total"
            );
        }
    }
}

#[test]
fn gpu_radix_sort_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu radix sort") else {
        return;
    };
    sorts_match_the_cpu_twin(&mut Engine::new(ctx), record_sort_pairs);
}

/// The look-back path: each block finds its slots from the blocks before it, so block
/// boundaries, digits no block before has and a block whose predecessors all lack a digit
/// are where it would go wrong.
#[test]
fn gpu_radix_sort_by_look_back_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu radix sort by look-back") else {
        return;
    };
    sorts_match_the_cpu_twin(&mut Engine::new(ctx), record_sort_pairs_lookback);
}

/// The 8-bit sort: half the passes, each block sorted by two 4-bit splits in workgroup
/// memory, 256 digits' look-back; its top digit cut to the bits the 4-bit sorts order by
/// (4 and 13 bits: one and two passes of which the last has fewer bits than a digit).
#[test]
fn gpu_radix8_sort_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu 8-bit radix sort") else {
        return;
    };
    sorts_match_the_cpu_twin(&mut Engine::new(ctx), record_sort_pairs_radix8);
}

/// The sort the broadphase's sweep takes: look-back below its threshold, count, spine and
/// scatter from it; either side of it, random keys and keys with one digit each pass
/// (the sweep's keys of a crowd along one axis share their high bits).
#[test]
fn the_best_sort_matches_the_cpu_twin_either_side_of_its_threshold() {
    let Some(ctx) = common::gpu("gpu radix sort, the faster path for the size") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for n in [LOOKBACK_BELOW as usize - 1, LOOKBACK_BELOW as usize] {
        let random = patterns(n, 11).remove(0).1;
        let narrow: Vec<u32> = random.iter().map(|k| 0x3f80_0000 | (k & 0xfff)).collect();
        for (name, keys) in [("random", random), ("narrow", narrow)] {
            sort_matches_the_cpu_twin(&mut engine, record_sort_pairs_best, (name, &keys), 32);
        }
    }
}

/// The look-back sorts, 4- and 8-bit, with no patience: a block counts the keys of every
/// block before it that has not published its counts when first looked at (the fallback
/// that keeps a device that parks a waiting block's predecessor from hanging the sort).
/// Which blocks it counts depends on how the device runs them, so every sort is run three
/// times (on lavapipe a fallback counting one key too many fails it).
#[test]
fn look_back_sorts_counting_late_blocks_match_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu radix sorts by look-back, no patience") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for digits in [Digits::Four, Digits::Eight] {
        for _ in 0..3 {
            sorts_match_the_cpu_twin(&mut engine, |rec, k, v, n, bits| {
                let how = Lookback {
                    patience: 0,
                    ..Lookback::new(digits)
                };
                record_sort_pairs_lookback_with(rec, (k, v), n, bits, how)
            });
        }
    }
}

/// The count of late blocks' digits counted by the blocks waiting on them: none in a sort
/// of one block (it waits on nothing), and at most every digit of every block before each
/// block in each pass; the sort right either way.
#[test]
fn look_back_sorts_count_their_fallbacks() {
    let Some(ctx) = common::gpu("gpu radix sorts by look-back, fallbacks") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for digits in [Digits::Four, Digits::Eight] {
        for n in [1000usize, 1_000_000] {
            let keys = patterns(n, 3).remove(0).1;
            let values: Vec<u32> = (0..n as u32).collect();
            let mut rec = Recording::new();
            let (k, v) = uploaded(&mut rec, &keys, &values);
            let fallbacks = rec.buffer(4, "fallbacks");
            let how = Lookback {
                patience: 0,
                fallbacks: Some(fallbacks),
                ..Lookback::new(digits)
            };
            let (sk, _) = record_sort_pairs_lookback_with(&mut rec, (k, v), n as u32, 32, how);
            let rk = rec.readback_range(sk, 0, 4 * n as u64);
            let rf = rec.readback(fallbacks);
            let out = engine.run(&rec, &[]).unwrap();
            let (mut wk, mut wv) = (keys.clone(), values.clone());
            sort_pairs_cpu(&mut wk, &mut wv, 32);
            assert_eq!(out.values::<u32>(rk), wk, "{digits:?}, {n} keys");
            let counted = u64::from(out.values::<u32>(rf)[0]);
            let blocks = n.div_ceil(RADIX_BLOCK as usize) as u64;
            let bits = u64::from(digits.bits());
            let bound = (32 / bits) * (1 << bits) * blocks * (blocks - 1) / 2;
            assert!(
                counted <= bound,
                "{digits:?}, {n} keys: {counted} > {bound}"
            );
            if blocks == 1 {
                assert_eq!(counted, 0, "{digits:?}: one block");
            }
        }
    }
}

/// A sort's keys and values.
type Sorted = (BufferProxy, BufferProxy);

/// `keys` and `values` in buffers of their own, uploaded.
fn uploaded(rec: &mut Recording, keys: &[u32], values: &[u32]) -> Sorted {
    let k = rec.array_buffer::<u32>(keys.len(), "keys");
    let v = rec.array_buffer::<u32>(values.len(), "values");
    rec.upload(k, keys);
    rec.upload(v, values);
    (k, v)
}

fn sorts_match_the_cpu_twin(
    engine: &mut Engine,
    record: impl Fn(&mut Recording, BufferProxy, BufferProxy, u32, u32) -> Sorted,
) {
    for &n in SIZES {
        for (name, keys) in patterns(n, 7 + n as u64) {
            for bits in [32u32, 13, 4] {
                sort_matches_the_cpu_twin(engine, &record, (name, &keys), bits);
            }
        }
    }
}

/// One sort of `keys` (named `name`) by their low `bits` bits, values their indices,
/// against the CPU twin: keys, and values for stability.
fn sort_matches_the_cpu_twin(
    engine: &mut Engine,
    record: impl Fn(&mut Recording, BufferProxy, BufferProxy, u32, u32) -> Sorted,
    (name, keys): (&str, &[u32]),
    bits: u32,
) {
    let n = keys.len();
    let values: Vec<u32> = (0..n as u32).collect();
    let mut rec = Recording::new();
    let (k, v) = uploaded(&mut rec, keys, &values);
    let (sk, sv) = record(&mut rec, k, v, n as u32, bits);
    let rk = rec.readback_range(sk, 0, 4 * n as u64);
    let rv = rec.readback_range(sv, 0, 4 * n as u64);
    let out = engine
        .run(&rec, &[])
        .unwrap_or_else(|e| panic!("n = {n} {name}: {e}"));
    let (mut wk, mut wv) = (keys.to_vec(), values);
    sort_pairs_cpu(&mut wk, &mut wv, bits);
    assert_eq!(
        out.values::<u32>(rk),
        wk,
        "n = {n}, {name}, {bits} bits: keys"
    );
    assert_eq!(
        out.values::<u32>(rv),
        wv,
        "n = {n}, {name}, {bits} bits: values (stability)"
    );
}

#[test]
fn a_sort_timed_by_dispatch_sorts_the_same_and_times_each_dispatch() {
    let Some(ctx) = common::gpu("gpu radix sort by dispatch") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    let n = 5000;
    let keys = patterns(n, 99).remove(0).1;
    let values: Vec<u32> = (0..n as u32).collect();
    for bits in [32u32, 13] {
        for way in 0..3 {
            let mut rec = Recording::new();
            let (k, v) = uploaded(&mut rec, &keys, &values);
            rec.stage("sort");
            let by_dispatch = |digits| Lookback {
                by_dispatch: true,
                ..Lookback::new(digits)
            };
            let (sk, sv) = match way {
                0 => record_sort_pairs_by_dispatch(&mut rec, k, v, n as u32, bits),
                1 => record_sort_pairs_lookback_with(
                    &mut rec,
                    (k, v),
                    n as u32,
                    bits,
                    by_dispatch(Digits::Four),
                ),
                _ => record_sort_pairs_lookback_with(
                    &mut rec,
                    (k, v),
                    n as u32,
                    bits,
                    by_dispatch(Digits::Eight),
                ),
            };
            rec.stage("readback");
            let rk = rec.readback_range(sk, 0, 4 * n as u64);
            let rv = rec.readback_range(sv, 0, 4 * n as u64);
            let out = engine.run(&rec, &[]).unwrap();
            let (mut wk, mut wv) = (keys.clone(), values.clone());
            sort_pairs_cpu(&mut wk, &mut wv, bits);
            assert_eq!(out.values::<u32>(rk), wk, "{bits} bits: keys");
            assert_eq!(out.values::<u32>(rv), wv, "{bits} bits: values");
            // A count, a spine and a scatter a pass, in that order, each its own stage;
            // by look-back, the histogram and then a stage a pass (8-bit: half the passes).
            let passes = bits.div_ceil(4) as usize;
            let names: Vec<&str> = out
                .profile
                .stages
                .iter()
                .map(|s| s.name)
                .filter(|name| {
                    [&DISPATCH_STAGES[..], &LOOKBACK_STAGES, &RADIX8_STAGES]
                        .iter()
                        .any(|stages| stages.contains(name))
                })
                .collect();
            let want = match way {
                0 => DISPATCH_STAGES.repeat(passes),
                1 => [&LOOKBACK_STAGES[..1], &[LOOKBACK_STAGES[1]].repeat(passes)].concat(),
                _ => [
                    &RADIX8_STAGES[..1],
                    &[RADIX8_STAGES[1]].repeat(bits.div_ceil(8) as usize),
                ]
                .concat(),
            };
            assert_eq!(names, want, "{bits} bits, way {way}");
        }
    }
}

#[test]
fn cpu_sort_twin_is_a_stable_sort_by_the_low_bits() {
    // Independent of the twin's own code: check order and stability directly.
    let mut rng = Rng::new(5);
    let mut keys: Vec<u32> = (0..10_000).map(|_| rng.next_u64() as u32).collect();
    let original = keys.clone();
    let mut values: Vec<u32> = (0..10_000).collect();
    sort_pairs_cpu(&mut keys, &mut values, 13);
    for w in 0..keys.len() - 1 {
        let (a, b) = (keys[w] & 0xffff, keys[w + 1] & 0xffff);
        assert!(a < b || (a == b && values[w] < values[w + 1]), "at {w}");
        assert_eq!(original[values[w] as usize], keys[w]);
    }
}

#[test]
fn body_pair_sort_matches_a_comparison_sort() {
    // `sort_unstable` is the oracle; the cases aim at the bucketing: empty, below its
    // threshold, all in one bucket, a zero or a full 32-bit first half, presorted.
    let mut rng = Rng::new(9);
    let n = 200_000;
    let mut pair = |range: u64| {
        let (a, b) = (rng.below(range) as u32, rng.below(range) as u32);
        [a.min(b), a.max(b)]
    };
    let random: Vec<[u32; 2]> = (0..n).map(|_| pair(1_000_000)).collect();
    let mut sorted = random.clone();
    sorted.sort_unstable();
    let cases: Vec<(&str, Vec<[u32; 2]>)> = vec![
        ("empty", Vec::new()),
        ("small", random[..1000].to_vec()),
        ("random", random.clone()),
        ("all equal", vec![[7, 9]; n]),
        (
            "first half zero",
            random.iter().map(|p| [0, p[1]]).collect(),
        ),
        ("full 32-bit range", (0..n).map(|_| pair(1 << 32)).collect()),
        (
            "one bucket holds most",
            random
                .iter()
                .enumerate()
                .map(|(i, p)| if i % 10 == 0 { *p } else { [5, p[1]] })
                .collect(),
        ),
        ("sorted", sorted.clone()),
        ("reverse sorted", sorted.iter().rev().copied().collect()),
    ];
    for (name, pairs) in cases {
        let mut want = pairs.clone();
        want.sort_unstable();
        let mut got = pairs;
        sort_body_pairs(&mut got);
        assert_eq!(got, want, "{name}");
    }
}
