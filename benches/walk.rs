//! The closest-feature walk against parry3d-f64's `distance` on the same coherent
//! sequences (A spinning in place, B orbiting and tumbling nearby, always separated), for
//! hulls of 8 to 2048 vertices: warm-started (the per-pair cache), cold, and parry.
//! Each iteration runs the whole 200-frame sequence. Average steps per query are printed
//! once per size. A second group, `walk_everyday`, runs crossed planks and crates sliding
//! over each other (the degenerate contacts users meet first). `cargo bench --bench walk`.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

mod common_bench {
    use glam::{DQuat, DVec3};
    use proxima::bodies::Pose;

    pub fn frame(k: usize) -> (Pose, Pose) {
        let t = k as f64 * 0.01;
        let pa = Pose {
            translation: DVec3::ZERO,
            rotation: DQuat::from_rotation_y(0.7 * t),
        };
        let orbit = DVec3::new(t.cos(), 0.3 * (2.0 * t).sin(), t.sin()) * 2.4;
        let pb = Pose {
            translation: orbit,
            rotation: DQuat::from_rotation_z(1.3 * t) * DQuat::from_rotation_x(0.5 * t),
        };
        (pa, pb)
    }
}

use common_bench::frame;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::bodies::Pose;
use proxima::exact::walk::{WalkCache, WalkInput, walk};
use proxima::geometry::ConvexPolytope;
use proxima::geometry::generators::random_points;
use proxima::rng::Rng;

const FRAMES: usize = 200;

fn walk_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("walk");
    for n in [8usize, 32, 128, 512, 2048] {
        // Points on the unit sphere: every one is a hull vertex.
        let a = ConvexPolytope::from_points(&random_points(&mut Rng::new(n as u64), n, 1.0, 1.0))
            .unwrap();
        let b =
            ConvexPolytope::from_points(&random_points(&mut Rng::new(n as u64 + 7), n, 1.0, 1.0))
                .unwrap();
        let poses: Vec<_> = (0..FRAMES).map(frame).collect();
        three_ways(&mut group, "walk", n, &a, &b, &poses);
    }
    group.finish();
}

/// The shapes people model first, on 200-frame sequences with the degenerate contacts
/// they bring: a quarter-turned plank sliding across another just above it (crossed
/// planks: parallel faces, closest points on Voronoi planes), and a crate sliding over
/// another (parallel faces and edges).
fn everyday_bench(c: &mut Criterion) {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;

    let mut group = c.benchmark_group("walk_everyday");
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let plank = cuboid(DVec3::new(1.0, 0.125, 0.125)).unwrap();
    let crate_box = cuboid(DVec3::splat(0.5)).unwrap();
    let families = [
        (
            "crossed_planks",
            &plank,
            DQuat::from_xyzw(0.0, 0.0, s, s),
            0.25 + 1.0 / 64.0,
        ),
        ("crates", &crate_box, DQuat::IDENTITY, 1.0 + 1.0 / 64.0),
    ];
    for (name, shape, turn, lift) in families {
        let poses: Vec<(Pose, Pose)> = (0..FRAMES)
            .map(|k| {
                let x = -1.5 + 3.0 * k as f64 / FRAMES as f64;
                let pb = Pose {
                    translation: DVec3::new(x, 0.25 * x, lift),
                    rotation: turn,
                };
                (Pose::default(), pb)
            })
            .collect();
        three_ways(&mut group, "walk_everyday", name, shape, shape, &poses);
    }
    group.finish();
}

/// Registers the warm walk, the cold walk and parry3d-f64's `distance` on one sequence,
/// after printing the average steps per query of the first two.
fn three_ways(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    param: impl std::fmt::Display,
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    poses: &[(Pose, Pose)],
) {
    let (ga, gb) = (test_common::to_parry(a), test_common::to_parry(b));
    let param = param.to_string();
    let (mut warm_steps, mut cold_steps) = (0u64, 0u64);
    let mut cache = WalkCache::default();
    for (pa, pb) in poses {
        warm_steps += u64::from(cache.query(a, *pa, b, *pb).steps);
        cold_steps += u64::from(walk(&WalkInput::new(a, *pa, b, *pb)).steps);
    }
    eprintln!(
        "{}/{param}: {} and {} vertices; steps per query: warm {:.2}, cold {:.2}",
        label,
        a.num_vertices(),
        b.num_vertices(),
        warm_steps as f64 / poses.len() as f64,
        cold_steps as f64 / poses.len() as f64
    );
    group.throughput(criterion::Throughput::Elements(poses.len() as u64));
    group.bench_with_input(
        BenchmarkId::new("proxima_warm", &param),
        poses,
        |bench, poses| {
            bench.iter(|| {
                let mut cache = WalkCache::default();
                poses
                    .iter()
                    .map(|(pa, pb)| cache.query(a, *pa, b, *pb).distance)
                    .sum::<f64>()
            });
        },
    );
    group.bench_with_input(
        BenchmarkId::new("proxima_cold", &param),
        poses,
        |bench, poses| {
            bench.iter(|| {
                poses
                    .iter()
                    .map(|(pa, pb)| walk(&WalkInput::new(a, *pa, b, *pb)).distance)
                    .sum::<f64>()
            });
        },
    );
    group.bench_with_input(BenchmarkId::new("parry", &param), poses, |bench, poses| {
        bench.iter(|| {
            poses
                .iter()
                .map(|(pa, pb)| {
                    let qa = parry3d_f64::math::Pose::from_parts(pa.translation, pa.rotation);
                    let qb = parry3d_f64::math::Pose::from_parts(pb.translation, pb.rotation);
                    parry3d_f64::query::distance(&qa, &ga, &qb, &gb)
                        .unwrap()
                        .distance
                })
                .sum::<f64>()
        });
    });
}

criterion_group! {
    name = benches;
    config = common::criterion(2);
    targets = walk_bench, everyday_bench
}
criterion_main!(benches);
