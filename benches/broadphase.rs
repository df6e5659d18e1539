//! Broadphase on the default scene resized (boxes from the bounds pass): GPU hash and
//! sweep, their CPU twins, and parry3d-f64's BVH (build + self traversal) on the same
//! boxes, side by side. Sort-and-sweep is skipped at 1M (its single-axis sweep grows as
//! N^(5/3) on a uniform crowd: `proxima bench broadphase` still times it). 4M bodies are
//! added on a hardware adapter.
//! `cargo bench --bench broadphase`.

mod common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use proxima::bodies::GpuAabb;
use proxima::broadphase::{GpuBroadphase, cpu_pairs};
use proxima::frame;
use proxima::gpu::Engine;
use proxima::passes::broadphase::Method;
use proxima::scene::Scene;

fn parry_pairs(aabbs: &[GpuAabb]) -> usize {
    use parry3d_f64::bounding_volume::Aabb;
    use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
    let leaves: Vec<Aabb> = aabbs
        .iter()
        .map(|b| {
            Aabb::new(
                glam::Vec3::from_array(b.min).as_dvec3(),
                glam::Vec3::from_array(b.max).as_dvec3(),
            )
        })
        .collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::default(), &leaves);
    let mut count = 0;
    bvh.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |_, _| count += 1);
    count
}

fn broadphase(c: &mut Criterion) {
    let ctx = common::gpu("broadphase");
    let mut group = c.benchmark_group("broadphase");
    // 4M only where the passes run on a GPU: on a software adapter it takes minutes.
    let mut sizes = vec![10_000usize, 100_000, 1_000_000];
    if ctx.as_ref().is_some_and(|c| !c.is_software()) {
        sizes.push(4_000_000);
    }
    for n in sizes {
        let scene = Scene::default_scene(Some(n as u64)).expect("default scene");
        let aabbs = frame::cpu(&scene.crowd.bodies, &scene.crowd.shapes, None)
            .expect("bounds")
            .aabbs;
        group.throughput(criterion::Throughput::Elements(n as u64));
        let methods: &[Method] = if n >= 1_000_000 {
            &[Method::Hash]
        } else {
            &[Method::Hash, Method::Sweep]
        };
        for &m in methods {
            group.bench_with_input(
                BenchmarkId::new(format!("cpu_{}", m.name()), n),
                &aabbs,
                |b, a| {
                    b.iter(|| cpu_pairs(a, m).expect("valid boxes").len());
                },
            );
            if let Some(ctx) = &ctx {
                let mut engine = Engine::new(ctx.clone());
                let mut bp = GpuBroadphase::default();
                bp.run(&mut engine, &aabbs, m).expect("warm-up run");
                group.bench_with_input(
                    BenchmarkId::new(format!("gpu_{}", m.name()), n),
                    &aabbs,
                    |b, a| {
                        b.iter(|| bp.run(&mut engine, a, m).expect("run").pairs.len());
                    },
                );
            }
        }
        group.bench_with_input(BenchmarkId::new("parry_bvh", n), &aabbs, |b, a| {
            b.iter(|| parry_pairs(a));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = broadphase
}
criterion_main!(benches);
