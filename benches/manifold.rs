//! Contact manifolds: proxima's (exact normal, clipped faces, up to 4 points, warm-started
//! per pair) against parry3d-f64's on the same coherent sequences: a box resting on a
//! box and turning on it (parry's specialised `contact_manifold_cuboid_cuboid`, which
//! clips the same faces), and two 24-vertex hulls pressed together and tumbling (parry's
//! `query::contact`, one point by GJK/EPA, for scale: a manifold does more). Each
//! iteration runs a 200-frame sequence. And a block of crates touching their neighbours
//! at faces, edges and corners, on a unit grid and a 0.1 grid, every pair once an
//! iteration (warm, as a World's frames are). `cargo bench --bench manifold`.

mod common;
#[path = "../tests/common/mod.rs"]
mod test_common;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use parry3d_f64::query::ContactManifold;
use parry3d_f64::query::details::contact_manifold_cuboid_cuboid;
use parry3d_f64::shape::Cuboid;
use proxima::bodies::Pose;
use proxima::exact::advance;
use proxima::exact::manifold::{self, ManifoldCache};
use proxima::geometry::generators::{cuboid, random_hull};
use proxima::rng::Rng;

const FRAMES: usize = 200;

/// A crate resting on a floor, sliding and turning about the floor's normal, pressed in
/// by up to 0.01.
fn resting(k: usize) -> Pose {
    let t = k as f64 * 0.01;
    Pose::new(
        DVec3::new(
            0.5 * t.sin(),
            0.4 * t.cos(),
            0.995 - 0.005 * (3.0 * t).sin(),
        ),
        DQuat::from_rotation_z(0.8 * t),
    )
}

/// A hull pressed into another, tumbling.
fn tumbling(k: usize) -> (Pose, Pose) {
    let t = k as f64 * 0.01;
    (
        Pose::new(DVec3::ZERO, DQuat::from_rotation_y(0.7 * t)),
        Pose::new(
            DVec3::new(t.cos(), 0.3 * (2.0 * t).sin(), t.sin()).normalize() * 0.45,
            DQuat::from_rotation_z(1.3 * t) * DQuat::from_rotation_x(0.5 * t),
        ),
    )
}

fn bench(c: &mut Criterion) {
    let floor = cuboid(DVec3::new(2.0, 2.0, 0.5)).unwrap();
    let crate_ = cuboid(DVec3::splat(0.5)).unwrap();
    let (pf, pc) = (
        Cuboid::new(DVec3::new(2.0, 2.0, 0.5)),
        Cuboid::new(DVec3::splat(0.5)),
    );
    let mut group = c.benchmark_group("manifold_box_on_box");
    group.bench_function("proxima", |b| {
        b.iter(|| {
            let mut cache = ManifoldCache::default();
            let mut points = 0;
            for k in 0..FRAMES {
                let m = manifold::polytopes(
                    &floor,
                    &Pose::IDENTITY,
                    &crate_,
                    &resting(k),
                    0.0,
                    &mut cache,
                )
                .expect("resting");
                points += m.points.len();
            }
            points
        });
    });
    group.bench_function("parry3d_f64_cuboid_cuboid", |b| {
        b.iter(|| {
            let mut m = ContactManifold::<(), ()>::new();
            let mut points = 0;
            for k in 0..FRAMES {
                let pos12 = test_common::parry_pose(&resting(k));
                m.clear();
                contact_manifold_cuboid_cuboid(&pos12, &pf, &pc, 0.0, &mut m);
                points += m.points.len();
            }
            points
        });
    });
    group.finish();

    // A 4 x 4 x 4 block of crates, each touching its neighbours at a face, an edge or a
    // corner (468 pairs), on a unit grid (exact touches) and on a 0.1 grid (apart or
    // overlapping by the grid's rounding); each pair keeps its cache, as in a World.
    for (name, size) in [("unit", 1.0), ("decimal", 0.1)] {
        let block = cuboid(DVec3::splat(0.5 * size)).unwrap();
        let half = Cuboid::new(DVec3::splat(0.5 * size));
        let cells: Vec<[i32; 3]> = (0..64).map(|i| [i % 4, (i / 4) % 4, i / 16]).collect();
        let pose = |c: [i32; 3]| {
            Pose::new(
                DVec3::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2])) * size,
                DQuat::IDENTITY,
            )
        };
        let pairs: Vec<(Pose, Pose)> = cells
            .iter()
            .enumerate()
            .flat_map(|(i, &x)| {
                cells[i + 1..]
                    .iter()
                    .filter(move |&&y| (0..3).all(|k| (x[k] - y[k]).abs() <= 1))
                    .map(move |&y| (pose(x), pose(y)))
            })
            .collect();
        let mut caches = vec![ManifoldCache::default(); pairs.len()];
        let contacts = |caches: &mut [ManifoldCache]| -> usize {
            pairs
                .iter()
                .zip(caches)
                .map(|((pa, pb), cache)| {
                    // As the World asks: within the pair's contact tolerance.
                    let within = advance::contact_tolerance(
                        (block.radius(), pa.translation),
                        (block.radius(), pb.translation),
                    );
                    manifold::polytopes(&block, pa, &block, pb, within, cache)
                        .map_or(0, |m| m.points.len())
                })
                .sum()
        };
        let parry_contacts = || -> usize {
            let mut m = ContactManifold::<(), ()>::new();
            pairs
                .iter()
                .map(|(pa, pb)| {
                    let pos12 = test_common::parry_pose(pa).inv_mul(&test_common::parry_pose(pb));
                    m.clear();
                    contact_manifold_cuboid_cuboid(&pos12, &half, &half, 0.0, &mut m);
                    m.points.len()
                })
                .sum()
        };
        eprintln!(
            "manifold_crate_block {name}: {} pairs, proxima {} points, parry3d-f64 {} points",
            pairs.len(),
            contacts(&mut caches),
            parry_contacts()
        );
        let mut group = c.benchmark_group(format!("manifold_crate_block_{name}"));
        group.bench_function("proxima", |b| b.iter(|| contacts(&mut caches)));
        group.bench_function("parry3d_f64_cuboid_cuboid", |b| b.iter(parry_contacts));
        group.finish();
    }

    let mut rng = Rng::new(7);
    let (a, h) = (
        random_hull(&mut rng, 24, 0.5).unwrap(),
        random_hull(&mut rng, 24, 0.5).unwrap(),
    );
    let (ga, gh) = (test_common::to_parry(&a), test_common::to_parry(&h));
    let touching = (0..FRAMES)
        .filter(|&k| {
            let (pa, pb) = tumbling(k);
            manifold::polytopes(&a, &pa, &h, &pb, 0.0, &mut ManifoldCache::default()).is_some()
        })
        .count();
    eprintln!("manifold_hull_hull: {touching} of {FRAMES} frames in contact");
    let mut group = c.benchmark_group("manifold_hull_hull");
    group.bench_function("proxima", |b| {
        b.iter(|| {
            let mut cache = ManifoldCache::default();
            let mut points = 0;
            for k in 0..FRAMES {
                let (pa, pb) = tumbling(k);
                if let Some(m) = manifold::polytopes(&a, &pa, &h, &pb, 0.0, &mut cache) {
                    points += m.points.len();
                }
            }
            points
        });
    });
    group.bench_function("parry3d_f64_contact_one_point", |b| {
        b.iter(|| {
            let mut found = 0;
            for k in 0..FRAMES {
                let (pa, pb) = tumbling(k);
                let c = parry3d_f64::query::contact(
                    &test_common::parry_pose(&pa),
                    &ga,
                    &test_common::parry_pose(&pb),
                    &gh,
                    0.0,
                )
                .unwrap();
                found += usize::from(c.is_some());
            }
            found
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion(3);
    targets = bench
}
criterion_main!(benches);
