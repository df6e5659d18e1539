//! The World API: every pair within the speculative distance reported with its manifold,
//! against brute force over all pairs; impacts against all-pairs advancement; the GPU and
//! the CPU twins give the same report; bad input is a named error.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::advance;
use proxima::exact::rounded::{self, Contact};
use proxima::geometry::generators::{cuboid, random_hull, torus};
use proxima::geometry::rounded::Rounded;
use proxima::geometry::{ConvexPolytope, brute};
use proxima::narrowphase::ExactShape;
use proxima::rng::Rng;
use proxima::shape::ShapeGeometry;
use proxima::world::{BodyId, FrameReport, ShapeId, Velocity, World};
use proxima::{DeviceChoice, Error, Pipeline};

fn cpu_world() -> World {
    let mut w = World::on(Pipeline::cpu());
    w.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
    ));
    w
}

/// A floor slab 10 × 10 × 1, its shape registered and its body placed with its top face
/// at height `top`.
fn add_floor(world: &mut World, top: f64) -> BodyId {
    let floor = world
        .add_convex(cuboid(DVec3::new(5.0, 5.0, 0.5)).unwrap())
        .unwrap();
    world
        .add_body(
            floor,
            Pose::new(DVec3::new(0.0, 0.0, top - 0.5), DQuat::IDENTITY),
        )
        .unwrap()
}

/// The exact distance of two bodies by brute force: closest pair of every piece pair
/// (trees), the rounded closed forms, or enumeration over feature pairs.
fn brute_distance(a: &ExactShape, pa: &Pose, b: &ExactShape, pb: &Pose) -> f64 {
    let pieces = |s: &ExactShape| -> Vec<Arc<ConvexPolytope>> {
        match s {
            ExactShape::Convex(p) => vec![p.clone()],
            ExactShape::Tree(t) => t.pieces().cloned().collect(),
            ExactShape::Rounded(_) => Vec::new(),
        }
    };
    match (a, b) {
        (ExactShape::Rounded(_), _) | (_, ExactShape::Rounded(_)) => {
            let round = |s: &ExactShape| -> Vec<Rounded> {
                match s {
                    ExactShape::Rounded(r) => vec![(**r).clone()],
                    _ => pieces(s).into_iter().map(rounded::plain).collect(),
                }
            };
            let mut best = f64::INFINITY;
            for x in round(a) {
                for y in round(b) {
                    let d = rounded::distance(&x, pa, &y, pb);
                    best = best.min(if d.contact == Contact::Separated {
                        d.distance
                    } else {
                        0.0
                    });
                }
            }
            best
        }
        _ => {
            let mut best = f64::INFINITY;
            for x in pieces(a) {
                for y in pieces(b) {
                    let d = if proxima::exact::sat::intersects(&x, pa, &y, pb) {
                        0.0
                    } else {
                        brute::polytope_closest_pair(&x, pa, &y, pb).distance
                    };
                    best = best.min(d);
                }
            }
            best
        }
    }
}

/// A mixed crowd: hulls, boxes, spheres, capsules and a torus, packed so that many touch.
fn mixed_world(world: &mut World, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut shapes: Vec<ShapeId> = Vec::new();
    for k in 0..3 {
        shapes.push(
            world
                .add_convex(random_hull(&mut rng, 8 + 6 * k, 0.5).unwrap())
                .unwrap(),
        );
    }
    shapes.push(
        world
            .add_convex(cuboid(DVec3::new(0.6, 0.1, 0.4)).unwrap())
            .unwrap(),
    );
    for r in [
        Rounded::sphere(0.35).unwrap(),
        Rounded::capsule(0.4, 0.2).unwrap(),
    ] {
        shapes.push(
            world
                .add_shape(&ShapeGeometry::Rounded(Arc::new(r)), &mut |_| {})
                .unwrap(),
        );
    }
    let ring = torus(0.6, 0.2, 16, 8).unwrap();
    shapes.push(
        world
            .add_shape(&ShapeGeometry::Mesh(Arc::new(ring)), &mut |_| {})
            .unwrap(),
    );
    let side = (n as f64 * 1.2).cbrt();
    for _ in 0..n {
        let shape = shapes[rng.below(shapes.len() as u64) as usize];
        let pose = Pose::new(
            rng.point_in(DVec3::ZERO, DVec3::splat(side)),
            rng.rotation(),
        );
        world.add_body(shape, pose).unwrap();
    }
}

#[test]
fn every_pair_within_the_speculative_distance_has_a_manifold() {
    let mut world = cpu_world();
    mixed_world(&mut world, 400, 5);
    let speculative = 0.05;
    world.set_speculative(speculative).unwrap();
    let report = world.step(0.0).unwrap();
    assert_eq!(report.proved_apart, 0, "no depth stage, nothing skipped");
    check_near_pairs(&world, &report, speculative);
}

/// Brute force over all pairs: every pair within `speculative` has a manifold and none
/// farther (with a band either side where rounding may decide).
fn check_near_pairs(world: &World, report: &FrameReport, speculative: f64) {
    let found: BTreeSet<[u32; 2]> = report.contacts.iter().map(|c| c.bodies).collect();
    let (bodies, shapes) = (world.bodies(), world.shapes());
    let (mut near, mut checked) = (0, 0);
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let (a, b) = (&bodies[i], &bodies[j]);
            if a.pose.translation.distance(b.pose.translation) > 2.5 {
                continue;
            }
            checked += 1;
            let d = brute_distance(
                &shapes[a.shape as usize],
                &a.pose,
                &shapes[b.shape as usize],
                &b.pose,
            );
            let pair = [i as u32, j as u32];
            if d <= speculative - 1e-9 {
                near += 1;
                assert!(found.contains(&pair), "pair {pair:?} at {d} has no contact");
            } else if d > speculative + 1e-9 {
                assert!(!found.contains(&pair), "pair {pair:?} at {d} has a contact");
            }
        }
    }
    assert!(near > 100 && checked > near, "{near} near of {checked}");
    for c in &report.contacts {
        let m = &c.manifold;
        assert!(!m.points.is_empty() && m.points.len() <= 4);
        assert!(m.points.iter().all(|p| p.separation <= speculative + 1e-12));
        assert!(report.pairs.contains(&c.bodies));
    }
    // The profile names the exact stages.
    let stages: Vec<&str> = report.profile.stages.iter().map(|s| s.name).collect();
    assert!(stages.contains(&"contacts"), "{stages:?}");
}

/// The sampled depth estimate as a frame stage: the pairs it proves apart skip the exact
/// stage, and no pair within the speculative distance is among them (brute force over all
/// pairs, on the CPU twins of every stage); on the GPU, straight from the broadphase, the
/// first frame's report equals a world's without the stage.
#[test]
fn the_depth_estimate_skips_only_pairs_that_are_apart() {
    let speculative = 0.05;
    let mut world = cpu_world();
    mixed_world(&mut world, 400, 5);
    // A point (a sphere of radius 0) enters the estimate's table as a tiny cube.
    let point = world
        .add_shape(
            &ShapeGeometry::Rounded(Arc::new(Rounded::sphere(0.0).unwrap())),
            &mut |_| {},
        )
        .unwrap();
    for k in 0..20 {
        let at = DVec3::new(0.37 * f64::from(k), 1.1, 2.3);
        world
            .add_body(point, Pose::new(at, DQuat::IDENTITY))
            .unwrap();
    }
    world.set_speculative(speculative).unwrap();
    world.set_depth_estimate(Some(8)).unwrap();
    let report = world.step(0.0).unwrap();
    assert!(
        report.proved_apart > 100 && report.proved_apart < report.pairs.len(),
        "{} of {} pairs proved apart",
        report.proved_apart,
        report.pairs.len()
    );
    check_near_pairs(&world, &report, speculative);
    assert!(world.set_depth_estimate(Some(0)).is_err());

    let Some(ctx) = common::gpu("the_depth_estimate_skips_only_pairs_that_are_apart") else {
        return;
    };
    let mut gpu = World::on_context(ctx);
    gpu.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
    ));
    let mut plain = cpu_world();
    for w in [&mut gpu, &mut plain] {
        mixed_world(w, 400, 5);
        w.set_speculative(speculative).unwrap();
    }
    gpu.set_depth_estimate(Some(8)).unwrap();
    let (g, p) = (gpu.step(0.0).unwrap(), plain.step(0.0).unwrap());
    assert!(g.proved_apart > 100, "{}", g.proved_apart);
    assert_eq!(g.pairs, p.pairs);
    assert_eq!(g.contacts, p.contacts);
    let stages: Vec<&str> = g.profile.stages.iter().map(|s| s.name).collect();
    assert!(stages.contains(&"depth"), "{stages:?}");
}

#[test]
fn stacked_crates_report_four_corners_each() {
    // With the depth estimate too: exact touches are never proved apart.
    for depth in [None, Some(16)] {
        let mut world = cpu_world();
        let floor = world
            .add_convex(cuboid(DVec3::new(5.0, 5.0, 0.5)).unwrap())
            .unwrap();
        let crate_ = world
            .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
            .unwrap();
        world.add_body(floor, Pose::IDENTITY).unwrap();
        // Three crates stacked exactly (touching, dyadic coordinates), each turned a little.
        for k in 0..3 {
            let z = 1.0 + f64::from(k);
            let turn = DQuat::from_rotation_z(0.25 * f64::from(k));
            world
                .add_body(crate_, Pose::new(DVec3::new(0.0, 0.0, z), turn))
                .unwrap();
        }
        world.set_depth_estimate(depth).unwrap();
        let report = world.step(0.0).unwrap();
        assert_eq!(report.proved_apart, 0, "{depth:?}");
        let pairs: Vec<[u32; 2]> = report.contacts.iter().map(|c| c.bodies).collect();
        assert_eq!(pairs, vec![[0, 1], [1, 2], [2, 3]], "{report:?}");
        for c in &report.contacts {
            assert_eq!(c.manifold.points.len(), 4, "{c:?}");
            assert!(c.manifold.normal.distance(DVec3::Z) < 1e-12);
            assert!(c.manifold.points.iter().all(|p| p.separation.abs() < 1e-12));
        }
    }
}

/// Crates stacked to touch on a decimal grid, small, unit and large, near and far from the
/// origin: the grid's rounding leaves each pair 1e-17 of its size apart or overlapping,
/// and every pair is in contact at speculative distance 0 (a gap within the pair's contact
/// tolerance is a contact, as it is a hit for conservative advancement); lifted by a
/// thousandth of a crate each, none is.
#[test]
fn crates_stacked_on_a_decimal_grid_are_all_in_contact() {
    for (size, far) in [(1e-4, 0.0), (0.1, 0.0), (0.1, 1e3), (1e3, 1e6)] {
        for lift in [0.0, 1e-3 * size] {
            let mut world = cpu_world();
            let floor = world
                .add_convex(cuboid(DVec3::new(5.0, 5.0, 0.5) * size).unwrap())
                .unwrap();
            let crate_ = world
                .add_convex(cuboid(DVec3::splat(0.5 * size)).unwrap())
                .unwrap();
            let at = |z: f64| Pose::new(DVec3::new(far, -far, far + z), DQuat::IDENTITY);
            world.add_body(floor, at(-0.5 * size)).unwrap();
            for k in 0..12 {
                let z = (0.5 + f64::from(k)) * size + f64::from(k + 1) * lift;
                world.add_body(crate_, at(z)).unwrap();
            }
            let report = world.step(0.0).unwrap();
            let pairs: Vec<[u32; 2]> = report.contacts.iter().map(|c| c.bodies).collect();
            let case = format!("crates of {size} at {far}, lifted {lift}");
            if lift > 0.0 {
                assert!(pairs.is_empty(), "{case}: {pairs:?}");
                continue;
            }
            let stacked: Vec<[u32; 2]> = (0..12).map(|k| [k, k + 1]).collect();
            assert_eq!(pairs, stacked, "{case}");
            let (bodies, shapes) = (world.bodies(), world.shapes());
            for c in &report.contacts {
                let [a, b] = c.bodies.map(|i| &bodies[i as usize]);
                let tolerance = advance::contact_tolerance(
                    (shapes[a.shape as usize].reach(), a.pose.translation),
                    (shapes[b.shape as usize].reach(), b.pose.translation),
                );
                // The exact gap of the f64 poses: the grid's rounding, far under tolerance.
                let gap = (b.pose.translation.z - 0.5 * size) - (a.pose.translation.z + 0.5 * size);
                assert!(
                    gap.abs() < tolerance / 100.0,
                    "{case}: {gap} against {tolerance}"
                );
                assert_eq!(c.manifold.points.len(), 4, "{case}: {c:?}");
                assert!(
                    c.manifold.normal.distance(DVec3::Z) < 1e-12,
                    "{case}: {c:?}"
                );
                let seps = c.manifold.points.iter().map(|p| p.separation);
                assert!(seps.clone().all(|s| s.abs() <= tolerance), "{case}: {c:?}");
            }
        }
    }
}

/// A block of 6 × 6 × 6 crates on a grid, each touching its 26 neighbours at a face, an
/// edge or a corner (dyadic sizes touch exactly, decimal ones within the grid's rounding,
/// some quarter-turned): every neighbour pair is a contact, with 4, 2 or 1 points as it
/// shares a face, an edge or a corner, and a normal along which the crates' extents meet
/// (their gap along it, by their corners, within rounding of 0) pointing from the first
/// crate to the second.
#[test]
fn a_block_of_touching_crates_has_every_neighbour_in_contact() {
    for size in [1.0, 0.1, 0.3] {
        let mut world = cpu_world();
        let crate_ = world
            .add_convex(cuboid(DVec3::splat(0.5 * size)).unwrap())
            .unwrap();
        let n: i32 = 6;
        let mut cells: Vec<[i32; 3]> = Vec::new();
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let cell = [i, j, k];
                    let p = DVec3::new(f64::from(i), f64::from(j), f64::from(k)) * size;
                    let turn =
                        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2 * f64::from(k % 2));
                    world.add_body(crate_, Pose::new(p, turn)).unwrap();
                    cells.push(cell);
                }
            }
        }
        let report = world.step(0.0).unwrap();
        let mut want = 0;
        for x in 0..cells.len() {
            for y in x + 1..cells.len() {
                let d = (0..3).map(|c| (cells[x][c] - cells[y][c]).abs());
                want += usize::from(d.clone().max() == Some(1));
            }
        }
        assert_eq!(report.contacts.len(), want, "crates of {size}");
        let bodies = world.bodies();
        let corners = |b: u32| -> Vec<DVec3> {
            let pose = bodies[b as usize].pose;
            (0..8)
                .map(|m| {
                    let c = DVec3::new(
                        f64::from(m & 1) - 0.5,
                        f64::from((m >> 1) & 1) - 0.5,
                        f64::from((m >> 2) & 1) - 0.5,
                    );
                    pose.transform_point(c * size)
                })
                .collect()
        };
        for c in &report.contacts {
            let [x, y] = c.bodies;
            let shared = (0..3)
                .filter(|&k| cells[x as usize][k] == cells[y as usize][k])
                .count();
            let points = [1, 2, 4][shared];
            assert_eq!(c.manifold.points.len(), points, "crates of {size}: {c:?}");
            let m = c.manifold.normal;
            assert!((m.length() - 1.0).abs() < 1e-12, "crates of {size}: {c:?}");
            let top_a = corners(x).iter().map(|p| p.dot(m)).fold(f64::MIN, f64::max);
            let low_b = corners(y).iter().map(|p| p.dot(m)).fold(f64::MAX, f64::min);
            assert!(
                (low_b - top_a).abs() < 1e-12 * size,
                "crates of {size}: {c:?}"
            );
            let (pa, pb) = (bodies[x as usize].pose, bodies[y as usize].pose);
            assert!((pb.translation - pa.translation).dot(m) > 0.0, "{c:?}");
        }
    }
}

/// Bodies removed from a world that has run (its pairs holding warm starts) leave the
/// world a fresh one built from the bodies left would be: the same pairs, contacts and
/// impacts, on the CPU twins and on the GPU. The last body takes a removed body's id, and
/// the answer names it.
#[test]
fn removing_bodies_leaves_the_world_a_fresh_one_would_be() {
    removing_bodies_on(cpu_world(), "cpu twins");
    if let Some(ctx) = common::gpu("removing_bodies_leaves_the_world_a_fresh_one_would_be") {
        let mut gpu = World::on_context(ctx);
        gpu.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
        ));
        removing_bodies_on(gpu, "gpu");
    }
}

fn removing_bodies_on(mut world: World, label: &str) {
    let (n, seed, dt) = (300, 11, 1.0 / 30.0);
    mixed_world(&mut world, n, seed);
    world.set_speculative(0.05).unwrap();
    let mut rng = Rng::new(99);
    let velocities: Vec<Velocity> = (0..n)
        .map(|_| Velocity {
            linear: rng.unit_vector() * 2.0,
            angular: rng.unit_vector() * 3.0,
        })
        .collect();
    for (i, v) in velocities.iter().enumerate() {
        world.set_velocity(BodyId(i as u32), *v).unwrap();
    }
    for _ in 0..2 {
        world.step(dt).unwrap();
        world.advance(dt).unwrap();
    }
    // Which original body each id holds, removed as the world removes.
    let mut model: Vec<usize> = (0..n).collect();
    let original: Vec<(u32, Pose)> = world.bodies().iter().map(|b| (b.shape, b.pose)).collect();
    for _ in 0..60 {
        let i = rng.below(model.len() as u64) as usize;
        let moved = world.remove_body(BodyId(i as u32)).unwrap();
        let last = model.len() - 1;
        model.swap_remove(i);
        assert_eq!(moved, (i != last).then_some(BodyId(last as u32)), "{label}");
    }
    assert!(world.remove_body(BodyId(model.len() as u32)).is_err());
    assert_eq!(world.len(), model.len());
    let mut fresh = cpu_world();
    mixed_world(&mut fresh, 0, seed);
    fresh.set_speculative(0.05).unwrap();
    for (i, &o) in model.iter().enumerate() {
        let (shape, pose) = original[o];
        assert_eq!(world.bodies()[i].shape, shape, "{label}");
        assert_eq!(world.bodies()[i].pose, pose, "{label}");
        let b = fresh.add_body(ShapeId(shape), pose).unwrap();
        fresh.set_velocity(b, velocities[o]).unwrap();
    }
    let (ours, want) = (world.step(dt).unwrap(), fresh.step(dt).unwrap());
    assert_eq!(ours.pairs, want.pairs, "{label}");
    assert!(want.contacts.len() > 30, "{}", want.contacts.len());
    assert_eq!(ours.contacts.len(), want.contacts.len(), "{label}");
    for (c, w) in ours.contacts.iter().zip(&want.contacts) {
        assert_eq!((c.bodies, c.pieces), (w.bodies, w.pieces), "{label}");
        let (s, t) = (c.manifold.min_separation(), w.manifold.min_separation());
        assert!((s - t).abs() < 1e-9, "{label} {:?}: {s} vs {t}", c.bodies);
        assert!(
            c.manifold.normal.distance(w.manifold.normal) < 1e-6,
            "{label} {:?}",
            c.bodies
        );
    }
    assert!(!want.impacts.is_empty());
    assert_eq!(ours.impacts.len(), want.impacts.len(), "{label}");
    for (c, w) in ours.impacts.iter().zip(&want.impacts) {
        assert_eq!(c.bodies, w.bodies, "{label}");
        assert!((c.time - w.time).abs() < 1e-9, "{label} {:?}", c.bodies);
    }
}

/// A crate touching a floor at the start is an impact only where it can close on it:
/// sliding, turning about the floor's normal, lifting off or standing still it stays in
/// its contact (the exact depth along the motion, sampled, never passes the tolerance),
/// pressing in or tipping it is an impact at 0. A ball rolling on the floor is the same,
/// and so is a torus lying on it (its pieces touching the floor checked one by one).
#[test]
fn a_crate_sliding_on_a_floor_is_no_impact() {
    use proxima::geometry::rounded::Rounded;
    let dt = 1.0 / 60.0;
    let slide = DVec3::new(3.0, 1.0, 0.0);
    // (label, height above touching, linear, angular, an impact at 0 expected)
    let cases = [
        ("standing still", 0.0, DVec3::ZERO, DVec3::ZERO, false),
        ("sliding", 0.0, slide, DVec3::ZERO, false),
        (
            "sliding and turning about z",
            0.0,
            slide,
            DVec3::Z * 2.0,
            false,
        ),
        ("lifting off", 0.0, DVec3::Z, DVec3::ZERO, false),
        ("a hair above, sliding", 1e-12, slide, DVec3::ZERO, false),
        ("pressing in", 0.0, -DVec3::Z, DVec3::ZERO, true),
        ("tipping", 0.0, slide, DVec3::X * 2.0, true),
    ];
    for kind in ["crate", "ball", "torus"] {
        for (label, above, linear, angular, hit) in cases {
            let mut world = cpu_world();
            let body = match kind {
                "crate" => world
                    .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
                    .unwrap(),
                "ball" => {
                    let r = Rounded::sphere(0.5).unwrap();
                    world
                        .add_shape(&ShapeGeometry::Rounded(Arc::new(r)), &mut |_| {})
                        .unwrap()
                }
                _ => {
                    let ring = torus(0.6, 0.2, 16, 8).unwrap();
                    world
                        .add_shape(&ShapeGeometry::Mesh(Arc::new(ring)), &mut |_| {})
                        .unwrap()
                }
            };
            // The body's lowest point, below its origin: its pieces' for the torus.
            let low = match &world.shapes()[body.0 as usize] {
                ExactShape::Tree(t) => t
                    .pieces()
                    .flat_map(|p| p.vertices().iter().map(|v| v.z))
                    .fold(f64::INFINITY, f64::min),
                _ => -0.5,
            };
            add_floor(&mut world, 0.5);
            // Touching, not overlapping by the rounding of `0.5 − low`.
            let mut z = 0.5 - low;
            while z + low < 0.5 {
                z = z.next_up();
            }
            let pose = Pose::new(DVec3::new(0.0, 0.0, z + above), DQuat::IDENTITY);
            let b = world.add_body(body, pose).unwrap();
            world.set_velocity(b, Velocity { linear, angular }).unwrap();
            let report = world.step(dt).unwrap();
            // A ball spinning about any axis through its centre moves no point of its
            // support: tipping it is no impact (a_ball_spinning_on_a_floor_is_no_impact).
            let hit = hit && !(kind == "ball" && label == "tipping");
            let label = format!("{kind} {label}");
            assert!(!report.contacts.is_empty(), "{label}");
            let at_zero = report.impacts.iter().any(|i| i.time == 0.0);
            assert_eq!(at_zero, hit, "{label}: {:?}", report.impacts);
            if hit {
                continue;
            }
            assert!(report.impacts.is_empty(), "{label}: {:?}", report.impacts);
            // Oracle: the exact depth along the motion stays within the tolerance.
            let motion = world.motions(dt).unwrap()[1];
            let shapes = world.shapes();
            let floor_pose = Pose::IDENTITY;
            for k in 0..=16 {
                let at = motion.at(f64::from(k) / 16.0);
                let depth = -brute_distance_signed(&shapes[0], &at, &shapes[1], &floor_pose);
                assert!(depth <= 1e-8, "{label}: {depth} deep at {k}/16");
            }
        }
    }
    // Above the floor and falling onto it: met later in the step, not at 0.
    let mut world = cpu_world();
    let crate_ = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    add_floor(&mut world, 0.5);
    let b = world
        .add_body(
            crate_,
            Pose::new(DVec3::new(0.0, 0.0, 1.01), DQuat::IDENTITY),
        )
        .unwrap();
    let falling = Velocity {
        linear: DVec3::new(1.0, 0.0, -1.2),
        angular: DVec3::ZERO,
    };
    world.set_velocity(b, falling).unwrap();
    let report = world.step(dt).unwrap();
    assert_eq!(report.impacts.len(), 1);
    // Never later than the truth, and short of it by at most the tolerance (1e-9 of the
    // bodies' size) over the closing speed.
    let (t, truth) = (report.impacts[0].time, 0.01 / 1.2);
    assert!(t <= truth && truth - t < 2e-8, "{t} against {truth}");
}

/// A rounded body's ball turns into itself: a ball resting on a floor and spinning about
/// any axis through its centre, or a capsule lying on it and spinning about its own axis,
/// moves no point of its support toward the floor, and is no impact (each was an impact
/// at 0, stopped for the frame); a capsule lying on the floor and turning about an axis
/// across it lifts one end and presses the other down, an impact at 0.
#[test]
fn a_ball_spinning_on_a_floor_is_no_impact() {
    let ball = Rounded::sphere(0.5).unwrap();
    let capsule = Rounded::capsule(1.0, 0.5).unwrap();
    // The capsule's axis (body z) along world x.
    let lying = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let cases = [
        (
            "ball about x",
            &ball,
            DQuat::IDENTITY,
            DVec3::X * 5.0,
            false,
        ),
        (
            "ball about a tilted axis",
            &ball,
            DQuat::IDENTITY,
            DVec3::new(3.0, -2.0, 4.0),
            false,
        ),
        (
            "capsule about its axis",
            &capsule,
            lying,
            DVec3::X * 5.0,
            false,
        ),
        ("capsule about y", &capsule, lying, DVec3::Y * 5.0, true),
    ];
    for (label, body, turn, spin, hit) in cases {
        let mut world = cpu_world();
        let shape = world
            .add_shape(&ShapeGeometry::Rounded(Arc::new(body.clone())), &mut |_| {})
            .unwrap();
        add_floor(&mut world, 0.0);
        let b = world
            .add_body(shape, Pose::new(DVec3::new(0.0, 0.0, 0.5), turn))
            .unwrap();
        world
            .set_velocity(
                b,
                Velocity {
                    linear: DVec3::ZERO,
                    angular: spin,
                },
            )
            .unwrap();
        let report = world.step(1.0 / 60.0).unwrap();
        assert_eq!(report.contacts.len(), 1, "{label}");
        let at_zero = report.impacts.iter().any(|i| i.time == 0.0);
        assert_eq!(at_zero, hit, "{label}: {:?}", report.impacts);
    }
}

/// A decomposed mesh is bounded by its pieces, which reach past its triangles (a cut piece
/// is scaled to hold what it dropped): a torus resting on a floor by its pieces' lowest
/// point is in contact with it, and one falling onto it meets it at the time its pieces
/// do. (Its box held only the triangles: no pair with the floor, and a falling torus sank
/// a tenth of its size into it before the frames noticed.)
#[test]
fn a_torus_is_bounded_by_its_pieces() {
    let mut world = cpu_world();
    let ring = torus(1.0, 0.25, 32, 16).unwrap();
    let body = world
        .add_shape(&ShapeGeometry::Mesh(Arc::new(ring.clone())), &mut |_| {})
        .unwrap();
    let low = match &world.shapes()[body.0 as usize] {
        ExactShape::Tree(t) => t
            .pieces()
            .flat_map(|p| p.vertices().iter().map(|v| v.z))
            .fold(f64::INFINITY, f64::min),
        _ => unreachable!("a torus is decomposed"),
    };
    let mesh_low = ring
        .vertices
        .iter()
        .map(|v| v.z)
        .fold(f64::INFINITY, f64::min);
    assert!(
        low < mesh_low,
        "the pieces reach below the mesh: {low} against {mesh_low}"
    );
    add_floor(&mut world, 0.0);
    let t = world
        .add_body(body, Pose::new(DVec3::new(0.0, 0.0, -low), DQuat::IDENTITY))
        .unwrap();
    let report = world.step(0.0).unwrap();
    assert!(
        report.contacts.iter().any(|c| c.bodies == [0, 1]),
        "resting: {:?}",
        report.pairs
    );
    // Falling from 0.3 above at 6 a second: met at 0.05 s, a frame of 1/60 s from 0.29.
    world
        .set_pose(
            t,
            Pose::new(DVec3::new(0.0, 0.0, 0.29 - low), DQuat::IDENTITY),
        )
        .unwrap();
    let fall = Velocity {
        linear: DVec3::new(0.0, 0.0, -18.0),
        angular: DVec3::ZERO,
    };
    world.set_velocity(t, fall).unwrap();
    let report = world.step(1.0 / 60.0).unwrap();
    let [i] = report.impacts.as_slice() else {
        panic!("falling: {:?}", report.impacts);
    };
    let truth = 0.29 / 18.0;
    assert!(
        i.time <= truth && truth - i.time < 1e-9,
        "{i:?} against {truth}"
    );
}

/// A crate sliding across the seam between two tiles laid side by side meets the second
/// tile's edge there, where the tile's side and its top both separate them: along the top
/// it does not close, so it is no impact (it was stopped at every seam). Onto a tile
/// raised by a thousandth it is an impact, at the time it reaches the step.
#[test]
fn a_crate_slides_across_a_seam_but_not_onto_a_step() {
    for (raised, rotated) in [(0.0, false), (0.0, true), (1e-3, false)] {
        let mut world = cpu_world();
        let tile = world
            .add_convex(cuboid(DVec3::new(1.0, 1.0, 0.5)).unwrap())
            .unwrap();
        let crate_ = world
            .add_convex(cuboid(DVec3::splat(0.25)).unwrap())
            .unwrap();
        // The second tile turned a quarter about z has other features at the seam.
        let turn = if rotated {
            DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2)
        } else {
            DQuat::IDENTITY
        };
        world
            .add_body(tile, Pose::new(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY))
            .unwrap();
        world
            .add_body(tile, Pose::new(DVec3::new(2.0, 0.0, -0.5 + raised), turn))
            .unwrap();
        let b = world
            .add_body(
                crate_,
                Pose::new(DVec3::new(0.7, 0.0, 0.25), DQuat::IDENTITY),
            )
            .unwrap();
        let slide = Velocity {
            linear: DVec3::new(6.0, 0.0, 0.0),
            angular: DVec3::ZERO,
        };
        world.set_velocity(b, slide).unwrap();
        let report = world.step(1.0 / 60.0).unwrap();
        let label = format!("raised {raised}, turned {rotated}");
        if raised == 0.0 {
            assert!(report.impacts.is_empty(), "{label}: {:?}", report.impacts);
        } else {
            let [i] = report.impacts.as_slice() else {
                panic!("{label}: {:?}", report.impacts);
            };
            // The crate's front reaches the step 0.05 ahead at 6 a second.
            let truth = 0.05 / 6.0;
            assert_eq!(i.bodies, [1, 2], "{label}");
            assert!(i.time <= truth && truth - i.time < 1e-9, "{label}: {i:?}");
        }
    }
}

/// A ball sliding across the same seam meets the next tile's edge too: along the tile's
/// top it does not close, no impact (it was stopped and its velocity reflected, and it
/// drifted up off the floor); onto a tile raised by a thousandth it meets the step's edge
/// when its centre is √(r² − (r − 0.001)²) short of it.
#[test]
fn a_ball_slides_across_a_seam_but_not_onto_a_step() {
    let r = 0.25;
    for raised in [0.0, 1e-3] {
        let mut world = cpu_world();
        let tile = world
            .add_convex(cuboid(DVec3::new(1.0, 1.0, 0.5)).unwrap())
            .unwrap();
        let ball = world
            .add_shape(
                &ShapeGeometry::Rounded(Arc::new(Rounded::sphere(r).unwrap())),
                &mut |_| {},
            )
            .unwrap();
        world
            .add_body(tile, Pose::new(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY))
            .unwrap();
        world
            .add_body(
                tile,
                Pose::new(DVec3::new(2.0, 0.0, -0.5 + raised), DQuat::IDENTITY),
            )
            .unwrap();
        let b = world
            .add_body(ball, Pose::new(DVec3::new(0.95, 0.0, r), DQuat::IDENTITY))
            .unwrap();
        let slide = Velocity {
            linear: DVec3::new(6.0, 0.0, 0.0),
            angular: DVec3::ZERO,
        };
        world.set_velocity(b, slide).unwrap();
        let report = world.step(1.0 / 60.0).unwrap();
        if raised == 0.0 {
            assert!(report.impacts.is_empty(), "{:?}", report.impacts);
        } else {
            let [i] = report.impacts.as_slice() else {
                panic!("{:?}", report.impacts);
            };
            let short = (r * r - (r - raised) * (r - raised)).sqrt();
            let truth = (1.0 - short - 0.95) / 6.0;
            assert_eq!(i.bodies, [1, 2]);
            // Early by at most the tolerance (1e-9 of the size) over the closing speed
            // along the normal (6 × 0.089).
            assert!(
                i.time <= truth && truth - i.time < 1e-8,
                "{i:?} against {truth}"
            );
        }
    }
}

/// Crates touching face to face far from the world origin, where their gap is the rounding
/// of their placed corners (1e-7 at 1e9): the manifold has the face's four points and its
/// normal, and the time of impact of a crate pressed into another is 0 along that normal.
/// The closest points' difference there points anywhere (before, every such touch took
/// +x: the manifold had one point, and a crate pressed down onto a fixed one at 1e7 was
/// let through and sank into it by a sixth of its height in the next frame).
#[test]
fn crates_touching_far_from_the_origin_keep_their_face() {
    use proxima::exact::advance::{ToiInput, ToiState, time_of_impact};
    use proxima::motion::ScrewMotion;
    let axes = [
        DVec3::X,
        DVec3::NEG_X,
        DVec3::Y,
        DVec3::NEG_Y,
        DVec3::Z,
        DVec3::NEG_Z,
    ];
    for far in [1e6, 1e7, 1e9] {
        for half in [0.35, 0.05, 5e-5] {
            let cube = cuboid(DVec3::splat(half)).unwrap();
            for axis in axes {
                let at = Pose::new(
                    DVec3::new(far + 0.1, -far / 3.0, far / 7.0),
                    DQuat::IDENTITY,
                );
                let to = Pose::new(at.translation + axis * (2.0 * half), DQuat::IDENTITY);
                let label = format!("{half} crates at {far} along {axis}");
                let mut world = cpu_world();
                let crate_ = world.add_convex(cube.clone()).unwrap();
                world.add_body(crate_, at).unwrap();
                world.add_body(crate_, to).unwrap();
                let report = world.step(0.0).unwrap();
                let [c] = report.contacts.as_slice() else {
                    panic!("{label}: {:?}", report.contacts);
                };
                assert_eq!(c.manifold.points.len(), 4, "{label}: {c:?}");
                assert!(c.manifold.normal.dot(axis) > 0.999, "{label}: {c:?}");
                // B pressed into A by a fifth of its size over the step.
                let end = Pose::new(to.translation - axis * (0.4 * half), DQuat::IDENTITY);
                let still = ScrewMotion::between(at, at).unwrap();
                let pressed = ScrewMotion::between(to, end).unwrap();
                let out = time_of_impact(&ToiInput::new(&cube, still, &cube, pressed));
                assert!(
                    matches!(out.state, ToiState::Hit | ToiState::Overlapping) && out.toi == 0.0,
                    "{label}: {out:?}"
                );
                assert!(out.normal.dot(axis) > 0.999, "{label}: {out:?}");
            }
        }
    }
}

/// Signed distance of a body to a convex one: the distance apart, minus the exact depth
/// where they overlap.
fn brute_distance_signed(a: &ExactShape, pa: &Pose, b: &ExactShape, pb: &Pose) -> f64 {
    let d = brute_distance(a, pa, b, pb);
    if d > 0.0 {
        return d;
    }
    let ExactShape::Convex(q) = b else {
        unreachable!("the floor is a box")
    };
    match a {
        ExactShape::Convex(p) => {
            -proxima::exact::depth::walk(&proxima::exact::depth::DepthInput::new(p, *pa, q, *pb))
                .map_or(0.0, |x| x.depth)
        }
        ExactShape::Rounded(r) => {
            -rounded::penetration(r, pa, &rounded::plain(q.clone()), pb).map_or(0.0, |x| x.depth)
        }
        ExactShape::Tree(t) => -t
            .pieces()
            .filter_map(|p| {
                proxima::exact::depth::walk(&proxima::exact::depth::DepthInput::new(p, *pa, q, *pb))
            })
            .map(|x| x.depth)
            .fold(0.0, f64::max),
    }
}

#[test]
fn impacts_equal_all_pairs_advancement() {
    let (shapes, moving) = common::moving_crowd(600, 0x1a7);
    let mut world = cpu_world();
    let ids: Vec<ShapeId> = shapes
        .iter()
        .map(|s| world.add_convex(s.clone()).unwrap())
        .collect();
    let dt = 0.5;
    for m in &moving {
        let start = m.motion.start();
        let b = world.add_body(ids[m.shape as usize], start).unwrap();
        world
            .set_velocity(
                b,
                Velocity {
                    linear: m.motion.linear() / dt,
                    angular: m.motion.angular() / dt,
                },
            )
            .unwrap();
    }
    let report = world.step(dt).unwrap();
    let truth = common::all_pairs_first_contacts(&shapes, &moving);
    let hits: BTreeSet<[u32; 2]> = truth
        .iter()
        .filter(|(_, _, o)| matches!(o.state, advance::ToiState::Hit | advance::ToiState::Capped))
        .map(|&(a, b, _)| [a, b])
        .collect();
    let ours: BTreeSet<[u32; 2]> = report.impacts.iter().map(|i| i.bodies).collect();
    assert!(hits.len() > 20, "{}", hits.len());
    assert_eq!(ours, hits);
    for w in report.impacts.windows(2) {
        assert!(w[0].time <= w[1].time, "earliest first");
    }
    for i in &report.impacts {
        let (_, _, o) = truth
            .iter()
            .find(|(a, b, _)| [*a, *b] == i.bodies)
            .expect("in truth");
        // Velocities round-trip through `dt`: the motions agree to rounding.
        assert!(
            (i.output.toi - o.toi).abs() < 1e-6,
            "{} vs {}",
            i.output.toi,
            o.toi
        );
        assert!((i.time - i.output.toi * dt).abs() < 1e-15);
    }
    // Advancing by the step moves each body to its motion's end.
    world.advance(dt).unwrap();
    for (b, m) in world.bodies().iter().zip(&moving) {
        assert!(b.pose.translation.distance(m.motion.end().translation) < 1e-9);
    }
}

/// The contacts' separations prove pairs apart over a step only at the poses they were
/// measured at: two cubes 2 apart, measured by a frame (a speculative distance that large
/// makes them a contact pair), then one set 0.2 from the other and sent toward it at 1 a
/// second: the impact at 0.2 s is found (2 less the approach of 1 would have proved the
/// pair apart). Asked before any pose changes, the pair apart by 2 has no impact. A new
/// velocity at the same poses makes the body's motion again, for impacts and the advance.
#[test]
fn separations_hold_only_for_the_poses_they_were_measured_at() {
    let mut world = cpu_world();
    let cube = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    world.add_body(cube, Pose::IDENTITY).unwrap();
    let b = world
        .add_body(cube, Pose::new(DVec3::new(3.0, 0.0, 0.0), DQuat::IDENTITY))
        .unwrap();
    world.set_speculative(3.0).unwrap();
    let report = world.step(0.0).unwrap();
    assert_eq!(report.contacts.len(), 1, "{report:?}");
    assert!((report.contacts[0].manifold.min_separation() - 2.0).abs() < 1e-12);
    let toward = Velocity {
        linear: DVec3::new(-1.0, 0.0, 0.0),
        angular: DVec3::ZERO,
    };
    world.set_velocity(b, toward).unwrap();
    assert!(world.impacts_among(1.0, &[[0, 1]]).unwrap().is_empty());
    world
        .set_pose(b, Pose::new(DVec3::new(1.2, 0.0, 0.0), DQuat::IDENTITY))
        .unwrap();
    let found = world.impacts_among(1.0, &[[0, 1]]).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!((found[0].time - 0.2).abs() < 1e-8, "{found:?}");
    // Twice as fast at the same poses: the motion is made again (the others are kept).
    let faster = Velocity {
        linear: DVec3::new(-2.0, 0.0, 0.0),
        angular: DVec3::ZERO,
    };
    world.set_velocity(b, faster).unwrap();
    let found = world.impacts_among(1.0, &[[0, 1]]).unwrap();
    assert!((found[0].time - 0.1).abs() < 1e-8, "{found:?}");
    world.advance(0.05).unwrap();
    let at = world.bodies()[1].pose.translation;
    assert!(at.distance(DVec3::new(1.1, 0.0, 0.0)) < 1e-12, "{at}");
}

#[test]
fn the_gpu_and_the_cpu_twins_give_the_same_report() {
    let Some(ctx) = common::gpu("the_gpu_and_the_cpu_twins_give_the_same_report") else {
        return;
    };
    let mut gpu = World::on_context(ctx);
    gpu.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
    ));
    let mut cpu = cpu_world();
    for w in [&mut gpu, &mut cpu] {
        mixed_world(w, 3000, 9);
        w.set_speculative(0.02).unwrap();
        // Velocities for impacts: the swept boxes' pairs come from the GPU broadphase.
        let mut rng = Rng::new(4);
        for i in 0..w.len() as u32 {
            let v = Velocity {
                linear: rng.unit_vector() * 3.0,
                angular: rng.unit_vector() * 2.0,
            };
            w.set_velocity(BodyId(i), v).unwrap();
        }
    }
    for frame in 0..2 {
        let (g, c) = (gpu.step(0.1).unwrap(), cpu.step(0.1).unwrap());
        assert_eq!(g.pairs, c.pairs, "frame {frame}");
        assert_eq!(g.contacts, c.contacts, "frame {frame}");
        assert!(!g.contacts.is_empty());
        assert!(!g.impacts.is_empty(), "frame {frame}");
        assert!(g.impacts == c.impacts, "frame {frame}: impacts differ");
        // Move everything a little for the next frame (warm starts on both sides).
        let poses: Vec<Pose> = gpu
            .bodies()
            .iter()
            .map(|b| {
                Pose::new(
                    b.pose.translation + DVec3::new(0.01, 0.0, 0.0),
                    b.pose.rotation,
                )
            })
            .collect();
        gpu.set_poses(&poses).unwrap();
        cpu.set_poses(&poses).unwrap();
    }
}

#[test]
fn bad_input_is_a_named_error_and_changes_nothing() {
    let mut world = cpu_world();
    let shape = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let a = world.add_body(shape, Pose::IDENTITY).unwrap();
    let b = world
        .add_body(shape, Pose::new(DVec3::new(0.9, 0.0, 0.0), DQuat::IDENTITY))
        .unwrap();
    let nan = Pose::new(DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY);
    assert!(matches!(
        world.set_pose(b, nan),
        Err(Error::InvalidPose { body: 1, .. })
    ));
    assert!(matches!(
        world.set_poses(&[Pose::IDENTITY, nan]),
        Err(Error::InvalidPose { body: 1, .. })
    ));
    // Past the coordinates' range (the exact code takes fourth powers of coordinates).
    let far = Pose::new(DVec3::new(0.0, 1e80, 0.0), DQuat::IDENTITY);
    match world.set_pose(b, far) {
        Err(Error::InvalidPose { body: 1, what }) => assert!(what.contains("1e75"), "{what}"),
        other => panic!("{other:?}"),
    }
    let squashed = Pose::new(DVec3::ZERO, DQuat::from_xyzw(0.0, 0.0, 0.0, 0.5));
    assert!(matches!(
        world.add_body(shape, squashed),
        Err(Error::InvalidPose { body: 2, .. })
    ));
    assert!(world.set_poses(&[Pose::IDENTITY]).is_err());
    assert!(world.add_body(ShapeId(7), Pose::IDENTITY).is_err());
    assert!(world.set_pose(BodyId(9), Pose::IDENTITY).is_err());
    assert!(world.set_speculative(-1.0).is_err());
    assert!(world.set_speculative(f64::INFINITY).is_err());
    // A distance that grows the boxes past f32's range is named as the cause (it was
    // "shape 0 has unusable local bounds" at the next step), and changes nothing.
    match world.set_speculative(1e300) {
        Err(Error::Usage(what)) => assert!(
            what.contains("speculative distance")
                && what.contains("1e36")
                && what.contains("1e300"),
            "{what}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(world.step(f64::NAN).is_err());
    let spin = Velocity {
        linear: DVec3::ZERO,
        angular: DVec3::new(0.0, 0.0, 100.0),
    };
    assert!(
        world
            .set_velocity(
                a,
                Velocity {
                    linear: DVec3::new(f64::NAN, 0.0, 0.0),
                    ..spin
                }
            )
            .is_err()
    );
    let before = world.velocities().to_vec();
    assert!(world.set_velocities(&[spin]).is_err());
    let nan_spin = Velocity {
        angular: DVec3::new(0.0, f64::INFINITY, 0.0),
        ..spin
    };
    let err = world
        .set_velocities(&[spin, nan_spin])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("body 1") && err.contains("not finite"),
        "{err}"
    );
    assert_eq!(world.velocities(), before.as_slice());
    world.set_velocity(a, spin).unwrap();
    assert_eq!(world.velocities()[0], spin);
    let err = world.step(1.0).unwrap_err().to_string();
    assert!(
        err.contains("body 0") && err.contains("half a turn"),
        "{err}"
    );
    // Nothing changed: the pair still touches and is reported.
    let report = world.step(0.0).unwrap();
    assert_eq!(report.contacts.len(), 1);
    assert_eq!(
        world.bodies()[1].pose.translation,
        DVec3::new(0.9, 0.0, 0.0)
    );
    // A mesh with a hole cannot be decomposed: a named error.
    let mut open = torus(0.6, 0.2, 8, 6).unwrap();
    open.triangles.pop();
    let open = proxima::geometry::TriMesh::new(open.vertices.clone(), open.triangles.clone());
    if let Ok(open) = open {
        let err = world.add_shape(&ShapeGeometry::Mesh(Arc::new(open)), &mut |_| {});
        assert!(err.is_err());
    }
}

#[test]
fn the_default_device_choice_opens_a_world() {
    // Auto: the GPU when there is one, the CPU twins with a one-line notice otherwise.
    let world = World::new(DeviceChoice::Auto).unwrap();
    if let Some(notice) = world.fallback_notice() {
        assert!(!notice.contains('\n'));
    }
    assert!(!world.device_name().is_empty());
}

/// Poses of a crowd moving for `frames` frames: each body along its own straight line.
fn moving_poses(world: &World, frames: usize, seed: u64) -> Vec<Vec<Pose>> {
    let mut rng = Rng::new(seed);
    let velocity: Vec<DVec3> = (0..world.len()).map(|_| rng.unit_vector() * 0.2).collect();
    (0..frames)
        .map(|f| {
            world
                .bodies()
                .iter()
                .zip(&velocity)
                .map(|(b, v)| Pose::new(b.pose.translation + *v * f as f64, b.pose.rotation))
                .collect()
        })
        .collect()
}

#[test]
fn pipelined_frames_report_what_single_steps_do() {
    let gpu = common::gpu("pipelined_frames_report_what_single_steps_do");
    // Each run on a fresh world: warm starts change which of two equal answers is found.
    let fresh = |on_gpu: bool| {
        let mut world = match (&gpu, on_gpu) {
            (Some(ctx), true) => World::on_context(ctx.clone()),
            _ => cpu_world(),
        };
        world.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
        ));
        mixed_world(&mut world, 800, 21);
        world.set_speculative(0.01).unwrap();
        world
    };
    for on_gpu in [false, true] {
        if on_gpu && gpu.is_none() {
            continue;
        }
        let mut one = fresh(on_gpu);
        let frames = moving_poses(&one, 5, 3);
        let mut single = Vec::new();
        for poses in &frames {
            one.set_poses(poses).unwrap();
            single.push(one.step(0.0).unwrap());
        }
        let mut world = fresh(on_gpu);
        let mut piped = Vec::new();
        let n = world
            .step_frames(&frames, 0.0, |r| {
                piped.push(r);
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 5);
        for (k, (a, b)) in single.iter().zip(&piped).enumerate() {
            assert!(a.pairs == b.pairs, "frame {k}: pairs differ");
            assert_eq!(a.contacts.len(), b.contacts.len(), "frame {k}");
            if let Some((x, y)) = a.contacts.iter().zip(&b.contacts).find(|(x, y)| x != y) {
                panic!("frame {k} (gpu {on_gpu}): {x:?}\nvs {y:?}");
            }
            assert!(b.profile.stages.iter().any(|s| s.name == "gpu wait"));
        }
        assert!(single.iter().map(|r| r.contacts.len()).sum::<usize>() > 100);
        // A frame of the wrong size stops the run with a named error.
        let bad = vec![frames[0].clone(), frames[1][..10].to_vec()];
        assert!(world.step_frames(&bad, 0.0, |_| Ok(())).is_err());
    }
}

#[test]
fn a_gpu_lost_mid_run_hands_the_frames_to_the_cpu_twins() {
    let Some(ctx) = common::fresh_gpu("a_gpu_lost_mid_run_hands_the_frames_to_the_cpu_twins")
    else {
        return;
    };
    let mut gpu = World::on_context(ctx.clone());
    let mut cpu = cpu_world();
    for w in [&mut gpu, &mut cpu] {
        w.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
        ));
        mixed_world(w, 600, 33);
    }
    let first = gpu.step(0.0).unwrap();
    assert!(gpu.fallback_notice().is_none() && gpu.gpu_context().is_some());
    ctx.device.destroy();
    // The next frames run on the CPU twins, with the same pairs and contacts, and say so.
    let second = gpu.step(0.0).unwrap();
    let twin = cpu.step(0.0).unwrap();
    assert_eq!(first.pairs, twin.pairs);
    assert!(second.pairs == twin.pairs && second.contacts.len() == twin.contacts.len());
    let notice = gpu
        .fallback_notice()
        .expect("the fallback says why")
        .to_owned();
    assert!(
        notice.contains("lost") && notice.contains("CPU twins"),
        "{notice}"
    );
    assert!(gpu.gpu_context().is_none() && gpu.device_name().contains("CPU twins"));
    let frames = moving_poses(&gpu, 3, 8);
    assert_eq!(gpu.step_frames(&frames, 0.0, |_| Ok(())).unwrap(), 3);
}

#[test]
fn a_gpu_lost_during_pipelined_frames_hands_them_to_the_cpu_twins() {
    let Some(ctx) = common::fresh_gpu("a_gpu_lost_during_pipelined_frames") else {
        return;
    };
    let mut gpu = World::on_context(ctx.clone());
    gpu.set_decomposition_cache(proxima::geometry::decompose::Cache::At(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"),
    ));
    let mut cpu = cpu_world();
    for w in [&mut gpu, &mut cpu] {
        mixed_world(w, 300, 35);
    }
    let frames = moving_poses(&gpu, 4, 9);
    let mut reports = Vec::new();
    let mut k = 0;
    gpu.step_frames(&frames, 0.0, |r| {
        reports.push(r.pairs);
        k += 1;
        if k == 2 {
            ctx.device.destroy();
        }
        Ok(())
    })
    .unwrap();
    let mut twins = Vec::new();
    cpu.step_frames(&frames, 0.0, |r| {
        twins.push(r.pairs);
        Ok(())
    })
    .unwrap();
    assert!(
        reports == twins,
        "the pairs of every frame survive the loss"
    );
    assert!(gpu.fallback_notice().is_some());
}

/// Small bodies far from the world origin get boxes as tight as about it (the GPU's f32
/// positions are measured from the middle of the bodies): a 10 × 10 × 10 grid of 2e-2
/// cubes 1.9e-2 apart, about the origin and about (1e5, −1e5, 1e5), has the same candidate
/// pairs, contacts and impact candidates. Measured from the world origin, every box there
/// was widened by 0.76 (2^-17 of its coordinates) and every pair of the 1,000 was a
/// candidate.
#[test]
fn small_bodies_far_from_the_origin_have_tight_boxes() {
    let run = |at: DVec3| {
        let mut world = cpu_world();
        let cube = world
            .add_convex(cuboid(DVec3::splat(0.01)).unwrap())
            .unwrap();
        for k in 0..1000u32 {
            let cell = DVec3::new(
                f64::from(k % 10),
                f64::from(k / 10 % 10),
                f64::from(k / 100),
            );
            let id = world
                .add_body(cube, Pose::new(at + cell * 0.019, DQuat::IDENTITY))
                .unwrap();
            let drift = DVec3::new(1.0, f64::from(k % 3) - 1.0, 0.0);
            world
                .set_velocity(
                    id,
                    Velocity {
                        linear: drift,
                        angular: DVec3::ZERO,
                    },
                )
                .unwrap();
        }
        // Impacts asked before any frame, then a frame and impacts again.
        let first = world.impact_candidates(0.01).unwrap();
        let report = world.step(0.0).unwrap();
        let candidates = world.impact_candidates(0.01).unwrap();
        assert_eq!(first, candidates);
        (report.pairs.len(), report.contacts.len(), candidates.len())
    };
    let near = run(DVec3::ZERO);
    let far = run(DVec3::new(1e5, -1e5, 1e5));
    // Each cube overlaps its 26 neighbours by 1e-3 (axis-aligned boxes overlap exactly
    // when their boxes do): ((3n − 2)³ − n³)/2 = 10,476 pairs for n = 10, each a contact.
    assert_eq!((near.0, near.1), (10_476, 10_476), "{near:?}");
    assert_eq!(far, near);
}

/// A mesh's scaled copies (a scene's scale variants) take the pieces of the first one
/// decomposed, scaled, with no decomposition of their own: every corner of every piece is
/// the first tree's corner times the scale. A copy that is moved, not scaled, is another
/// mesh and is decomposed.
#[test]
fn scaled_copies_of_a_mesh_share_its_decomposition() {
    let mut world = World::on(Pipeline::cpu());
    world.set_decomposition_cache(proxima::geometry::decompose::Cache::Off);
    let ring = ShapeGeometry::Mesh(Arc::new(torus(0.6, 0.2, 16, 8).unwrap()));
    let mut heard = Vec::new();
    let base = world
        .add_shape(&ring, &mut |l| heard.push(l.to_owned()))
        .unwrap();
    assert!(!heard.is_empty(), "the first mesh is decomposed");
    let tree = |world: &World, id: ShapeId| match &world.shapes()[id.0 as usize] {
        ExactShape::Tree(t) => t.clone(),
        other => panic!("not a tree: {other:?}"),
    };
    for s in [2.5, 0.013, 1.0 / 3.0, 1.0] {
        let id = world
            .add_shape(&ring.scaled(s).unwrap(), &mut |l| {
                panic!("scale {s}: decomposed again ({l})")
            })
            .unwrap();
        let (first, copy) = (tree(&world, base), tree(&world, id));
        assert_eq!(first.num_pieces(), copy.num_pieces());
        for (p, q) in first.pieces().zip(copy.pieces()) {
            assert_eq!(p.num_faces(), q.num_faces());
            for (v, w) in p.vertices().iter().zip(q.vertices()) {
                assert_eq!(*v * s, *w, "scale {s}");
            }
        }
    }
    let ShapeGeometry::Mesh(mesh) = &ring else {
        unreachable!()
    };
    let moved = proxima::geometry::TriMesh::new(
        mesh.vertices.iter().map(|v| *v + DVec3::X).collect(),
        mesh.triangles.clone(),
    )
    .unwrap();
    let mut heard = Vec::new();
    world
        .add_shape(&ShapeGeometry::Mesh(Arc::new(moved)), &mut |l| {
            heard.push(l.to_owned());
        })
        .unwrap();
    assert!(!heard.is_empty(), "a moved copy is decomposed");
}

/// What a library user can hand a world by mistake is a named error that changes nothing,
/// on either path: a step of the wrong length to `advance`, `motions` and the impacts (a
/// negative one moved bodies backward, a NaN one blamed body 0's velocity), pairs not
/// lower index first, a shape built 1e9 from its own origin (its contacts came out 0.1
/// apart at a speculative distance of 0), a speculative distance past f32's boxes (the
/// CPU twin refused it at the next step and the GPU did not), bodies farther apart than
/// f32 holds (refused as a position of -inf), and bad poses in the middle of
/// `step_frames` (the frame before them was lost, and the error named no frame).
#[test]
fn a_library_users_mistakes_are_named() {
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    let unit = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let at = |x: f64| Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY);
    let a = world.add_body(unit, at(0.0)).unwrap();
    world.add_body(unit, at(2.0)).unwrap();
    let v = Velocity {
        linear: DVec3::new(1.0, 0.0, 0.0),
        ..Default::default()
    };
    world.set_velocity(a, v).unwrap();
    for dt in [-1.0, f64::NAN, f64::INFINITY] {
        let named = |r: proxima::Result<()>| {
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("the step must be finite and non-negative"),
                "{dt}: {e}"
            );
        };
        named(world.advance(dt));
        named(world.motions(dt).map(|_| ()));
        named(world.impacts(dt).map(|_| ()));
        named(world.impact_candidates(dt).map(|_| ()));
        named(world.impacts_among(dt, &[[0, 1]]).map(|_| ()));
    }
    assert_eq!(world.bodies()[0].pose, at(0.0), "nothing moved");
    for pair in [[1, 0], [0, 0], [7, 0]] {
        let e = world.impacts_among(1.0, &[pair]).unwrap_err().to_string();
        assert!(e.contains("lower index first"), "{pair:?}: {e}");
    }
    let e = world.impacts_among(1.0, &[[0, 7]]).unwrap_err().to_string();
    assert!(
        e.contains("names body 7, and the world has 2 (ids 0 to 1)"),
        "{e}"
    );
    let (b, c) = (world.bodies()[0].pose, world.bodies()[1].pose);
    // The last body takes the removed one's id.
    assert!(world.remove_body(a).unwrap().is_some());
    world.remove_body(a).unwrap();
    let e = world.impacts_among(1.0, &[[0, 1]]).unwrap_err().to_string();
    assert!(
        e.contains("names body 1, and the world has no bodies"),
        "{e}"
    );
    let a = world.add_body(unit, b).unwrap();
    world.add_body(unit, c).unwrap();
    world.set_velocity(a, v).unwrap();
    assert_eq!(world.impacts_among(1.5, &[[0, 1]]).unwrap().len(), 1);
    // A pair given twice was reported twice.
    let e = world
        .impacts_among(1.5, &[[0, 1], [0, 1]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("[0, 1] is given more than once"), "{e}");
    // A hull and a mesh 1e9 from their own origin.
    let far = DVec3::splat(1e9);
    let corners: Vec<DVec3> = (0..8)
        .map(|i| far + DVec3::new(f64::from(i & 1), f64::from(i >> 1 & 1), f64::from(i >> 2)))
        .collect();
    let hull = ConvexPolytope::from_points(&corners).unwrap();
    let e = world.add_convex(hull).unwrap_err().to_string();
    assert!(
        e.contains("shape 1") && e.contains("from its origin"),
        "{e}"
    );
    let mut ring = torus(1.0, 0.25, 12, 6).unwrap();
    ring.vertices.iter_mut().for_each(|v| *v += far);
    let e = world
        .add_shape(&ShapeGeometry::Mesh(Arc::new(ring)), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("shape 1") && e.contains("from its origin"),
        "{e}"
    );
    // A mesh past f32 is refused before it is decomposed.
    let mut huge = torus(1.0, 0.25, 12, 6).unwrap();
    huge.vertices.iter_mut().for_each(|v| *v *= 1e40);
    let e = world
        .add_shape(&ShapeGeometry::Mesh(Arc::new(huge)), &mut |line| {
            panic!("decomposed: {line}")
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("shape 1") && e.contains("f32"), "{e}");
    assert_eq!(world.shapes().len(), 1);
    // The speculative distance's bound, at it and past it.
    assert!(world.set_speculative(1e36).is_ok());
    assert!(world.set_speculative(3.4e38).is_err());
    world.set_speculative(0.0).unwrap();
    // Bodies 2e39 apart: each pose is fine, the GPU's f32 cannot hold both.
    world.set_pose(BodyId(0), at(-1e39)).unwrap();
    world.set_pose(BodyId(1), at(1e39)).unwrap();
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(
        e.contains("floating origin") && e.contains("1e38") && !e.contains("inf"),
        "{e}"
    );
    // Two crates 1e74 out: each pose is fine, the boxes' growth by the contact
    // tolerance there is not (it blamed shape 0's bounds).
    world.set_pose(BodyId(0), at(1e74)).unwrap();
    world.set_pose(BodyId(1), at(1e74 + 1e60)).unwrap();
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(
        e.contains("from the world origin") && e.contains("1e52"),
        "{e}"
    );
    // Bad poses in step_frames' third frame: the first two are reported, the error
    // names the frame.
    let good = [at(0.0), at(2.0)];
    let bad = [at(0.0), Pose::new(DVec3::splat(f64::NAN), DQuat::IDENTITY)];
    let mut reported = 0;
    let e = world
        .step_frames([good, good, bad, good], 0.0, |_| {
            reported += 1;
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert_eq!(reported, 2);
    assert!(e.contains("frame 2's poses") && e.contains("body 1"), "{e}");
}

/// Shapes built from their public fields are held to their constructors' rules (a mesh
/// whose triangle indexed past its vertices panicked in the decomposition; a capsule of
/// half height −1 was bounded as flat and its pair with a box sunk 1.05 into it dropped),
/// generators refuse what they cannot build (a torus of 65,536 × 65,536 segments asked for
/// 100 GB; a bumpy sphere of radius −1 was turned inside out), a polytope scaled past the
/// hull's range says so (it read "face 0 has zero area"), and a velocity whose swept box
/// leaves f32 is named as the motion's (it read as a box the broadphase could not take).
#[test]
fn shapes_built_by_hand_and_wild_velocities_are_named() {
    use proxima::geometry::TriMesh;
    use proxima::geometry::generators::bumpy_sphere;
    use proxima::geometry::rounded::Core;
    use proxima::motion::ScrewMotion;
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    let mut refused = |g: ShapeGeometry, want: &str| {
        let e = world.add_shape(&g, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
    };
    let mesh = TriMesh {
        vertices: vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z],
        triangles: vec![[0, 1, 9]],
    };
    refused(
        ShapeGeometry::Mesh(Arc::new(mesh)),
        "shape 0: mesh triangle 0 [0, 1, 9] indexes past the 4 vertices",
    );
    for (core, radius, want) in [
        (
            Core::Segment { half_height: -1.0 },
            1.0,
            "capsule half height",
        ),
        (
            Core::Segment {
                half_height: f64::NAN,
            },
            1.0,
            "capsule half height",
        ),
        (Core::Point, 1e-300, "sphere radius 1e-300 is below"),
        (Core::Point, f64::NAN, "sphere radius must be finite"),
        (Core::Point, -1.0, "sphere radius must be finite"),
    ] {
        refused(
            ShapeGeometry::Rounded(Arc::new(Rounded { core, radius })),
            want,
        );
    }
    let e = torus(2.0, 1.0, 65_536, 65_536).unwrap_err().to_string();
    assert!(e.contains("a torus has at most"), "{e}");
    assert!(torus(2.0, 1.0, 1024, 1024).is_ok());
    for (radius, frequency, want) in [
        (-1.0, 5.0, "bumpy sphere radius must be finite and positive"),
        (0.0, 5.0, "bumpy sphere radius must be finite and positive"),
        (f64::NAN, 5.0, "bumpy sphere radius"),
        (1.0, f64::INFINITY, "bump frequency must be finite"),
    ] {
        let e = bumpy_sphere(radius, 2, 0.1, frequency)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{radius} {frequency}: {e}");
    }
    let unit = cuboid(DVec3::splat(0.5)).unwrap();
    for (s, want) in [
        (1e300, "coordinates must lie within"),
        (1e-300, "below 1e-70"),
    ] {
        let e = unit.scaled(s).unwrap_err().to_string();
        assert!(e.contains("scaled by") && e.contains(want), "{s}: {e}");
    }
    let e = ScrewMotion::from_velocity(Pose::IDENTITY, DVec3::X, DVec3::ZERO, -1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("finite and non-negative"), "{e}");

    // The shapes that were refused left nothing behind: the first one added is shape 0.
    let crate_ = world.add_convex(unit).unwrap();
    let a = world.add_body(crate_, Pose::IDENTITY).unwrap();
    world
        .add_body(
            crate_,
            Pose::new(DVec3::new(5.0, 0.0, 0.0), DQuat::IDENTITY),
        )
        .unwrap();
    world
        .set_velocity(
            a,
            Velocity {
                linear: DVec3::new(1e40, 0.0, 0.0),
                ..Default::default()
            },
        )
        .unwrap();
    let e = world.step(1.0).unwrap_err().to_string();
    assert!(
        e.contains("body 0: its motion over the step") && e.contains("past f32's range"),
        "{e}"
    );
}

/// Contact normals are unit to rounding at any gap: crates 1e-7 apart within the
/// speculative distance took the world points' difference over the distance measured in
/// A's frame, up to 4.9e-9 off unit length (2,428 of a jittered grid's 13,620 contacts).
#[test]
fn contact_normals_are_unit_at_any_gap() {
    let mut world = World::new(DeviceChoice::Cpu).unwrap();
    world.set_speculative(1e-3).unwrap();
    let crate_ = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let mut rng = Rng::new(0x0417);
    for i in 0..6 {
        for j in 0..6 {
            for k in 0..3 {
                let gap = |rng: &mut Rng| 1.0 + rng.range(1e-8, 3e-7);
                let p = DVec3::new(
                    f64::from(i) * gap(&mut rng),
                    f64::from(j) * gap(&mut rng),
                    f64::from(k) * gap(&mut rng),
                );
                let tilt = DQuat::from_scaled_axis(rng.unit_vector() * 1e-9);
                world
                    .add_body(crate_, Pose::new(DVec3::splat(1e3) + p, tilt))
                    .unwrap();
            }
        }
    }
    let report = world.step(0.0).unwrap();
    assert!(report.contacts.len() > 100, "{}", report.contacts.len());
    for c in &report.contacts {
        let n = c.manifold.normal;
        assert!(
            (n.length() - 1.0).abs() < 1e-14,
            "{:?}: {n} {}",
            c.bodies,
            n.length() - 1.0
        );
    }
}

/// A frame's impacts are `impacts`' own: bodies overlapping by their coordinates' rounding
/// (within the contact tolerance) touch, and closing on each other is an impact at 0. A
/// frame took every overlap as past touching and lost them: a crate written 0.1 above a
/// floor whose top is 0.0 (2.8e-17 into it) pushed down, and a grid of crates on a 0.1
/// grid, every other column pushed into its neighbour (30 of `impacts`' 50).
#[test]
fn a_frames_impacts_are_those_of_impacts_for_bodies_touching_by_rounding() {
    let dt = 1.0 / 60.0;
    let mut world = cpu_world();
    add_floor(&mut world, 0.0);
    let small = world
        .add_convex(cuboid(DVec3::splat(0.05)).unwrap())
        .unwrap();
    let pushed = world
        .add_body(
            small,
            Pose::new(DVec3::new(0.0, 0.0, 0.3 - 0.25), DQuat::IDENTITY),
        )
        .unwrap();
    world
        .set_velocity(
            pushed,
            Velocity {
                linear: DVec3::new(0.0, 0.0, -1.0),
                ..Default::default()
            },
        )
        .unwrap();
    for i in 0..10 {
        for j in 0..10 {
            let p = DVec3::new(2.3 + f64::from(i) * 0.1, 0.7 + f64::from(j) * 0.1, 0.05);
            let b = world
                .add_body(small, Pose::new(p, DQuat::IDENTITY))
                .unwrap();
            if i % 2 == 0 {
                let v = Velocity {
                    linear: DVec3::new(1.0, 0.0, 0.0),
                    ..Default::default()
                };
                world.set_velocity(b, v).unwrap();
            }
        }
    }
    let alone = world.impacts(dt).unwrap();
    let frame = world.step(dt).unwrap();
    let key = |i: &proxima::world::Impact| (i.bodies, i.time.to_bits());
    let (alone, framed): (Vec<_>, Vec<_>) = (
        alone.iter().map(key).collect(),
        frame.impacts.iter().map(key).collect(),
    );
    assert!(
        framed.iter().any(|&(b, t)| b == [0, pushed.0] && t == 0),
        "the crate pushed into the floor: {framed:?}"
    );
    assert!(alone.len() > 50, "{} impacts", alone.len());
    assert_eq!(framed, alone);
    // Some of them overlap by rounding: the frame's contacts say so.
    assert!(
        frame
            .contacts
            .iter()
            .any(|c| c.manifold.min_separation() < 0.0)
    );
}

/// Rounded bodies overlapping by their coordinates' rounding touch as crates do, and
/// closing on what they touch is an impact at 0: a ball of 1e-4 resting on a floor whose
/// top is at 3e-4 (2.2e-17 into it), a rounded box of 1e-4 on one at 1e-4, and a ball of
/// 0.1 sunk 1e-12, each pushed down. Advancement called them overlapping and no call
/// reported an impact: pushed, they sank a frame's travel into the floor. A ball sunk 1e-6
/// (past its contact tolerance, 8e-9) overlaps and has none; one sliding along the floor
/// holds its contact and has none.
#[test]
fn rounded_bodies_touching_by_rounding_have_their_impacts() {
    let dt = 1.0 / 60.0;
    let rounded = |r: Rounded| ShapeGeometry::Rounded(Arc::new(r));
    let core = Arc::new(cuboid(DVec3::splat(5e-5)).unwrap());
    let cases = [
        (
            "ball of 1e-4",
            3e-4,
            rounded(Rounded::sphere(1e-4).unwrap()),
            1e-4,
            true,
        ),
        (
            "rounded box",
            1e-4,
            rounded(Rounded::polytope(core, 5e-5).unwrap()),
            1e-4,
            true,
        ),
        (
            "ball sunk 1e-12",
            0.0,
            rounded(Rounded::sphere(0.1).unwrap()),
            0.1 - 1e-12,
            true,
        ),
        (
            "ball sunk 1e-6",
            0.0,
            rounded(Rounded::sphere(0.1).unwrap()),
            0.1 - 1e-6,
            false,
        ),
    ];
    for (name, top, shape, height, closes) in cases {
        for down in [true, false] {
            let mut world = cpu_world();
            add_floor(&mut world, top);
            let s = world.add_shape(&shape, &mut |_| {}).unwrap();
            let at = DVec3::new(1.3e-3, 0.7e-3, top + height);
            let body = world.add_body(s, Pose::new(at, DQuat::IDENTITY)).unwrap();
            // Pushed down, or sliding along the floor.
            let linear = if down { -DVec3::Z } else { DVec3::X };
            let v = Velocity {
                linear,
                ..Default::default()
            };
            world.set_velocity(body, v).unwrap();
            let alone = world.impacts(dt).unwrap();
            let framed = world.step(dt).unwrap().impacts;
            let want = usize::from(down && closes);
            for found in [&alone, &framed] {
                assert_eq!(found.len(), want, "{name}, down {down}: {found:?}");
                assert!(found.iter().all(|i| i.time == 0.0), "{name}: {found:?}");
            }
        }
    }
}
