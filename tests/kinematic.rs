//! The main job's crowd: the default scene's overlapping start parted, then 100 frames in
//! which no pair overlaps at a frame's start and no body passes through another, checked
//! on every frame's actual motions by all-pairs conservative advancement and by sampling
//! the exact collision test along them, and in which bodies that meet part again.

mod common;

use std::collections::HashMap;

use proxima::Pipeline;
use proxima::bodies::Pose;
use proxima::exact::advance::{ToiInput, ToiState, time_of_impact};
use proxima::exact::walk;
use proxima::kinematic::{CrowdFrame, KinematicCrowd};
use proxima::motion::ScrewMotion;
use proxima::narrowphase::ExactShape;
use proxima::scene::Scene;
use proxima::world::World;

/// Parted at the start and never met since: nothing overlaps at a frame's start.
fn none_overlap(step: &CrowdFrame, frame: u32) {
    let overlapping: Vec<[u32; 2]> = step
        .report
        .contacts
        .iter()
        .filter(|c| c.manifold.min_separation() < 0.0)
        .map(|c| c.bodies)
        .collect();
    assert!(
        overlapping.is_empty(),
        "frame {frame}: {overlapping:?} overlap"
    );
}

/// Each body's motion over the frame just run, from its pose at the frame's `start`.
fn frame_motions(start: &[Pose], world: &World) -> Vec<ScrewMotion> {
    start
        .iter()
        .zip(world.bodies())
        .map(|(s, b)| ScrewMotion::between(*s, b.pose).unwrap())
        .collect()
}

#[test]
fn a_hundred_frames_of_the_default_crowd_and_nobody_passes_through() {
    let scene = Scene::default_scene(Some(1500)).unwrap();
    let mut world = World::on(Pipeline::cpu());
    world.add_scene(&scene, &mut |_| {}).unwrap();
    let walls = scene
        .crowd
        .wrap
        .map(|(lo, hi)| (lo.as_dvec3(), hi.as_dvec3()));
    let mut crowd = KinematicCrowd::new(world, walls);
    let settled = crowd.settle(30).unwrap();
    assert!(
        settled.initial > 100 && settled.overlapping == 0,
        "{settled:?}"
    );
    let dt = 1.0 / 20.0;
    let (mut impacts, mut checked, mut moved) = (0, 0, 0);
    // Frames running in which each pair met: a pair stopped frame after frame stays put.
    let mut meeting: HashMap<[u32; 2], u32> = HashMap::new();
    for frame in 0..100 {
        let start: Vec<Pose> = crowd.world.bodies().iter().map(|b| b.pose).collect();
        let step = crowd.frame(dt).unwrap();
        impacts += step.impacts.len();
        meeting = step
            .impacts
            .iter()
            .map(|i| (i.bodies, meeting.get(&i.bodies).map_or(1, |n| n + 1)))
            .collect();
        // Stopped pairs part: no pair is held by its own impacts for long (with their
        // spins kept, pairs met every frame from their first meeting on).
        if let Some((pair, n)) = meeting.iter().max_by_key(|(_, n)| **n) {
            assert!(
                *n <= 10,
                "frame {frame}: bodies {pair:?} met {n} frames running"
            );
        }
        none_overlap(&step, frame);
        let (bodies, shapes) = (crowd.world.bodies(), crowd.world.shapes());
        let motions = frame_motions(&start, &crowd.world);
        moved += motions
            .iter()
            .filter(|m| m.linear() != glam::DVec3::ZERO)
            .count();
        let polytope = |i: usize| match &shapes[bodies[i].shape as usize] {
            ExactShape::Convex(p) => p.clone(),
            _ => unreachable!("the default scene is convex"),
        };
        for i in 0..bodies.len() {
            for j in i + 1..bodies.len() {
                let (a, b) = (polytope(i), polytope(j));
                let (ma, mb) = (motions[i], motions[j]);
                if !common::origins_within(&ma, &mb, a.radius() + b.radius()) {
                    continue;
                }
                checked += 1;
                let out = time_of_impact(&ToiInput::new(&a, ma, &b, mb));
                assert!(
                    !matches!(out.state, ToiState::Hit | ToiState::Capped),
                    "frame {frame}: bodies {i} and {j} meet at t = {} ({:?})",
                    out.toi,
                    out.state
                );
                for k in 0..=8 {
                    let s = f64::from(k) / 8.0;
                    assert!(
                        !walk::collide(&a, &ma.at(s), &b, &mb.at(s)),
                        "frame {frame}: bodies {i} and {j} touch at t = {s}"
                    );
                }
            }
        }
    }
    // The crowd did move and did meet.
    assert!(
        impacts > 50 && moved > 50_000 && checked > 10_000,
        "{impacts} {moved} {checked}"
    );
}

#[test]
fn walls_turn_exactly_the_bodies_crossing_them_outward() {
    use glam::DVec3;
    use proxima::geometry::generators::cuboid;
    use proxima::rng::Rng;
    use proxima::world::{BodyId, Velocity};
    // 10,000 cubes of half-size 0.5 on a grid 4 apart (no two meet over the frame), in
    // walls that cut the grid's outer rows: a body whose reach (the cube's corner
    // distance) crosses a wall while it moves outward turns back along that axis.
    let mut world = World::on(Pipeline::cpu());
    let shape = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let reach = DVec3::splat(0.5).length();
    let (lo, hi) = (DVec3::splat(1.5), DVec3::new(82.5, 82.5, 34.5));
    let mut rng = Rng::new(0x3a11);
    let mut start = Vec::new();
    for i in 0..10_000u32 {
        let p = DVec3::new(
            f64::from(i % 22),
            f64::from(i / 22 % 22),
            f64::from(i / 484),
        ) * 4.0;
        let body = world
            .add_body(shape, Pose::new(p, glam::DQuat::IDENTITY))
            .unwrap();
        let v = Velocity {
            linear: rng.unit_vector() * 0.5,
            angular: DVec3::ZERO,
        };
        world.set_velocity(body, v).unwrap();
        start.push((p, v.linear));
    }
    let mut crowd = KinematicCrowd::new(world, Some((lo, hi)));
    let step = crowd.frame(0.05).unwrap();
    assert!(step.impacts.is_empty() && step.report.contacts.is_empty());
    let mut turned = 0;
    for (i, &(p, v)) in start.iter().enumerate() {
        let mut want = v;
        for k in 0..3 {
            if (p[k] - reach < lo[k] && v[k] < 0.0) || (p[k] + reach > hi[k] && v[k] > 0.0) {
                want[k] = -v[k];
            }
        }
        turned += usize::from(want != v);
        let got = crowd.world.velocities()[BodyId(i as u32).0 as usize].linear;
        assert_eq!(got, want, "body {i} at {p}");
    }
    assert!(turned > 1000, "{turned} bodies turned");
}

/// Two tiny crates at one place: at the origin the start parts them; a billion units out
/// their overlap (2e-9) is below the contact tolerance there (64 ulps of the coordinates,
/// 1.4e-5, where the rounding of a coordinate is 1.2e-7): they touch, and no body moves
/// (the start once pushed them by less than the rounding, every round for nothing).
#[test]
fn a_start_parts_overlaps_beyond_the_contact_tolerance_only() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    for (at, parts) in [(0.0, true), (1e9, false)] {
        let mut world = World::on(Pipeline::cpu());
        let shape = world
            .add_convex(cuboid(DVec3::splat(1e-9)).unwrap())
            .unwrap();
        let pose = Pose::new(DVec3::splat(at), DQuat::IDENTITY);
        world.add_body(shape, pose).unwrap();
        world.add_body(shape, pose).unwrap();
        let mut crowd = KinematicCrowd::new(world, None);
        let settled = crowd.settle(30).unwrap();
        if parts {
            assert!(
                settled.initial == 1 && settled.overlapping == 0 && !settled.stuck,
                "at {at}: {settled:?}"
            );
            let [a, b] = [0, 1].map(|i| crowd.world.bodies()[i].pose.translation);
            assert!(a.distance(b) >= 2e-9, "at {at}: {a} {b}");
        } else {
            assert!(
                settled.initial == 0 && settled.moved == 0 && settled.rounds == 0,
                "at {at}: {settled:?}"
            );
            assert!(crowd.world.bodies().iter().all(|b| b.pose == pose));
            // In contact all the same.
            assert_eq!(crowd.world.step(0.0).unwrap().contacts.len(), 1);
        }
    }
}

/// A fixed floor with one crate resting on it exactly and one sunk 0.1 into it, and two
/// fixed slabs overlapping: the start moves the sunk crate up out of the floor by the
/// depth and a thousandth of the smaller body's size, and nothing else (the floor was pushed down
/// half of it before, and the resting crate left touching nothing).
#[test]
fn a_start_leaves_fixed_bodies_where_they_are() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    let mut world = World::on(Pipeline::cpu());
    let slab = world
        .add_convex(cuboid(DVec3::new(10.0, 10.0, 0.5)).unwrap())
        .unwrap();
    let krate = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let poses = [
        (slab, DVec3::new(0.0, 0.0, -0.5)),
        (krate, DVec3::new(-5.0, 0.0, 0.5)),
        (krate, DVec3::new(5.0, 0.0, 0.4)),
        (slab, DVec3::new(0.0, 30.0, -0.5)),
        (slab, DVec3::new(0.0, 30.0, -0.7)),
    ]
    .map(|(shape, at)| (shape, Pose::new(at, DQuat::IDENTITY)));
    for &(shape, pose) in &poses {
        world.add_body(shape, pose).unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, None);
    crowd.fix(&[0, 3, 4]).unwrap();
    let settled = crowd.settle(30).unwrap();
    // The two fixed slabs overlapping by 0.8 are counted on their own (they were counted
    // nowhere, and the run said no pair overlapped).
    assert_eq!(
        (
            settled.initial,
            settled.overlapping,
            settled.fixed_overlapping
        ),
        (1, 0, 1),
        "{settled:?}"
    );
    let at = |i: usize| crowd.world.bodies()[i].pose.translation;
    for i in [0, 1, 3, 4] {
        assert_eq!(at(i), poses[i].1.translation, "body {i}");
    }
    // A thousandth of the smaller body's reach: the crate's, √0.75.
    let clear = 1e-3 * 0.75f64.sqrt();
    assert!((at(2).z - (0.5 + clear)).abs() < 1e-12, "{}", at(2));
    let report = crowd.world.step(0.0).unwrap();
    let touching = |i: u32| report.contacts.iter().any(|c| c.bodies == [0, i]);
    assert!(touching(1), "the resting crate still rests on the floor");
}

/// A crate sunk 0.1 into two fixed floor tiles at once (straddling their seam), and one
/// sunk 0.3 into two fixed slabs that overlap each other: the start lifts each out by the
/// depth and a thousandth of its own size, and it rests on both. Each pair's push was
/// added to the other's before, and the crates were left in the air by twice their depth,
/// in contact with nothing. And a crate sunk 1e-3 into a floor 100 across rests on it: a
/// thousandth of the pair's size lifted it 0.07 clear, past the speculative distance.
#[test]
fn a_crate_sunk_into_two_fixed_tiles_comes_to_rest_on_them() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    let mut world = World::on(Pipeline::cpu());
    let tile = world
        .add_convex(cuboid(DVec3::new(1.0, 1.0, 0.5)).unwrap())
        .unwrap();
    let krate = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    let floor = world
        .add_convex(cuboid(DVec3::new(50.0, 50.0, 0.5)).unwrap())
        .unwrap();
    let poses = [
        (tile, DVec3::new(-1.0, 0.0, -0.5)),
        (tile, DVec3::new(1.0, 0.0, -0.5)),
        (krate, DVec3::new(0.0, 0.0, 0.4)),
        (tile, DVec3::new(0.0, 10.0, -0.5)),
        (tile, DVec3::new(0.5, 10.0, -0.5)),
        (krate, DVec3::new(0.0, 10.0, 0.2)),
        (floor, DVec3::new(200.0, 0.0, -0.5)),
        (krate, DVec3::new(200.0, 0.0, 0.499)),
    ]
    .map(|(shape, at)| (shape, Pose::new(at, DQuat::IDENTITY)));
    for &(shape, pose) in &poses {
        world.add_body(shape, pose).unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, None);
    crowd.fix(&[0, 1, 3, 4, 6]).unwrap();
    let settled = crowd.settle(30).unwrap();
    assert_eq!(
        (
            settled.initial,
            settled.overlapping,
            settled.fixed_overlapping
        ),
        (5, 0, 1),
        "{settled:?}"
    );
    // A thousandth of the smaller body's reach, the crate's √0.75 (of the pair's, a floor
    // 100 across lifted a crate 0.07 clear of it, past the speculative distance).
    let clear = 1e-3 * 0.75f64.sqrt();
    let at = |i: usize| crowd.world.bodies()[i].pose.translation;
    for krate in [2, 5, 7] {
        let want = poses[krate].1.translation.truncate().extend(0.5 + clear);
        assert!(
            (at(krate) - want).length() < 1e-12,
            "crate {krate}: {}",
            at(krate)
        );
    }
    // Resting within the speculative distance of both its tiles.
    crowd.world.set_speculative(0.01).unwrap();
    let report = crowd.world.step(0.0).unwrap();
    for pair in [[0, 2], [1, 2], [3, 5], [4, 5], [6, 7]] {
        assert!(
            report.contacts.iter().any(|c| c.bodies == pair),
            "{pair:?} in contact"
        );
    }
}

/// A ball caught between two fixed walls closer than it is wide is pushed out of each
/// into the other: its pushes cancel, the start says so (`pinched`), and it stays. The
/// run called such a body's pushes "below the rounding of their coordinates".
#[test]
fn a_body_pinched_between_fixed_walls_is_named_as_such() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    let mut world = World::on(Pipeline::cpu());
    let wall = world
        .add_convex(cuboid(DVec3::new(0.5, 5.0, 5.0)).unwrap())
        .unwrap();
    let ball = proxima::shape::ShapeGeometry::Rounded(std::sync::Arc::new(
        proxima::geometry::rounded::Rounded::sphere(0.5).unwrap(),
    ));
    let ball = world.add_shape(&ball, &mut |_| {}).unwrap();
    for (shape, x) in [(wall, -0.9), (wall, 0.9), (ball, 0.0), (ball, 10.0)] {
        world
            .add_body(shape, Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY))
            .unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, None);
    crowd.fix(&[0, 1]).unwrap();
    let settled = crowd.settle(30).unwrap();
    assert_eq!(
        (
            settled.initial,
            settled.overlapping,
            settled.pinched,
            settled.stuck
        ),
        (2, 2, 1, true),
        "{settled:?}"
    );
    assert_eq!(crowd.world.bodies()[2].pose.translation, DVec3::ZERO);
}

/// Two tori overlapping by a quarter of their size overlap by several piece pairs: the
/// start counts them as one pair of bodies (it counted each piece pair) and parts them,
/// each pushed about the deepest piece pair's depth a round (their pushes were added up).
#[test]
fn a_start_counts_overlapping_non_convex_bodies_once() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::torus;
    use proxima::shape::ShapeGeometry;
    use std::sync::Arc;
    let mut world = World::on(Pipeline::cpu());
    let mesh = ShapeGeometry::Mesh(Arc::new(torus(1.0, 0.25, 24, 12).unwrap()));
    let ring = world.add_shape(&mesh, &mut |_| {}).unwrap();
    // Side by side, a quarter of their size into each other, and one just above the other
    // (where the sum of the piece pairs' pushes sent each 3.2 for a depth of 0.4).
    let at = [
        DVec3::ZERO,
        DVec3::new(2.0, 0.0, 0.0),
        DVec3::new(10.0, 0.0, 0.0),
        DVec3::new(10.05, 0.0, 0.1),
    ];
    for a in at {
        world.add_body(ring, Pose::new(a, DQuat::IDENTITY)).unwrap();
    }
    let report = world.step(0.0).unwrap();
    let depths: Vec<f64> = report
        .contacts
        .iter()
        .map(|c| -c.manifold.min_separation())
        .filter(|&d| d > 0.0)
        .collect();
    assert!(depths.len() > 1, "{depths:?} overlapping piece pairs");
    let deepest = depths.iter().copied().fold(0.0, f64::max);
    let mut crowd = KinematicCrowd::new(world, None);
    let settled = crowd.settle(30).unwrap();
    assert_eq!(
        (settled.initial, settled.overlapping),
        (2, 0),
        "{settled:?}"
    );
    // Each goes about the deepest piece pair's depth a round (the push that meets every
    // piece pair's need along its own normal), not the sum of every piece pair's.
    let clear = 1e-3 * 1.25;
    for (i, a) in at.iter().enumerate() {
        let moved = crowd.world.bodies()[i].pose.translation.distance(*a);
        assert!(
            moved <= f64::from(settled.rounds) * 1.5 * (deepest + clear),
            "body {i} moved {moved} in {} rounds, the deepest piece pair {deepest}",
            settled.rounds
        );
    }
}

/// A cow (scaled to 0.12) sunk into a thin L plate (1.5e-3 thick), both free and
/// non-convex: several piece pairs overlap along different normals, and the start parts
/// them in a few rounds. Pushed by the deepest piece pair alone, the bodies went back and
/// forth between two piece pairs for a hundred rounds and the frames began overlapping.
#[test]
fn a_cow_sunk_into_a_thin_plate_is_parted_in_a_few_rounds() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::TriMesh;
    use proxima::shape::ShapeGeometry;
    use std::sync::Arc;
    let Some(cow) = common::shared_mesh("cow.obj") else {
        return;
    };
    let cow = TriMesh::new(
        cow.vertices.iter().map(|v| *v * 0.12).collect(),
        cow.triangles.clone(),
    )
    .unwrap();
    let outline = [
        [0.0, 0.0],
        [1.5, 0.0],
        [1.5, 0.375],
        [0.375, 0.375],
        [0.375, 1.5],
        [0.0, 1.5],
    ];
    let plate = common::prism(&outline, &common::L_CAP, 0.0015);
    let mut world = World::on(Pipeline::cpu());
    let mut shape = |mesh: TriMesh| {
        world
            .add_shape(&ShapeGeometry::Mesh(Arc::new(mesh)), &mut |_| {})
            .unwrap()
    };
    let (plate, cow) = (shape(plate), shape(cow));
    let placed = [
        (
            plate,
            [2.5059624888899448, 1.7124088566820626, 4.123063832446039],
            [
                -0.06547289057038704,
                0.4987375311907522,
                -0.7344570035613517,
                -0.4555733590781976,
            ],
        ),
        (
            cow,
            [2.220502223623508, 1.7184709572123515, 4.304378929121503],
            [
                0.07547128738253563,
                0.016919163022120768,
                0.967817599458745,
                0.23947217141322671,
            ],
        ),
    ];
    for (shape, at, q) in placed {
        let pose = Pose::new(DVec3::from_array(at), DQuat::from_array(q).normalize());
        world.add_body(shape, pose).unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, None);
    let settled = crowd.settle(100).unwrap();
    assert_eq!(
        (settled.initial, settled.overlapping),
        (1, 0),
        "{settled:?}"
    );
    assert!(settled.rounds <= 10, "{settled:?}");
}

/// Two crates 1 across closing at 2e11 a second, 3.6e10 apart (1.7e9 times their size a
/// frame): they meet in frame 10 and never pass through each other, and a crate touching
/// a floor while it moves 1e9 times its size a frame and sinks half its height a frame is an
/// impact at 0. The step's contact tolerance grows with the bodies' offset at its ends
/// (3.3 there), and the hit, 2.2 apart along x, was judged held by the faces along z,
/// which overlap by the crates' whole height: no impact, and the crates passed through
/// each other; the crate sinking into the floor was held likewise.
#[test]
fn bodies_a_billion_times_their_size_a_frame_still_meet() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    use proxima::world::{BodyId, Velocity};
    let mut world = World::on(Pipeline::cpu());
    let krate = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    for (x, v) in [(0.0, 1e11), (3.6333333333333336e10, -1e11)] {
        let id = world
            .add_body(krate, Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY))
            .unwrap();
        let linear = DVec3::new(v, 0.0, 0.0);
        world
            .set_velocity(
                id,
                Velocity {
                    linear,
                    ..Default::default()
                },
            )
            .unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, None);
    let mut met = 0;
    for frame in 0..14 {
        let x = |i: usize| crowd.world.bodies()[i].pose.translation.x;
        assert!(x(1) - x(0) >= 1.0, "frame {frame}: {} and {}", x(0), x(1));
        met += crowd.frame(1.0 / 60.0).unwrap().impacts.len();
    }
    assert!(met > 0, "they never met");
    // A crate resting on a floor, 1.7e9 times its size a frame along x and 0.5 down.
    let mut world = World::on(Pipeline::cpu());
    let floor = world
        .add_convex(cuboid(DVec3::new(10.0, 10.0, 0.5)).unwrap())
        .unwrap();
    let krate = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    world
        .add_body(
            floor,
            Pose::new(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY),
        )
        .unwrap();
    let id = world
        .add_body(krate, Pose::new(DVec3::new(0.0, 0.0, 0.5), DQuat::IDENTITY))
        .unwrap();
    let linear = DVec3::new(1e11, 0.0, -30.0);
    world
        .set_velocity(
            BodyId(id.0),
            Velocity {
                linear,
                ..Default::default()
            },
        )
        .unwrap();
    let impacts = world.impacts(1.0 / 60.0).unwrap();
    assert_eq!(impacts.len(), 1, "{impacts:?}");
    assert_eq!(impacts[0].time, 0.0, "{impacts:?}");
}

/// A ball dropped on a floor: on a fixed floor it bounces straight back up at its own
/// speed (elastic, off a body of infinite mass) and the floor stays where it is; on a
/// floor that is not fixed the two exchange their velocities (equal masses), so the ball
/// comes to rest and the floor goes down.
#[test]
fn what_meets_a_fixed_body_bounces_off_it() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    use proxima::geometry::rounded::Rounded;
    use proxima::shape::ShapeGeometry;
    use proxima::world::{BodyId, Velocity};
    use std::sync::Arc;
    for fixed in [true, false] {
        let mut world = World::on(Pipeline::cpu());
        let slab = world
            .add_convex(cuboid(DVec3::new(5.0, 5.0, 0.5)).unwrap())
            .unwrap();
        let ball = ShapeGeometry::Rounded(Arc::new(Rounded::sphere(0.5).unwrap()));
        let ball = world.add_shape(&ball, &mut |_| {}).unwrap();
        let floor_pose = Pose::new(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY);
        let floor = world.add_body(slab, floor_pose).unwrap();
        let dropped = world
            .add_body(ball, Pose::new(DVec3::new(0.3, -0.2, 2.0), DQuat::IDENTITY))
            .unwrap();
        let falling = DVec3::new(0.0, 0.0, -3.0);
        world
            .set_velocity(
                dropped,
                Velocity {
                    linear: falling,
                    angular: DVec3::ZERO,
                },
            )
            .unwrap();
        let mut crowd = KinematicCrowd::new(world, None);
        if fixed {
            crowd.fix(&[floor.0]).unwrap();
        }
        // It meets the floor at 0.5 s, in the tenth frame.
        let mut hits = 0;
        for _ in 0..20 {
            hits += crowd.frame(0.05).unwrap().impacts.len();
        }
        assert_eq!(hits, 1, "fixed {fixed}");
        let v = |b: BodyId| crowd.world.velocity(b).unwrap().linear;
        let at = |b: BodyId| crowd.world.bodies()[b.0 as usize].pose.translation;
        if fixed {
            assert_eq!(v(dropped), -falling);
            assert_eq!(v(floor), DVec3::ZERO);
            assert_eq!(at(floor), floor_pose.translation);
            assert!(at(dropped).z > 0.5 + 1.0, "the ball rose: {}", at(dropped));
        } else {
            assert_eq!(v(dropped), DVec3::ZERO);
            assert_eq!(v(floor), falling);
            assert!(
                at(floor).z < -0.5 - 1.0,
                "the floor went down: {}",
                at(floor)
            );
        }
    }
    let mut crowd = KinematicCrowd::new(World::on(Pipeline::cpu()), None);
    assert!(crowd.fix(&[0]).unwrap_err().to_string().contains("body 0"));
}

/// Three crates in a row written in decimals (0.05, 0.15, 0.25; the first fixed), the last
/// moving into the middle one: the bounce hands the middle crate the speed, and it closes
/// on the fixed one, which it overlaps by the decimals' rounding (1.4e-17, a touch). That
/// is an impact at 0: the middle crate stops, and no frame starts with the two sunk into
/// each other. (The overlap was left to the contacts, which had nothing to part, and the
/// middle crate moved a frame's travel, 5e-3, into the fixed one and stayed there.) The
/// same row placed in either order, written in decimals or touching exactly.
#[test]
fn a_bounce_into_a_touching_neighbour_is_an_impact() {
    use glam::{DQuat, DVec3};
    use proxima::geometry::generators::cuboid;
    use proxima::world::{BodyId, Velocity};
    for (xs, label) in [
        ([0.05, 0.15, 0.25], "decimals"),
        ([0.25, 0.15, 0.05], "decimals, reversed"),
        ([0.0625, 0.1875, 0.3125], "dyadic, touching exactly"),
    ] {
        let half = if label.starts_with("dyadic") {
            0.0625
        } else {
            0.05
        };
        let mut world = World::on(Pipeline::cpu());
        let krate = world
            .add_convex(cuboid(DVec3::splat(half)).unwrap())
            .unwrap();
        for x in xs {
            world
                .add_body(krate, Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY))
                .unwrap();
        }
        // The far crate moves toward the middle one.
        let toward = (xs[1] - xs[2]).signum() * 0.3;
        world
            .set_velocity(
                BodyId(2),
                Velocity {
                    linear: DVec3::new(toward, 0.0, 0.0),
                    angular: DVec3::ZERO,
                },
            )
            .unwrap();
        let mut crowd = KinematicCrowd::new(world, None);
        crowd.fix(&[0]).unwrap();
        for frame in 0..4 {
            crowd.frame(1.0 / 60.0).unwrap();
            let report = crowd.world.step(0.0).unwrap();
            for c in &report.contacts {
                let depth = -c.manifold.min_separation();
                assert!(depth < 1e-12, "{label}, after frame {frame}: {c:?}");
            }
        }
    }
}

/// The start parts the bodies without the depth estimate (it needs only the contacts;
/// on the CPU twins the estimate cost 40 times the rounds) and puts it back: the parting
/// is the one a world without an estimate makes, and the first frame after proves pairs
/// apart by the estimate again.
#[test]
fn the_start_parts_without_the_depth_estimate_and_puts_it_back() {
    let scene = Scene::default_scene(Some(1500)).unwrap();
    let settle = |k: Option<u32>| {
        let mut world = World::on(Pipeline::cpu());
        world.add_scene(&scene, &mut |_| {}).unwrap();
        world.set_depth_estimate(k).unwrap();
        let mut crowd = KinematicCrowd::new(world, None);
        let settled = crowd.settle(30).unwrap();
        let poses: Vec<Pose> = crowd.world.bodies().iter().map(|b| b.pose).collect();
        (crowd, settled, poses)
    };
    let (_, plain, plain_poses) = settle(None);
    let (mut crowd, settled, poses) = settle(Some(8));
    assert!(
        settled.initial > 100 && settled.overlapping == 0,
        "{settled:?}"
    );
    assert_eq!(format!("{settled:?}"), format!("{plain:?}"));
    assert_eq!(poses, plain_poses);
    assert_eq!(crowd.world.depth_estimate(), Some(8));
    let report = crowd.world.step(0.0).unwrap();
    assert!(report.proved_apart > 0, "{}", report.proved_apart);
}

/// A mixed crowd of boxes, tori and bumpy spheres (hull trees), balls and capsules,
/// parted at the start and run for 60 frames: no pair overlaps at a frame's start, and
/// along every frame's actual motions no two bodies touch, checked by sampling every pair
/// of their convex pieces (each tree's pieces one by one, not its tree) with the exact
/// collision test of rounded bodies. The default crowd's test holds convex bodies only.
#[test]
fn a_mixed_crowd_with_non_convex_bodies_never_passes_through() {
    use glam::DVec3;
    use proxima::exact::rounded;
    use proxima::geometry::generators::{bumpy_sphere, cuboid, torus};
    use proxima::geometry::rounded::Rounded;
    use proxima::rng::Rng;
    use proxima::shape::ShapeGeometry;
    use proxima::world::Velocity;
    use std::sync::Arc;
    let mut world = World::on(Pipeline::cpu());
    let geometries = [
        ShapeGeometry::Convex(Arc::new(cuboid(DVec3::new(0.5, 0.3, 0.2)).unwrap())),
        ShapeGeometry::Mesh(Arc::new(torus(0.6, 0.2, 24, 12).unwrap())),
        ShapeGeometry::Mesh(Arc::new(bumpy_sphere(0.5, 2, 0.2, 4.0).unwrap())),
        ShapeGeometry::Rounded(Arc::new(Rounded::sphere(0.35).unwrap())),
        ShapeGeometry::Rounded(Arc::new(Rounded::capsule(0.4, 0.15).unwrap())),
    ];
    let shapes: Vec<_> = geometries
        .iter()
        .map(|g| world.add_shape(g, &mut |_| {}).unwrap())
        .collect();
    let mut rng = Rng::new(0x5eed);
    let (lo, hi) = (DVec3::splat(-5.0), DVec3::splat(5.0));
    for i in 0..240 {
        let at = DVec3::new(
            rng.range(-4.0, 4.0),
            rng.range(-4.0, 4.0),
            rng.range(-4.0, 4.0),
        );
        let body = world
            .add_body(shapes[i % shapes.len()], Pose::new(at, rng.rotation()))
            .unwrap();
        let v = Velocity {
            linear: rng.unit_vector() * rng.range(0.5, 3.0),
            angular: rng.unit_vector() * rng.range(0.0, 2.0),
        };
        world.set_velocity(body, v).unwrap();
    }
    let mut crowd = KinematicCrowd::new(world, Some((lo, hi)));
    let settled = crowd.settle(60).unwrap();
    assert!(
        settled.initial > 20 && settled.overlapping == 0,
        "{settled:?}"
    );
    // Each body's parts as rounded bodies: a polytope (radius 0), a tree's pieces, a ball.
    let parts = |s: &ExactShape| -> Vec<Rounded> {
        match s {
            ExactShape::Convex(p) => vec![Rounded::polytope(p.clone(), 0.0).unwrap()],
            ExactShape::Tree(t) => t
                .pieces()
                .map(|p| Rounded::polytope(p.clone(), 0.0).unwrap())
                .collect(),
            ExactShape::Rounded(r) => vec![(**r).clone()],
        }
    };
    let parts: Vec<Vec<Rounded>> = crowd.world.shapes().iter().map(parts).collect();
    let (mut impacts, mut checked) = (0, 0);
    for frame in 0..60 {
        let start: Vec<Pose> = crowd.world.bodies().iter().map(|b| b.pose).collect();
        let step = crowd.frame(1.0 / 20.0).unwrap();
        impacts += step.impacts.len();
        none_overlap(&step, frame);
        let bodies = crowd.world.bodies();
        let reach: Vec<f64> = bodies
            .iter()
            .map(|b| crowd.world.shapes()[b.shape as usize].reach())
            .collect();
        let motions = frame_motions(&start, &crowd.world);
        for i in 0..bodies.len() {
            for j in i + 1..bodies.len() {
                let (ma, mb) = (motions[i], motions[j]);
                if !common::origins_within(&ma, &mb, reach[i] + reach[j]) {
                    continue;
                }
                checked += 1;
                let (pa, pb) = (
                    &parts[bodies[i].shape as usize],
                    &parts[bodies[j].shape as usize],
                );
                for k in 0..=8 {
                    let s = f64::from(k) / 8.0;
                    let (at_a, at_b) = (ma.at(s), mb.at(s));
                    let touch = pa
                        .iter()
                        .any(|x| pb.iter().any(|y| rounded::collide(x, &at_a, y, &at_b)));
                    assert!(!touch, "frame {frame}: bodies {i} and {j} touch at t = {s}");
                }
            }
        }
    }
    assert!(
        impacts > 300 && checked > 8_000,
        "{impacts} impacts, {checked} pairs checked"
    );
}
