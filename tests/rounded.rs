//! Curved bodies (spheres, capsules, rounded polytopes): closed forms against analytic
//! answers, everything against parry3d-f64's `Ball`, `Capsule` and `RoundShape` on the same
//! shapes, and the degenerate cases (a zero radius, touching and concentric spheres).

mod common;

use std::sync::Arc;

use glam::{DQuat, DVec3};
use parry3d_f64::shape::{Ball, Segment, SharedShape};
use proxima::bodies::Pose;
use proxima::exact::rounded::{self, Contact};
use proxima::geometry::generators;
use proxima::geometry::rounded::{Core, Rounded};
use proxima::rng::Rng;

/// The core as a parry3d-f64 shape: the oracle runs on the cores, and the radii are added
/// as the rule says (parry's own rounded shapes carry a GJK margin of about 1e-6).
fn parry_core(r: &Rounded) -> SharedShape {
    match &r.core {
        Core::Point => SharedShape::new(Ball::new(0.0)),
        Core::Segment { half_height } => SharedShape::new(Segment::new(
            DVec3::new(0.0, 0.0, -half_height),
            DVec3::new(0.0, 0.0, *half_height),
        )),
        Core::Polytope(p) => SharedShape::new(common::to_parry(p)),
    }
}

/// parry's answer for the rounded pair: the core distance less the radii, or the core
/// penetration plus the radii.
fn parry_rounded(a: &Rounded, pose_a: &Pose, b: &Rounded, pose_b: &Pose) -> (f64, f64) {
    let (qa, qb) = (common::parry_pose(pose_a), common::parry_pose(pose_b));
    let (sa, sb) = (parry_core(a), parry_core(b));
    let radii = a.radius + b.radius;
    let core = parry3d_f64::query::distance(&qa, &*sa, &qb, &*sb)
        .unwrap()
        .distance;
    if core > 0.0 {
        return ((core - radii).max(0.0), radii - core);
    }
    let contact = parry3d_f64::query::contact(&qa, &*sa, &qb, &*sb, 0.0)
        .unwrap()
        .map_or(0.0, |c| -c.dist);
    (0.0, contact + radii)
}

fn shapes() -> Vec<(&'static str, Rounded)> {
    let cube = Arc::new(generators::cuboid(DVec3::new(0.5, 0.3, 0.4)).unwrap());
    let hull = Arc::new(generators::random_hull(&mut Rng::new(3), 24, 0.6).unwrap());
    vec![
        ("sphere", Rounded::sphere(0.5).unwrap()),
        ("point", Rounded::sphere(0.0).unwrap()),
        ("capsule", Rounded::capsule(0.6, 0.25).unwrap()),
        ("segment", Rounded::capsule(0.7, 0.0).unwrap()),
        ("box", Rounded::polytope(cube.clone(), 0.0).unwrap()),
        ("rounded box", Rounded::polytope(cube, 0.2).unwrap()),
        ("rounded hull", Rounded::polytope(hull, 0.1).unwrap()),
    ]
}

fn random_pose(rng: &mut Rng, spread: f64) -> Pose {
    Pose::new(
        rng.point_in(DVec3::splat(-spread), DVec3::splat(spread)),
        rng.rotation(),
    )
}

/// Every pair of shapes at random poses against parry3d-f64 on the cores with the radii
/// added: the distance (1e-12 relative for closed forms, 1e-9 where parry runs GJK), the
/// closest points that far apart, collide, and the penetration depth (1e-6 where parry runs
/// EPA), which moving B along the normal confirms.
#[test]
fn every_pair_agrees_with_parry() {
    let shapes = shapes();
    let mut rng = Rng::new(8);
    let (mut apart, mut overlapping, mut settled) = (0, 0, 0);
    for (na, a) in &shapes {
        for (nb, b) in &shapes {
            let polytopes =
                matches!(a.core, Core::Polytope(_)) || matches!(b.core, Core::Polytope(_));
            // Closed forms agree to rounding; parry's GJK on hulls to about 1e-10.
            let tol = if polytopes { 1e-9 } else { 1e-12 };
            for _ in 0..200 {
                let (pose_a, pose_b) = (random_pose(&mut rng, 0.3), random_pose(&mut rng, 1.1));
                let ours = rounded::distance(a, &pose_a, b, &pose_b);
                let (peer, peer_depth) = parry_rounded(a, &pose_a, b, &pose_b);
                assert!(
                    (ours.distance - peer).abs() <= tol * (1.0 + peer),
                    "{na} vs {nb}: ours {ours:?}, parry {peer}"
                );
                assert_eq!(
                    rounded::collide(a, &pose_a, b, &pose_b),
                    ours.contact != Contact::Separated
                );
                if ours.contact == Contact::Separated {
                    apart += 1;
                    let gap = ours.point_a.distance(ours.point_b);
                    assert!(
                        (gap - ours.distance).abs() <= 1e-12 * (1.0 + gap),
                        "{na} vs {nb}"
                    );
                    assert!(rounded::penetration(a, &pose_a, b, &pose_b).is_none());
                    continue;
                }
                overlapping += 1;
                let p = rounded::penetration(a, &pose_a, b, &pose_b)
                    .unwrap_or_else(|| panic!("{na} vs {nb}: {ours:?}"));
                let identity = (p.point_a - p.point_b).dot(p.normal);
                assert!((identity - p.depth).abs() < 1e-9, "{na} vs {nb}: {p:?}");
                // Where the cores overlap parry runs EPA (about 1e-6 on hulls, and it
                // under-reports now and then): a disagreement between two polytope cores
                // is settled by enumerating every facet of their Minkowski difference.
                let depth_tol = if polytopes { 1e-6 } else { 1e-12 };
                if (p.depth - peer_depth).abs() > depth_tol * (1.0 + p.depth) {
                    let (Core::Polytope(x), Core::Polytope(y)) = (&a.core, &b.core) else {
                        panic!("{na} vs {nb}: ours {p:?}, parry depth {peer_depth}")
                    };
                    let truth = proxima::exact::depth::enumerate(x, &pose_a, y, &pose_b)
                        .expect("the cores overlap")
                        .depth
                        + a.radius
                        + b.radius;
                    assert!(
                        (p.depth - truth).abs() <= 1e-9 * (1.0 + truth),
                        "{na} vs {nb}: ours {p:?}, enumeration {truth}, parry {peer_depth}"
                    );
                    settled += 1;
                }
                // Moving B by the depth along the normal separates them (up to touching).
                let moved = Pose::new(
                    pose_b.translation + p.normal * (p.depth + 1e-9),
                    pose_b.rotation,
                );
                assert!(
                    !rounded::collide(a, &pose_a, b, &moved),
                    "{na} vs {nb}: still overlapping after the move: {p:?}"
                );
                // ... and by a little less, they still touch: the depth is not too large
                // along its normal.
                if p.depth > 1e-6 {
                    let short = Pose::new(
                        pose_b.translation + p.normal * (p.depth - 1e-9),
                        pose_b.rotation,
                    );
                    assert!(
                        rounded::collide(a, &pose_a, b, &short),
                        "{na} vs {nb}: apart before the depth: {p:?}"
                    );
                }
            }
        }
    }
    eprintln!(
        "{apart} apart, {overlapping} overlapping; {settled} depths where parry's EPA differs, all equal to enumeration"
    );
    assert!(
        apart > 1_500 && overlapping > 1_500,
        "{apart} / {overlapping}"
    );
}

/// Closed forms against analytic answers, and the degenerate cases.
#[test]
fn analytic_cases_and_degenerate_ones() {
    let id = Pose::default();
    let at = |x: f64, y: f64, z: f64| Pose::new(DVec3::new(x, y, z), DQuat::IDENTITY);
    let ball = Rounded::sphere(1.0).unwrap();
    // Apart by 0.5, touching, overlapping by 0.5.
    for (x, want) in [(2.5, 0.5), (2.0, 0.0)] {
        let d = rounded::distance(&ball, &id, &ball, &at(x, 0.0, 0.0));
        assert_eq!(d.distance, want);
        assert_eq!(d.point_a, DVec3::X);
        assert_eq!(d.point_b, DVec3::new(x - 1.0, 0.0, 0.0));
    }
    let touching = rounded::distance(&ball, &id, &ball, &at(2.0, 0.0, 0.0));
    assert_eq!(touching.contact, Contact::Touching);
    let p = rounded::penetration(&ball, &id, &ball, &at(2.0, 0.0, 0.0)).unwrap();
    assert_eq!((p.depth, p.normal), (0.0, DVec3::X));
    let p = rounded::penetration(&ball, &id, &ball, &at(1.5, 0.0, 0.0)).unwrap();
    assert_eq!(
        (p.depth, p.normal, p.arbitrary_normal),
        (0.5, DVec3::X, false)
    );
    // Concentric: depth 2 along a normal the answer calls arbitrary.
    let p = rounded::penetration(&ball, &id, &ball, &id).unwrap();
    assert_eq!(p.depth, 2.0);
    assert!(p.arbitrary_normal && (p.normal.length() - 1.0).abs() < 1e-15);
    // A zero radius is a point: a point on the ball's surface touches it.
    let point = Rounded::sphere(0.0).unwrap();
    let d = rounded::distance(&ball, &id, &point, &at(0.0, 0.0, 1.0));
    assert_eq!((d.contact, d.distance), (Contact::Touching, 0.0));
    // A capsule lying on a box: its segment 0.25 above the top face, radius 0.25.
    let capsule = Rounded::capsule(1.0, 0.25).unwrap();
    let slab = Rounded::polytope(
        Arc::new(generators::cuboid(DVec3::new(2.0, 2.0, 0.5)).unwrap()),
        0.0,
    )
    .unwrap();
    let lying = Pose::new(
        DVec3::new(0.3, 0.0, 0.75),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
    );
    let d = rounded::distance(&slab, &id, &capsule, &lying);
    assert_eq!(d.contact, Contact::Touching, "{d:?}");
    // Crossed capsules, axes 1 apart, radii 0.25 each: 0.5 apart.
    let crossed = Pose::new(
        DVec3::new(0.0, 0.0, 0.0),
        DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
    );
    let up = Pose::new(DVec3::new(1.0, 0.0, 0.0), DQuat::IDENTITY);
    let d = rounded::distance(&capsule, &crossed, &capsule, &up);
    assert!((d.distance - 0.5).abs() < 1e-15, "{d:?}");
}

#[test]
fn bad_radii_are_named_errors() {
    for r in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(
            Rounded::sphere(r)
                .unwrap_err()
                .to_string()
                .contains("sphere radius")
        );
        assert!(
            Rounded::capsule(1.0, r)
                .unwrap_err()
                .to_string()
                .contains("capsule radius")
        );
    }
    assert!(
        Rounded::capsule(-0.5, 1.0)
            .unwrap_err()
            .to_string()
            .contains("half height")
    );
    let cube = Arc::new(generators::cuboid(DVec3::ONE).unwrap());
    assert!(
        Rounded::polytope(cube.clone(), -0.1)
            .unwrap_err()
            .to_string()
            .contains("rounding radius")
    );
    // Below a hull's least extent, as a hull is: a capsule of 1e-85 answered distances 30%
    // off and balls of 1e-200 passed through each other. 0 is a point (a segment).
    for tiny in [1e-85, 1e-200, 5e-324] {
        for e in [
            Rounded::sphere(tiny).map(|_| ()),
            Rounded::capsule(1.0, tiny).map(|_| ()),
            Rounded::capsule(tiny, 1.0).map(|_| ()),
            Rounded::polytope(cube.clone(), tiny).map(|_| ()),
        ] {
            let e = e.unwrap_err().to_string();
            assert!(e.contains("below 1e-70"), "{e}");
        }
    }
    assert!(Rounded::sphere(0.0).is_ok() && Rounded::capsule(0.0, 1e-70).is_ok());
}

/// Rounded bodies apart, touching and overlapping answer alike in `distance`, `collide` and
/// `penetration`, near the origin and far from it. Far out, cores a few units apart were
/// within their coordinates' rounding (14 at 1e15) and penetrated by both radii where
/// `distance` found them 1 apart; a capsule standing on a box at z = 0.4 (its core's end
/// placed at 0.4 − 0.1, rounded up) was 2.8e-17 apart where the doubles as written touch
/// exactly. Oracle: the positions' exact differences (Sterbenz) and exact sums of the
/// doubles as written (scaled to integers).
#[test]
fn far_and_touching_rounded_bodies_answer_alike_in_every_query() {
    let ball = Rounded::sphere(0.5).unwrap();
    let capsule = Rounded::capsule(0.5, 0.25).unwrap();
    let cube = Rounded::polytope(
        Arc::new(generators::cuboid(DVec3::splat(0.5)).unwrap()),
        0.0,
    )
    .unwrap();
    let at = |x: f64| Pose::new(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY);
    for far in [1e8, 1e14, 1e15] {
        for (a, b, reach) in [
            (&ball, &ball, 1.0),
            (&capsule, &ball, 0.75),
            (&cube, &ball, 1.0),
        ] {
            // Capsules lie along x here, so their reach along it is their half height too.
            let (a, pose_a) = if std::ptr::eq(a, &capsule) {
                (
                    a,
                    Pose::new(
                        DVec3::new(far, 0.0, 0.0),
                        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
                    ),
                )
            } else {
                (a, at(far))
            };
            let reach = if std::ptr::eq(a, &capsule) {
                reach + 0.5
            } else {
                reach
            };
            for apart in [2.0, 1.25] {
                let pose_b = at(far + reach + apart);
                let gap = (pose_b.translation.x - far) - reach;
                let d = rounded::distance(a, &pose_a, b, &pose_b);
                assert_eq!(d.contact, Contact::Separated, "{far} {apart}");
                assert!(
                    (d.distance - gap).abs() <= 1e-3 * gap,
                    "{far} {apart}: {d:?}"
                );
                assert!(!rounded::collide(a, &pose_a, b, &pose_b));
                let p = rounded::penetration(a, &pose_a, b, &pose_b);
                assert!(p.is_none(), "{far} {apart}: {p:?}");
            }
        }
    }
    // Sunk in a little at 1e8: the depth is the radius less the centre's height over the
    // face, not the whole radius (the centre 0.9e-6 out was within the rounding).
    let (half, r) = (1e-6, 3e-6);
    let tiny_box = Rounded::polytope(
        Arc::new(generators::cuboid(DVec3::splat(half)).unwrap()),
        0.0,
    )
    .unwrap();
    let pose_b = at(1e8 + 1.9e-6);
    let truth = r - ((pose_b.translation.x - 1e8) - half);
    let p = rounded::penetration(&tiny_box, &at(1e8), &Rounded::sphere(r).unwrap(), &pose_b)
        .expect("overlapping");
    assert!(
        (p.depth - truth).abs() < 1e-7,
        "{} against {truth}",
        p.depth
    );

    // Standing on a box, touching exactly as written.
    let scaled = |x: f64| (x * 2f64.powi(60)) as i128;
    let decimals = [0.1, 0.2, 0.3, 0.5, 0.7];
    let (mut touching, mut checked) = (0, 0);
    for hb in decimals {
        let floor = Rounded::polytope(Arc::new(generators::cuboid(DVec3::splat(hb)).unwrap()), 0.0)
            .unwrap();
        for hh in [0.1, 0.2, 0.3] {
            for r in [0.1, 0.2, 0.3] {
                // The height as a user writes it: the decimal sum, parsed.
                let z: f64 = format!("{:.1}", hb + hh + r).parse().unwrap();
                if scaled(z) != scaled(hb) + scaled(hh) + scaled(r) {
                    continue;
                }
                let pose = Pose::new(DVec3::new(0.0, 0.0, z), DQuat::IDENTITY);
                let rounded_box = Rounded::polytope(
                    Arc::new(generators::cuboid(DVec3::new(0.3, 0.2, hh)).unwrap()),
                    r,
                )
                .unwrap();
                for body in [Rounded::capsule(hh, r).unwrap(), rounded_box] {
                    checked += 1;
                    let d = rounded::distance(&floor, &Pose::IDENTITY, &body, &pose);
                    assert_eq!(d.contact, Contact::Touching, "{hb} {hh} {r} at {z}: {d:?}");
                    assert_eq!(d.distance, 0.0);
                    assert!(rounded::collide(&floor, &Pose::IDENTITY, &body, &pose));
                    let p = rounded::penetration(&floor, &Pose::IDENTITY, &body, &pose)
                        .expect("touching");
                    assert_eq!(p.depth, 0.0, "{hb} {hh} {r}");
                    touching += 1;
                }
            }
        }
    }
    assert!(
        checked >= 20 && touching == checked,
        "{touching} of {checked}"
    );
}

/// Scenes take `sphere` and `capsule` groups; a sphere's GPU box is exactly its radius
/// about its centre (a rotated sphere has the same box), a capsule's its core's grown by
/// the radius, and the CPU twin of the bounds pass contains every body.
#[test]
fn scenes_take_spheres_and_capsules() {
    use proxima::scene::Scene;
    let text = "seed = 1\n\
        [[group]]\nshape = { sphere = { radius = 0.5 } }\ncount = 50\nregion = { min = [-5, -5, -5], max = [5, 5, 5] }\nseed = 2\n\
        [[group]]\nshape = { capsule = { half_height = 1.0, radius = 0.25 } }\ncount = 50\nregion = { min = [-5, -5, -5], max = [5, 5, 5] }\nseed = 3\n";
    let scene = Scene::parse(
        std::path::Path::new("t.toml"),
        std::path::Path::new("."),
        text,
    )
    .unwrap();
    let bounds = &scene.crowd.shapes;
    assert_eq!(bounds.len(), 2);
    assert_eq!(bounds[0].half_extents, [0.5; 3]);
    assert_eq!(bounds[0].radius, 0.5);
    assert_eq!(bounds[1].half_extents, [0.25, 0.25, 1.25]);
    let frame = proxima::frame::cpu(&scene.crowd.bodies, &scene.crowd.shapes, None).unwrap();
    for (body, aabb) in scene.crowd.bodies.iter().zip(&frame.aabbs) {
        if body.shape == 0 {
            for (k, p) in body.position.iter().enumerate() {
                assert!(aabb.min[k] <= p - 0.5 && aabb.max[k] >= p + 0.5);
                // Tight up to the bounds pass's rounding margin (2^-17 of the coordinates);
                // a rotated cube's box would be up to √3 wide.
                assert!(
                    aabb.max[k] - aabb.min[k] < 1.0 + 1e-3,
                    "a sphere's box is tight"
                );
            }
        }
    }
}

/// Time of impact of rounded bodies: two spheres on straight lines against the analytic
/// root of |c + t v| = r_A + r_B; random rotating capsules, spheres and rounded boxes
/// against sampling of the exact collision test, the first contact bisected (never later
/// than it, no miss where sampling finds one, every reported contact within the
/// tolerance).
#[test]
fn time_of_impact_of_rounded_bodies() {
    use proxima::exact::advance::ToiState;
    use proxima::exact::rounded_toi::time_of_impact;
    use proxima::motion::ScrewMotion;
    let mut rng = Rng::new(77);
    let (ra, rb) = (0.4, 0.7);
    let (sa, sb) = (Rounded::sphere(ra).unwrap(), Rounded::sphere(rb).unwrap());
    let mut hits = 0;
    for _ in 0..500 {
        // From up to 4 away, heading back past A by up to its own distance, off by up
        // to 1.5: about half hit.
        let c0 = rng.point_in(DVec3::splat(-4.0), DVec3::splat(4.0));
        let off = rng.point_in(DVec3::splat(-1.5), DVec3::splat(1.5));
        let v = -c0 * rng.range(0.3, 2.0) + off;
        let ma = ScrewMotion::resting(Pose::default());
        let mb = ScrewMotion::between(
            Pose::new(c0, DQuat::IDENTITY),
            Pose::new(c0 + v, DQuat::IDENTITY),
        )
        .unwrap();
        let out = time_of_impact(&sa, ma, &sb, mb, None, None);
        // |c0 + t v|² = (ra + rb)²: the smaller root in [0, 1].
        let r = ra + rb;
        let (qa, qb, qc) = (v.dot(v), 2.0 * c0.dot(v), c0.dot(c0) - r * r);
        let disc = qb * qb - 4.0 * qa * qc;
        let truth = if qc <= 0.0 {
            Some(0.0)
        } else if disc >= 0.0 {
            let t = (-qb - disc.sqrt()) / (2.0 * qa);
            (0.0..=1.0).contains(&t).then_some(t)
        } else {
            None
        };
        match truth {
            None => assert_eq!(out.state, ToiState::Miss, "{out:?}"),
            Some(t) => {
                assert_ne!(out.state, ToiState::Miss, "truth {t}: {out:?}");
                assert!(
                    out.toi <= t + 1e-12 && out.toi >= t - 1e-8,
                    "truth {t}: {out:?}"
                );
                hits += 1;
            }
        }
    }
    assert!(hits > 50, "{hits}");
    // Rotating bodies against sampling.
    let shapes = shapes();
    let (mut sampled_hits, mut evaluations) = (0, 0);
    for _ in 0..600 {
        let a = &shapes[rng.below(shapes.len() as u64) as usize].1;
        let b = &shapes[rng.below(shapes.len() as u64) as usize].1;
        let start_a = random_pose(&mut rng, 0.3);
        let ma = ScrewMotion::between(
            start_a,
            Pose::new(
                start_a.translation,
                DQuat::from_axis_angle(rng.unit_vector(), 2.0) * start_a.rotation,
            ),
        )
        .unwrap();
        let from = rng.unit_vector() * rng.range(1.5, 3.0);
        let mb = ScrewMotion::between(
            Pose::new(from, rng.rotation()),
            Pose::new(-from * rng.range(0.0, 1.0), rng.rotation()),
        )
        .unwrap();
        let out = time_of_impact(a, ma, b, mb, None, None);
        evaluations += out.iterations;
        let samples = 2_000;
        let first = (0..=samples)
            .map(|k| f64::from(k) / f64::from(samples))
            .find(|&t| rounded::collide(a, &ma.at(t), b, &mb.at(t)));
        if out.state == ToiState::Hit {
            // A reported contact is one: the gap there, found independently, is within
            // the tolerance (1e-9 of the coordinates' size, about 5 here).
            let gap = rounded::distance(a, &ma.at(out.toi), b, &mb.at(out.toi)).distance;
            assert!(gap <= 1e-8, "gap {gap:e} at the reported contact: {out:?}");
        }
        match first {
            None => assert!(out.state == ToiState::Miss || out.state == ToiState::Hit),
            Some(t) => {
                assert_ne!(out.state, ToiState::Miss, "sampled contact at {t}: {out:?}");
                // The first contact, bisected between the samples around it.
                let (mut lo, mut hi) = ((t - 1.0 / f64::from(samples)).max(0.0), t);
                while t > 0.0 && hi - lo > 1e-13 {
                    let mid = 0.5 * (lo + hi);
                    if rounded::collide(a, &ma.at(mid), b, &mb.at(mid)) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                assert!(
                    out.toi <= hi + 1e-9,
                    "ours {} after the contact at {hi}",
                    out.toi
                );
                assert!(out.toi >= t - 1.0 / f64::from(samples) - 1e-9 || t == 0.0);
                sampled_hits += 1;
            }
        }
    }
    eprintln!(
        "rounded toi: {sampled_hits} sampled hits of 600, {:.1} evaluations per pair",
        f64::from(evaluations) / 600.0
    );
    assert!(sampled_hits > 50, "{sampled_hits}");
}

/// `scenes/particles.toml` parses (rescaled to 10,000 particles), holds only spheres and
/// capsules, and its CPU frame finds pairs.
/// Points and grains (spheres of radius 0 to 1e-9) crossing 1 in a step head on, or
/// passing 1e-12 apart: a hit at the analytic time, never later; passing 1e-6 apart (far
/// beyond the tolerance): none. The balls' step once read each of these as a miss.
#[test]
fn points_and_grains_do_not_pass_through_each_other() {
    use proxima::exact::advance::ToiState;
    use proxima::exact::rounded_toi::time_of_impact;
    use proxima::motion::ScrewMotion;
    let still = ScrewMotion::resting(Pose::IDENTITY);
    for radius in [0.0, 1e-12, 1e-9] {
        let (a, b) = (
            Rounded::sphere(radius).unwrap(),
            Rounded::sphere(radius).unwrap(),
        );
        for (offset, meets) in [(0.0, true), (1e-12, true), (1e-6, false)] {
            let motion = ScrewMotion::between(
                Pose::new(DVec3::X, DQuat::IDENTITY),
                Pose::new(DVec3::new(-1.0, 2.0 * offset, 0.0), DQuat::IDENTITY),
            )
            .unwrap();
            let out = time_of_impact(&a, still, &b, motion, None, None);
            let what = format!("radius {radius:e}, passing {offset:e} apart: {out:?}");
            if !meets {
                assert_eq!(out.state, ToiState::Miss, "{what}");
                continue;
            }
            assert_eq!(out.state, ToiState::Hit, "{what}");
            // Closest (or touching, 2 radius apart) at about t = 1/2 - radius.
            let truth = 0.5 - radius;
            assert!(
                out.toi <= truth + 1e-12 && out.toi >= truth - 1e-8,
                "{what}"
            );
        }
    }
}

/// Bodies whose cores share a point at the start (segments crossing, points together,
/// concentric spheres) answer a unit normal, not the zero direction between coincident
/// closest points: the crossing segments' common perpendicular.
#[test]
fn touching_cores_answer_a_unit_normal() {
    use proxima::exact::advance::ToiState;
    use proxima::exact::rounded_toi::time_of_impact;
    use proxima::motion::ScrewMotion;
    let along_x = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let segment = Rounded::capsule(1.0, 0.0).unwrap();
    let crossing = time_of_impact(
        &segment,
        ScrewMotion::resting(Pose::new(DVec3::ZERO, along_x)),
        &segment,
        ScrewMotion::between(
            Pose::new(DVec3::Z, DQuat::IDENTITY),
            Pose::new(-DVec3::Z, DQuat::IDENTITY),
        )
        .unwrap(),
        None,
        None,
    );
    assert_eq!(crossing.state, ToiState::Hit, "{crossing:?}");
    assert_eq!(crossing.toi, 0.0);
    assert!(
        (crossing.normal.abs() - DVec3::Y).length() < 1e-12,
        "{crossing:?}"
    );
    let still = ScrewMotion::resting(Pose::IDENTITY);
    let away = ScrewMotion::between(Pose::IDENTITY, Pose::new(DVec3::X, DQuat::IDENTITY)).unwrap();
    for (radius, state) in [(0.0, ToiState::Hit), (1.0, ToiState::Overlapping)] {
        let ball = Rounded::sphere(radius).unwrap();
        let out = time_of_impact(&ball, still, &ball, away, None, None);
        assert_eq!(out.state, state, "{out:?}");
        assert!((out.normal.length() - 1.0).abs() < 1e-12, "{out:?}");
    }
}

/// A ball (or a point) centred on a capsule's axis, and a capsule crossing another's axis,
/// at every hundredth along it: the cores share a point, so the depth is the radii and the
/// normal is square to the axis (to both axes), and moving B by the depth along the normal
/// leaves the bodies touching, a hair more apart (the answer's own promise; before, the
/// closest points' difference of about 1e-17, along the axis, was the normal at 97 of the
/// 201 places, and the bodies still overlapped after the move).
#[test]
fn cores_meeting_on_an_axis_answer_a_normal_square_to_it() {
    let capsule = Rounded::capsule(1.0, 0.5).unwrap();
    let across = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    let turns = [
        DQuat::IDENTITY,
        DQuat::from_rotation_y(0.7) * DQuat::from_rotation_x(1.1),
    ];
    for (b, radii, crossing) in [
        (Rounded::sphere(0.2).unwrap(), 0.7, false),
        (Rounded::sphere(0.0).unwrap(), 0.5, false),
        (Rounded::capsule(1.0, 0.5).unwrap(), 1.0, true),
    ] {
        for turn in turns {
            for k in -100..=100 {
                let z = f64::from(k) / 100.0;
                let pose_a = Pose::new(DVec3::new(0.1, -0.2, 0.3), turn);
                let along = pose_a.rotation * DVec3::Z;
                let rotation = if crossing { turn * across } else { turn };
                let pose_b = Pose::new(pose_a.translation + along * z, rotation);
                for swapped in [false, true] {
                    let (pa, ra, pb, rb) = if swapped {
                        (&pose_b, &b, &pose_a, &capsule)
                    } else {
                        (&pose_a, &capsule, &pose_b, &b)
                    };
                    let p = rounded::penetration(ra, pa, rb, pb).unwrap();
                    let what = format!("crossing {crossing}, z {z}, swapped {swapped}: {p:?}");
                    assert!((p.depth - radii).abs() < 1e-12, "{what}");
                    assert!(p.normal.dot(along).abs() < 1e-12, "{what}");
                    if crossing {
                        assert!(
                            p.normal.dot(pose_b.rotation * DVec3::Z).abs() < 1e-12,
                            "{what}"
                        );
                    }
                    let moved = |by: f64| Pose::new(pb.translation + p.normal * by, pb.rotation);
                    let touching = rounded::distance(ra, pa, rb, &moved(p.depth));
                    assert!(touching.distance < 1e-12, "{what}: {touching:?}");
                    let apart = rounded::distance(ra, pa, rb, &moved(p.depth + 1e-9));
                    assert_eq!(apart.contact, Contact::Separated, "{what}: {apart:?}");
                }
            }
        }
    }
}

/// Capsules whose axes cross at a point (radius 0: segments that touch; radius 0.1:
/// pressed 0.2 together) answer the crossing as the deepest points, offset by the radii
/// along the normal, with the axes' edges as features: a segment square to the normal
/// has every point as deep, and its ends were answered.
#[test]
fn crossing_capsules_answer_the_crossing() {
    let along_x = Pose::new(
        DVec3::ZERO,
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
    );
    let along_z = Pose::new(DVec3::new(0.0, 0.0, 0.3), DQuat::IDENTITY);
    for radius in [0.0, 0.1] {
        let capsule = Rounded::capsule(1.0, radius).unwrap();
        let p = rounded::penetration(&capsule, &along_x, &capsule, &along_z).unwrap();
        let what = format!("radius {radius}: {p:?}");
        assert!((p.depth - 2.0 * radius).abs() < 1e-12, "{what}");
        assert!((p.normal.abs() - DVec3::Y).length() < 1e-12, "{what}");
        assert!((p.point_a - p.normal * radius).length() < 1e-12, "{what}");
        assert!((p.point_b + p.normal * radius).length() < 1e-12, "{what}");
        assert!(
            ((p.point_a - p.point_b).dot(p.normal) - p.depth).abs() < 1e-12,
            "{what}"
        );
    }
}

#[test]
fn the_particle_scene_parses() {
    use proxima::scene::Scene;
    use proxima::shape::ShapeGeometry;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/particles.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let scene = Scene::parse_resized(&path, path.parent().unwrap(), &text, Some(10_000)).unwrap();
    assert!((9_000..=11_000).contains(&scene.crowd.bodies.len()));
    assert!(
        scene
            .geometry
            .iter()
            .all(|g| matches!(g, ShapeGeometry::Rounded(_)))
    );
    let frame = proxima::frame::cpu(
        &scene.crowd.bodies,
        &scene.crowd.shapes,
        Some(proxima::passes::broadphase::Method::Hash),
    )
    .unwrap();
    assert!(!frame.pairs.is_empty());
}

/// The Voronoi walks for a point or a segment against a polytope (what spheres and
/// capsules against hulls use) against enumeration of every feature: the same distance
/// (to 1e-12 of the coordinates' size), and a closest pair that is that far apart, on
/// random hulls of 4 to 200 points and on a box whose surroundings are sampled on a grid
/// of quarter units (points and segment ends on the regions' planes, segments parallel to
/// faces and edges), near and far. The walks give up on fewer than 1 in 1,000.
#[test]
fn point_and_segment_walks_equal_enumeration() {
    use proxima::exact::point_walk::{closest_to_point, closest_to_segment};
    use proxima::geometry::closest::segments_closest;
    use proxima::geometry::{ConvexPolytope, FeatureId, brute};

    let above = |p: &ConvexPolytope, x: DVec3| {
        (0..p.num_faces())
            .map(|f| (p.face_normal(f).dot(x) - p.face_offset(f), f))
            .fold((f64::NEG_INFINITY, 0), |a, b| if b.0 > a.0 { b } else { a })
    };
    // Segment–polytope distance by enumeration: the ends' closest features and every edge.
    let segment_oracle = |p: &ConvexPolytope, t: DVec3, h: DVec3| {
        let ends = brute::closest_feature(p, t)
            .1
            .min(brute::closest_feature(p, h).1);
        (0..p.num_edges())
            .map(|e| {
                let [a, b] = p.edge_vertices(e);
                let (x, y) = segments_closest(t, h, p.vertex(a), p.vertex(b));
                x.distance(y)
            })
            .fold(ends, f64::min)
    };
    let mut rng = Rng::new(0x9017);
    let bodies = hulls_and_a_box(&mut rng);
    let (mut points, mut segments, mut gave_up) = (0, 0, 0);
    for (k, p) in bodies.iter().enumerate() {
        let boxy = k == bodies.len() - 1;
        let sample = |rng: &mut Rng| {
            if boxy {
                DVec3::new(
                    f64::from(rng.below(17) as u32) * 0.25 - 2.0,
                    f64::from(rng.below(17) as u32) * 0.25 - 2.0,
                    f64::from(rng.below(17) as u32) * 0.25 - 2.0,
                )
            } else {
                let far = if rng.below(10) == 0 { 1e4 } else { 1.0 };
                rng.unit_vector() * rng.range(0.0, 3.0) * far
            }
        };
        for _ in 0..4000 {
            let x = sample(&mut rng);
            let (height, face) = above(p, x);
            if height <= 0.0 {
                continue;
            }
            let size = p.reach() + x.abs().max_element();
            let (_, want, _) = brute::closest_feature(p, x);
            points += 1;
            match closest_to_point(p, x, FeatureId::Face(face as u32), 1e-13 * size) {
                Some((_, q)) => {
                    let got = q.distance(x);
                    assert!(
                        (got - want).abs() <= 1e-12 * size,
                        "body {k}, point {x}: {got} against enumeration's {want}"
                    );
                }
                None => gave_up += 1,
            }
            let y = sample(&mut rng);
            let (t, h) = (x, y);
            // The segment must miss the polytope: clipped against every face, nothing left.
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for f in 0..p.num_faces() {
                let n = p.face_normal(f);
                let (at, slope) = (n.dot(t) - p.face_offset(f), n.dot(h - t));
                if slope == 0.0 {
                    if at > 0.0 {
                        lo = 2.0;
                    }
                } else if slope > 0.0 {
                    hi = hi.min(-at / slope);
                } else {
                    lo = lo.max(-at / slope);
                }
            }
            if lo <= hi {
                continue;
            }
            let size = size + y.abs().max_element();
            let want = segment_oracle(p, t, h);
            segments += 1;
            match closest_to_segment(p, t, h, FeatureId::Face(face as u32), 1e-13 * size) {
                Some((s, _, q)) => {
                    let got = (t + (h - t) * s).distance(q);
                    assert!(
                        (got - want).abs() <= 1e-12 * size,
                        "body {k}, segment {t}–{h}: {got} against enumeration's {want}"
                    );
                }
                None => gave_up += 1,
            }
        }
    }
    eprintln!("{points} points, {segments} segments, {gave_up} walks gave up");
    assert!(points > 10_000 && segments > 5_000, "{points} / {segments}");
    assert!(gave_up * 1000 < points + segments, "{gave_up} gave up");
}

/// A point or a segment core inside a polytope (a sphere's or a capsule's centre sunk into
/// a hull): its depth against enumeration of every candidate direction of the Minkowski
/// difference, both signs, each with a support query over every vertex (the face normals,
/// and the cross products of the segment with every edge), on random hulls of 4 to 200
/// points and a box sampled on a quarter-unit grid; the answer's points are that deep
/// along its unit normal.
#[test]
fn cores_sunk_into_hulls_match_enumeration() {
    let mut rng = Rng::new(0x51c);
    let bodies = hulls_and_a_box(&mut rng);
    let mut checked = 0;
    for (k, p) in bodies.iter().enumerate() {
        let boxy = k == bodies.len() - 1;
        let hull = rounded::plain(Arc::new(p.clone()));
        let pose = random_pose(&mut rng, 2.0);
        let inside =
            |x: DVec3| (0..p.num_faces()).all(|f| p.face_normal(f).dot(x) - p.face_offset(f) < 0.0);
        for _ in 0..1500 {
            let grid = |rng: &mut Rng| {
                DVec3::new(
                    f64::from(rng.below(9) as u32) * 0.25 - 1.0,
                    f64::from(rng.below(5) as u32) * 0.25 - 0.5,
                    f64::from(rng.below(3) as u32) * 0.25 - 0.25,
                )
            };
            let t = if boxy {
                grid(&mut rng)
            } else {
                rng.unit_vector() * rng.range(0.0, 0.6)
            };
            if !inside(t) {
                continue;
            }
            let h = if rng.below(3) == 0 {
                t
            } else if boxy {
                grid(&mut rng) * 2.0
            } else {
                rng.unit_vector() * rng.range(0.0, 2.0)
            };
            // Enumeration in the hull's frame: every candidate, both signs, s(u) the
            // hull's support less the core's least projection.
            let mut dirs: Vec<DVec3> = (0..p.num_faces()).map(|f| p.face_normal(f)).collect();
            for e in 0..p.num_edges() {
                let [a, b] = p.edge_vertices(e);
                if let Some(u) = (h - t).cross(p.vertex(b) - p.vertex(a)).try_normalize() {
                    dirs.push(u);
                }
            }
            let want = dirs
                .iter()
                .flat_map(|&u| [u, -u])
                .map(|u| {
                    let reach = p
                        .vertices()
                        .iter()
                        .map(|v| u.dot(*v))
                        .fold(f64::MIN, f64::max);
                    reach - u.dot(t).min(u.dot(h))
                })
                .fold(f64::INFINITY, f64::min);
            // The core as a body of radius 0, placed by the hull's pose.
            let (core, core_pose) = if t == h {
                (
                    Rounded::sphere(0.0).unwrap(),
                    Pose::new(pose.transform_point(t), DQuat::IDENTITY),
                )
            } else {
                let mid = pose.transform_point(0.5 * (t + h));
                let axis = pose.rotation * (h - t);
                let turn = DQuat::from_rotation_arc(DVec3::Z, axis.normalize());
                (
                    Rounded::capsule(0.5 * axis.length(), 0.0).unwrap(),
                    Pose::new(mid, turn),
                )
            };
            for (flip, got) in [
                (false, rounded::penetration(&hull, &pose, &core, &core_pose)),
                (true, rounded::penetration(&core, &core_pose, &hull, &pose)),
            ] {
                let got = got.expect("a core inside the hull penetrates it");
                let scale = 2.0 + pose.translation.abs().max_element();
                assert!(
                    (got.depth - want).abs() <= 1e-12 * scale,
                    "body {k}, core {t}..{h} (flipped {flip}): {} against enumeration's {want}",
                    got.depth
                );
                assert!((got.normal.length() - 1.0).abs() < 1e-12);
                let along = (got.point_a - got.point_b).dot(got.normal);
                assert!(
                    (along - got.depth).abs() <= 1e-9 * scale,
                    "{along} vs {}",
                    got.depth
                );
                // The witnesses face each other along the normal: the core's point, and
                // its foot on the hull's surface (not any point of the support plane).
                let (on_hull, on_core) = if flip {
                    (got.point_b, got.point_a)
                } else {
                    (got.point_a, got.point_b)
                };
                let off = (got.point_a - got.point_b - got.normal * got.depth).length();
                assert!(
                    off <= 1e-9 * scale,
                    "body {k}, core {t}..{h}: witnesses {off} off the normal"
                );
                let local = pose.inverse_transform_point(on_hull);
                let height = (0..p.num_faces())
                    .map(|f| p.face_normal(f).dot(local) - p.face_offset(f))
                    .fold(f64::MIN, f64::max);
                assert!(
                    height.abs() <= 1e-9 * scale,
                    "body {k}: hull witness {height} off its surface: core {t}..{h} flipped {flip}, {got:?}"
                );
                let on_axis = pose.inverse_transform_point(on_core);
                let (foot, _) = proxima::geometry::closest::closest_on_segment(t, h, on_axis);
                let gap = foot.distance(on_axis);
                assert!(
                    gap <= 1e-9 * scale,
                    "body {k}: core witness {gap} off the core"
                );
                checked += 1;
            }
        }
    }
    eprintln!("{checked} sunk cores, each way round, equal to enumeration");
    assert!(checked > 3000, "{checked}");
}

/// Random hulls of 4, 8, 30 and 200 points about the origin, and a box (1, 0.5, 0.25):
/// the bodies the point, segment and sunk-core tests probe.
fn hulls_and_a_box(rng: &mut Rng) -> Vec<proxima::geometry::ConvexPolytope> {
    let mut bodies: Vec<_> = [4, 8, 30, 200]
        .iter()
        .map(|&k| generators::random_hull(rng, k, 1.0).unwrap())
        .collect();
    bodies.push(generators::cuboid(DVec3::new(1.0, 0.5, 0.25)).unwrap());
    bodies
}
