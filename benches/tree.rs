//! Non-convex bodies. `tree_distance`: two tori of 1k, 10k and 100k triangles, one
//! spinning in place, the other orbiting and tumbling beside it and through its hole (a
//! 200-frame sequence per iteration): our hull-tree distance warm-started across frames
//! (one `TreeCache`), cold (a fresh cache per frame), and parry3d-f64's trimesh–trimesh
//! distance on the same meshes (every 10th frame, or every 100th at 100k triangles: it
//! takes tens of milliseconds per query at 10k). `decompose`: each closed mesh of ../shared/meshes (when
//! the folder is there) decomposed from scratch and loaded from the cache.
//! `cargo bench --bench tree`.

mod common;

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::tree::{self, TreeCache};
use proxima::geometry::decompose::{self, Cache, DecomposeParams};
use proxima::geometry::{HullTree, TriMesh, generators, mesh};

const FRAMES: usize = 200;

fn frame(k: usize) -> (Pose, Pose) {
    let t = k as f64 * 0.02;
    let a = Pose::new(DVec3::ZERO, DQuat::from_rotation_z(0.3 * t));
    // Around a circle through the first torus's tube, so the sequence passes near, close
    // and through the hole.
    let b = Pose::new(
        DVec3::new(1.0 + 1.6 * t.cos(), 0.2, 1.6 * t.sin()),
        DQuat::from_rotation_x(0.9 * t) * DQuat::from_rotation_y(0.4 * t),
    );
    (a, b)
}

fn to_parry(m: &TriMesh) -> parry3d_f64::shape::TriMesh {
    parry3d_f64::shape::TriMesh::new(m.vertices.clone(), m.triangles.clone()).unwrap()
}

fn pose(p: &Pose) -> parry3d_f64::math::Pose {
    parry3d_f64::math::Pose::from_parts(p.translation, p.rotation)
}

fn scratch() -> Cache {
    Cache::At(std::env::temp_dir().join("proxima-bench-cache"))
}

fn tree_distance(c: &mut Criterion) {
    let mut group = c.benchmark_group("tree_distance");
    let frames: Vec<(Pose, Pose)> = (0..FRAMES).map(frame).collect();
    // n_major × n_minor × 2 triangles: 1,024, 10,000 and 102,400.
    for (n_major, n_minor) in [(32, 16), (100, 50), (320, 160)] {
        let mesh = generators::torus(1.0, 0.3, n_major, n_minor).unwrap();
        let triangles = mesh.triangles.len();
        let t = HullTree::decompose(&mesh, &DecomposeParams::default(), &scratch(), &mut |_| {})
            .unwrap();
        let peer = to_parry(&mesh);
        let mut pairs = 0u32;
        let mut cache = TreeCache::new();
        for &(a, b) in &frames {
            pairs += tree::distance(&t, a, &t, b, &mut cache).node_pairs;
        }
        eprintln!(
            "{triangles} triangles: {} pieces, {} nodes, {:.1} node pairs per query",
            t.num_pieces(),
            t.num_nodes(),
            f64::from(pairs) / FRAMES as f64
        );
        group.bench_with_input(BenchmarkId::new("warm", triangles), &t, |bench, t| {
            bench.iter(|| {
                let mut cache = TreeCache::new();
                frames
                    .iter()
                    .map(|&(a, b)| tree::distance(t, a, t, b, &mut cache).distance)
                    .sum::<f64>()
            });
        });
        group.bench_with_input(BenchmarkId::new("cold", triangles), &t, |bench, t| {
            bench.iter(|| {
                frames
                    .iter()
                    .map(|&(a, b)| tree::distance(t, a, t, b, &mut TreeCache::new()).distance)
                    .sum::<f64>()
            });
        });
        // parry takes tens of milliseconds a query at 10k triangles: every 10th frame
        // there, every 100th at 100k.
        let every = if triangles > 20_000 { 100 } else { 10 };
        group.bench_with_input(
            BenchmarkId::new(
                format!("parry_trimesh_{}_frames", FRAMES / every),
                triangles,
            ),
            &peer,
            |bench, m| {
                bench.iter(|| {
                    frames
                        .iter()
                        .step_by(every)
                        .map(|(a, b)| {
                            parry3d_f64::query::distance(&pose(a), m, &pose(b), m)
                                .unwrap()
                                .distance
                        })
                        .sum::<f64>()
                });
            },
        );
    }
    group.finish();
}

fn decomposition(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/meshes");
    if !dir.exists() {
        eprintln!("decompose bench skipped: {} is absent", dir.display());
        return;
    }
    let mut group = c.benchmark_group("decompose");
    for name in ["cow", "spot", "fandisk", "rocker-arm"] {
        let m = mesh::load_obj(&dir.join(format!("{name}.obj"))).unwrap();
        let params = DecomposeParams::default();
        group.bench_with_input(BenchmarkId::new("first_load", name), &m, |bench, m| {
            bench.iter(|| decompose::load(m, &params, &Cache::Off, &mut |_| {}).unwrap());
        });
        let cache = scratch();
        decompose::load(&m, &params, &cache, &mut |_| {}).unwrap();
        group.bench_with_input(BenchmarkId::new("cached_load", name), &m, |bench, m| {
            bench.iter(|| {
                HullTree::new(
                    decompose::load(m, &params, &cache, &mut |_| {})
                        .unwrap()
                        .pieces,
                )
                .unwrap()
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = tree_distance, decomposition
}
criterion_main!(benches);
