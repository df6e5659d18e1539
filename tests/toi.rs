//! Time of impact by conservative advancement against an independent truth: the exact
//! separating-axis test sampled densely along the screw motion, its first overlap refined
//! by bisection, and enumeration of every feature pair for the distance at a reported
//! contact; analytic times for translating boxes; parry3d-f64's two time-of-impact queries
//! as peers.

mod common;

use std::f64::consts::PI;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::advance::{
    Advancement, ToiInput, ToiOutput, ToiState, apart_throughout, balls_stay_apart, holds_or_parts,
    time_of_impact, times_of_impact,
};
use proxima::exact::sat;
use proxima::geometry::brute::polytope_distance;
use proxima::geometry::{ConvexPolytope, generators};
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

fn pose(t: DVec3, q: DQuat) -> Pose {
    Pose::new(t, q)
}

fn cuboid(x: f64, y: f64, z: f64) -> ConvexPolytope {
    generators::cuboid(DVec3::new(x, y, z)).unwrap()
}

fn screw(start: Pose, end: Pose) -> ScrewMotion {
    ScrewMotion::between(start, end).unwrap()
}

fn toi(a: &ConvexPolytope, ma: ScrewMotion, b: &ConvexPolytope, mb: ScrewMotion) -> ToiOutput {
    time_of_impact(&ToiInput::new(a, ma, b, mb))
}

fn tolerance(a: &ConvexPolytope, ma: ScrewMotion, b: &ConvexPolytope, mb: ScrewMotion) -> f64 {
    Advancement::new(ToiInput::new(a, ma, b, mb)).tolerance()
}

fn overlap_at(
    a: &ConvexPolytope,
    ma: &ScrewMotion,
    b: &ConvexPolytope,
    mb: &ScrewMotion,
    t: f64,
) -> bool {
    sat::intersects(a, &ma.at(t), b, &mb.at(t))
}

/// The first time the bodies share a point: `samples` uniform times tested by the exact
/// separating-axis test, the first overlapping one refined by bisection to 1e-13. It can
/// miss a contact shorter than one sample interval (a graze); the tests settle those by
/// enumeration.
fn sampled_truth(
    a: &ConvexPolytope,
    ma: &ScrewMotion,
    b: &ConvexPolytope,
    mb: &ScrewMotion,
    samples: u32,
) -> Option<f64> {
    if overlap_at(a, ma, b, mb, 0.0) {
        return Some(0.0);
    }
    let first =
        (1..=samples).find(|&i| overlap_at(a, ma, b, mb, f64::from(i) / f64::from(samples)))?;
    let (mut lo, mut hi) = (
        f64::from(first - 1) / f64::from(samples),
        f64::from(first) / f64::from(samples),
    );
    while hi - lo > 1e-13 {
        let mid = 0.5 * (lo + hi);
        if overlap_at(a, ma, b, mb, mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Distance by enumeration of every feature pair at time `t`.
fn distance_at(
    a: &ConvexPolytope,
    ma: &ScrewMotion,
    b: &ConvexPolytope,
    mb: &ScrewMotion,
    t: f64,
) -> f64 {
    if overlap_at(a, ma, b, mb, t) {
        return 0.0;
    }
    polytope_distance(a, &ma.at(t), b, &mb.at(t)).0
}

#[test]
fn the_motion_is_the_screw_motion_between_the_poses() {
    // A quarter turn about z with a shift: halfway is an eighth turn, the origin halfway.
    let start = pose(DVec3::new(1.0, 2.0, 3.0), DQuat::IDENTITY);
    let end = pose(DVec3::new(3.0, 2.0, 3.0), DQuat::from_rotation_z(PI / 2.0));
    let m = screw(start, end);
    let half = m.at(0.5);
    assert!((half.translation - DVec3::new(2.0, 2.0, 3.0)).length() < 1e-15);
    assert!(
        half.rotation
            .angle_between(DQuat::from_rotation_z(PI / 4.0))
            < 1e-12
    );
    assert_eq!(m.at(0.0), start);
    assert_eq!(m.at(1.0), end);
    // Constant angular speed (slerp, not nlerp): equal angles in equal times.
    for k in 0..=8 {
        let t = f64::from(k) / 8.0;
        let angle = m.at(t).rotation.angle_between(DQuat::IDENTITY);
        assert!((angle - t * PI / 2.0).abs() < 1e-12, "t {t}: angle {angle}");
        assert_eq!(m.at_origin(t), m.at(t).translation, "t {t}");
    }
    // A point of the body moves at v + ω × (x − T(t)) (finite differences).
    let r0 = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 0.7);
    let r1 = DQuat::from_axis_angle(DVec3::new(-0.3, 1.0, 2.0).normalize(), 2.1) * r0;
    let m = screw(pose(DVec3::ZERO, r0), pose(DVec3::new(0.5, -1.0, 2.0), r1));
    let local = DVec3::new(0.3, -1.2, 0.8);
    for t in [0.1, 0.5, 0.9] {
        let h = 1e-6;
        let x = |s: f64| m.at(s).transform_point(local);
        let numeric = (x(t + h) - x(t - h)) / (2.0 * h);
        let analytic = m.linear() + m.angular().cross(x(t) - m.at(t).translation);
        assert!(
            (numeric - analytic).length() < 1e-8,
            "{numeric} vs {analytic}"
        );
    }
    // Three quarters of a turn one way is a quarter turn the other way: the shorter arc.
    let m = screw(
        Pose::IDENTITY,
        pose(DVec3::ZERO, DQuat::from_rotation_z(1.5 * PI)),
    );
    assert!(
        m.at(0.5)
            .rotation
            .angle_between(DQuat::from_rotation_z(-PI / 4.0))
            < 1e-12
    );
    // The swing radius is the distance from the axis, not from the origin.
    let m = screw(
        Pose::IDENTITY,
        pose(DVec3::ZERO, DQuat::from_rotation_z(1.0)),
    );
    assert_eq!(m.swing_radius(&[DVec3::new(3.0, 4.0, 100.0)]), 5.0);
}

/// A motion made from velocities turns by the velocity's turn as given, and is the screw
/// motion between its two poses to rounding: the same end pose, the same angular velocity
/// to 1e-14, the same pose at every time.
#[test]
fn a_motion_from_velocities_is_the_motion_between_its_poses() {
    let mut rng = Rng::new(21);
    for _ in 0..2000 {
        let start = pose(
            rng.point_in(DVec3::splat(-100.0), DVec3::splat(100.0)),
            rng.rotation(),
        );
        let (v, w) = (
            rng.unit_vector() * 5.0,
            rng.unit_vector() * rng.range(0.0, 3.0),
        );
        let dt = rng.range(0.01, 1.0);
        let m = ScrewMotion::from_velocity(start, v, w, dt).unwrap();
        let between = screw(m.start(), m.end());
        assert!((m.angular() - w * dt).length() == 0.0);
        assert!(
            (m.angular() - between.angular()).length() < 1e-14 * (1.0 + w.length() * dt),
            "{} vs {}",
            m.angular(),
            between.angular()
        );
        assert!((m.end().translation - (start.translation + v * dt)).length() < 1e-12);
        for k in 0..=4 {
            let s = f64::from(k) / 4.0;
            let (p, q) = (m.at(s), between.at(s));
            assert!(p.translation.distance(q.translation) < 1e-12);
            // The quaternions' difference: an angle by acos loses half the digits.
            let (a, b) = (p.rotation, q.rotation);
            assert!((a - b).length().min((a + b).length()) < 1e-14, "{a} vs {b}");
        }
    }
    // A start that is no pose is named.
    let nan = pose(DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY);
    let e = ScrewMotion::from_velocity(nan, DVec3::X, DVec3::ZERO, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("start translation"), "{e}");
}

/// A crate touching another from above holds or parts that contact exactly where no point
/// of it can come down by more than half the tolerance over the step: sliding, turning
/// about the normal, lifting off, or pressing in by a quarter of the tolerance; pressing
/// in by twice it or tipping by a thousandth of a radian can close. Where it holds, the
/// exact depth along the motion, sampled, stays within half the tolerance.
#[test]
fn a_contact_holds_where_no_point_approaches_along_the_normal() {
    let unit = cuboid(0.5, 0.5, 0.5);
    let below = ScrewMotion::resting(Pose::IDENTITY);
    let start = pose(DVec3::new(0.3, -0.2, 1.0), DQuat::from_rotation_z(0.4));
    let tau = Advancement::new(ToiInput::new(
        &unit,
        below,
        &unit,
        ScrewMotion::resting(start),
    ))
    .tolerance();
    let moved = |shift: DVec3, turn: DQuat| {
        screw(
            start,
            pose(start.translation + shift, turn * start.rotation),
        )
    };
    let cases = [
        (
            "sliding",
            moved(DVec3::new(2.0, 1.0, 0.0), DQuat::IDENTITY),
            true,
        ),
        (
            "turning about z",
            moved(DVec3::ZERO, DQuat::from_rotation_z(2.5)),
            true,
        ),
        (
            "lifting",
            moved(DVec3::Z, DQuat::from_rotation_z(-1.0)),
            true,
        ),
        (
            "pressing a quarter of τ",
            moved(-DVec3::Z * tau / 4.0, DQuat::IDENTITY),
            true,
        ),
        (
            "pressing twice τ",
            moved(-DVec3::Z * tau * 2.0, DQuat::IDENTITY),
            false,
        ),
        (
            "tipping",
            moved(DVec3::ZERO, DQuat::from_rotation_x(1e-3)),
            false,
        ),
    ];
    for (label, m, holds) in cases {
        // B's reach about its origin: a unit cube's half diagonal.
        let said = holds_or_parts(DVec3::Z, (unit.radius(), &below), (unit.radius(), &m));
        assert_eq!(said, holds, "{label}");
        let depth_at = |s: f64| {
            proxima::exact::depth::walk(&proxima::exact::depth::DepthInput::new(
                &unit,
                Pose::IDENTITY,
                &unit,
                m.at(s),
            ))
            .map_or(0.0, |p| p.depth)
        };
        if holds {
            for k in 0..=16 {
                let depth = depth_at(f64::from(k) / 16.0);
                assert!(
                    depth <= tau / 2.0 + 1e-15,
                    "{label}: {depth} deep at {k}/16"
                );
            }
        } else {
            // And these do close: deeper than half the tolerance by the end.
            assert!(depth_at(1.0) > tau / 2.0, "{label}");
        }
    }
}

#[test]
fn bad_motions_are_named_errors() {
    let half_turn = pose(DVec3::ZERO, DQuat::from_rotation_x(PI));
    let e = ScrewMotion::between(Pose::IDENTITY, half_turn)
        .unwrap_err()
        .to_string();
    assert!(e.contains("half a turn") && e.contains("ambiguous"), "{e}");
    let nan = pose(DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY);
    let e = ScrewMotion::between(Pose::IDENTITY, nan)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("end translation") && e.contains("not finite"),
        "{e}"
    );
    let long = pose(DVec3::ZERO, DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0));
    let e = ScrewMotion::between(long, Pose::IDENTITY)
        .unwrap_err()
        .to_string();
    assert!(e.contains("start rotation is not a unit quaternion"), "{e}");
    // Past the coordinates' range, as a World's body or a query's pose would be.
    let far = pose(DVec3::new(0.0, 2e75, 0.0), DQuat::IDENTITY);
    let e = ScrewMotion::between(Pose::IDENTITY, far)
        .unwrap_err()
        .to_string();
    assert!(e.contains("end translation") && e.contains("1e75"), "{e}");
    let e = ScrewMotion::from_velocity(Pose::IDENTITY, DVec3::ZERO, DVec3::Z * 4.0, 1.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("half a turn"), "{e}");
}

/// A random convex pair on a random screw motion each, about half of them meeting, apart
/// at the start.
fn random_case(rng: &mut Rng) -> (ConvexPolytope, ScrewMotion, ConvexPolytope, ScrewMotion) {
    loop {
        let hull = |rng: &mut Rng| {
            let (k, radius) = (6 + rng.below(11) as usize, rng.range(0.3, 1.0));
            generators::random_hull(rng, k, radius).unwrap()
        };
        let (a, b) = (hull(rng), hull(rng));
        let turn = |rng: &mut Rng, q: DQuat| {
            DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.9 * PI)) * q
        };
        let ra = rng.rotation();
        let ma = screw(
            pose(DVec3::ZERO, ra),
            pose(rng.unit_vector() * rng.range(0.0, 0.5), turn(rng, ra)),
        );
        let u = rng.unit_vector();
        let rb = rng.rotation();
        let start_b = u * rng.range(2.0, 3.0);
        let end_b = start_b - u * rng.range(1.0, 4.0) + rng.unit_vector() * rng.range(0.0, 1.5);
        let mb = screw(pose(start_b, rb), pose(end_b, turn(rng, rb)));
        if !overlap_at(&a, &ma, &b, &mb, 0.0) {
            return (a, ma, b, mb);
        }
    }
}

/// What [`check_against_truth`] found.
struct Agreement {
    hits: usize,
    grazes: usize,
    iterations: u64,
    most: u32,
}

/// Advancement on `count` cases from `case` against the sampled truth: every reported hit
/// is a contact by enumeration and never later than the truth (+1e-6), no contact is
/// missed, and nothing else is reported for a pair apart at the start.
fn check_against_truth(
    count: usize,
    mut case: impl FnMut() -> (ConvexPolytope, ScrewMotion, ConvexPolytope, ScrewMotion),
) -> Agreement {
    let (mut hits, mut grazes, mut iterations, mut most) = (0, 0, 0u64, 0);
    let mut failures = Vec::new();
    for case in (0..count).map(|i| (i, case())) {
        let (case, (a, ma, b, mb)) = case;
        let out = toi(&a, ma, &b, mb);
        let tol = tolerance(&a, ma, &b, mb);
        iterations += u64::from(out.iterations);
        most = most.max(out.iterations);
        let truth = sampled_truth(&a, &ma, &b, &mb, 256);
        let contact_at = |t| distance_at(&a, &ma, &b, &mb, t);
        match (out.state, truth) {
            (ToiState::Hit, _) => {
                hits += 1;
                // Every reported time is a contact (enumeration: within the tolerance)...
                let d = contact_at(out.toi);
                if d > tol * 1.000001 {
                    failures.push(format!(
                        "{case}: hit at {} where the distance is {d:e} (walk {:e}, tolerance {tol:e})",
                        out.toi, out.distance
                    ));
                }
                match truth {
                    // ...never later than the truth, and within 1e-4 of it unless the
                    // samples missed an earlier graze (the contact above proves it real).
                    Some(t) if out.toi > t + 1e-6 => {
                        failures.push(format!("{case}: toi {} later than the truth {t}", out.toi));
                    }
                    Some(t) if out.toi < t - 1e-4 => grazes += 1,
                    Some(_) => {}
                    None => grazes += 1,
                }
            }
            (ToiState::Miss, Some(t)) => {
                failures.push(format!("{case}: missed the contact at {t}"));
            }
            (ToiState::Miss, None) => {}
            (state, _) => failures.push(format!("{case}: {state:?} on a pair apart at the start")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures: {:#?}",
        failures.len(),
        &failures[..failures.len().min(20)]
    );
    Agreement {
        hits,
        grazes,
        iterations,
        most,
    }
}

#[test]
fn five_thousand_random_rotating_pairs_match_the_sampled_truth() {
    let mut rng = Rng::new(0x701);
    let Agreement {
        hits,
        grazes,
        iterations,
        most,
    } = check_against_truth(5000, || random_case(&mut rng));
    assert!(
        (1500..3500).contains(&hits),
        "{hits} of 5000 hit: the sample is lopsided"
    );
    assert!(grazes < 50, "{grazes} contacts the samples missed");
    println!(
        "{hits} hits, {grazes} grazes between samples, {:.1} iterations on average, {most} at most",
        iterations as f64 / 5000.0
    );
}

/// A start that proves nothing (NaN) is the step's start: the same answers as advancing
/// from 0, never a run from a NaN time.
#[test]
fn a_nan_start_is_the_steps_start() {
    use proxima::exact::advance::Progress;
    let mut rng = Rng::new(0x704);
    for _ in 0..200 {
        let (a, ma, b, mb) = random_case(&mut rng);
        let input = ToiInput::new(&a, ma, &b, mb);
        let mut run = Advancement::new(input).starting_at(f64::NAN);
        let out = loop {
            if let Progress::Done(out) = run.step() {
                break out;
            }
        };
        assert_eq!(out, time_of_impact(&input));
    }
}

/// A batch (which brings the next pair's tables toward the cache while it works on one)
/// answers each pair as it is answered alone, bit for bit, small bodies and large.
#[test]
fn a_batch_answers_each_pair_as_alone() {
    let mut rng = Rng::new(0x703);
    let mut cases: Vec<_> = (0..200).map(|_| random_case(&mut rng)).collect();
    let big = |rng: &mut Rng| generators::random_hull(rng, 100, 1.0).unwrap();
    for case in cases.iter_mut().step_by(10) {
        case.2 = big(&mut rng);
    }
    let inputs: Vec<ToiInput> = cases
        .iter()
        .map(|(a, ma, b, mb)| ToiInput::new(a, *ma, b, *mb))
        .collect();
    let batch: Vec<ToiOutput> = times_of_impact(inputs.iter().copied());
    assert_eq!(batch.len(), cases.len());
    for (k, (input, out)) in inputs.iter().zip(&batch).enumerate() {
        assert_eq!(*out, time_of_impact(input), "pair {k}");
    }
    let hits = batch.iter().filter(|o| o.state == ToiState::Hit).count();
    assert!(
        (50..190).contains(&hits),
        "{hits} of 200 hit: the sample is lopsided"
    );
}

/// Bodies whose origins lie far outside them (up to 4 times their size away), both turning
/// up to 0.9 of a half turn: a face then swings along a wide arc, where the envelope
/// step's bound on the second derivative of a turning normal's separation has its largest
/// terms (dropping the two that come from the normal's own turn makes the random-pair
/// test above fail).
#[test]
fn bodies_turning_about_far_origins_match_the_sampled_truth() {
    let mut rng = Rng::new(0x702);
    let mut case = || loop {
        let hull = |rng: &mut Rng, centre: DVec3, size: f64| {
            let k = 4 + rng.below(9) as usize;
            let points = generators::random_points(rng, k, size, 0.5);
            ConvexPolytope::from_points(&points.into_iter().map(|p| p + centre).collect::<Vec<_>>())
                .unwrap()
        };
        // Two arms on one hinge: A's hull 1 to 4 sizes from the origin, B's ahead of it
        // along A's turn, as far out, B's origin near A's; B turns about a nearby axis by
        // less, so A's arm swings into B's.
        let (sa, sb) = (rng.range(0.2, 0.8), rng.range(0.2, 0.8));
        let (ra, rb) = (rng.rotation(), rng.rotation());
        let ca = rng.unit_vector() * sa * rng.range(1.0, 4.0);
        let axis = rng.unit_vector();
        let ahead = axis
            .cross(ra * ca)
            .normalize_or(axis.any_orthonormal_vector());
        let start_b = rng.unit_vector() * rng.range(0.0, 0.3);
        let beside = ra * ca + ahead * (sa + sb) * rng.range(1.0, 1.5);
        let cb = rb.conjugate() * (beside - start_b);
        let (a, b) = (hull(&mut rng, ca, sa), hull(&mut rng, cb, sb));
        let angle = rng.range(0.3, 0.9) * PI;
        let axis_b = (axis + rng.unit_vector() * 0.3).normalize();
        let end_b = start_b + rng.unit_vector() * rng.range(0.0, 0.5);
        let ma = screw(
            pose(DVec3::ZERO, ra),
            pose(DVec3::ZERO, DQuat::from_axis_angle(axis, angle) * ra),
        );
        let mb = screw(
            pose(start_b, rb),
            pose(
                end_b,
                DQuat::from_axis_angle(axis_b, angle * rng.range(0.0, 0.7)) * rb,
            ),
        );
        if !overlap_at(&a, &ma, &b, &mb, 0.0) {
            return (a, ma, b, mb);
        }
    };
    let Agreement {
        hits,
        grazes,
        iterations,
        ..
    } = check_against_truth(1500, &mut case);
    assert!(hits >= 300, "{hits} of 1500 hit: the sample is lopsided");
    assert!(grazes < 30, "{grazes} contacts the samples missed");
    println!(
        "far origins: {hits} hits, {grazes} grazes, {:.1} iterations on average",
        iterations as f64 / 1500.0
    );
}

/// A translating body: the analytic time is known; the answer is within the tolerance's
/// time before it, never after.
fn assert_hit_near(out: &ToiOutput, truth: f64, window: f64, what: &str) {
    assert_eq!(out.state, ToiState::Hit, "{what}: {out:?}");
    assert!(
        out.toi <= truth + 1e-12,
        "{what}: toi {} after {truth}",
        out.toi
    );
    assert!(
        out.toi >= truth - window,
        "{what}: toi {} long before {truth}",
        out.toi
    );
}

/// A long rod spinning 0.9 of a half turn about z, and a small box at rest at radius 1.5
/// in its way.
fn spinning_rod() -> (ConvexPolytope, ScrewMotion, ConvexPolytope, ScrewMotion) {
    let rod = cuboid(2.0, 0.01, 0.01);
    let spin = screw(
        Pose::IDENTITY,
        pose(DVec3::ZERO, DQuat::from_rotation_z(0.9 * PI)),
    );
    let target = cuboid(0.05, 0.05, 0.05);
    let at_rest = ScrewMotion::resting(pose(DVec3::new(0.0, 1.5, 0.0), DQuat::IDENTITY));
    (rod, spin, target, at_rest)
}

#[test]
fn nothing_tunnels() {
    // Thin plates, 1e-3 and 1e-9 thick, and a cube crossing them in one step.
    for thickness in [1e-3, 1e-9] {
        let plate = cuboid(1.0, thickness / 2.0, 1.0);
        let cube = cuboid(0.05, 0.05, 0.05);
        let still = ScrewMotion::resting(Pose::IDENTITY);
        let fall = screw(
            pose(DVec3::Y * 5.0, DQuat::IDENTITY),
            pose(DVec3::Y * -5.0, DQuat::IDENTITY),
        );
        let out = toi(&plate, still, &cube, fall);
        let truth = (5.0 - 0.05 - thickness / 2.0) / 10.0;
        assert_hit_near(&out, truth, 1e-8, &format!("plate {thickness:e}"));
        assert!((out.normal - DVec3::Y).length() < 1e-9, "{}", out.normal);
        let point = 0.5 * (out.point_a + out.point_b);
        assert!(point.y.abs() < 1e-3 && out.point_a.y > 0.0, "{point}");
    }
    // A small fast body: 1e-2 wide, 1000 times its size in one step, through a 1e-3 wall.
    let wall = cuboid(5e-4, 1.0, 1.0);
    let grain = cuboid(5e-3, 5e-3, 5e-3);
    let still = ScrewMotion::resting(Pose::IDENTITY);
    let shot = screw(
        pose(DVec3::X * -5.0, DQuat::IDENTITY),
        pose(DVec3::X * 5.0, DQuat::IDENTITY),
    );
    let out = toi(&grain, shot, &wall, still);
    assert_hit_near(&out, (5.0 - 5e-3 - 5e-4) / 10.0, 1e-8, "grain");
    // Grains far smaller than their step: 2e-10 to 2e-6 wide, crossing 1e10 to 1e6 times
    // their size head on into one another, and at an angle into a corner of the other.
    for size in [1e-10, 1e-8, 1e-6] {
        let a = cuboid(size, size, size);
        let b = cuboid(size, size, size);
        let head_on = screw(
            pose(DVec3::X, DQuat::IDENTITY),
            pose(-DVec3::X, DQuat::IDENTITY),
        );
        let out = toi(&a, still, &b, head_on);
        assert_hit_near(
            &out,
            (1.0 - 2.0 * size) / 2.0,
            1e-8,
            &format!("grains {size:e}"),
        );
        let slant = DVec3::new(1.0, 1.0, 1.0).normalize();
        let corner = screw(pose(slant, DQuat::IDENTITY), pose(-slant, DQuat::IDENTITY));
        let out = toi(&a, still, &b, corner);
        let truth = (1.0 - 2.0 * size * 3f64.sqrt()) / 2.0;
        assert_hit_near(
            &out,
            truth,
            1e-8,
            &format!("grains {size:e} corner to corner"),
        );
    }
    // A grain that passes 1e-3 beside the wall's edge: no hit.
    let beside = screw(
        pose(DVec3::new(-5.0, 1.006, 0.0), DQuat::IDENTITY),
        pose(DVec3::new(5.0, 1.006, 0.0), DQuat::IDENTITY),
    );
    assert_eq!(toi(&grain, beside, &wall, still).state, ToiState::Miss);

    // A long rod spinning 0.9 of a half turn about z sweeps a small box at radius 1.5.
    let (rod, spin, target, at_rest) = spinning_rod();
    let out = toi(&rod, spin, &target, at_rest);
    let truth =
        sampled_truth(&rod, &spin, &target, &at_rest, 20_000).expect("the rod meets the box");
    assert_hit_near(&out, truth, 1e-6, "spinning rod");

    // A plank turning almost half a turn about y through a thin wall at x = 1: clear of the
    // wall at both ends, through it in between.
    for thickness in [1e-3, 1e-9] {
        let plank = cuboid(0.05, 0.05, 2.0);
        let wall = cuboid(thickness / 2.0, 1.0, 3.0);
        let wall_at = ScrewMotion::resting(pose(DVec3::X, DQuat::IDENTITY));
        let turn = screw(
            Pose::IDENTITY,
            pose(DVec3::ZERO, DQuat::from_rotation_y(0.9 * PI)),
        );
        assert!(!overlap_at(&plank, &turn, &wall, &wall_at, 0.0));
        assert!(!overlap_at(&plank, &turn, &wall, &wall_at, 1.0));
        let out = toi(&plank, turn, &wall, wall_at);
        let truth = sampled_truth(&plank, &turn, &wall, &wall_at, 20_000)
            .expect("the plank meets the wall");
        assert_hit_near(
            &out,
            truth,
            1e-6,
            &format!("plank through a {thickness:e} wall"),
        );
    }

    // Crossed planks: one falls across the other; they meet face on face over a square.
    let lower = cuboid(2.0, 0.1, 0.1);
    let upper = cuboid(0.1, 0.1, 2.0);
    let drop = screw(
        pose(DVec3::Y, DQuat::IDENTITY),
        pose(-DVec3::Y, DQuat::IDENTITY),
    );
    let out = toi(&lower, still, &upper, drop);
    assert_hit_near(&out, 0.4, 1e-8, "crossed planks");
    assert!((out.normal - DVec3::Y).length() < 1e-9);

    // Far from the origin (1e4) and in small units (1e-4): the same time.
    for (offset, unit) in [(1e4, 1.0), (0.0, 1e-4), (-3e3, 1e-2)] {
        let lower = cuboid(2.0 * unit, 0.1 * unit, 0.1 * unit);
        let upper = cuboid(0.1 * unit, 0.1 * unit, 2.0 * unit);
        let base = DVec3::splat(offset);
        let still = ScrewMotion::resting(pose(base, DQuat::IDENTITY));
        let drop = screw(
            pose(base + DVec3::Y * unit, DQuat::IDENTITY),
            pose(base - DVec3::Y * unit, DQuat::IDENTITY),
        );
        let out = toi(&lower, still, &upper, drop);
        assert_hit_near(
            &out,
            0.4,
            1e-6,
            &format!("crossed planks at {offset:e} in units of {unit:e}"),
        );
    }
}

/// Bodies small against their distance from the world origin (1e-6 boxes at 1e3 and at
/// 1e6, where a position is rounded to 1e-13 and 1e-10): a pose along the motion is
/// placed no closer than that, so the tolerance stays above it, and the answer is never
/// later than the exact first contact of the motions as given (their f64 poses), with a
/// unit normal.
#[test]
fn small_bodies_far_from_the_origin_are_never_late() {
    let h = 1e-6;
    let cube = cuboid(h, h, h);
    for offset in [1e3, 1e6, -1e6] {
        let at = DVec3::splat(offset);
        let still = ScrewMotion::resting(pose(at, DQuat::IDENTITY));
        let (start, end) = (offset + 3e-6, offset - 3e-6);
        let shot = screw(
            pose(DVec3::new(start, offset, offset), DQuat::IDENTITY),
            pose(DVec3::new(end, offset, offset), DQuat::IDENTITY),
        );
        // B's face at start − h + t (end − start) meets A's at offset + h; the differences
        // of these nearby f64 values are exact.
        let truth = ((start - offset) - 2.0 * h) / (start - end);
        let out = toi(&cube, still, &cube, shot);
        let what = format!("1e-6 cubes at {offset:e}: {out:?}");
        assert_eq!(out.state, ToiState::Hit, "{what}");
        assert!(out.toi <= truth + 1e-12, "{what}: after {truth}");
        assert!(out.toi >= truth - 0.01, "{what}: long before {truth}");
        assert!((out.normal.length() - 1.0).abs() < 1e-12, "{what}");
        assert!(out.normal.x > 0.99, "{what}");
    }
}

#[test]
fn exact_touches() {
    // A crate resting on a crate and sliding along it touches from the start: a hit at 0,
    // normal up.
    let crate_ = cuboid(0.5, 0.5, 0.5);
    let still = ScrewMotion::resting(Pose::IDENTITY);
    let slide = screw(
        pose(DVec3::Y, DQuat::IDENTITY),
        pose(DVec3::new(0.7, 1.0, 0.0), DQuat::IDENTITY),
    );
    let out = toi(&crate_, still, &crate_, slide);
    assert_eq!((out.state, out.toi), (ToiState::Hit, 0.0), "{out:?}");
    assert!((out.normal - DVec3::Y).length() < 1e-12, "{}", out.normal);
    // Lifting off the same crate: touching at the start is still a contact at 0.
    let lift = screw(
        pose(DVec3::Y, DQuat::IDENTITY),
        pose(DVec3::Y * 2.0, DQuat::IDENTITY),
    );
    assert_eq!(toi(&crate_, still, &crate_, lift).toi, 0.0);
    // Overlapping at the start: no first contact, said so.
    let sunk = screw(
        pose(DVec3::Y * 0.9, DQuat::IDENTITY),
        pose(DVec3::Y * 2.0, DQuat::IDENTITY),
    );
    assert_eq!(
        toi(&crate_, still, &crate_, sunk).state,
        ToiState::Overlapping
    );
    // Coming down to exactly touch at the end: a hit just before 1.
    let land = screw(
        pose(DVec3::Y * 3.0, DQuat::IDENTITY),
        pose(DVec3::Y, DQuat::IDENTITY),
    );
    assert_hit_near(&toi(&crate_, still, &crate_, land), 1.0, 1e-8, "landing");
    // Stopping 1e-6 short of touching: a miss.
    let short = screw(
        pose(DVec3::Y * 3.0, DQuat::IDENTITY),
        pose(DVec3::Y * (1.0 + 1e-6), DQuat::IDENTITY),
    );
    assert_eq!(toi(&crate_, still, &crate_, short).state, ToiState::Miss);
    // Neither moves: a miss in one step, at any distance.
    let apart = ScrewMotion::resting(pose(DVec3::X * 1.5, DQuat::IDENTITY));
    let out = toi(&crate_, still, &crate_, apart);
    assert_eq!((out.state, out.iterations), (ToiState::Miss, 1));
}

#[test]
fn warm_start_and_cap() {
    // The features of one answer start the next query; the answer is the same.
    let mut rng = Rng::new(0x702);
    for _ in 0..200 {
        let (a, ma, b, mb) = random_case(&mut rng);
        let cold = toi(&a, ma, &b, mb);
        let warm = time_of_impact(&ToiInput {
            start: Some(cold.features),
            ..ToiInput::new(&a, ma, &b, mb)
        });
        assert_eq!(cold.state, warm.state);
        assert!(
            (cold.toi - warm.toi).abs() <= 1e-9,
            "{} vs {}",
            cold.toi,
            warm.toi
        );
    }
    // A capped run answers a time it proved safe, never a later one.
    let (rod, spin, target, at_rest) = spinning_rod();
    let full = toi(&rod, spin, &target, at_rest);
    for cap in 1..full.iterations {
        let out = time_of_impact(&ToiInput {
            max_iterations: Some(cap),
            ..ToiInput::new(&rod, spin, &target, at_rest)
        });
        assert_eq!((out.state, out.iterations), (ToiState::Capped, cap));
        assert!(out.toi <= full.toi && !overlap_at(&rod, &spin, &target, &at_rest, out.toi));
    }
}

/// Whose answer the truth supports when two disagree.
#[derive(Default, Debug)]
struct Tally {
    /// Cases where the peer disagrees with the truth (a miss, a false hit, or more than
    /// 1e-4 away).
    disagreements: usize,
    /// Of those, the peer missed a contact.
    misses: usize,
    /// Of those, the peer answered later than the truth.
    later: usize,
}

impl Tally {
    fn count(&mut self, peer: Option<f64>, truth: Option<f64>) {
        match (peer, truth) {
            (None, None) => {}
            (Some(p), Some(t)) if (p - t).abs() <= 1e-4 => {}
            (p, t) => {
                self.disagreements += 1;
                self.misses += usize::from(p.is_none());
                self.later += usize::from(matches!((p, t), (Some(p), Some(t)) if p > t));
            }
        }
    }
}

#[test]
fn parry_peers_against_the_bisection_truth() {
    use parry3d_f64::query::{
        NonlinearRigidMotion, Sweep, SweepToiStatus, ToiProxy, cast_shapes_nonlinear,
        sweep_time_of_impact,
    };
    let mut rng = Rng::new(0x703);
    let (mut ours, mut nonlinear, mut sweep) =
        (Tally::default(), Tally::default(), Tally::default());
    let mut examples = Vec::new();
    for case in 0..1000 {
        let (a, ma, b, mb) = random_case(&mut rng);
        let truth = sampled_truth(&a, &ma, &b, &mb, 256);
        let out = toi(&a, ma, &b, mb);
        // A graze the samples missed is settled by enumeration at our time.
        let truth = match (out.state, truth) {
            (ToiState::Hit, Some(t)) if out.toi < t - 1e-4 => Some(out.toi),
            (ToiState::Hit, None) => Some(out.toi),
            _ => truth,
        };
        if let Some(t) = truth.filter(|&t| t == out.toi) {
            let tol = tolerance(&a, ma, &b, mb);
            assert!(distance_at(&a, &ma, &b, &mb, t) <= tol * 1.000001, "{case}");
        }
        ours.count((out.state == ToiState::Hit).then_some(out.toi), truth);
        let (pa, pb) = (common::to_parry(&a), common::to_parry(&b));
        let motion = |m: &ScrewMotion| {
            NonlinearRigidMotion::new(
                common::parry_pose(&m.start()),
                DVec3::ZERO,
                m.linear(),
                m.angular(),
            )
        };
        let hit = cast_shapes_nonlinear(&motion(&ma), &pa, &motion(&mb), &pb, 0.0, 1.0, true)
            .expect("parry casts convex polyhedra")
            .map(|h| h.time_of_impact);
        nonlinear.count(hit, truth);
        if hit.is_none() && truth.is_some() && examples.len() < 5 {
            examples.push(format!(
                "case {case}: cast_shapes_nonlinear misses the contact at {truth:?}"
            ));
        }
        let sweep_of = |m: &ScrewMotion| {
            Sweep::from_poses(
                &common::parry_pose(&m.start()),
                &common::parry_pose(&m.end()),
                DVec3::ZERO,
            )
        };
        let (proxy_a, proxy_b) = (
            ToiProxy::from_shape(&pa).unwrap(),
            ToiProxy::from_shape(&pb).unwrap(),
        );
        let s = sweep_time_of_impact(
            &proxy_a,
            &sweep_of(&ma),
            &proxy_b,
            &sweep_of(&mb),
            1.0,
            1e-6,
        );
        let hit =
            matches!(s.status, SweepToiStatus::Hit | SweepToiStatus::Failed).then_some(s.fraction);
        sweep.count(hit, truth);
    }
    println!("disagreements with the bisection truth over 1000 rotating pairs:");
    println!("  conservative advancement (ours): {ours:?}");
    println!("  parry3d-f64 cast_shapes_nonlinear: {nonlinear:?}");
    println!("  parry3d-f64 sweep_time_of_impact (nlerp, its own path): {sweep:?}");
    for e in &examples {
        println!("  {e}");
    }
    assert_eq!(ours.disagreements, 0, "{ours:?}");
}

#[test]
fn the_queue_finds_the_all_pairs_first_contacts_in_time_order() {
    use proxima::impacts::FirstContacts;
    let (shapes, bodies) = common::moving_crowd(10_000, 0x704);
    let mut queue = FirstContacts::new(&shapes, &bodies).unwrap();
    let contacts = queue.until(1.0);
    assert!(
        contacts
            .windows(2)
            .all(|w| w[0].output.toi <= w[1].output.toi),
        "time order"
    );
    // All pairs, each advanced on its own.
    let expected = common::all_pairs_first_contacts(&shapes, &bodies);
    let mut found: Vec<_> = contacts.iter().map(|c| (c.a, c.b, c.output)).collect();
    found.sort_by_key(|c| (c.0, c.1));
    assert!(
        expected.len() > 1000,
        "{} contacts: the crowd is too sparse",
        expected.len()
    );
    assert_eq!(found.len(), expected.len());
    assert_eq!(found, expected);
    println!(
        "{} bodies: {} candidate pairs, {} first contacts, {} evaluations",
        bodies.len(),
        queue.candidates(),
        contacts.len(),
        queue.evaluations()
    );
}

#[test]
fn the_queue_names_a_missing_shape() {
    let (shapes, mut bodies) = common::moving_crowd(10, 1);
    bodies[7].shape = 99;
    let e = proxima::impacts::FirstContacts::new(&shapes, &bodies)
        .unwrap_err()
        .to_string();
    assert!(e.contains("body 7") && e.contains("shape 99"), "{e}");
}

/// A contact tolerance is checked when made: zero, negative, NaN and infinite ones are
/// named errors; a coarse one stops the advance that far from contact, never closer.
#[test]
fn contact_tolerance_is_checked() {
    use proxima::exact::advance::ContactTolerance;
    for bad in [0.0, -1e-3, f64::NAN, f64::INFINITY] {
        let e = ContactTolerance::new(bad).unwrap_err().to_string();
        assert!(e.contains("finite and positive"), "{bad}: {e}");
    }
    let cube = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let fall = ScrewMotion::between(
        Pose::new(DVec3::new(0.0, 0.0, 3.0), DQuat::IDENTITY),
        Pose::new(DVec3::new(0.0, 0.0, -1.0), DQuat::IDENTITY),
    )
    .unwrap();
    let rest = ScrewMotion::resting(Pose::default());
    let tau = 1e-3;
    let out = time_of_impact(&ToiInput {
        tolerance: Some(ContactTolerance::new(tau).unwrap()),
        ..ToiInput::new(&cube, rest, &cube, fall)
    });
    // Contact at z = 1, t = 0.5: stopped within τ of it, not after.
    assert_eq!(out.state, ToiState::Hit);
    assert!(out.toi <= 0.5 && out.toi >= 0.5 - tau / 4.0, "{out:?}");
    assert!(out.distance <= tau, "{out:?}");
}

/// Far apart, the first step is the balls' alone, with no walk: it ends where the balls
/// about the origins come within τ/2 (analytic here), and the pair then walks to the
/// exact contact. With a tolerance far below the coordinates' rounding, the balls' step
/// never repeats itself: the run ends at the cap, at a time it proved safe.
#[test]
fn far_pairs_first_take_the_balls_step() {
    use proxima::exact::advance::{ContactTolerance, Progress};
    let cube = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let rest = ScrewMotion::resting(Pose::default());
    // B falls from z = 100 to z = −1: the cubes touch at z = 1, t = 99/101.
    let fall = screw(
        pose(DVec3::new(0.0, 0.0, 100.0), DQuat::IDENTITY),
        pose(DVec3::new(0.0, 0.0, -1.0), DQuat::IDENTITY),
    );
    let mut run = Advancement::new(ToiInput::new(&cube, rest, &cube, fall));
    let tau = run.tolerance();
    // Balls of radius √3/2 each: they come within τ/2 when B's origin is at √3 + τ/2.
    let z = 3f64.sqrt() + tau / 2.0;
    let ball = (100.0 - z) / 101.0;
    match run.step() {
        Progress::Until(t) => assert!((t - ball).abs() < 1e-12, "{t} vs {ball}"),
        Progress::Done(out) => panic!("finished at the first step: {out:?}"),
    }
    let out = loop {
        if let Progress::Done(out) = run.step() {
            break out;
        }
    };
    let contact = 99.0 / 101.0;
    assert_eq!(out.state, ToiState::Hit);
    assert!(out.toi <= contact && contact - out.toi < 1e-8, "{out:?}");
    // The balls' step is not an evaluation: one walk where the balls meet, one more for
    // the faces' exact gap, then the contact.
    assert!(out.iterations <= 3, "{out:?}");
    assert_eq!(out, toi(&cube, rest, &cube, fall));
    // A tolerance of 1e-300 near coordinates of 100: no step can be that fine.
    for cap in [1, 2, 5] {
        let out = time_of_impact(&ToiInput {
            tolerance: Some(ContactTolerance::new(1e-300).unwrap()),
            max_iterations: Some(cap),
            ..ToiInput::new(&cube, rest, &cube, fall)
        });
        assert!(out.iterations <= cap, "{out:?}");
        assert!(out.toi <= contact, "{out:?}");
    }
}

/// `balls_stay_apart` against the balls' closest approach over the step, worked out
/// analytically (gaps of at least 1e-6 or none at all: far from the tolerance), and never
/// true for a pair that comes within the tolerance: on random hulls on screw motions it
/// fires only where advancement answers a miss and sampling finds the bodies apart.
#[test]
fn balls_apart_over_the_step_are_misses() {
    let mut rng = Rng::new(0xba11);
    let (mut apart, mut meeting) = (0, 0);
    for _ in 0..20_000 {
        let (ra, rb) = (rng.range(0.05, 1.0), rng.range(0.05, 1.0));
        let oa = rng.unit_vector() * rng.range(0.0, 3.0);
        let ob = oa + rng.unit_vector() * (ra + rb + rng.range(1e-3, 3.0));
        // B heads roughly for A.
        let (va, vb) = (
            rng.unit_vector() * rng.range(0.0, 1.0),
            (oa - ob).normalize() * rng.range(0.0, 4.0) + rng.unit_vector() * rng.range(0.0, 1.5),
        );
        let (d, v) = (ob - oa, vb - va);
        let t = (-d.dot(v) / v.length_squared()).clamp(0.0, 1.0);
        let gap = (d + v * t).length() - ra - rb;
        if gap.abs() < 1e-6 {
            continue;
        }
        let turn = |rng: &mut Rng| DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 3.0));
        let ma = screw(pose(oa, DQuat::IDENTITY), pose(oa + va, turn(&mut rng)));
        let mb = screw(pose(ob, DQuat::IDENTITY), pose(ob + vb, turn(&mut rng)));
        let said = balls_stay_apart((ra, &ma), (rb, &mb));
        assert_eq!(said, gap > 0.0, "gap {gap} at {t}");
        if said {
            apart += 1;
        } else {
            meeting += 1;
        }
    }
    assert!(
        apart > 5_000 && meeting > 5_000,
        "{apart} apart, {meeting} meeting"
    );
    let mut fired = 0;
    for _ in 0..600 {
        let (a, ma, b, mb) = random_case(&mut rng);
        if balls_stay_apart((a.radius(), &ma), (b.radius(), &mb)) {
            fired += 1;
            assert_eq!(toi(&a, ma, &b, mb).state, ToiState::Miss);
            assert_eq!(sampled_truth(&a, &ma, &b, &mb, 256), None);
        }
    }
    assert!(fired > 20, "{fired} of 600 pairs' balls stayed apart");
}

/// `apart_throughout`: cubes 1 apart, one coming 0.9 closer over the step, are proved
/// apart throughout; coming 1.1 closer they are not (they meet at 1/1.1); a spin counts
/// at the body's reach.
#[test]
fn a_distance_less_the_approach_proves_a_pair_apart() {
    let cube = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let reach = cube.radius();
    let still = screw(Pose::IDENTITY, Pose::IDENTITY);
    let coming = |by: f64, turn: f64| {
        screw(
            pose(DVec3::new(2.0, 0.0, 0.0), DQuat::IDENTITY),
            pose(DVec3::new(2.0 - by, 0.0, 0.0), DQuat::from_rotation_z(turn)),
        )
    };
    let apart = |m: &ScrewMotion| apart_throughout(1.0, (reach, &still), (reach, m));
    assert!(apart(&coming(0.9, 0.0)));
    assert!(!apart(&coming(1.1, 0.0)));
    let hit = toi(&cube, still, &cube, coming(1.1, 0.0));
    assert_eq!(hit.state, ToiState::Hit);
    assert!((hit.toi - 1.0 / 1.1).abs() < 1e-8, "{hit:?}");
    // 0.5 of travel and a turn of 0.4 at a reach of 0.87 approach by at most 0.85:
    // proved; with a turn of 0.6, by 1.02: not.
    assert!(apart(&coming(0.5, 0.4)));
    assert!(!apart(&coming(0.5, 0.6)));
}
