//! Time of impact: conservative advancement against parry3d-f64's two queries on the same
//! batches of 200 random rotating convex pairs (hulls of 8 to 512 vertices, each body
//! moving up to 4 and turning up to 0.9π over the step, about half the pairs meeting):
//! ours, `cast_shapes_nonlinear` (the same screw motion, local centre 0) and
//! `sweep_time_of_impact` (nlerp rotation, its own path). Each iteration runs the whole
//! batch; hits and our average evaluations per pair are printed once per size. A second
//! group, `toi_queue`, finds the first contacts of 10,000 moving bodies with the
//! broadphase and the wake-up queue against advancing every pair whose bounding spheres
//! can meet. `cargo bench --bench toi`.

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
use proxima::bodies::Pose;
use proxima::exact::advance::{ToiInput, ToiState, time_of_impact};
use proxima::exact::sat;
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::random_points;
use proxima::impacts::FirstContacts;
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

const PAIRS: usize = 200;

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

fn cases(n: usize) -> Vec<Case> {
    let mut rng = Rng::new(n as u64);
    let mut out = Vec::with_capacity(PAIRS);
    while out.len() < PAIRS {
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
        let cases = cases(n);
        let parry: Vec<_> = cases
            .iter()
            .map(|c| (test_common::to_parry(&c.a), test_common::to_parry(&c.b)))
            .collect();
        let ours = || {
            cases
                .iter()
                .map(|c| time_of_impact(&ToiInput::new(&c.a, c.ma, &c.b, c.mb)))
                .collect::<Vec<_>>()
        };
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
        let sweep_of = |m: &ScrewMotion| {
            Sweep::from_poses(
                &test_common::parry_pose(&m.start()),
                &test_common::parry_pose(&m.end()),
                DVec3::ZERO,
            )
        };
        let sweep = || {
            cases
                .iter()
                .zip(&parry)
                .filter(|(c, (pa, pb))| {
                    let (xa, xb) = (
                        ToiProxy::from_shape(pa).unwrap(),
                        ToiProxy::from_shape(pb).unwrap(),
                    );
                    let s = sweep_time_of_impact(
                        &xa,
                        &sweep_of(&c.ma),
                        &xb,
                        &sweep_of(&c.mb),
                        1.0,
                        1e-6,
                    );
                    matches!(s.status, SweepToiStatus::Hit | SweepToiStatus::Failed)
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
            sweep()
        );
        group.bench_function(BenchmarkId::new("advancement", n), |bench| bench.iter(ours));
        group.bench_function(BenchmarkId::new("parry_nonlinear", n), |bench| {
            bench.iter(nonlinear);
        });
        group.bench_function(BenchmarkId::new("parry_sweep", n), |bench| {
            bench.iter(sweep);
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
    targets = pair_bench, queue_bench
}
criterion_main!(benches);
