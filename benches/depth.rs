//! Penetration depth: the Gauss-map walk (warm-started by the per-pair cache, and cold)
//! against parry3d-f64's EPA (`query::contact`) on the same coherent sequences of
//! overlapping hulls of 8 to 2048 vertices (`proxima::penetration_bench::sequence`, which
//! `proxima bench penetration` times from the binary): A spinning in place, B orbiting and
//! tumbling, either resting on A pressed in by at most 0.02 (`depth_shallow`, contacts as a
//! simulation has them; spiky 8-vertex hulls are brought closer until they touch) or
//! through it, centers 0.9 apart (`depth_deep`), or about one centre (`depth_centred`).
//! Each iteration
//! runs the whole 200-frame sequence; the depths agree (EPA's rare misses aside, see
//! tests/depth.rs). `proxima_from_estimate` is the cold walk started where the sampled
//! depth estimate points (as a frame with the GPU stage starts a pair's first walk).
//! Average steps per query are printed once per size. `depth_concentric`: the deepest
//! case, pairs at one point (crates, 32-vertex hulls), cold.
//! `cargo bench --bench depth`.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::DVec3;
use proxima::bodies::{GpuBody, Pose};
use proxima::estimate::estimate_cpu;
use proxima::exact::depth::{DepthCache, DepthInput, Toward, walk};
use proxima::geometry::{ConvexPolytope, generators};
use proxima::passes::depth::{DEFAULT_K, DepthShapes};
use proxima::penetration_bench::{Kind, Sequence, sequence};
use proxima::rng::Rng;

const FRAMES: usize = 200;

/// Pairs of `depth_concentric`'s each kind.
const PAIRS: usize = 200;

fn depth_bench(c: &mut Criterion) {
    for kind in Kind::ALL {
        depth_group(c, kind);
    }
}

fn depth_group(c: &mut Criterion, kind: Kind) {
    let name = format!("depth_{}", kind.name());
    let mut group = c.benchmark_group(&name);
    for n in [8usize, 32, 128, 512, 2048] {
        // The sequence `proxima bench penetration` times too (frames where the hulls,
        // smaller than their spheres, do not overlap are left out: the depth query is for
        // overlapping pairs).
        let Sequence { a, b, poses } = sequence(n, kind, FRAMES).unwrap();
        // Where the GPU's sampled estimate (its CPU twin here, untimed) points each frame.
        let tables = DepthShapes::new([&a, &b]).unwrap();
        let toward: Vec<Toward> = poses
            .iter()
            .map(|(pa, pb)| {
                let body = |p: &Pose, shape| {
                    GpuBody::new(p.translation.as_vec3(), p.rotation.as_quat(), shape)
                };
                let bodies = [body(pa, 0), body(pb, 1)];
                let e = estimate_cpu(&tables, &bodies, &[[0, 1]], DEFAULT_K).unwrap()[0];
                Toward {
                    normal: glam::Vec3::from_array(e.normal).as_dvec3(),
                    vertices: (e.witness_a, e.witness_b),
                }
            })
            .collect();
        let (ga, gb) = (test_common::to_parry(&a), test_common::to_parry(&b));
        let (mut warm_steps, mut cold_steps, mut toward_steps) = (0u64, 0u64, 0u64);
        let mut worst = 0.0f64;
        let mut cache = DepthCache::default();
        for ((pa, pb), t) in poses.iter().zip(&toward) {
            let warm = cache
                .query(&a, *pa, &b, *pb)
                .expect("the sequence overlaps");
            let cold = walk(&DepthInput::new(&a, *pa, &b, *pb)).expect("overlap");
            let started = walk(&toward_input(&a, pa, &b, pb, t)).expect("overlap");
            assert!((started.depth - cold.depth).abs() <= 1e-9 * (1.0 + cold.depth));
            warm_steps += u64::from(warm.steps);
            cold_steps += u64::from(cold.steps);
            toward_steps += u64::from(started.steps);
            let epa = parry_depth(&ga, pa, &gb, pb);
            worst = worst.max((epa - warm.depth).abs());
        }
        let (full, held) = cache.certificates();
        eprintln!(
            "{name}/{n}: {} overlapping frames; steps per query warm {:.2}, cold {:.2}, from the estimate {:.2}; warm global checks: {full} full, {held} settled without one (inscribed or standing); largest |EPA - walk| {worst:e}",
            poses.len(),
            warm_steps as f64 / poses.len() as f64,
            cold_steps as f64 / poses.len() as f64,
            toward_steps as f64 / poses.len() as f64
        );
        group.throughput(criterion::Throughput::Elements(poses.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("proxima_warm", n),
            &poses,
            |bench, poses| {
                bench.iter(|| {
                    let mut cache = DepthCache::default();
                    poses
                        .iter()
                        .map(|(pa, pb)| cache.query(&a, *pa, &b, *pb).map_or(0.0, |p| p.depth))
                        .sum::<f64>()
                });
            },
        );
        bench_poses(
            &mut group,
            BenchmarkId::new("proxima_cold", n),
            &poses,
            |pa, pb| walk(&DepthInput::new(&a, *pa, &b, *pb)).map_or(0.0, |p| p.depth),
        );
        group.bench_with_input(
            BenchmarkId::new("proxima_from_estimate", n),
            &poses,
            |bench, poses| {
                bench.iter(|| {
                    poses
                        .iter()
                        .zip(&toward)
                        .map(|((pa, pb), t)| {
                            walk(&toward_input(&a, pa, &b, pb, t)).map_or(0.0, |p| p.depth)
                        })
                        .sum::<f64>()
                });
            },
        );
        bench_poses(
            &mut group,
            BenchmarkId::new("parry_epa", n),
            &poses,
            |pa, pb| parry_depth(&ga, pa, &gb, pb),
        );
    }
    group.finish();
}

/// The deepest case: pairs at one point in random orientations (a scene's bodies spawned
/// at the origin), unit crates and 32-vertex hulls, cold (a pile has no history). A − B
/// is centred on the origin: the crates' candidates are enumerated (small bodies with
/// near centroids), and for the hulls the inscribed surface needs most of A − B; EPA
/// under-reports many of these (the count is printed), so its time is not at equal depth.
fn concentric_group(c: &mut Criterion) {
    let mut group = c.benchmark_group("depth_concentric");
    let mut rng = Rng::new(0xc0c);
    let crate_ = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let hull = generators::random_hull(&mut rng, 32, 1.0).unwrap();
    for (name, shape) in [("crates", &crate_), ("hulls_32", &hull)] {
        let poses: Vec<(Pose, Pose)> = (0..PAIRS)
            .map(|_| {
                (
                    Pose::new(DVec3::ZERO, rng.rotation()),
                    Pose::new(DVec3::ZERO, rng.rotation()),
                )
            })
            .collect();
        let g = test_common::to_parry(shape);
        let under = poses
            .iter()
            .filter(|(pa, pb)| {
                let ours = walk(&DepthInput::new(shape, *pa, shape, *pb)).expect("overlap");
                parry_depth(&g, pa, &g, pb) < ours.depth * (1.0 - 1e-9)
            })
            .count();
        eprintln!("depth_concentric/{name}: EPA under-reports {under} of {PAIRS} pairs");
        group.throughput(criterion::Throughput::Elements(PAIRS as u64));
        bench_poses(
            &mut group,
            BenchmarkId::new("proxima_cold", name),
            &poses,
            |pa, pb| walk(&DepthInput::new(shape, *pa, shape, *pb)).map_or(0.0, |p| p.depth),
        );
        bench_poses(
            &mut group,
            BenchmarkId::new("parry_epa", name),
            &poses,
            |pa, pb| parry_depth(&g, pa, &g, pb),
        );
    }
    group.finish();
}

/// Times `depth` summed over `poses` as `id` in `group`.
fn bench_poses(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    poses: &[(Pose, Pose)],
    depth: impl Fn(&Pose, &Pose) -> f64,
) {
    group.bench_with_input(id, poses, |bench, poses| {
        bench.iter(|| poses.iter().map(|(pa, pb)| depth(pa, pb)).sum::<f64>());
    });
}

/// A cold query that starts where the estimate points.
fn toward_input<'a>(
    a: &'a ConvexPolytope,
    pa: &Pose,
    b: &'a ConvexPolytope,
    pb: &Pose,
    toward: &Toward,
) -> DepthInput<'a> {
    DepthInput {
        toward: Some(*toward),
        ..DepthInput::new(a, *pa, b, *pb)
    }
}

fn parry_depth(
    ga: &parry3d_f64::shape::ConvexPolyhedron,
    pa: &Pose,
    gb: &parry3d_f64::shape::ConvexPolyhedron,
    pb: &Pose,
) -> f64 {
    parry3d_f64::query::contact(
        &test_common::parry_pose(pa),
        ga,
        &test_common::parry_pose(pb),
        gb,
        0.0,
    )
    .unwrap()
    .map_or(0.0, |c| -c.dist)
}

criterion_group! {
    name = benches;
    config = common::criterion(2);
    targets = depth_bench, concentric_group
}
criterion_main!(benches);
