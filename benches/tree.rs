//! Non-convex bodies. `tree_distance`: two tori of 1k, 10k and 100k triangles, one
//! spinning in place, the other orbiting and tumbling beside it and through its hole (a
//! 200-frame sequence per iteration): our hull-tree distance warm-started across frames
//! (one `TreeCache`), cold (a fresh cache per frame), and parry3d-f64's trimesh–trimesh
//! distance on the same meshes (every 10th frame, or every 100th at 100k triangles: it
//! takes tens of milliseconds per query at 10k). `tree_toi`: time of impact of two tori
//! (1k, 10k, 100k triangles) and of two bumpy spheres (20k, 82k triangles), 40 random
//! rotating motions per iteration, B heading toward A and passing it, through it or into
//! it (hits, candidate piece pairs and evaluations per query are printed). `decompose`:
//! each closed mesh of ../shared/meshes (when the folder is there) decomposed from
//! scratch and loaded from the cache.
//! `cargo bench --bench tree`.

mod common;

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::advance::ToiState;
use proxima::exact::tree::{self, TreeCache};
use proxima::exact::tree_toi;
use proxima::geometry::decompose::{self, Cache, DecomposeParams};
use proxima::geometry::{HullTree, TriMesh, generators, mesh};
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

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

/// A motion from `at` by about `shift`, turning up to 2.5 rad.
fn toi_motion(rng: &mut Rng, at: DVec3, shift: DVec3, size: f64) -> ScrewMotion {
    let start = Pose::new(at, rng.rotation());
    let spin = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 2.5));
    let end = Pose::new(
        at + shift + rng.point_in(DVec3::splat(-0.4 * size), DVec3::splat(0.4 * size)),
        (spin * start.rotation).normalize(),
    );
    ScrewMotion::between(start, end).unwrap()
}

/// 40 motions of B toward A, from 1.5 to 3.5 sizes away, each body turning.
fn toi_motions(size: f64) -> Vec<(ScrewMotion, ScrewMotion)> {
    let mut rng = Rng::new(77);
    (0..40)
        .map(|_| {
            let a = toi_motion(&mut rng, DVec3::ZERO, DVec3::ZERO, size);
            let from = rng.unit_vector() * size * rng.range(1.5, 3.5);
            let shift = -from * rng.range(0.3, 1.6);
            (a, toi_motion(&mut rng, from, shift, size))
        })
        .collect()
}

fn tree_toi(c: &mut Criterion) {
    let mut group = c.benchmark_group("tree_toi");
    let meshes = [
        ("torus", generators::torus(1.0, 0.3, 32, 16).unwrap()),
        ("torus", generators::torus(1.0, 0.3, 100, 50).unwrap()),
        ("torus", generators::torus(1.0, 0.3, 320, 160).unwrap()),
        (
            "bumpy",
            generators::bumpy_sphere(1.0, 5, 0.15, 4.0).unwrap(),
        ),
        (
            "bumpy",
            generators::bumpy_sphere(1.0, 6, 0.15, 4.0).unwrap(),
        ),
    ];
    for (name, mesh) in meshes {
        let triangles = mesh.triangles.len();
        let t = HullTree::decompose(&mesh, &DecomposeParams::default(), &scratch(), &mut |_| {})
            .unwrap();
        let motions = toi_motions(2.0);
        let run = |t: &HullTree| {
            motions
                .iter()
                .map(|&(ma, mb)| tree_toi::time_of_impact(t, ma, t, mb))
                .collect::<Vec<_>>()
        };
        let out = run(&t);
        let hits = out
            .iter()
            .filter(|o| o.output.state == ToiState::Hit)
            .count();
        let per = |f: &dyn Fn(&tree_toi::TreeToi) -> usize| {
            out.iter().map(f).sum::<usize>() as f64 / out.len() as f64
        };
        eprintln!(
            "tree_toi {name} {triangles} triangles: {} pieces; {hits} hits of {}; per query \
             {:.1} candidate piece pairs, {:.1} evaluations",
            t.num_pieces(),
            out.len(),
            per(&|o| o.candidates),
            per(&|o| o.evaluations as usize)
        );
        group.bench_with_input(
            BenchmarkId::new(format!("{name}_40_queries"), triangles),
            &t,
            |bench, t| bench.iter(|| run(t)),
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
    targets = tree_distance, tree_toi, decomposition
}
criterion_main!(benches);
