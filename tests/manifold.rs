//! Contact manifolds against analytic answers, the exact penetration depth, and
//! parry3d-f64's box–box manifold.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::depth;
use proxima::exact::manifold::{self, ContactId, Manifold, ManifoldCache};
use proxima::geometry::generators::{cuboid, random_hull};
use proxima::geometry::rounded::Rounded;
use proxima::geometry::{ConvexPolytope, FeatureId, brute};
use proxima::rng::Rng;

fn boxed(x: f64, y: f64, z: f64) -> ConvexPolytope {
    cuboid(DVec3::new(x, y, z)).unwrap()
}

/// `pose` moved by `nudge` along a random direction and turned by `nudge` about a random
/// axis.
fn nudged(pose: &Pose, rng: &mut Rng, nudge: f64) -> Pose {
    Pose::new(
        pose.translation + rng.unit_vector() * nudge,
        (DQuat::from_scaled_axis(rng.unit_vector() * nudge) * pose.rotation).normalize(),
    )
}

fn contact(
    a: &ConvexPolytope,
    pa: &Pose,
    b: &ConvexPolytope,
    pb: &Pose,
    speculative: f64,
) -> Option<Manifold> {
    manifold::polytopes(a, pa, b, pb, speculative, &mut ManifoldCache::default())
}

/// Sorted points of a manifold (on B), for comparing with analytic corner sets.
fn sorted(points: impl Iterator<Item = DVec3>) -> Vec<DVec3> {
    let mut v: Vec<DVec3> = points.collect();
    v.sort_by(|p, q| {
        p.x.total_cmp(&q.x)
            .then(p.y.total_cmp(&q.y))
            .then(p.z.total_cmp(&q.z))
    });
    v
}

fn assert_close(got: &[DVec3], want: &[DVec3], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(g.distance(*w) <= tol, "{what}: {g} vs {w}");
    }
}

#[test]
fn an_offset_box_resting_on_a_box_gives_its_four_corners_at_the_depth() {
    let floor = boxed(2.0, 2.0, 0.5);
    let crate_ = boxed(0.5, 0.5, 0.5);
    for (k, turn) in [0.0, 0.3, 1.0, std::f64::consts::FRAC_PI_4]
        .into_iter()
        .enumerate()
    {
        let depth = 0.01 * (k + 1) as f64;
        let centre = DVec3::new(0.7, -0.4, 1.0 - depth);
        let rotation = DQuat::from_rotation_z(turn);
        let pb = Pose::new(centre, rotation);
        let m = contact(&floor, &Pose::IDENTITY, &crate_, &pb, 0.0).expect("they overlap");
        assert!(m.normal.distance(DVec3::Z) < 1e-12, "normal {}", m.normal);
        assert_eq!(m.points.len(), 4, "turn {turn}");
        let corners: Vec<DVec3> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .iter()
            .map(|&(x, y)| pb.transform_point(DVec3::new(0.5 * x, 0.5 * y, -0.5)))
            .collect();
        assert_close(
            &sorted(m.points.iter().map(|p| p.point_b)),
            &sorted(corners.into_iter()),
            1e-12,
            "corners on the crate",
        );
        for p in &m.points {
            assert!((p.separation + depth).abs() < 1e-12, "{p:?}");
            assert!(
                (p.point_a.z - 0.5).abs() < 1e-12,
                "on the floor's top: {p:?}"
            );
            assert!(matches!(p.id.b, FeatureId::Vertex(_)), "{p:?}");
            assert!(matches!(p.id.a, FeatureId::Face(_)), "{p:?}");
        }
    }
}

#[test]
fn a_box_over_the_edge_gives_the_corners_of_the_overlap() {
    // The crate hangs 0.3 past the floor's +x edge: the overlap is the rectangle
    // x ∈ [1.5, 2], y ∈ [-0.5, 0.5]; two of its corners are the floor's edge crossings.
    let floor = boxed(2.0, 2.0, 0.5);
    let crate_ = boxed(0.4, 0.5, 0.5);
    let pb = Pose::new(DVec3::new(1.9, 0.0, 0.99), DQuat::IDENTITY);
    let m = contact(&floor, &Pose::IDENTITY, &crate_, &pb, 0.0).unwrap();
    let want: Vec<DVec3> = [(1.5, -0.5), (2.0, -0.5), (2.0, 0.5), (1.5, 0.5)]
        .iter()
        .map(|&(x, y)| DVec3::new(x, y, 0.49))
        .collect();
    assert_close(
        &sorted(m.points.iter().map(|p| p.point_b)),
        &sorted(want.into_iter()),
        1e-12,
        "overlap corners",
    );
    let crossings = m
        .points
        .iter()
        .filter(|p| matches!((p.id.a, p.id.b), (FeatureId::Edge(_), FeatureId::Edge(_))))
        .count();
    assert_eq!(crossings, 2, "{m:?}");
}

#[test]
fn crossed_planks_touch_at_the_corners_of_their_square() {
    // A plank on a plank turned a quarter turn, exactly touching: the contact is the square
    // where they cross, its corners made by the two planks' edges.
    let plank = boxed(2.0, 0.25, 0.1);
    let pb = Pose::new(
        DVec3::new(0.0, 0.0, 0.2),
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2),
    );
    let m = contact(&plank, &Pose::IDENTITY, &plank, &pb, 0.0).unwrap();
    assert!(m.normal.distance(DVec3::Z) < 1e-12);
    let want: Vec<DVec3> = [(-0.25, -0.25), (0.25, -0.25), (0.25, 0.25), (-0.25, 0.25)]
        .iter()
        .map(|&(x, y)| DVec3::new(x, y, 0.1))
        .collect();
    assert_close(
        &sorted(m.points.iter().map(|p| p.point_b)),
        &sorted(want.into_iter()),
        1e-12,
        "square",
    );
    assert!(m.points.iter().all(|p| p.separation.abs() < 1e-12));
    // Both on an edge (turned 45° about their long axes), crossed: edge on edge, one point,
    // the exact deepest pair.
    let ridge = std::f64::consts::FRAC_PI_4;
    let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_x(ridge));
    let top = 0.35 / 2f64.sqrt();
    let pb = Pose::new(
        DVec3::new(0.0, 0.0, 2.0 * top - 0.01),
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2) * DQuat::from_rotation_x(ridge),
    );
    let m = contact(&plank, &pa, &plank, &pb, 0.0).unwrap();
    let exact = depth::enumerate(&plank, &pa, &plank, &pb).unwrap();
    assert_eq!(m.points.len(), 1, "{m:?}");
    assert!(matches!(
        exact.features,
        (FeatureId::Edge(_), FeatureId::Edge(_))
    ));
    assert!((m.points[0].separation + 0.01).abs() < 1e-12 && (exact.depth - 0.01).abs() < 1e-12);
    assert!(m.points[0].point_a.distance(exact.point_a) < 1e-12);
}

#[test]
fn speculative_points_have_positive_separation_and_stop_at_the_distance() {
    let floor = boxed(2.0, 2.0, 0.5);
    let crate_ = boxed(0.5, 0.5, 0.5);
    let pb = Pose::new(DVec3::new(0.0, 0.0, 1.01), DQuat::IDENTITY);
    let m = contact(&floor, &Pose::IDENTITY, &crate_, &pb, 0.02).unwrap();
    assert_eq!(m.points.len(), 4);
    assert!(m.points.iter().all(|p| (p.separation - 0.01).abs() < 1e-12));
    assert!(contact(&floor, &Pose::IDENTITY, &crate_, &pb, 0.005).is_none());
    // Tilted so that one edge is within the speculative distance and the other is not.
    let tilt = Pose::new(DVec3::new(0.0, 0.0, 1.01), DQuat::from_rotation_x(0.02));
    let m = contact(&floor, &Pose::IDENTITY, &crate_, &tilt, 0.012).unwrap();
    assert_eq!(m.points.len(), 2, "{m:?}");
    assert!(m.points.iter().all(|p| p.separation <= 0.012));
}

/// Random hull pairs and boxes near contact: every point on both surfaces, separation
/// along the normal, and, where the exact depth has a face, the deepest point at it.
#[test]
fn points_lie_on_both_surfaces_and_the_deepest_is_the_exact_depth() {
    let mut rng = Rng::new(0x3a1f);
    let mut shapes: Vec<ConvexPolytope> = (0..6)
        .map(|k| random_hull(&mut rng, 8 + 4 * k, 0.5).unwrap())
        .collect();
    shapes.push(boxed(0.5, 0.3, 0.2));
    shapes.push(boxed(1.0, 0.05, 1.0));
    let (mut multi, mut face_depths, mut checked) = (0, 0, 0);
    for _ in 0..4000 {
        let a = &shapes[rng.below(shapes.len() as u64) as usize];
        let b = &shapes[rng.below(shapes.len() as u64) as usize];
        let pa = Pose::new(
            rng.point_in(DVec3::splat(-0.1), DVec3::splat(0.1)),
            rng.rotation(),
        );
        let pb = Pose::new(
            pa.translation + rng.unit_vector() * rng.range(0.3, 1.2),
            rng.rotation(),
        );
        let Some(m) = contact(a, &pa, b, &pb, 0.05) else {
            continue;
        };
        checked += 1;
        assert!((m.normal.length() - 1.0).abs() < 1e-12);
        assert!(!m.points.is_empty() && m.points.len() <= 4);
        multi += usize::from(m.points.len() > 1);
        for p in &m.points {
            let (ha, hb) = (
                common::height(a, &pa, p.point_a),
                common::height(b, &pb, p.point_b),
            );
            assert!(
                ha.abs() < 1e-9 && hb.abs() < 1e-9,
                "off the surface: {ha} {hb} {m:?}"
            );
            let gap = p.point_b - p.point_a;
            assert!((gap.dot(m.normal) - p.separation).abs() < 1e-9, "{p:?}");
            assert!(
                (gap - m.normal * p.separation).length() < 1e-9,
                "not along n: {p:?}"
            );
            assert!(p.separation <= 0.05 + 1e-12);
        }
        if let Some(exact) = depth::enumerate(a, &pa, b, &pb) {
            let face = matches!(exact.features.0, FeatureId::Face(_))
                || matches!(exact.features.1, FeatureId::Face(_));
            if face && exact.depth > 0.0 {
                face_depths += 1;
                assert!(
                    (m.min_separation() + exact.depth).abs() < 1e-9,
                    "deepest {} vs depth {}: {m:?}",
                    m.min_separation(),
                    exact.depth
                );
            }
        }
    }
    assert!(
        checked > 1500 && multi > 300 && face_depths > 500,
        "{checked} {multi} {face_depths}"
    );
}

#[test]
fn ids_do_not_change_under_a_tiny_perturbation() {
    let mut rng = Rng::new(77);
    let floor = boxed(2.0, 2.0, 0.5);
    let hull = random_hull(&mut rng, 20, 0.5).unwrap();
    let crate_ = boxed(0.5, 0.3, 0.4);
    let mut compared = 0;
    for trial in 0..400 {
        let (b, pb) = if trial % 2 == 0 {
            let turn = DQuat::from_rotation_z(rng.range(0.0, 6.0));
            let x = rng.range(-1.0, 1.0);
            let pb = Pose::new(DVec3::new(x, rng.range(-1.0, 1.0), 0.9 - 0.01), turn);
            (&crate_, pb)
        } else {
            (&hull, Pose::new(DVec3::new(0.0, 0.0, 0.9), rng.rotation()))
        };
        let Some(m) = contact(&floor, &Pose::IDENTITY, b, &pb, 0.0) else {
            continue;
        };
        let ids: BTreeSet<ContactId> = m.points.iter().map(|p| p.id).collect();
        let nudged = Pose::new(
            pb.translation + rng.unit_vector() * 1e-6,
            (DQuat::from_scaled_axis(rng.unit_vector() * 1e-6) * pb.rotation).normalize(),
        );
        let Some(m2) = contact(&floor, &Pose::IDENTITY, b, &nudged, 0.0) else {
            continue;
        };
        let ids2: BTreeSet<ContactId> = m2.points.iter().map(|p| p.id).collect();
        assert_eq!(ids, ids2, "trial {trial}: {m:?} vs {m2:?}");
        compared += 1;
    }
    assert!(compared > 150, "{compared}");
}

#[test]
fn capsules_and_spheres_rest_on_points_and_lines() {
    let floor = Arc::new(boxed(2.0, 2.0, 0.5));
    let floor = manifold_rounded_plain(floor);
    // A capsule lying along x on the floor, sunk by 0.01: two points at its ends.
    let capsule = Rounded::capsule(0.6, 0.2).unwrap();
    let lying = Pose::new(
        DVec3::new(0.3, 0.1, 0.69),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
    );
    let m = manifold::rounded(&floor, &Pose::IDENTITY, &capsule, &lying, 0.0).unwrap();
    assert!(m.normal.distance(DVec3::Z) < 1e-12);
    let want = [DVec3::new(-0.3, 0.1, 0.49), DVec3::new(0.9, 0.1, 0.49)];
    assert_close(
        &sorted(m.points.iter().map(|p| p.point_b)),
        &want,
        1e-12,
        "capsule ends",
    );
    assert!(m.points.iter().all(|p| (p.separation + 0.01).abs() < 1e-12));
    // Hanging over the floor's edge: the point past the edge is cut there.
    let over = Pose::new(
        DVec3::new(1.8, 0.1, 0.69),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
    );
    let m = manifold::rounded(&floor, &Pose::IDENTITY, &capsule, &over, 0.0).unwrap();
    let xs: Vec<f64> = sorted(m.points.iter().map(|p| p.point_b))
        .iter()
        .map(|p| p.x)
        .collect();
    assert_eq!(xs.len(), 2);
    assert!(
        (xs[0] - 1.2).abs() < 1e-12 && (xs[1] - 2.0).abs() < 1e-12,
        "{xs:?}"
    );
    // Standing on its end: one point.
    let standing = Pose::new(DVec3::new(0.0, 0.0, 1.29), DQuat::IDENTITY);
    let m = manifold::rounded(&floor, &Pose::IDENTITY, &capsule, &standing, 0.0).unwrap();
    assert_eq!(m.points.len(), 1);
    assert!((m.points[0].separation + 0.01).abs() < 1e-12);
    // Two parallel capsules side by side, overlapping over x ∈ [0.2, 0.6].
    let left = Pose::new(DVec3::new(-0.4, 0.0, 0.0), lying.rotation);
    let right = Pose::new(DVec3::new(0.4, 0.39, 0.0), lying.rotation);
    let m = manifold::rounded(&capsule, &left, &capsule, &right, 0.0).unwrap();
    assert!(m.normal.distance(DVec3::Y) < 1e-12);
    let xs: Vec<f64> = sorted(m.points.iter().map(|p| p.point_a))
        .iter()
        .map(|p| p.x)
        .collect();
    assert_eq!(xs.len(), 2);
    assert!(
        (xs[0] + 0.2).abs() < 1e-12 && (xs[1] - 0.2).abs() < 1e-12,
        "{xs:?}"
    );
    assert!(m.points.iter().all(|p| (p.separation + 0.01).abs() < 1e-12));
    // A sphere: one point, exact.
    let ball = Rounded::sphere(0.3).unwrap();
    let m = manifold::rounded(
        &floor,
        &Pose::IDENTITY,
        &ball,
        &Pose::new(DVec3::new(0.5, 0.5, 0.79), DQuat::IDENTITY),
        0.0,
    )
    .unwrap();
    assert_eq!(m.points.len(), 1);
    assert!((m.points[0].separation + 0.01).abs() < 1e-12);
    assert!(m.points[0].point_a.distance(DVec3::new(0.5, 0.5, 0.5)) < 1e-12);
}

fn manifold_rounded_plain(p: Arc<ConvexPolytope>) -> Rounded {
    proxima::exact::rounded::plain(p)
}

/// parry3d-f64's box–box manifold as a peer: same normal, same deepest separation, and
/// where both keep the same reference face, the same points.
#[test]
fn box_box_manifolds_agree_with_parry() {
    use parry3d_f64::query::ContactManifold;
    use parry3d_f64::query::details::contact_manifold_cuboid_cuboid;
    use parry3d_f64::shape::Cuboid;
    let mut rng = Rng::new(0xb0c5);
    let (mut compared, mut same_points, mut ties) = (0, 0, 0);
    for _ in 0..3000 {
        let ha = DVec3::new(
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
        );
        let hb = DVec3::new(
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
            rng.range(0.1, 1.0),
        );
        let (a, b) = (cuboid(ha).unwrap(), cuboid(hb).unwrap());
        let pa = Pose::new(DVec3::ZERO, rng.rotation());
        // Resting-like poses (B turned about A's normal) half the time, any pose otherwise.
        let pb = if rng.below(2) == 0 {
            let up = pa.rotation * DVec3::Z;
            Pose::new(
                up * (ha.z + hb.z - rng.range(0.0, 0.05))
                    + pa.rotation * DVec3::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), 0.0),
                DQuat::from_axis_angle(up, rng.range(0.0, 6.0)) * pa.rotation,
            )
        } else {
            Pose::new(
                rng.unit_vector() * rng.range(0.1, (ha + hb).length()),
                rng.rotation(),
            )
        };
        let Some(ours) = contact(&a, &pa, &b, &pb, 0.0) else {
            continue;
        };
        let mut theirs = ContactManifold::<(), ()>::new();
        let pos12 = common::parry_pose(&pa).inv_mul(&common::parry_pose(&pb));
        contact_manifold_cuboid_cuboid(
            &pos12,
            &Cuboid::new(ha),
            &Cuboid::new(hb),
            0.0,
            &mut theirs,
        );
        if theirs.points.is_empty() {
            // parry keeps only penetrating or touching points; ours too at speculative 0.
            assert!(ours.min_separation() > -1e-9, "{ours:?}");
            continue;
        }
        compared += 1;
        let normal = pa.rotation * theirs.local_n1;
        let deepest = theirs
            .points
            .iter()
            .map(|p| p.dist)
            .fold(f64::INFINITY, f64::min);
        assert!(
            (deepest - ours.min_separation()).abs() < 1e-9,
            "deepest {deepest} vs {}",
            ours.min_separation()
        );
        if normal.dot(ours.normal) < 1.0 - 1e-9 {
            // Two axes give the same depth: both are right.
            ties += 1;
            continue;
        }
        // parry keeps every clipped point (up to 8), we keep at most 4 of them: ours must be
        // among its.
        let theirs_points: Vec<(DVec3, f64)> = theirs
            .points
            .iter()
            .map(|p| (pa.transform_point(p.local_p1), p.dist))
            .collect();
        let found = ours.points.iter().all(|p| {
            theirs_points
                .iter()
                .any(|(q, d)| q.distance(p.point_a) < 1e-9 && (d - p.separation).abs() < 1e-9)
        });
        if found {
            same_points += 1;
        }
    }
    assert!(compared > 800, "{compared}");
    assert_eq!(same_points, compared, "our points among parry's");
    assert!(ties * 20 < compared, "{ties} ties of {compared}");
}

#[test]
fn a_resting_crate_far_away_and_tiny_keeps_its_four_points() {
    for (scale, offset) in [(1e-4, 0.0), (1.0, 1e6), (1e3, -1e7), (1e-3, 1e4)] {
        let floor = boxed(2.0 * scale, 2.0 * scale, 0.5 * scale);
        let crate_ = boxed(0.5 * scale, 0.5 * scale, 0.5 * scale);
        let origin = DVec3::new(offset, -offset, offset);
        let pa = Pose::new(origin, DQuat::IDENTITY);
        let pb = Pose::new(
            origin + DVec3::new(0.7, -0.4, 0.99) * scale,
            DQuat::from_rotation_z(0.3),
        );
        let m = contact(&floor, &pa, &crate_, &pb, 0.0).expect("they overlap");
        assert_eq!(m.points.len(), 4, "scale {scale} offset {offset}");
        let tol = 1e-12 * (offset.abs() + scale);
        for p in &m.points {
            assert!((p.separation + 0.01 * scale).abs() < tol, "{p:?}");
            assert!((p.point_a.z - origin.z - 0.5 * scale).abs() < tol, "{p:?}");
        }
    }
}

/// A pair's cache lets go of its depth certificate when the pair is found apart (a crowd
/// keeps a cache for every pair near enough to touch, and those parted at the start held
/// theirs for good), and the answers along the way are those of a fresh cache (to
/// rounding).
#[test]
fn a_cache_lets_go_of_its_depth_certificate_when_the_pair_parts() {
    let mut rng = Rng::new(11);
    let a = random_hull(&mut rng, 24, 1.0).unwrap();
    let b = random_hull(&mut rng, 24, 1.0).unwrap();
    let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_z(0.3));
    let mut cache = ManifoldCache::default();
    // In (0.8 apart: overlapping), out (3 apart), in again.
    for (k, d) in [0.8, 0.81, 0.82, 3.0, 0.8].into_iter().enumerate() {
        let pb = Pose::new(
            DVec3::new(d, 0.1, 0.0),
            DQuat::from_rotation_x(0.1 * k as f64),
        );
        let warm = manifold::polytopes(&a, &pa, &b, &pb, 0.01, &mut cache);
        let cold = contact(&a, &pa, &b, &pb, 0.01);
        // The same facet, to rounding (a warm walk sums s otherwise than a cold one).
        match (&warm, &cold) {
            (Some(w), Some(c)) => {
                assert!((w.normal - c.normal).length() < 1e-12, "step {k}");
                assert!(
                    (w.min_separation() - c.min_separation()).abs() < 1e-12,
                    "step {k}"
                );
            }
            (w, c) => assert_eq!(w, c, "step {k}"),
        }
        let (full, settled) = cache.depth.certificates();
        if d > 2.0 {
            assert!(warm.is_none());
            assert_eq!((full, settled), (0, 0), "step {k}: released");
        } else {
            assert!(warm.is_some_and(|m| m.min_separation() < 0.0));
            assert!(full + settled > 0, "step {k}: a certificate");
        }
    }
}

/// A rounded body's points lie on its surface, and each point's separation is the gap
/// along the normal there, however the body is tilted: the radius moves a point of a
/// tilted core face by `r / cos θ`, not `r` (a rounded box resting on an edge had its far
/// points inside itself, by 2.3e-2 at 40°, and read them up to 3.1e-2 farther from the
/// floor than they are). Oracle: the analytic signed distance of a box swept by a ball and
/// of a capsule.
#[test]
fn rounded_points_lie_on_the_surfaces_at_any_tilt() {
    let box_sd = |h: DVec3, r: f64, pose: &Pose, x: DVec3| {
        let q = (pose.rotation.inverse() * (x - pose.translation)).abs() - h;
        q.max(DVec3::ZERO).length() + q.max_element().min(0.0) - r
    };
    let capsule_sd = |hh: f64, r: f64, pose: &Pose, x: DVec3| {
        let l = pose.rotation.inverse() * (x - pose.translation);
        (l - DVec3::new(0.0, 0.0, l.z.clamp(-hh, hh))).length() - r
    };
    type Sd<'a> = &'a dyn Fn(DVec3) -> f64;
    let check = |what: &str,
                 a: &Rounded,
                 pa: &Pose,
                 sd_a: Sd,
                 b: &Rounded,
                 pb: &Pose,
                 sd_b: Sd,
                 want: usize| {
        for (m, swapped) in [
            (manifold::rounded(a, pa, b, pb, 1.0), false),
            (
                manifold::rounded(b, pb, a, pa, 1.0).map(Manifold::swapped),
                true,
            ),
        ] {
            let m = m.unwrap_or_else(|| panic!("{what}: no contact"));
            assert_eq!(m.points.len(), want, "{what} (swapped {swapped}): {m:?}");
            let n = m.normal;
            for p in &m.points {
                let (on_a, on_b) = (sd_a(p.point_a), sd_b(p.point_b));
                let along = (p.point_b - p.point_a).dot(n);
                let across = (p.point_b - p.point_a - n * along).length();
                assert!(
                    on_a.abs() < 1e-12 && on_b.abs() < 1e-12,
                    "{what} (swapped {swapped}): off the surfaces by {on_a:e} / {on_b:e}: {p:?}"
                );
                assert!(
                    (along - p.separation).abs() < 1e-12 && across < 1e-12,
                    "{what} (swapped {swapped}): {along} {across:e} {p:?}"
                );
            }
        }
    };
    let h = DVec3::new(0.5, 0.4, 0.3);
    let r = 0.1;
    let rounded_box = Rounded::polytope(Arc::new(cuboid(h).unwrap()), r).unwrap();
    let floor_h = DVec3::new(2.0, 2.0, 0.4);
    let floors = [
        (
            manifold_rounded_plain(Arc::new(cuboid(floor_h + 0.1).unwrap())),
            0.0,
        ),
        (
            Rounded::polytope(Arc::new(cuboid(floor_h).unwrap()), 0.1).unwrap(),
            0.1,
        ),
    ];
    for (floor, floor_r) in &floors {
        let floor_sd = |x: DVec3| box_sd(floor_h + 0.1 - *floor_r, *floor_r, &Pose::IDENTITY, x);
        for degrees in [0.0, 0.5, 5.0, 20.0, 40.0] {
            for azimuth in [0.0, 0.3, 1.0] {
                for gap in [-0.01, 0.0, 0.02] {
                    let axis = DVec3::new(f64::cos(azimuth), f64::sin(azimuth), 0.0);
                    let rotation = DQuat::from_axis_angle(axis, f64::to_radians(degrees));
                    let reach = (0..3)
                        .map(|i| (rotation * DVec3::AXES[i]).z.abs() * h[i])
                        .sum::<f64>();
                    let pose = Pose::new(DVec3::new(0.2, -0.1, 0.5 + gap + reach + r), rotation);
                    // Face down within 1.1°: four points; an edge or a corner down: the
                    // floor's face is the reference, clipped against the box's most
                    // opposed face (four points too, the far ones high over the floor).
                    check(
                        &format!(
                            "rounded box at {degrees}° about {azimuth}, gap {gap}, floor radius {floor_r}"
                        ),
                        floor,
                        &Pose::IDENTITY,
                        &floor_sd,
                        &rounded_box,
                        &pose,
                        &|x| box_sd(h, r, &pose, x),
                        4,
                    );
                }
            }
        }
        // Rounded random hulls in any orientation resting on the floor (its top face the
        // reference, clipped against the hull's most opposed face): every point on both
        // surfaces, the hull's by enumeration over its core.
        let mut rng = Rng::new(0x50f7);
        let mut clipped = 0;
        for trial in 0..400 {
            let points = 8 + rng.below(24) as usize;
            let core = Arc::new(random_hull(&mut rng, points, 0.5).unwrap());
            let radius = rng.range(0.02, 0.3);
            let hull = Rounded::polytope(core.clone(), radius).unwrap();
            let rotation = rng.rotation();
            let low = core
                .vertices()
                .iter()
                .map(|&v| (rotation * v).z)
                .fold(f64::INFINITY, f64::min);
            let at = DVec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                0.5 + rng.range(-0.02, 0.02) + radius - low,
            );
            let pose = Pose::new(at, rotation);
            let sd = |x: DVec3| {
                brute::closest_feature(&core, pose.rotation.inverse() * (x - pose.translation)).1
                    - radius
            };
            let m = manifold::rounded(floor, &Pose::IDENTITY, &hull, &pose, 1.0)
                .unwrap_or_else(|| panic!("trial {trial}: no contact"));
            clipped += usize::from(m.points.len() > 1);
            for p in &m.points {
                let (on_a, on_b) = (floor_sd(p.point_a), sd(p.point_b));
                let along = (p.point_b - p.point_a).dot(m.normal);
                assert!(
                    on_a.abs() < 1e-12
                        && on_b.abs() < 1e-12
                        && (along - p.separation).abs() < 1e-12,
                    "trial {trial}: off the surfaces by {on_a:e} / {on_b:e}, {along} {p:?}"
                );
            }
        }
        assert!(clipped > 300, "{clipped}");
        // A capsule lying along x tilted within the face rule's 1.1°: two points.
        let capsule = Rounded::capsule(0.6, 0.2).unwrap();
        for degrees in [0.0, 0.3, 1.0] {
            let tilt = f64::to_radians(degrees);
            let rotation = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2 + tilt);
            let pose = Pose::new(
                DVec3::new(0.3, 0.1, 0.5 + 0.2 + 0.6 * tilt.sin() - 0.01),
                rotation,
            );
            check(
                &format!("capsule at {degrees}°, floor radius {floor_r}"),
                floor,
                &Pose::IDENTITY,
                &floor_sd,
                &capsule,
                &pose,
                &|x| capsule_sd(0.6, 0.2, &pose, x),
                2,
            );
        }
    }
}

/// A solver matches a pair's points frame to frame by id, so a stack at rest keeps its
/// ids under the poses' noise: equal crates stacked corner on corner (each corner was
/// named as an incident vertex, a reference corner or two edges crossing, as a nudge of
/// 1e-9 decided: 21% of ids kept frame to frame) and a layer turned 0.7 rad on the one
/// below (eight points reduced to four from the deepest, which a tilt of 1e-10 decided:
/// 60% kept). Every nudged manifold, within 1e-7 in position and turn (1e-9 where the
/// depth decides which points are kept), has the rested one's ids, and its points lie
/// within the nudge of the rested ones'.
#[test]
fn a_resting_stack_keeps_its_ids_under_noise() {
    let crate_ = boxed(0.5, 0.3, 0.2);
    let mut rng = Rng::new(0x1d5);
    for turn in [0.0, 0.7, std::f64::consts::FRAC_PI_2] {
        let rest = Pose::new(DVec3::new(0.0, 0.0, 0.4), DQuat::from_rotation_z(turn));
        let m = contact(&crate_, &Pose::IDENTITY, &crate_, &rest, 0.01).expect("they touch");
        let ids: Vec<ContactId> = m.points.iter().map(|p| p.id).collect();
        let keys: BTreeSet<u64> = ids.iter().map(ContactId::key).collect();
        assert_eq!(keys.len(), ids.len(), "turn {turn}: ids repeat: {m:?}");
        assert_eq!(ids.len(), 4, "turn {turn}: {m:?}");
        // Depths tie within 1e-9 of the spread: the turned layer's eight points are cut
        // to the same four under noise below that; corners are named within 1e-6.
        let nudges: &[f64] = if turn == 0.7 {
            &[1e-12, 1e-10, 1e-9]
        } else {
            &[1e-12, 1e-9, 1e-7]
        };
        for &nudge in nudges {
            for _ in 0..100 {
                let pose = nudged(&rest, &mut rng, nudge);
                let m2 = contact(&crate_, &Pose::IDENTITY, &crate_, &pose, 0.01).unwrap();
                let keys2: BTreeSet<u64> = m2.points.iter().map(|p| p.id.key()).collect();
                assert_eq!(keys, keys2, "turn {turn}, nudge {nudge}: {m:?} vs {m2:?}");
                for p in &m2.points {
                    let q = m.points.iter().find(|q| q.id == p.id).unwrap();
                    assert!(
                        q.point_b.distance(p.point_b) < 10.0 * nudge + 1e-12,
                        "turn {turn}, nudge {nudge}: {q:?} vs {p:?}"
                    );
                }
            }
        }
    }
}

/// Drums of many sides stacked cap on cap: their caps' corners (more than 32, found on a
/// grid) name the points at them as a scan of every corner does: each point with a
/// corner pair for its id lies within 1e-6 of the caps' size of both corners, each point
/// that lies that near a corner of each is named by them, and the ids hold under noise.
/// Two caps of 1,024 sides took 8 ms a manifold in the scan alone.
#[test]
fn many_sided_drums_stacked_name_their_corners_as_a_scan_does() {
    let mut rng = Rng::new(0xd2);
    for sides in [40, 256] {
        let drum = proxima::geometry::generators::cylinder(sides, 0.5, 0.2).unwrap();
        for turn in [0.0, std::f64::consts::PI / f64::from(sides)] {
            let rest = Pose::new(DVec3::new(0.0, 0.0, 0.4), DQuat::from_rotation_z(turn));
            let m = contact(&drum, &Pose::IDENTITY, &drum, &rest, 0.01).expect("they touch");
            assert_eq!(m.points.len(), 4, "{sides} sides, turn {turn}: {m:?}");
            let world = |p: &ConvexPolytope, pose: &Pose, f: FeatureId| match f {
                FeatureId::Vertex(v) => Some(pose.transform_point(p.vertex(v))),
                _ => None,
            };
            let snap = 1e-6;
            for q in &m.points {
                let near = |p: &ConvexPolytope, pose: &Pose, x: DVec3| {
                    (0..p.num_vertices() as u32)
                        .map(|v| (pose.transform_point(p.vertex(v)).distance(x), v))
                        .filter(|&(d, _)| d <= snap)
                        .min_by(|x, y| x.0.total_cmp(&y.0))
                        .map(|(_, v)| FeatureId::Vertex(v))
                };
                let (na, nb) = (
                    near(&drum, &Pose::IDENTITY, q.point_a),
                    near(&drum, &rest, q.point_b),
                );
                if let (Some(na), Some(nb)) = (na, nb) {
                    assert_eq!((q.id.a, q.id.b), (na, nb), "{sides}, turn {turn}: {q:?}");
                }
                if let Some(x) = world(&drum, &Pose::IDENTITY, q.id.a) {
                    assert!(x.distance(q.point_a) <= snap, "{sides}, {turn}: {q:?}");
                }
                if let Some(x) = world(&drum, &rest, q.id.b) {
                    assert!(
                        x.distance(q.point_b) <= 2.0 * snap,
                        "{sides}, {turn}: {q:?}"
                    );
                }
            }
            let keys: BTreeSet<u64> = m.points.iter().map(|p| p.id.key()).collect();
            for _ in 0..50 {
                let pose = nudged(&rest, &mut rng, 1e-10);
                let m2 = contact(&drum, &Pose::IDENTITY, &drum, &pose, 0.01).unwrap();
                let keys2: BTreeSet<u64> = m2.points.iter().map(|p| p.id.key()).collect();
                assert_eq!(keys, keys2, "{sides} sides, turn {turn}: {m:?} vs {m2:?}");
            }
        }
    }
}

/// Every pair within the speculative distance has a manifold, however its caches were
/// warmed: crates corner to corner, edge to edge and stacked, and random hulls stacked, at
/// the origin and at 1e3, on a random walk of poses by 1e-12 of their size a frame (they
/// stay within rounding of touching). Crates corner to corner at 1e3 were found touching
/// or overlapping by the closest-feature walk and a hair apart by every candidate of the
/// depth, and their contact was dropped.
#[test]
fn pairs_touching_within_rounding_keep_their_contact_on_any_walk() {
    let mut rng = Rng::new(0x0c0c);
    let k = boxed(0.5, 0.3, 0.2);
    let hull = random_hull(&mut rng, 8, 0.5).unwrap();
    let speculative = 1e-3;
    let mut contacts = 0;
    for (a, b, offset) in [
        (&k, &k, DVec3::new(1.0, 0.6, 0.4)),
        (&k, &k, DVec3::new(1.0, 0.0, 0.4)),
        (&k, &k, DVec3::new(0.0, 0.0, 0.4)),
        (&hull, &hull, DVec3::ZERO),
    ] {
        for origin in [DVec3::ZERO, DVec3::new(1e3, 750.0, -500.0)] {
            // The hulls stacked: B on A along z, the gap closed by the supports.
            let offset = if offset == DVec3::ZERO {
                let top = a.support_brute(DVec3::Z).1;
                let bottom = -b.support_brute(-DVec3::Z).1;
                DVec3::new(0.0, 0.0, top + bottom)
            } else {
                offset
            };
            let (mut pa, mut pb) = (
                Pose::new(origin, DQuat::IDENTITY),
                Pose::new(origin + offset, DQuat::IDENTITY),
            );
            let mut cache = ManifoldCache::default();
            for frame in 0..300 {
                for p in [&mut pa, &mut pb] {
                    p.translation += rng.unit_vector() * (1e-12 * rng.unit());
                    let turn = DQuat::from_scaled_axis(rng.unit_vector() * (1e-12 * rng.unit()));
                    p.rotation = (turn * p.rotation).normalize();
                }
                let gap = brute::polytope_distance(a, &pa, b, &pb).0;
                let m = manifold::polytopes(a, &pa, b, &pb, speculative, &mut cache);
                if gap <= speculative {
                    let m = m.unwrap_or_else(|| {
                        panic!("{offset} at {origin}, frame {frame}: {gap} apart, no contact")
                    });
                    assert!((m.normal.length() - 1.0).abs() < 1e-12, "{m:?}");
                    contacts += 1;
                }
            }
        }
    }
    assert!(contacts > 2000, "{contacts}");
    // A probe's frame: crates corner to corner at 1e3 within rounding of touching, the
    // caches holding the last frame's features.
    let mut cache = ManifoldCache::default();
    cache.walk.features = Some((FeatureId::Face(1), FeatureId::Edge(9)));
    cache.depth.features = Some((FeatureId::Edge(11), FeatureId::Edge(0)));
    let pa = Pose::new(
        DVec3::new(1000.0000000000026, 749.9999999999956, -499.99999999999756),
        DQuat::from_xyzw(
            -1.762329207599844e-12,
            -6.184572954890375e-13,
            2.16700934908377e-12,
            1.0,
        ),
    );
    let pb = Pose::new(
        DVec3::new(1000.9999999999991, 750.5999999999952, -499.59999999999826),
        DQuat::from_xyzw(
            1.3327625300500539e-12,
            -5.37572627463008e-13,
            3.0374260724495724e-12,
            1.0,
        ),
    );
    let gap = brute::polytope_distance(&k, &pa, &k, &pb).0;
    let m = manifold::polytopes(&k, &pa, &k, &pb, speculative, &mut cache);
    assert!(m.is_some(), "{gap} apart, no contact");
}

/// A speculative contact's nearest point is the bodies' distance: crates a gap of 1e-7 to
/// 1e-3 above equal crates, tilted by 1e-7 to 1e-3 and shifted across, their faces a hair
/// from parallel. The nearest corner can lie outside the other face's prism, where
/// clipping makes no point (a crate 2.64e-6 above another read 3.33e-6 at its nearest
/// point, and a solver would have let it close by the difference).
#[test]
fn a_speculative_contacts_nearest_point_is_the_distance() {
    let k = boxed(0.5, 0.5, 0.5);
    let mut rng = Rng::new(0x5bec);
    let mut checked = 0;
    for _ in 0..2000 {
        let gap = 10f64.powf(rng.range(-7.0, -3.0));
        let tilt = 10f64.powf(rng.range(-7.0, -3.0));
        // Shifted across by up to 0.9, or by a hair (the corners at the other's rim).
        let across = if rng.unit() < 0.5 { 0.9 } else { gap };
        let shift = DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0) * across;
        let turn = DQuat::from_scaled_axis(rng.unit_vector() * tilt);
        // B's lowest corner `gap` above A's top.
        let low = k.support_brute(turn.inverse() * -DVec3::Z).1;
        let pb = Pose::new(shift + DVec3::new(0.0, 0.0, 0.5 + gap + low), turn);
        let (distance, _, _) = brute::polytope_distance(&k, &Pose::IDENTITY, &k, &pb);
        let Some(m) = contact(&k, &Pose::IDENTITY, &k, &pb, 1e-2) else {
            panic!("{gap} {tilt} {shift}: no contact at {distance}");
        };
        let nearest = m.min_separation();
        assert!(
            (nearest - distance).abs() <= 1e-12,
            "gap {gap:e} tilt {tilt:e} shift {shift}: nearest point {nearest:e}, distance {distance:e}"
        );
        checked += 1;
    }
    assert_eq!(checked, 2000);
}

/// Crates, planks and hulls turned any way, brought a hair (1e-14 to 1e-5) apart or into
/// each other: the manifold's nearest point is the exact separation (the distance by
/// enumeration, or minus the depth). Clipping names a point made near the exact witness's
/// vertex after it, and such a point stood in for the witness though shallower: a hull
/// 1.66e-7 into a crate read 7.7e-8 at its deepest point, hulls 2.3e-10 apart 3.55e-10,
/// a pair 5.5e-12 into each other +3.7e-12 apart (164 of a probe's 3,754 such poses). The
/// clipped points' own rounding allows 4e-12.
#[test]
fn the_nearest_point_of_bodies_a_hair_apart_or_into_each_other_is_exact() {
    let mut rng = Rng::new(17);
    let shapes = [
        boxed(0.5, 0.5, 0.5),
        boxed(1.0, 0.1, 0.5),
        random_hull(&mut rng, 12, 0.5).unwrap(),
        random_hull(&mut rng, 40, 0.5).unwrap(),
    ];
    let speculative = 1e-6;
    let (mut apart, mut into) = (0, 0);
    for case in 0..4000 {
        let (a, b) = (&shapes[case % 4], &shapes[(case / 4) % 4]);
        let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
        let gap = sign * 10f64.powf(rng.range(-14.0, -5.0));
        let far = Pose::new(rng.unit_vector() * 4.0, rng.rotation());
        let pb = common::at_gap(a, &Pose::IDENTITY, b, far, gap);
        let truth = match depth::enumerate(a, &Pose::IDENTITY, b, &pb) {
            Some(p) => -p.depth,
            None => brute::polytope_distance(a, &Pose::IDENTITY, b, &pb).0,
        };
        // Clear of rounding, and of the speculative distance.
        if truth.abs() < 3e-14 || (truth - speculative).abs() < 1e-12 {
            continue;
        }
        let m = manifold::polytopes(
            a,
            &Pose::IDENTITY,
            b,
            &pb,
            speculative,
            &mut ManifoldCache::default(),
        );
        let label = format!("case {case}: gap {gap:e}, separation {truth:e}: {m:?}");
        if truth > speculative {
            assert!(m.is_none(), "{label}");
            continue;
        }
        let nearest = m.as_ref().expect(&label).min_separation();
        assert!(
            (nearest - truth).abs() <= 4e-12 + 1e-9 * truth.abs(),
            "nearest {nearest:e}, {label}"
        );
        if truth > 0.0 { apart += 1 } else { into += 1 }
    }
    assert!(apart > 1200 && into > 1200, "{apart} apart, {into} into");
}
