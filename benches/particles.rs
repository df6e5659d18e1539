//! Curved bodies. `rounded_queries`: 10,000 random distance queries between spheres and
//! capsules, ours (`exact::rounded`, closed forms in f64) against parry3d-f64's `Ball`
//! and `Capsule`, and of spheres and capsules against hulls of 8, 32 and 128 points (ours
//! the Voronoi walk, parry's GJK against its `ConvexPolyhedron`). `particle_frame`: a crowd of spheres, points and capsules, the whole
//! frame (bounds, broadphase, contacts) on the GPU in one submission against the CPU
//! twins of the same stages, at 100k and 1M particles. `cargo bench --bench particles`.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::sync::Arc;

use glam::DVec3;
use parry3d_f64::shape::{Ball, Capsule, SharedShape};
use proxima::bodies::{GpuBody, Pose};
use proxima::exact::rounded;
use proxima::geometry::generators;
use proxima::geometry::rounded::Rounded;
use proxima::gpu::Engine;
use proxima::particles::{GpuRoundContacts, particle_frame_cpu};
use proxima::passes::broadphase::Method;
use proxima::rng::Rng;

const QUERIES: usize = 10_000;

fn rounded_queries(c: &mut Criterion) {
    let mut group = c.benchmark_group("rounded_queries");
    let sphere = Rounded::sphere(0.5).unwrap();
    let capsule = Rounded::capsule(0.7, 0.3).unwrap();
    let parry_sphere = SharedShape::new(Ball::new(0.5));
    let parry_capsule = SharedShape::new(Capsule::new(
        DVec3::new(0.0, 0.0, -0.7),
        DVec3::new(0.0, 0.0, 0.7),
        0.3,
    ));
    let mut rng = Rng::new(1);
    let poses: Vec<(Pose, Pose)> = (0..QUERIES)
        .map(|_| {
            let a = Pose::new(DVec3::ZERO, rng.rotation());
            let b = Pose::new(rng.unit_vector() * rng.range(0.5, 3.0), rng.rotation());
            (a, b)
        })
        .collect();
    let mut cases: Vec<(String, Rounded, Rounded, SharedShape, SharedShape)> = vec![
        (
            "sphere_sphere".into(),
            sphere.clone(),
            sphere.clone(),
            parry_sphere.clone(),
            parry_sphere.clone(),
        ),
        (
            "sphere_capsule".into(),
            sphere.clone(),
            capsule.clone(),
            parry_sphere.clone(),
            parry_capsule.clone(),
        ),
        (
            "capsule_capsule".into(),
            capsule.clone(),
            capsule.clone(),
            parry_capsule.clone(),
            parry_capsule.clone(),
        ),
    ];
    // Against hulls of 8 to 128 points on a sphere of radius 1 (the Voronoi walk).
    for k in [8, 32, 128] {
        let hull = generators::random_hull(&mut rng, k, 1.0).unwrap();
        let parry_hull = SharedShape::new(test_common::to_parry(&hull));
        let hull = rounded::plain(Arc::new(hull));
        for (name, body, parry_body) in [
            ("sphere", &sphere, &parry_sphere),
            ("capsule", &capsule, &parry_capsule),
        ] {
            cases.push((
                format!("{name}_hull{k}"),
                body.clone(),
                hull.clone(),
                parry_body.clone(),
                parry_hull.clone(),
            ));
        }
    }
    for (name, a, b, pa, pb) in &cases {
        group.bench_function(BenchmarkId::new("ours", name), |bench| {
            bench.iter(|| {
                poses
                    .iter()
                    .map(|(x, y)| rounded::distance(a, x, b, y).distance)
                    .sum::<f64>()
            });
        });
        group.bench_function(BenchmarkId::new("parry", name), |bench| {
            bench.iter(|| {
                poses
                    .iter()
                    .map(|(x, y)| {
                        let q = |p: &Pose| {
                            parry3d_f64::math::Pose::from_parts(p.translation, p.rotation)
                        };
                        parry3d_f64::query::distance(&q(x), &**pa, &q(y), &**pb)
                            .unwrap()
                            .distance
                    })
                    .sum::<f64>()
            });
        });
    }
    group.finish();
}

fn particle_frame(c: &mut Criterion) {
    let shapes = [
        Rounded::sphere(0.5).unwrap(),
        Rounded::sphere(0.2).unwrap(),
        Rounded::capsule(0.6, 0.25).unwrap(),
        Rounded::sphere(0.0).unwrap(),
    ];
    let (table, bounds) = test_common::round_tables(&shapes);
    let gpu = common::gpu("particles").map(Engine::new);
    let mut pass_engine = gpu.map(|e| {
        let pass = GpuRoundContacts::new(&e, table.clone()).unwrap();
        (pass, e)
    });
    let mut group = c.benchmark_group("particle_frame");
    for n in [100_000usize, 1_000_000] {
        let mut rng = Rng::new(n as u64);
        // About 8 unit cells per particle, as the default crowd.
        let side = (n as f64 * 8.0).cbrt();
        let bodies: Vec<GpuBody> = (0..n)
            .map(|i| {
                let p = rng.point_in(DVec3::splat(-side / 2.0), DVec3::splat(side / 2.0));
                GpuBody::new(
                    p.as_vec3(),
                    rng.rotation().as_quat(),
                    (i % shapes.len()) as u32,
                )
            })
            .collect();
        if let Some((pass, engine)) = pass_engine.as_mut() {
            let f = pass
                .frame(engine, &bodies, &bounds, Method::Hash, 0.0)
                .unwrap();
            eprintln!(
                "{n} particles: {} pairs, {} touching, {} bytes read back",
                f.pairs,
                f.contacts.len(),
                f.read_back
            );
            group.bench_with_input(BenchmarkId::new("gpu", n), &bodies, |bench, bodies| {
                bench.iter(|| {
                    pass.frame(engine, bodies, &bounds, Method::Hash, 0.0)
                        .unwrap()
                });
            });
        }
        group.bench_with_input(BenchmarkId::new("cpu_twin", n), &bodies, |bench, bodies| {
            bench.iter(|| particle_frame_cpu(&table, bodies, &bounds, Method::Hash, 0.0).unwrap());
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = rounded_queries, particle_frame
}
criterion_main!(benches);
