//! Time of impact: conservative advancement against parry3d-f64's two queries on the same
//! batches of 200 random rotating convex pairs (`proxima::toi_bench`'s: hulls of 8 to 512
//! vertices, each body moving up to 4 and turning up to 0.9π over the step, about two
//! thirds of the pairs meeting): ours, `cast_shapes_nonlinear` (the same screw motion,
//! local centre 0) and `sweep_time_of_impact` (nlerp rotation, its own path, stopping
//! within 1.25e-6 of contact). Ours runs at its default tolerance (1e-9 of the
//! coordinates' size, about 3e-9 here) and, as `advancement_slop`, at
//! `sweep_time_of_impact`'s 1e-6: the same accuracy. Each iteration runs the whole batch;
//! hits and our average evaluations per pair are printed once per size. `toi_many` runs
//! batches of 2,000 pairs, whose bodies do not stay in cache from one query to the next.
//! `toi_queue` finds the first contacts of 10,000 moving bodies with the broadphase and the
//! wake-up queue against advancing every pair whose bounding spheres can meet. `cargo
//! bench --bench toi`; `proxima bench toi` times the same batches from the binary, rounds
//! interleaved, every answer checked first.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::exact::advance::ToiState;
use proxima::impacts::FirstContacts;
use proxima::toi_bench::{SLOP, advance_all, cases, nonlinear_all, sweep_all, to_parry_pairs};

const PAIRS: usize = 200;

fn pair_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("toi");
    for n in [8usize, 32, 128, 512] {
        let cases = cases(n, PAIRS).unwrap();
        let parry = to_parry_pairs(&cases).unwrap();
        let ours = || advance_all(&cases, None).unwrap();
        let hits = |v: Vec<Option<f64>>| v.into_iter().flatten().count();
        let out = ours();
        let our_hits = out.iter().filter(|o| o.state == ToiState::Hit).count();
        let evaluations =
            out.iter().map(|o| u64::from(o.iterations)).sum::<u64>() as f64 / PAIRS as f64;
        eprintln!(
            "toi {n} vertices: ours {our_hits} hits ({evaluations:.1} evaluations per pair), \
             cast_shapes_nonlinear {} hits, sweep_time_of_impact {} hits of {PAIRS}",
            hits(nonlinear_all(&cases, &parry)),
            hits(sweep_all(&cases, &parry))
        );
        group.bench_function(BenchmarkId::new("advancement", n), |bench| bench.iter(ours));
        group.bench_function(BenchmarkId::new("advancement_slop", n), |bench| {
            bench.iter(|| advance_all(&cases, Some(SLOP)).unwrap());
        });
        group.bench_function(BenchmarkId::new("parry_nonlinear", n), |bench| {
            bench.iter(|| nonlinear_all(&cases, &parry));
        });
        group.bench_function(BenchmarkId::new("parry_sweep", n), |bench| {
            bench.iter(|| sweep_all(&cases, &parry));
        });
    }
    group.finish();
}

/// 2,000 pairs a batch (about 22 MB of our polytopes at 8 vertices): each query finds its
/// bodies' tables out of cache, where the 200-pair batches stay in the last-level cache.
fn many_pairs_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("toi_many");
    for n in [8usize, 32] {
        let cases = cases(n, 10 * PAIRS).unwrap();
        let parry = to_parry_pairs(&cases).unwrap();
        group.bench_function(BenchmarkId::new("advancement", n), |bench| {
            bench.iter(|| advance_all(&cases, None).unwrap());
        });
        group.bench_function(BenchmarkId::new("advancement_slop", n), |bench| {
            bench.iter(|| advance_all(&cases, Some(SLOP)).unwrap());
        });
        group.bench_function(BenchmarkId::new("parry_sweep", n), |bench| {
            bench.iter(|| sweep_all(&cases, &parry));
        });
    }
    group.finish();
}

fn queue_bench(c: &mut Criterion) {
    let (shapes, bodies) = test_common::moving_crowd(10_000, 0x70e);
    let queue = || {
        FirstContacts::new(&shapes, &bodies)
            .unwrap()
            .until(1.0)
            .len()
    };
    let all_pairs = || test_common::all_pairs_first_contacts(&shapes, &bodies).len();
    eprintln!(
        "toi_queue 10000 bodies: queue {} contacts, all pairs {}",
        queue(),
        all_pairs()
    );
    let mut group = c.benchmark_group("toi_queue");
    group.bench_function("queue_10k", |bench| bench.iter(queue));
    group.bench_function("all_pairs_10k", |bench| bench.iter(all_pairs));
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = pair_bench, many_pairs_bench, queue_bench
}
criterion_main!(benches);
