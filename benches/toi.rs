//! Time of impact: conservative advancement against parry3d-f64's two queries on the same
//! batches of 200 random rotating convex pairs (hulls of 8 to 512 vertices, each body
//! moving up to 4 and turning up to 0.9π over the step, about half the pairs meeting):
//! ours, `cast_shapes_nonlinear` (the same screw motion, local centre 0) and
//! `sweep_time_of_impact` (nlerp rotation, its own path, stopping within 1.25e-6 of
//! contact). Ours runs at its default tolerance (1e-9 of the coordinates' size, about
//! 3e-9 here) and, as `advancement_slop`, at `sweep_time_of_impact`'s 1e-6: the same
//! accuracy. Each iteration runs the whole batch; hits and our average evaluations per
//! pair are printed once per size. `toi_many` runs batches of 2,000 pairs, whose bodies do
//! not stay in cache from one query to the next. `toi_queue` finds the first contacts of
//! 10,000 moving bodies with the broadphase and the wake-up queue against advancing every
//! pair whose bounding spheres can meet. `cargo bench --bench toi`.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

use std::f64::consts::PI;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use parry3d_f64::query::{
    NonlinearRigidMotion, Sweep, SweepToiStatus, ToiProxy, cast_shapes_nonlinear,
    sweep_time_of_impact,
};
use parry3d_f64::shape::ConvexPolyhedron;
use proxima::bodies::Pose;
use proxima::exact::advance::{ContactTolerance, ToiInput, ToiOutput, ToiState, time_of_impact};
use proxima::exact::sat;
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::random_points;
use proxima::impacts::FirstContacts;
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

const PAIRS: usize = 200;

/// `sweep_time_of_impact`'s linear slop: it stops within `1.25 × SLOP` of contact.
const SLOP: f64 = 1e-6;

struct Case {
    a: ConvexPolytope,
    b: ConvexPolytope,
    ma: ScrewMotion,
    mb: ScrewMotion,
}

fn hull(rng: &mut Rng, n: usize) -> ConvexPolytope {
    let radius = rng.range(0.5, 1.0);
    ConvexPolytope::from_points(&random_points(rng, n, radius, 1.0)).unwrap()
}

fn cases(n: usize, pairs: usize) -> Vec<Case> {
    let mut rng = Rng::new(n as u64);
    let mut out = Vec::with_capacity(pairs);
    while out.len() < pairs {
        let (a, b) = (hull(&mut rng, n), hull(&mut rng, n));
        let mut turn =
            |q: DQuat| DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.9 * PI)) * q;
        let ra = DQuat::IDENTITY;
        let ma = ScrewMotion::between(Pose::new(DVec3::ZERO, ra), Pose::new(DVec3::ZERO, turn(ra)))
            .unwrap();
        let u = rng.unit_vector();
        let start = u * rng.range(2.0, 3.0);
        let end = start - u * rng.range(1.0, 4.0) + rng.unit_vector() * rng.range(0.0, 1.5);
        let rb = rng.rotation();
        let mut turn =
            |q: DQuat| DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.9 * PI)) * q;
        let mb = ScrewMotion::between(Pose::new(start, rb), Pose::new(end, turn(rb))).unwrap();
        if !sat::intersects(&a, &ma.start(), &b, &mb.start()) {
            out.push(Case { a, b, ma, mb });
        }
    }
    out
}

fn pair_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("toi");
    for n in [8usize, 32, 128, 512] {
        let cases = cases(n, PAIRS);
        let parry: Vec<_> = cases
            .iter()
            .map(|c| (test_common::to_parry(&c.a), test_common::to_parry(&c.b)))
            .collect();
        let ours = || advance_all(&cases, None);
        let motion = |m: &ScrewMotion| {
            NonlinearRigidMotion::new(
                test_common::parry_pose(&m.start()),
                DVec3::ZERO,
                m.linear(),
                m.angular(),
            )
        };
        let nonlinear = || {
            cases
                .iter()
                .zip(&parry)
                .filter(|(c, (pa, pb))| {
                    cast_shapes_nonlinear(&motion(&c.ma), pa, &motion(&c.mb), pb, 0.0, 1.0, true)
                        .unwrap()
                        .is_some()
                })
                .count()
        };
        let out = ours();
        let hits = out.iter().filter(|o| o.state == ToiState::Hit).count();
        let evaluations =
            out.iter().map(|o| u64::from(o.iterations)).sum::<u64>() as f64 / PAIRS as f64;
        eprintln!(
            "toi {n} vertices: ours {hits} hits ({evaluations:.1} evaluations per pair), \
             cast_shapes_nonlinear {} hits, sweep_time_of_impact {} hits of {PAIRS}",
            nonlinear(),
            sweep_all(&cases, &parry)
        );
        group.bench_function(BenchmarkId::new("advancement", n), |bench| bench.iter(ours));
        group.bench_function(BenchmarkId::new("advancement_slop", n), |bench| {
            bench.iter(|| advance_all(&cases, Some(SLOP)));
        });
        group.bench_function(BenchmarkId::new("parry_nonlinear", n), |bench| {
            bench.iter(nonlinear);
        });
        group.bench_function(BenchmarkId::new("parry_sweep", n), |bench| {
            bench.iter(|| sweep_all(&cases, &parry));
        });
    }
    group.finish();
}

/// 2,000 pairs a batch (about 36 MB of our polytopes at 8 vertices): each query finds its
/// bodies' tables out of cache, where the 200-pair batches stay in the last-level cache.
fn many_pairs_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("toi_many");
    for n in [8usize, 32] {
        let cases = cases(n, 10 * PAIRS);
        let parry: Vec<_> = cases
            .iter()
            .map(|c| (test_common::to_parry(&c.a), test_common::to_parry(&c.b)))
            .collect();
        group.bench_function(BenchmarkId::new("advancement", n), |bench| {
            bench.iter(|| advance_all(&cases, None));
        });
        group.bench_function(BenchmarkId::new("advancement_slop", n), |bench| {
            bench.iter(|| advance_all(&cases, Some(SLOP)));
        });
        group.bench_function(BenchmarkId::new("parry_sweep", n), |bench| {
            bench.iter(|| sweep_all(&cases, &parry));
        });
    }
    group.finish();
}

/// Ours on every case, at the default tolerance or at `tolerance`.
fn advance_all(cases: &[Case], tolerance: Option<f64>) -> Vec<ToiOutput> {
    let tolerance = tolerance.map(|t| ContactTolerance::new(t).unwrap());
    cases
        .iter()
        .map(|c| {
            time_of_impact(&ToiInput {
                tolerance,
                ..ToiInput::new(&c.a, c.ma, &c.b, c.mb)
            })
        })
        .collect()
}

/// `sweep_time_of_impact` on every case: its hits.
fn sweep_all(cases: &[Case], parry: &[(ConvexPolyhedron, ConvexPolyhedron)]) -> usize {
    let sweep_of = |m: &ScrewMotion| {
        Sweep::from_poses(
            &test_common::parry_pose(&m.start()),
            &test_common::parry_pose(&m.end()),
            DVec3::ZERO,
        )
    };
    cases
        .iter()
        .zip(parry)
        .filter(|(c, (pa, pb))| {
            let (xa, xb) = (
                ToiProxy::from_shape(pa).unwrap(),
                ToiProxy::from_shape(pb).unwrap(),
            );
            let s = sweep_time_of_impact(&xa, &sweep_of(&c.ma), &xb, &sweep_of(&c.mb), 1.0, SLOP);
            matches!(s.status, SweepToiStatus::Hit | SweepToiStatus::Failed)
        })
        .count()
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
