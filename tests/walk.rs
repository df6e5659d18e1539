//! The closest-feature walk against parry3d-f64, brute-force enumeration, analytic cases,
//! degenerate configurations and its own cold starts.

mod common;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::sat::max_separation;
use proxima::exact::walk::{WalkCache, WalkInput, WalkOutput, WalkState, walk};
use proxima::geometry::brute::polytope_distance;
use proxima::geometry::{ConvexPolytope, generators};
use proxima::rng::Rng;

fn at(t: DVec3, q: DQuat) -> Pose {
    Pose {
        translation: t,
        rotation: q,
    }
}

fn cold(a: &ConvexPolytope, pa: Pose, b: &ConvexPolytope, pb: Pose) -> WalkOutput {
    walk(&WalkInput::new(a, pa, b, pb))
}

/// `p` lies on or inside `poly` placed at `pose`, within `tol`.
fn on_or_inside(poly: &ConvexPolytope, pose: &Pose, p: DVec3, tol: f64) -> bool {
    common::height(poly, pose, p) <= tol
}

/// The walk's state against the separating-axis test's signed gap `truth` where that is
/// clear of rounding (1e-12): apart, or overlapping, counted in `told`; the state checked,
/// `None` within rounding.
fn told_as_the_axis_test(
    w: &WalkOutput,
    truth: f64,
    label: &str,
    told: &mut [usize; 2],
) -> Option<WalkState> {
    let (want, k) = if truth > 1e-12 {
        (WalkState::Separated, 0)
    } else if truth < -1e-12 {
        (WalkState::Penetrating, 1)
    } else {
        return None;
    };
    assert_eq!(w.state, want, "{label}");
    told[k] += 1;
    Some(want)
}

fn check_separated(
    label: &str,
    out: &WalkOutput,
    a: &ConvexPolytope,
    pa: &Pose,
    b: &ConvexPolytope,
    pb: &Pose,
    want: f64,
) {
    assert_eq!(out.state, WalkState::Separated, "{label}: {out:?}");
    let tol = 1e-9 * want.max(1.0);
    assert!(
        (out.distance - want).abs() <= tol,
        "{label}: walk {} vs oracle {want}",
        out.distance
    );
    assert!(
        (out.point_a.distance(out.point_b) - out.distance).abs() <= tol,
        "{label}: points"
    );
    let scale = tol.max(1e-9 * (pa.translation.length() + pb.translation.length()));
    assert!(
        on_or_inside(a, pa, out.point_a, scale),
        "{label}: point_a not on A"
    );
    assert!(
        on_or_inside(b, pb, out.point_b, scale),
        "{label}: point_b not on B"
    );
}

/// Random pair: hulls of 4 to 200 points, B placed around A so about half overlap.
fn random_pair(rng: &mut Rng) -> (ConvexPolytope, Pose, ConvexPolytope, Pose) {
    let (ka, kb) = (4 + rng.below(197) as usize, 4 + rng.below(197) as usize);
    let (ra, rb) = (rng.range(0.2, 2.0), rng.range(0.2, 2.0));
    let a = generators::random_hull(rng, ka, ra).unwrap();
    let b = generators::random_hull(rng, kb, rb).unwrap();
    let pa = at(
        rng.point_in(DVec3::splat(-3.0), DVec3::splat(3.0)),
        rng.rotation(),
    );
    let reach = ra + rb;
    let pb = at(
        pa.translation + rng.unit_vector() * rng.range(0.0, 1.6 * reach),
        rng.rotation(),
    );
    (a, pa, b, pb)
}

#[test]
fn ten_thousand_random_pairs_match_parry() {
    use parry3d_f64::query::ClosestPoints;
    use parry3d_f64::query::closest_points;
    let mut rng = Rng::new(31);
    let (mut separated, mut penetrating, mut parry_off, mut steps) = (0, 0, 0, 0u64);
    for k in 0..10_000 {
        let (a, pa, b, pb) = random_pair(&mut rng);
        let out = cold(&a, pa, &b, pb);
        steps += u64::from(out.steps);
        let sat = max_separation(&a, &pa, &b, &pb).distance;
        if sat < -1e-9 {
            assert_eq!(
                out.state,
                WalkState::Penetrating,
                "pair {k}: SAT overlap {sat}, walk {out:?}"
            );
            penetrating += 1;
            continue;
        }
        if sat <= 1e-9 {
            continue; // touching within rounding: either answer is right
        }
        separated += 1;
        let (ga, gb) = (common::to_parry(&a), common::to_parry(&b));
        let (qa, qb) = (common::parry_pose(&pa), common::parry_pose(&pb));
        let ClosestPoints::WithinMargin(p1, p2) =
            closest_points(&qa, &ga, &qb, &gb, f64::MAX).unwrap()
        else {
            panic!("pair {k}: parry found no closest points");
        };
        let d_parry = p1.distance(p2);
        let tol = 1e-9 * d_parry.max(1.0);
        if (out.distance - d_parry).abs() > tol {
            // Settle it by enumeration (parry's GJK is not exact everywhere).
            let (d_brute, _, _) = polytope_distance(&a, &pa, &b, &pb);
            check_separated(&format!("pair {k}"), &out, &a, &pa, &b, &pb, d_brute);
            assert!(
                d_parry >= d_brute - tol,
                "pair {k}: parry {d_parry} below the true {d_brute}"
            );
            parry_off += 1;
        } else {
            check_separated(&format!("pair {k}"), &out, &a, &pa, &b, &pb, d_parry);
        }
    }
    eprintln!(
        "{separated} separated, {penetrating} penetrating, {parry_off} settled by enumeration, {:.1} steps per cold walk",
        steps as f64 / 10_000.0
    );
    assert!(
        separated > 3000 && penetrating > 2000,
        "{separated} / {penetrating}"
    );
    assert!(parry_off < 20, "{parry_off} disagreements with parry");
}

#[test]
fn small_pairs_match_brute_force_enumeration() {
    let mut rng = Rng::new(32);
    let mut checked = 0;
    for k in 0..3000 {
        let (ka, kb) = (4 + rng.below(12) as usize, 4 + rng.below(12) as usize);
        let a = generators::random_hull(&mut rng, ka, 1.0).unwrap();
        let b = generators::random_hull(&mut rng, kb, 1.0).unwrap();
        let pa = at(DVec3::ZERO, rng.rotation());
        let pb = at(rng.unit_vector() * rng.range(1.0, 3.0), rng.rotation());
        let out = cold(&a, pa, &b, pb);
        if max_separation(&a, &pa, &b, &pb).distance > 1e-9 {
            let (d, _, _) = polytope_distance(&a, &pa, &b, &pb);
            check_separated(&format!("pair {k}"), &out, &a, &pa, &b, &pb, d);
            checked += 1;
        } else {
            assert_ne!(out.state, WalkState::Separated, "pair {k}: overlap missed");
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// The walk on bodies a hair apart or into each other, against the oracles: where the
/// separating-axis test finds them overlapping the walk does too (`false`), else it finds
/// them apart at enumeration's distance to 1e-12, its points that far apart (`true`).
fn matches_enumeration_a_hair_apart(
    label: &str,
    a: &ConvexPolytope,
    pa: Pose,
    b: &ConvexPolytope,
    pb: Pose,
) -> bool {
    let out = cold(a, pa, b, pb);
    if proxima::exact::sat::intersects(a, &pa, b, &pb) {
        assert_ne!(out.state, WalkState::Separated, "{label}: overlap missed");
        return false;
    }
    let (d, _, _) = polytope_distance(a, &pa, b, &pb);
    assert_eq!(out.state, WalkState::Separated, "{label}: {out:?}");
    assert!(
        (out.distance - d).abs() <= 1e-12,
        "{label}: walk {} at {:?}, enumeration {d}",
        out.distance,
        out.features
    );
    assert!((out.point_a.distance(out.point_b) - out.distance).abs() <= 1e-12);
    true
}

/// Nearly parallel faces a hair apart: a plank lying on a slab, and a crate on a larger
/// crate, the lower body tilted by 1e-10 to 1e-5 and the upper one 1e-10 to 1e-5 above its
/// highest point, each turned at random about the vertical. Every feature pair along the
/// faces is then nearly as close as the closest, and the distance's slope along an edge
/// is the tilt: the walk's distance equals enumeration's to 1e-12 (the bodies' size is
/// about 5), and where the separating-axis test finds them overlapping the walk does too.
/// (Its derivative tests took the slope times the distance, or over a clipped part cut
/// short by a corner, against the tolerance: on half the planks it stopped at a pair up
/// to 330 times the distance apart, and twice in 20,000 it called overlapping bodies
/// apart.)
#[test]
fn nearly_parallel_faces_a_hair_apart() {
    let pairs = [
        (
            generators::cuboid(DVec3::new(0.125, 2.0, 0.125)).unwrap(),
            generators::cuboid(DVec3::new(2.0, 1.0, 0.125)).unwrap(),
        ),
        (
            generators::cuboid(DVec3::splat(0.5)).unwrap(),
            generators::cuboid(DVec3::splat(1.0)).unwrap(),
        ),
    ];
    let mut rng = Rng::new(7);
    let (mut apart, mut overlapping) = (0, 0);
    for k in 0..6000 {
        let (upper, lower) = &pairs[k % 2];
        let (hu, hl) = (upper.extreme(DVec3::Z, 0).1, lower.extreme(DVec3::Z, 0).1);
        let tilt = 10f64.powf(rng.range(-10.0, -5.0));
        let gap = 10f64.powf(rng.range(-10.0, -5.0));
        let axis = DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0).normalize();
        let turn = |rng: &mut Rng| DQuat::from_rotation_z(rng.range(0.0, std::f64::consts::TAU));
        let pb = at(
            DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), -hl),
            DQuat::from_axis_angle(axis, tilt) * turn(&mut rng),
        );
        let pa = at(
            DVec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                hu + gap + 2.0 * tilt,
            ),
            turn(&mut rng),
        );
        let label = format!("case {k} (tilt {tilt:e}, gap {gap:e})");
        if matches_enumeration_a_hair_apart(&label, upper, pa, lower, pb) {
            apart += 1;
        } else {
            overlapping += 1;
        }
    }
    assert!(
        apart > 5000 && overlapping > 0,
        "{apart} apart, {overlapping} overlapping"
    );
}

/// Nearly parallel edges a hair apart: the bottom edge of a plank, a sheet 2e-9 thick, a
/// rod or a crate laid along a crate's top edge (both along x, the other body's edge off
/// the crate's by 1e-10 to 1e-5 in a random direction out of the crate or into it, and
/// anywhere along it), then tilted by 1e-10 to 1e-5 about a random axis through a point of
/// its edge. The distance's slope along either edge is the tilt, and the edges'
/// closest points slide far along them at a small change of angle: the walk, both ways
/// round, equals enumeration to 1e-12 and never undercuts the separating-axis test's
/// bound, and every overlap is found. (Before, the derivative at a clip point between an
/// edge's region and its end's took the rounding of the points along the edge times the
/// other edge's length, the closest points of two segments divided by `a e − b²`, all
/// rounding at such angles, and the separating-axis test crossed a placed edge as short
/// as the sheet's side by its ends' difference: 2,742 of these 6,000 poses were off one
/// way round or both, up to 4,388 times the distance, and 327 overlaps were called apart.)
#[test]
fn nearly_parallel_edges_a_hair_apart() {
    let krate = generators::cuboid(DVec3::ONE).unwrap();
    let others = [
        generators::cuboid(DVec3::new(2.0, 0.5, 0.1)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 0.5, 1e-9)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 0.125, 0.125)).unwrap(),
        generators::cuboid(DVec3::splat(0.5)).unwrap(),
    ];
    let mut rng = Rng::new(23);
    let (mut apart, mut overlapping) = (0, 0);
    for k in 0..6000 {
        let other = &others[k % others.len()];
        let half = DVec3::new(
            other.extreme(DVec3::X, 0).1,
            other.extreme(DVec3::Y, 0).1,
            other.extreme(DVec3::Z, 0).1,
        );
        // The other body's edge at (+y, −z) beside the crate's at (−y, +z), off it by
        // `gap` along a direction out of the crate's edge (into it when negative).
        let gap = 10f64.powf(rng.range(-10.0, -5.0)) * if rng.below(3) == 0 { -1.0 } else { 1.0 };
        let angle = rng.range(0.1, std::f64::consts::FRAC_PI_2 - 0.1);
        let edge = DVec3::new(
            rng.range(-1.0 - half.x, 1.0 + half.x) * 0.9,
            -1.0 - gap * angle.cos(),
            1.0 + gap * angle.sin(),
        );
        let centre = edge + DVec3::new(0.0, -half.y, half.z);
        let tilt = DQuat::from_scaled_axis(rng.unit_vector() * 10f64.powf(rng.range(-10.0, -5.0)));
        let pivot = edge + DVec3::X * rng.range(-half.x, half.x);
        let pb = at(pivot + tilt * (centre - pivot), tilt);
        let pa = at(DVec3::ZERO, DQuat::IDENTITY);
        let label = format!("case {k} (gap {gap:e})");
        let one = matches_enumeration_a_hair_apart(&label, &krate, pa, other, pb);
        let other_way = matches_enumeration_a_hair_apart(&label, other, pb, &krate, pa);
        assert_eq!(one, other_way, "{label}");
        if one {
            let bound = max_separation(&krate, &pa, other, &pb).distance;
            let d = cold(&krate, pa, other, pb).distance;
            assert!(
                d >= bound - 1e-12,
                "{label}: walk {d}, separating axis {bound}, {pb:?}"
            );
            apart += 1;
        } else {
            overlapping += 1;
        }
    }
    assert!(
        apart > 3000 && overlapping > 1000,
        "{apart} apart, {overlapping} overlapping"
    );
}

/// A crate, a plank or a rod standing on a corner or an edge, its lowest point sunk 1e-9
/// to 0.1 into a crate's top with that point on a side face's plane, or within 1e-13 of
/// it: the features there are within the tolerance of each other, so every region's test
/// passes at them whatever the rest of the bodies do. Both ways round the walk finds the
/// overlap the separating-axis test does. (It stopped at the point on the plane, about
/// 1e-16 apart, on 1,233 of the 2,921 overlapping poses, one way round or both: bodies
/// sunk up to 0.1 deep called apart.)
#[test]
fn a_corner_on_a_side_plane_sunk_into_a_top_overlaps() {
    let krate = generators::cuboid(DVec3::ONE).unwrap();
    let shapes = [
        generators::cuboid(DVec3::splat(0.5)).unwrap(),
        generators::cuboid(DVec3::new(0.125, 2.0, 0.125)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 0.1, 0.1)).unwrap(),
    ];
    let eighth = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4);
    let stands = [
        eighth,
        DQuat::from_rotation_y(0.615_479_708_670_387_3) * eighth,
    ];
    let mut rng = Rng::new(31);
    let mut overlapping = 0;
    for k in 0..3000 {
        let b = &shapes[k % shapes.len()];
        let qb = DQuat::from_rotation_z(rng.range(0.0, std::f64::consts::TAU))
            * stands[rng.below(2) as usize];
        let (low, _) = b.extreme(qb.conjugate() * -DVec3::Z, 0);
        let sink = 10f64.powf(rng.range(-9.0, -1.0));
        let off = [0.0, 1e-16, -1e-16, 1e-14, -1e-13][rng.below(5) as usize];
        let side = if rng.below(2) == 0 { -1.0 } else { 1.0 };
        let along = if rng.below(4) == 0 {
            -side
        } else {
            rng.range(-0.9, 0.9)
        };
        let target = DVec3::new(side + off, along, 1.0 - sink);
        let pb = at(target - qb * b.vertex(low), qb);
        let pa = at(DVec3::ZERO, DQuat::IDENTITY);
        // Overlapping beyond rounding (a rod lying on its edge from the crate's corner
        // outward only touches it).
        if max_separation(&krate, &pa, b, &pb).distance >= -1e-12 {
            continue;
        }
        overlapping += 1;
        for (x, px, y, py) in [(&krate, pa, b, pb), (b, pb, &krate, pa)] {
            let out = cold(x, px, y, py);
            assert_ne!(
                out.state,
                WalkState::Separated,
                "case {k} (sink {sink:e}): {out:?}"
            );
            assert!(proxima::exact::walk::collide(x, &px, y, &py), "case {k}");
        }
    }
    assert!(overlapping > 2500, "{overlapping} overlapping");
}

/// A box whose +x face bulges by 1e-10 to 1e-6 at a point (four faces a hair from
/// coplanar, and edges between them whose regions are wedges that thin), against a flat
/// sliver or a crate a hair tilted, its face 1e-6 to 1e-3 inside the bulged face or as far
/// outside it. Both ways round the walk equals enumeration to 1e-12 where they are apart
/// and finds every overlap the separating-axis test does. (A point 1e-4 behind the bulge's
/// faces is within 2e-13 of its edges' region planes: a sliver sunk 1e-4 into the box was
/// called 1e-4 apart.)
#[test]
fn a_face_bulged_a_hair_against_a_face_inside_or_out() {
    let mut rng = Rng::new(43);
    let sliver = ConvexPolytope::from_points(&[
        DVec3::new(0.0, -5.0, -3.0),
        DVec3::new(0.0, 4.0, 3.0),
        DVec3::new(0.0, 0.2, 0.001),
        DVec3::new(0.0, 0.201, 0.0),
        DVec3::new(-0.001, 0.1, 0.0),
    ])
    .unwrap();
    let krate = generators::cuboid(DVec3::new(0.25, 0.3, 0.2)).unwrap();
    let (mut apart, mut overlapping) = (0, 0);
    for k in 0..2000 {
        let half = DVec3::new(1.0, rng.range(0.3, 1.0), rng.range(0.2, 1.0));
        let mut corners: Vec<DVec3> = (0..8)
            .map(|i| {
                half * DVec3::new(
                    if i & 1 == 0 { -1.0 } else { 1.0 },
                    if i & 2 == 0 { -1.0 } else { 1.0 },
                    if i & 4 == 0 { -1.0 } else { 1.0 },
                )
            })
            .collect();
        let bulge = 10f64.powf(rng.range(-10.0, -6.0));
        corners.push(DVec3::new(
            1.0 + bulge,
            rng.range(-0.5, 0.5) * half.y,
            rng.range(-0.5, 0.5) * half.z,
        ));
        let bulged = ConvexPolytope::from_points(&corners).unwrap();
        let other = if k % 2 == 0 { &sliver } else { &krate };
        let face = if k % 2 == 0 { 0.0 } else { -0.25 };
        let depth = 10f64.powf(rng.range(-6.0, -3.0)) * if rng.below(2) == 0 { -1.0 } else { 1.0 };
        let tilt = DQuat::from_scaled_axis(rng.unit_vector() * 10f64.powf(rng.range(-10.0, -6.0)));
        let pb = at(
            DVec3::new(
                1.0 - depth - face,
                rng.range(-0.3, 0.3),
                rng.range(-0.3, 0.3),
            ),
            tilt,
        );
        let pa = at(DVec3::ZERO, DQuat::IDENTITY);
        let label = format!("case {k} (bulge {bulge:e}, depth {depth:e})");
        let one = matches_enumeration_a_hair_apart(&label, &bulged, pa, other, pb);
        let other_way = matches_enumeration_a_hair_apart(&label, other, pb, &bulged, pa);
        assert_eq!(one, other_way, "{label}");
        if one {
            apart += 1;
        } else {
            overlapping += 1;
        }
    }
    assert!(
        apart > 400 && overlapping > 1000,
        "{apart} apart, {overlapping} overlapping"
    );
}

/// Boxes (a plank, a crate, a slab) standing on an edge or a corner (an eighth of a turn
/// about x, then the cube's corner angle about y) or flat, each tilted by 1e-10 to 1e-5 in
/// a random direction and turned about the vertical, a hair above or into another: the
/// walk's distance equals enumeration's to 1e-12 and every overlap (the separating-axis
/// test) is found. The walk before read the distance's slope along an edge as the
/// distance times it: 3,643 of 30,000 such poses were off, two overlaps called apart.
#[test]
fn boxes_on_an_edge_or_a_corner_a_hair_apart() {
    let shapes = [
        generators::cuboid(DVec3::new(0.125, 2.0, 0.125)).unwrap(),
        generators::cuboid(DVec3::splat(0.5)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 1.0, 0.125)).unwrap(),
    ];
    let eighth = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4);
    let stands = [
        DQuat::IDENTITY,
        eighth,
        // atan(1/√2): with the eighth turn, a cube's diagonal vertical.
        DQuat::from_rotation_y(0.615_479_708_670_387_3) * eighth,
    ];
    let mut rng = Rng::new(11);
    let (mut apart, mut overlapping) = (0, 0);
    for k in 0..6000 {
        let (a, b) = (
            &shapes[rng.below(3) as usize],
            &shapes[rng.below(3) as usize],
        );
        let tilt = |rng: &mut Rng| {
            DQuat::from_scaled_axis(rng.unit_vector() * 10f64.powf(rng.range(-10.0, -5.0)))
        };
        let qa = tilt(&mut rng) * DQuat::from_rotation_z(rng.range(0.0, std::f64::consts::TAU));
        let qb = tilt(&mut rng)
            * DQuat::from_rotation_z(rng.range(0.0, std::f64::consts::TAU))
            * stands[rng.below(3) as usize];
        let pa = at(DVec3::ZERO, qa);
        let top = a.extreme(qa.conjugate() * DVec3::Z, 0).1;
        let bottom = b.extreme(qb.conjugate() * -DVec3::Z, 0).1;
        let sign = if rng.below(4) == 0 { -1.0 } else { 1.0 };
        let gap = sign * 10f64.powf(rng.range(-10.0, -5.0));
        let pb = at(
            DVec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
                top + bottom + gap,
            ),
            qb,
        );
        if matches_enumeration_a_hair_apart(&format!("case {k}"), a, pa, b, pb) {
            apart += 1;
        } else {
            overlapping += 1;
        }
    }
    assert!(
        apart > 5000 && overlapping > 300,
        "{apart} apart, {overlapping} overlapping"
    );
}

#[test]
fn analytic_cases() {
    let cube = generators::cuboid(DVec3::ONE).unwrap();
    let id = Pose::default();
    // Face to face, offset sideways: distance x − 2.
    for x in [2.5, 3.0, 10.0] {
        let pb = at(DVec3::new(x, 0.4, -0.3), DQuat::IDENTITY);
        let out = cold(&cube, id, &cube, pb);
        check_separated("face-face", &out, &cube, &id, &cube, &pb, x - 2.0);
    }
    // Crossing edges: A turned 45° about z, B 45° about y, gap c − 2√2.
    let pa = at(
        DVec3::ZERO,
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
    );
    let pb = at(
        DVec3::new(2.0 * 2f64.sqrt() + 0.5, 0.0, 0.0),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_4),
    );
    let out = cold(&cube, pa, &cube, pb);
    check_separated("edge-edge", &out, &cube, &pa, &cube, &pb, 0.5);
    assert!(
        matches!(
            out.features,
            (
                proxima::geometry::FeatureId::Edge(_),
                proxima::geometry::FeatureId::Edge(_)
            )
        ),
        "{out:?}"
    );
    // Vertex to face: a corner of B points at A's +x face from 0.25 away.
    let q = DQuat::from_rotation_arc(DVec3::new(-1.0, -1.0, -1.0).normalize(), -DVec3::X);
    let pb = at(DVec3::new(1.0 + 3f64.sqrt() + 0.25, 0.1, 0.2), q);
    let out = cold(&cube, id, &cube, pb);
    check_separated("vertex-face", &out, &cube, &id, &cube, &pb, 0.25);
    assert!(
        (out.point_a - DVec3::new(1.0, 0.1, 0.2)).length() < 1e-12,
        "{out:?}"
    );
}

#[test]
fn degenerate_configurations() {
    let cube = generators::cuboid(DVec3::ONE).unwrap();
    let id = Pose::default();
    // Parallel faces exactly aligned (every feature pair of the faces ties).
    let pb = at(DVec3::new(3.0, 0.0, 0.0), DQuat::IDENTITY);
    check_separated(
        "parallel faces",
        &cold(&cube, id, &cube, pb),
        &cube,
        &id,
        &cube,
        &pb,
        1.0,
    );
    // Parallel edges: both turned 45° about z, side by side along x.
    let q = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4);
    let (pa, pb) = (
        at(DVec3::ZERO, q),
        at(DVec3::new(2.0 * 2f64.sqrt() + 0.5, 0.0, 0.0), q),
    );
    check_separated(
        "parallel edges",
        &cold(&cube, pa, &cube, pb),
        &cube,
        &pa,
        &cube,
        &pb,
        0.5,
    );
    // Coincident vertices: corner on corner.
    let pb = at(DVec3::splat(2.0), DQuat::IDENTITY);
    let out = cold(&cube, id, &cube, pb);
    assert!(
        out.distance.abs() < 1e-12
            && out.state != WalkState::Penetrating
            && !matches!(out.state, WalkState::Failed(_)),
        "{out:?}"
    );
    // Touching face to face: distance 0, not a failure.
    let pb = at(DVec3::new(2.0, 0.5, 0.5), DQuat::IDENTITY);
    let out = cold(&cube, id, &cube, pb);
    assert!(
        out.distance.abs() < 1e-12 && !matches!(out.state, WalkState::Failed(_)),
        "{out:?}"
    );
    // Identical bodies at identical poses.
    assert_eq!(cold(&cube, id, &cube, id).state, WalkState::Penetrating);
    let ball = generators::icosphere(1.0, 2).unwrap();
    assert_eq!(cold(&ball, id, &ball, id).state, WalkState::Penetrating);
    // Scales 1e-6 and 1e6.
    let mut rng = Rng::new(33);
    for s in [1e-6, 1e6] {
        for _ in 0..200 {
            let a = generators::random_hull(&mut rng, 20, s).unwrap();
            let b = generators::random_hull(&mut rng, 20, s).unwrap();
            let pa = at(DVec3::ZERO, rng.rotation());
            let pb = at(rng.unit_vector() * s * rng.range(2.0, 3.0), rng.rotation());
            let out = cold(&a, pa, &b, pb);
            let (d, _, _) = polytope_distance(&a, &pa, &b, &pb);
            assert_eq!(out.state, WalkState::Separated);
            assert!(
                (out.distance - d).abs() <= 1e-9 * d.max(s),
                "scale {s}: {} vs {d}",
                out.distance
            );
        }
    }
}

#[test]
fn warm_starts_give_the_cold_answers_on_a_rotating_sequence() {
    let mut rng = Rng::new(34);
    let a = generators::random_hull(&mut rng, 128, 1.0).unwrap();
    let b = generators::random_hull(&mut rng, 128, 1.0).unwrap();
    let mut cache = WalkCache::default();
    let (mut warm_steps, mut cold_steps, mut penetrating) = (0u64, 0u64, 0);
    for frame in 0..1000 {
        let t = f64::from(frame) * 0.01;
        let pa = at(DVec3::ZERO, DQuat::from_rotation_y(t));
        let pb = at(
            DVec3::new(2.1 + 0.3 * (3.0 * t).sin(), 0.2, 0.0),
            DQuat::from_rotation_z(2.0 * t) * DQuat::from_rotation_x(t),
        );
        let warm = cache.query(&a, pa, &b, pb);
        let fresh = cold(&a, pa, &b, pb);
        assert_eq!(warm.state, fresh.state, "frame {frame}");
        assert!(
            (warm.distance - fresh.distance).abs() <= 1e-12,
            "frame {frame}: {} vs {}",
            warm.distance,
            fresh.distance
        );
        warm_steps += u64::from(warm.steps);
        cold_steps += u64::from(fresh.steps);
        if warm.state == WalkState::Penetrating {
            penetrating += 1;
        }
    }
    eprintln!(
        "warm {:.2} steps/frame, cold {:.2}; {penetrating} penetrating frames",
        warm_steps as f64 / 1000.0,
        cold_steps as f64 / 1000.0
    );
    assert!(
        warm_steps * 3 < cold_steps,
        "coherence should cut the steps: warm {warm_steps}, cold {cold_steps}"
    );
}

/// Gaps whose squares sink into the subnormals (below about 1.5e-154) are answered as
/// they are: a 1e-200 gap between two valid boxes came out 0.0 (with no overlap), and
/// 1e-160 lost five digits. Points given in the shapes themselves, so no pose rounds them.
#[test]
fn gaps_whose_squares_underflow_are_answered_exactly() {
    let slab = |z0: f64, z1: f64, half: f64| {
        let points: Vec<DVec3> = [z0, z1]
            .into_iter()
            .flat_map(|z| {
                [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                    .map(|(x, y)| DVec3::new(x * half, y * half, z))
            })
            .collect();
        ConvexPolytope::from_points(&points).unwrap()
    };
    let a = slab(-1.0, 0.0, 1.0);
    for g in [1e-100, 1e-150, 1e-160, 1e-200, 1e-250, 1e-300] {
        let b = slab(g, 1.0, 0.5);
        let w = walk(&WalkInput::new(&a, Pose::IDENTITY, &b, Pose::IDENTITY));
        assert_eq!(w.state, WalkState::Separated, "{g}: {w:?}");
        assert!((w.distance - g).abs() <= 1e-15 * g, "{g}: {}", w.distance);
        assert!(max_separation(&a, &Pose::IDENTITY, &b, &Pose::IDENTITY).distance > 0.0);
    }
}

/// Two thin sheets stacked face to face on a dyadic grid touch exactly (every coordinate
/// is exact), and the walk says so both ways round: one sheet's bottom edge crossing the
/// other's side face where it meets its top lies on that face's rim, and was called
/// overlapping (22 of 163 random cases at 2^-30). The separating-axis test's exact answer
/// decides which pairs touch (0) and which are apart (> 0).
#[test]
fn thin_sheets_stacked_face_to_face_touch() {
    let mut rng = Rng::new(31);
    let (mut touching, mut checked) = (0, 0);
    for thickness in [
        2f64.powi(-26),
        2f64.powi(-28),
        2f64.powi(-30),
        2f64.powi(-34),
    ] {
        let half = thickness / 2.0;
        for _ in 0..150 {
            let eighths = |rng: &mut Rng, lo: f64, hi: f64| (rng.range(lo, hi) * 8.0).round() / 8.0;
            let a = generators::cuboid(DVec3::new(
                eighths(&mut rng, 0.25, 3.0),
                eighths(&mut rng, 0.25, 3.0),
                half,
            ))
            .unwrap();
            let b = generators::cuboid(DVec3::new(
                eighths(&mut rng, 0.25, 3.0),
                eighths(&mut rng, 0.25, 3.0),
                half,
            ))
            .unwrap();
            let pa = at(DVec3::ZERO, DQuat::IDENTITY);
            let pb = at(
                DVec3::new(
                    eighths(&mut rng, -4.0, 4.0),
                    eighths(&mut rng, -4.0, 4.0),
                    -thickness,
                ),
                DQuat::IDENTITY,
            );
            let exact = max_separation(&a, &pa, &b, &pb).distance;
            assert!(exact >= 0.0, "stacked sheets never overlap: {exact}");
            for (w, what) in [
                (cold(&a, pa, &b, pb), "a, b"),
                (cold(&b, pb, &a, pa), "b, a"),
            ] {
                let want = if exact == 0.0 {
                    WalkState::Touching
                } else {
                    WalkState::Separated
                };
                assert_eq!(w.state, want, "{thickness:e}, {what}: {pa:?} {pb:?} {w:?}");
                checked += 1;
            }
            touching += usize::from(exact == 0.0);
        }
    }
    assert!(
        touching > 100 && checked == 1200,
        "{touching} touching of {checked}"
    );
}

/// Round hulls sunk a little into each other, touching nowhere along a face: the walk's
/// features at distance 0 are two edges crossing, and where their Gauss arcs do not cross
/// the bodies overlap (it ran the separating-axis test over every edge pair, 6 s a query
/// at 10,242 vertices). Oracle: the separating-axis test itself, on every pair; and
/// pairs moved apart by as little answer apart.
#[test]
fn round_hulls_sunk_a_little_are_told_overlapping_as_the_axis_test_tells() {
    let mut rng = Rng::new(0x1c05);
    let mut overlapping = 0;
    // (4 subdivisions and more are right too, but the oracle's every edge pair is slow.)
    for subdivisions in [2, 3] {
        let a = generators::icosphere(1.0, subdivisions).unwrap();
        let b = generators::icosphere(0.7, subdivisions).unwrap();
        for _ in 0..40 {
            let (ra, rb) = (rng.rotation(), rng.rotation());
            let dir = rng.unit_vector();
            // The hulls' own reach along dir: about where they meet along it.
            let reach = |p: &ConvexPolytope, r: DQuat, u: DVec3| {
                p.vertices()
                    .iter()
                    .map(|&v| (r * v).dot(u))
                    .fold(f64::MIN, f64::max)
            };
            let contact = reach(&a, ra, dir) + reach(&b, rb, -dir);
            for sunk in [1e-2, 1e-4, 1e-7, -1e-7, -1e-4] {
                let pose_a = Pose::new(DVec3::ZERO, ra);
                let pose_b = Pose::new(dir * (contact - sunk), rb);
                let w = walk(&WalkInput::new(&a, pose_a, &b, pose_b));
                let truth = max_separation(&a, &pose_a, &b, &pose_b).distance;
                match w.state {
                    WalkState::Penetrating => {
                        assert!(truth < 0.0, "{subdivisions} {sunk}: {truth}");
                        overlapping += 1;
                    }
                    WalkState::Separated => assert!(truth > 0.0, "{subdivisions} {sunk}: {truth}"),
                    other => panic!("{subdivisions} {sunk}: {other:?}, separation {truth}"),
                }
            }
        }
    }
    // Placed by the supports along the line of centres, most of the sunk ones overlap.
    assert!(overlapping > 60, "{overlapping}");
    // A pose where the walk stopped at two edges 5.6e-17 apart without touching (a probe's:
    // the test over every edge pair took 4.2 s): overlapping, as the test says.
    let a = generators::icosphere(1.0, 5).unwrap();
    let pose_b = Pose::new(
        DVec3::new(
            -1.4685520990118055,
            -1.0724941093441434,
            -0.8277168102135736,
        ),
        DQuat::IDENTITY,
    );
    let w = walk(&WalkInput::new(&a, Pose::IDENTITY, &a, pose_b));
    let truth = max_separation(&a, &Pose::IDENTITY, &a, &pose_b).distance;
    assert_eq!(
        w.state == WalkState::Penetrating,
        truth < 0.0,
        "{:?} {truth}",
        w.state
    );
}

/// Whether two bodies placed by translations `ta`, `tb` (the vertices and translations on
/// a grid of halves) that share a point touch rather than overlap, exactly: the largest
/// separation over every candidate axis (each face's normal and the cross product of
/// every edge pair, either way) as integers, over every vertex, in i128.
fn exactly_touching(a: &ConvexPolytope, ta: DVec3, b: &ConvexPolytope, tb: DVec3) -> bool {
    type V = [i128; 3];
    let grid = |p: &ConvexPolytope, t: DVec3| -> Vec<V> {
        p.vertices()
            .iter()
            .map(|&v| {
                let w = (v + t) * 2.0;
                assert_eq!(w, w.round(), "off the grid");
                [w.x as i128, w.y as i128, w.z as i128]
            })
            .collect()
    };
    let sub = |p: V, q: V| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let cross = |p: V, q: V| {
        [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ]
    };
    let dot = |p: V, q: V| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let (va, vb) = (grid(a, ta), grid(b, tb));
    let normals = |p: &ConvexPolytope, v: &[V]| -> Vec<V> {
        (0..p.num_faces())
            .map(|f| {
                let r: Vec<u32> = p.face_vertices(f).take(3).collect();
                let (o, s, t) = (v[r[0] as usize], v[r[1] as usize], v[r[2] as usize]);
                cross(sub(s, o), sub(t, o))
            })
            .collect()
    };
    let edges = |p: &ConvexPolytope, v: &[V]| -> Vec<V> {
        (0..p.num_edges())
            .map(|e| {
                let [s, t] = p.edge_vertices(e);
                sub(v[t as usize], v[s as usize])
            })
            .collect()
    };
    let mut axes = normals(a, &va);
    axes.extend(normals(b, &vb));
    for ea in edges(a, &va) {
        axes.extend(edges(b, &vb).into_iter().map(|eb| cross(ea, eb)));
    }
    axes.into_iter().filter(|&n| n != [0, 0, 0]).any(|n| {
        [n, [-n[0], -n[1], -n[2]]].into_iter().any(|n| {
            let top_a = va.iter().map(|&v| dot(n, v)).max().unwrap();
            let low_b = vb.iter().map(|&v| dot(n, v)).min().unwrap();
            low_b >= top_a
        })
    })
}

#[test]
fn bodies_sharing_a_corner_or_an_edge_point_are_told_touching_or_overlapping_exactly() {
    let mut rng = Rng::new(0x70c4);
    let hull = |rng: &mut Rng| {
        let points: Vec<DVec3> = (0..10)
            .map(|_| (rng.point_in(DVec3::splat(-5.0), DVec3::splat(6.0))).floor())
            .collect();
        ConvexPolytope::from_points(&points)
    };
    let (mut touching, mut overlapping) = (0, 0);
    for case in 0..400 {
        let (Ok(a), Ok(b)) = (hull(&mut rng), hull(&mut rng)) else {
            continue;
        };
        let pick =
            |rng: &mut Rng, p: &ConvexPolytope| p.vertex(rng.below(p.num_vertices() as u64) as u32);
        let mid = |rng: &mut Rng, p: &ConvexPolytope| {
            let [s, t] = p.edge_vertices(rng.below(p.num_edges() as u64) as usize);
            (p.vertex(s) + p.vertex(t)) * 0.5
        };
        // The point both bodies share: corners facing each other along a direction (the
        // two touch), or a corner, or the middle of an edge, of each, drawn at random.
        let d = rng.unit_vector();
        let (on_a, on_b) = match case % 4 {
            0 => (
                a.vertex(a.support_brute(d).0),
                b.vertex(b.support_brute(-d).0),
            ),
            1 => (pick(&mut rng, &a), pick(&mut rng, &b)),
            2 => (pick(&mut rng, &a), mid(&mut rng, &b)),
            _ => (mid(&mut rng, &a), mid(&mut rng, &b)),
        };
        let tb = on_a - on_b;
        let truth = exactly_touching(&a, DVec3::ZERO, &b, tb);
        for (p, q, t) in [(&a, &b, tb), (&b, &a, -tb)] {
            let w = cold(
                p,
                at(DVec3::ZERO, DQuat::IDENTITY),
                q,
                at(t, DQuat::IDENTITY),
            );
            let want = if truth {
                WalkState::Touching
            } else {
                WalkState::Penetrating
            };
            assert_eq!(w.state, want, "case {case}: {w:?}");
        }
        if truth {
            touching += 1;
        } else {
            overlapping += 1;
        }
    }
    assert!(
        touching > 100 && overlapping > 100,
        "{touching} {overlapping}"
    );

    // Round hulls of grid points meeting pole to pole touch, at any size (the test over
    // every edge pair took 65 s a query on icospheres of 40,962 vertices meeting so); one
    // sunk half a unit overlaps.
    let r: i32 = 40;
    let ball: Vec<DVec3> = (-r..=r)
        .flat_map(|x| (-r..=r).flat_map(move |y| (-r..=r).map(move |z| (x, y, z))))
        .filter(|&(x, y, z)| x * x + y * y + z * z <= r * r)
        .map(|(x, y, z)| DVec3::new(f64::from(x), f64::from(y), f64::from(z)))
        .collect();
    let ball = ConvexPolytope::from_points(&ball).unwrap();
    assert!(
        ball.num_vertices() > 1000,
        "{} vertices",
        ball.num_vertices()
    );
    let r = f64::from(r);
    for (t, want) in [
        (DVec3::new(0.0, 0.0, 2.0 * r), WalkState::Touching),
        (DVec3::new(0.0, 2.0 * r, 0.0), WalkState::Touching),
        (DVec3::new(0.0, 0.0, 2.0 * r - 0.5), WalkState::Penetrating),
    ] {
        let w = cold(
            &ball,
            at(DVec3::ZERO, DQuat::IDENTITY),
            &ball,
            at(t, DQuat::IDENTITY),
        );
        assert_eq!(w.state, want, "{t}: {w:?}");
    }
}

/// Crates at rest against equal crates (stacked, side by side, on an edge) under noise of
/// 1e-9, the walk warm-started from each frame's features as a world's pairs are: every
/// answer agrees with the separating-axis test where it is clear of rounding (apart by
/// it, or overlapping by it, by more than 1e-12), distances within 1e-12. Equal crates
/// stacked 5e-10 into each other and 4e-10 apart across stopped at a side face and the
/// other's bottom edge lying 1.5e-10 behind it, parallel, and were called 1.5e-10 apart
/// (a world's contact then took the side face's normal, 1.0 deep).
#[test]
fn crates_at_rest_under_noise_are_told_as_the_axis_test_tells() {
    let k = generators::cuboid(DVec3::new(0.5, 0.3, 0.2)).unwrap();
    let mut rng = Rng::new(0x57ac);
    let mut told = [0; 2];
    for (offset, noise) in [
        (DVec3::new(0.0, 0.0, 0.4), 1e-9),
        (DVec3::new(1.0, 0.0, 0.0), 1e-9),
        (DVec3::new(0.0, 0.6, 0.0), 1e-9),
        (DVec3::new(1.0, 0.6, 0.0), 1e-9),
        (DVec3::new(0.0, 0.0, 0.4), 1e-6),
    ] {
        let mut cache = WalkCache::default();
        for frame in 0..400 {
            let jitter = |rng: &mut Rng| rng.unit_vector() * (noise * rng.unit());
            let pa = at(
                DVec3::new(0.0, 0.0, 1.0) + jitter(&mut rng),
                DQuat::IDENTITY,
            );
            let pb = at(
                DVec3::new(0.0, 0.0, 1.0) + offset + jitter(&mut rng),
                DQuat::IDENTITY,
            );
            let w = cache.query(&k, pa, &k, pb);
            let truth = max_separation(&k, &pa, &k, &pb).distance;
            let label = format!("{offset} {noise} frame {frame}: {w:?}, separation {truth}");
            if told_as_the_axis_test(&w, truth, &label, &mut told) == Some(WalkState::Separated) {
                assert!(
                    (w.distance - polytope_distance(&k, &pa, &k, &pb).0).abs() < 1e-12,
                    "{label}"
                );
            }
        }
    }
    assert!(told[0] > 400 && told[1] > 400, "{told:?}");
}

/// A crate resting a gap of 1e-12 to 1e-6 above another, corner over corner, then tipped
/// by 1e-7 to 0.1 rad about the line through those corners (either way: into the other
/// or clear of it), the walk warm-started from the corner pair: the answer the
/// separating-axis test gives wherever it is clear of rounding. A crate 1e-11 above, tipped
/// 0.03 rad into the other (its far side 3% of its width deep), passed every region's test
/// within the tolerance at the corners and was called 1e-11 apart (22 of 126 such poses).
#[test]
fn a_crate_tipped_about_a_corner_it_nearly_touches_is_told_as_the_axis_test_tells() {
    let k = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let vertex = |p: DVec3| {
        let v = k.vertices().iter().position(|&v| v == p).unwrap();
        proxima::geometry::FeatureId::Vertex(v as u32)
    };
    let corners = (
        vertex(DVec3::splat(0.5)),
        vertex(DVec3::new(0.5, 0.5, -0.5)),
    );
    let pa = at(DVec3::ZERO, DQuat::IDENTITY);
    let mut told = [0; 2];
    for gap in [1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6] {
        for turn in [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1] {
            for (sign, edge_on) in [(1.0, false), (-1.0, false), (-1.0, true)] {
                // About the line through the corners (along y), or about B's edge along x.
                let pivot = DVec3::new(0.5, 0.5, 0.5 + gap / 2.0);
                let q = if edge_on {
                    DQuat::from_rotation_x(sign * turn)
                } else {
                    DQuat::from_rotation_y(sign * turn)
                };
                let rest = DVec3::new(0.0, 0.0, 1.0 + gap);
                let pb = at(pivot + q * (rest - pivot), q);
                let mut cache = WalkCache {
                    features: Some(corners),
                };
                let w = cache.query(&k, pa, &k, pb);
                let truth = max_separation(&k, &pa, &k, &pb).distance;
                let label = format!(
                    "gap {gap:e} turn {:e} {edge_on}: {w:?}, separation {truth}",
                    sign * turn
                );
                told_as_the_axis_test(&w, truth, &label, &mut told);
            }
        }
    }
    assert!(told[0] > 100 && told[1] > 50, "{told:?}");
}

/// Crates, planks and hulls brought a hair (1e-14 to 1e-11) apart or together in any
/// direction and turned any way, walked cold and warm through a rocking sequence: the
/// answer the separating-axis test gives wherever it is clear of rounding (3e-14 at these
/// unit coordinates). Two edges stopped within 16 tolerances whose Gauss arcs do not cross
/// were taken as overlapping with no other look: bodies 1e-14 to 1e-12 apart, their closest
/// points near an edge's end where the wedges' argument does not hold, were called
/// overlapping (1,912 of a probe's 160,000 such poses, cube on cube among them).
#[test]
fn bodies_a_hair_apart_at_edges_are_told_as_the_axis_test_tells() {
    let mut rng = Rng::new(7);
    let shapes = [
        generators::cuboid(DVec3::splat(0.5)).unwrap(),
        generators::cuboid(DVec3::new(1.0, 0.1, 0.5)).unwrap(),
        generators::random_hull(&mut rng, 12, 0.5).unwrap(),
        generators::random_hull(&mut rng, 40, 0.5).unwrap(),
    ];
    let pa = at(DVec3::ZERO, DQuat::IDENTITY);
    let mut told = [0; 2];
    for sequence in 0..1200 {
        let (a, b) = (&shapes[sequence % 4], &shapes[(sequence / 4) % 4]);
        let (axis, amplitude) = (rng.unit_vector(), 10f64.powf(rng.range(-9.0, -2.0)));
        let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
        let gap = sign * 10f64.powf(rng.range(-14.0, -11.0));
        let (direction, turn) = (rng.unit_vector(), rng.rotation());
        let mut cache = WalkCache::default();
        for frame in 0..6 {
            let q = DQuat::from_axis_angle(axis, amplitude * (f64::from(frame) * 0.7).sin()) * turn;
            let pb = common::at_gap(a, &pa, b, at(direction * 3.0, q), gap);
            let truth = max_separation(a, &pa, b, &pb).distance;
            if truth.abs() <= 3e-14 {
                continue;
            }
            let want = if truth > 0.0 {
                WalkState::Separated
            } else {
                WalkState::Penetrating
            };
            let label = |w: &WalkOutput| {
                format!("sequence {sequence} frame {frame}: {w:?}, separation {truth:e}")
            };
            let warm = cache.query(a, pa, b, pb);
            assert_eq!(warm.state, want, "warm {}", label(&warm));
            let w = cold(a, pa, b, pb);
            assert_eq!(w.state, want, "cold {}", label(&w));
            told[usize::from(truth < 0.0)] += 1;
        }
    }
    assert!(told[0] > 2500 && told[1] > 2500, "{told:?}");
}

/// Faces exactly coplanar and overlapping touch whatever the turn between them: drums of
/// 16 to 1,024 sides cap on cap (both caps at z = 1 exactly; a turn about z keeps every
/// z), the upper turned 1e-12 to 1e-7 about the axis, were called up to 3e-12 apart (a
/// rim vertex beside the other's rim edge, which its own rim edge crosses). The oracle:
/// the caps share their centre. Lifted by 1e-9 they are apart by exactly that (the caps'
/// gap). And a cone's apex an ulp inside another's, tip to tip along their axis, was
/// called an ulp apart: the point (0, 0, 1 − 2^-52) lies on A's axis below its apex
/// (cones of up to 8 sides; see `edges_touching_around`).
#[test]
fn coplanar_faces_turned_a_hair_touch_and_an_apex_an_ulp_inside_overlaps() {
    for sides in [16, 64, 1024] {
        let drum = generators::cylinder(sides, 1.0, 1.0).unwrap();
        for turn in [1e-12, 1e-10, 5e-10, 1e-9, 1e-7] {
            let rotation = DQuat::from_xyzw(0.0, 0.0, turn / 2.0, 1.0).normalize();
            let (pa, pb) = (Pose::IDENTITY, at(DVec3::new(0.0, 0.0, 2.0), rotation));
            let w = cold(&drum, pa, &drum, pb);
            assert!(
                w.state == WalkState::Touching && w.distance == 0.0,
                "{sides} sides, turn {turn}: {w:?}"
            );
            let lifted = at(DVec3::new(0.0, 0.0, 2.0 + 1e-9), rotation);
            let w = cold(&drum, pa, &drum, lifted);
            assert!(
                w.state == WalkState::Separated && (w.distance - 1e-9).abs() < 1e-15,
                "{sides} sides, turn {turn}, lifted: {w:?}"
            );
        }
    }
    // Apexes of up to 8 sides: the edges at a stop are tested pair by pair up to 64 pairs
    // (two apexes of 4,096 sides would make 16.7M tests).
    for sides in [4, 8] {
        let cone = generators::cone(sides, 1.0, 1.0).unwrap();
        let flipped = DQuat::from_xyzw(1.0, 0.0, 0.0, 0.0);
        let sunk = at(DVec3::new(0.0, 0.0, 2.0 - f64::EPSILON), flipped);
        let w = cold(&cone, Pose::IDENTITY, &cone, sunk);
        assert!(
            matches!(w.state, WalkState::Penetrating | WalkState::Touching),
            "{sides} sides: {w:?}"
        );
        let apart = at(DVec3::new(0.0, 0.0, 2.0 + 1e-12), flipped);
        let w = cold(&cone, Pose::IDENTITY, &cone, apart);
        assert_eq!(w.state, WalkState::Separated, "{sides} sides: {w:?}");
    }
}

/// A cold walk between drums of many sides, one hovering over the other a little tilted,
/// starts at the cap facing the other drum and that drum's vertex nearest its plane: from
/// a rim vertex it went round the cap a vertex a step, each step clipping against every
/// side (16,384 sides: 7,410 steps, 0.8 s). The distance against enumeration of every
/// vertex–face and edge–edge pair; the steps fewer than a quarter of the sides.
#[test]
fn a_cold_walk_over_a_many_sided_cap_starts_at_the_cap() {
    for sides in [64, 256] {
        let drum = generators::cylinder(sides, 1.0, 1.0).unwrap();
        for (offset, tilt) in [(0.3, 1e-6), (0.6, 1e-3), (-0.4, 0.02)] {
            // Clear of the lower cap by `gap` at least, whatever the tilt.
            for gap in [0.5, 1e-3] {
                let pb = at(
                    DVec3::new(offset, 0.1, 2.0 + gap + 1.2 * tilt),
                    DQuat::from_rotation_x(tilt),
                );
                let w = cold(&drum, Pose::IDENTITY, &drum, pb);
                let (truth, ..) = polytope_distance(&drum, &Pose::IDENTITY, &drum, &pb);
                assert!(
                    w.state == WalkState::Separated && (w.distance - truth).abs() < 1e-12,
                    "{sides} sides, offset {offset}, tilt {tilt}, gap {gap}: {w:?} vs {truth}"
                );
                assert!(
                    w.steps < sides / 4,
                    "{sides} sides, offset {offset}, tilt {tilt}, gap {gap}: {} steps",
                    w.steps
                );
            }
        }
    }
}
