//! Time of impact for rounded bodies (spheres, capsules, rounded polytopes) under screw
//! motions: conservative advancement on the cores. No point of a core moves faster,
//! relative to the other core, than `|v_A − v_B| + |ω_A| ρ_A + |ω_B| ρ_B` per unit of `t`
//! (`ρ` the core's largest distance from its rotation axis), so the gap between the
//! surfaces, the cores' distance less both radii, closes no faster; advancing by
//! `(gap − τ/2)` over that bound keeps the bodies at least `τ/2` apart over every step.
//! Along the cores' closest direction `n` (fixed for the step) the cores' separation,
//! measured by support queries, shrinks no faster than
//! `max(0, (v_A − v_B)·n) + |ω_A × n| ρ_A + |ω_B × n| ρ_B`, which gives a second step,
//! usually much longer for bodies closing head-on; and the envelope step
//! ([`super::envelope`]) on the cores, whose separation along a turning normal less the
//! radii is the bodies': near contact it converges quadratically (random rotating
//! spheres, capsules and rounded boxes: 20 → 6.5 evaluations per pair). The longest of
//! the three proofs is taken. It stops when the gap is at most `τ` (a hit, never later
//! than the first contact), past the end (a miss), or at the iteration cap (the last time
//! proved safe). Two plain polytopes (radius 0) are better served by `exact::advance`,
//! whose normal comes from the closest features rather than between two points.

use glam::DVec3;

use super::advance::{self, ContactTolerance, MAX_ITERATIONS, ToiOutput, ToiState};
use super::envelope::{self, Limits, Side, Square};
use super::rounded::{self, Contact};
use crate::bodies::Pose;
use crate::geometry::FeatureId;
use crate::geometry::rounded::{Core, Rounded};
use crate::motion::ScrewMotion;

/// A core's part in the envelope step: the core's closest feature and point, its support
/// queries.
fn core_side<'m>(
    r: &'m Rounded,
    (motion, pose): (&'m ScrewMotion, Pose),
    swing: f64,
    feature: FeatureId,
    point: DVec3,
) -> Side<'m, impl FnMut(DVec3) -> DVec3 + 'm> {
    Side {
        motion,
        pose,
        swing,
        reach: r.reach() - r.radius,
        feature: square(r, &pose, feature),
        point,
        support: move |u: DVec3| r.core_support(u).1,
    }
}

/// A core's closest feature as the envelope step sees it.
fn square(r: &Rounded, pose: &Pose, f: FeatureId) -> Square {
    match (&r.core, f) {
        (Core::Polytope(p), f) => advance::square(p, pose, f),
        (Core::Segment { .. }, FeatureId::Edge(_)) => Square::Edge(pose.rotation * DVec3::Z),
        (_, FeatureId::Face(_)) => Square::Face,
        (_, FeatureId::Vertex(_) | FeatureId::Edge(_)) => Square::Vertex,
    }
}

/// The first contact of two rounded bodies over their motions (`t` in `[0, 1]`).
pub fn time_of_impact(
    a: &Rounded,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
    tolerance: Option<ContactTolerance>,
    max_iterations: Option<u32>,
) -> ToiOutput {
    time_of_impact_from(a, motion_a, b, motion_b, tolerance, max_iterations, 0.0)
}

/// [`time_of_impact`] from `start` (clamped to `[0, 1]`; NaN starts at 0): the caller has
/// proved the bodies apart over `[0, start]` (a filter over the step's sub-intervals).
pub fn time_of_impact_from(
    a: &Rounded,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
    tolerance: Option<ContactTolerance>,
    max_iterations: Option<u32>,
    start: f64,
) -> ToiOutput {
    let tol = tolerance.map(ContactTolerance::get).unwrap_or_else(|| {
        advance::default_tolerance((a.reach(), &motion_a), (b.reach(), &motion_b))
    });
    let cap = max_iterations.unwrap_or(MAX_ITERATIONS).max(1);
    let (swing_a, swing_b) = (
        motion_a.swing_radius(&a.core_points()),
        motion_b.swing_radius(&b.core_points()),
    );
    let bound = motion_a.approach_speed(swing_a, &motion_b, swing_b);
    let mut t = advance::start_time(start);
    let mut iterations = 0;
    // The balls about the origins, which the bodies never leave however they turn.
    let balls = |t: f64| {
        let (oa, ob) = (motion_a.at_origin(t), motion_b.at_origin(t));
        let step = advance::sphere_step(
            oa,
            a.reach(),
            ob,
            b.reach(),
            motion_b.linear() - motion_a.linear(),
            0.5 * tol,
        );
        (step, ob.distance(oa) - a.reach() - b.reach())
    };
    let mut queried = true;
    loop {
        // While the balls are more than τ apart and meet before the end, their step is
        // taken with no distance query (as for polytopes, `advance`), never twice running.
        let (ball_step, gap) = balls(t);
        if queried && gap > tol && t + ball_step < 1.0 {
            t += ball_step;
            queried = false;
            continue;
        }
        queried = true;
        let (pa, pb) = (motion_a.at(t), motion_b.at(t));
        let d = rounded::distance(a, &pa, b, &pb);
        iterations += 1;
        let answer = |state, toi| ToiOutput {
            state,
            toi,
            distance: d.distance,
            point_a: d.point_a,
            point_b: d.point_b,
            normal: d.normal,
            features: d.features,
            iterations,
        };
        // Cores that share a point have no direction between closest points: the
        // penetration's normal (as for polytopes, the separating axis's) is the contact's.
        let at_contact = |state, toi| ToiOutput {
            normal: rounded::penetration(a, &pa, b, &pb).map_or(d.normal, |p| p.normal),
            ..answer(state, toi)
        };
        match d.contact {
            Contact::Penetrating if t == 0.0 => {
                // Overlapping within the tolerance is touching, as for polytopes
                // (`advance`): a ball written in decimals on a slab overlaps it by their
                // coordinates' rounding (2.2e-17 for a 1e-4 ball on a floor at 3e-4), and
                // was left to the contacts with no impact: pushed down, it sank a frame's
                // travel into the floor.
                let p = rounded::penetration(a, &pa, b, &pb);
                let state = if p.as_ref().is_some_and(|p| p.depth > tol) {
                    ToiState::Overlapping
                } else {
                    ToiState::Hit
                };
                return ToiOutput {
                    normal: p.map_or(d.normal, |p| p.normal),
                    ..answer(state, 0.0)
                };
            }
            Contact::Penetrating | Contact::Touching => return at_contact(ToiState::Hit, t),
            Contact::Separated if d.distance <= tol => return answer(ToiState::Hit, t),
            Contact::Separated => {}
        }
        // Steps, each a proof, the longest taken. Direction-free: no two core points
        // approach faster than `bound`. Along the cores' closest direction n: the cores'
        // separation along the fixed n (measured by support queries) shrinks no faster
        // than the closing speed along n plus each spin's reach across n, and the gap is
        // at least that separation less the radii.
        let free = if bound > 0.0 {
            (d.distance - 0.5 * tol) / bound
        } else {
            f64::INFINITY
        };
        let n = d.normal;
        let radii = a.radius + b.radius;
        let (along, envelope) = if n == DVec3::ZERO {
            (0.0, 0.0)
        } else {
            let sep = rounded::core_separation(a, &pa, b, &pb, n) - radii;
            let rate = (motion_a.linear() - motion_b.linear()).dot(n).max(0.0)
                + motion_a.angular().cross(n).length() * swing_a
                + motion_b.angular().cross(n).length() * swing_b;
            let along = if rate > 0.0 {
                (sep - 0.5 * tol) / rate
            } else if sep > 0.5 * tol {
                f64::INFINITY
            } else {
                0.0
            };
            // The envelope step on the cores (their separation along a turning normal,
            // less the radii, is the bodies'), from the cores' closest points.
            let envelope = envelope::step(
                core_side(
                    a,
                    (&motion_a, pa),
                    swing_a,
                    d.features.0,
                    d.point_a - n * a.radius,
                ),
                core_side(
                    b,
                    (&motion_b, pb),
                    swing_b,
                    d.features.1,
                    d.point_b + n * b.radius,
                ),
                n,
                Limits {
                    margin: sep - 0.5 * tol,
                    goal: radii + 0.5 * tol,
                    aim: radii + 0.75 * tol,
                    floor: free.max(along),
                    rest: 1.0 - t,
                },
            );
            (along, envelope)
        };
        let step = free.max(along).max(envelope).max(ball_step);
        if step == f64::INFINITY {
            return answer(ToiState::Miss, 1.0);
        }
        let next = t + step;
        if next >= 1.0 {
            return answer(ToiState::Miss, 1.0);
        }
        if iterations >= cap {
            return answer(ToiState::Capped, t);
        }
        t = next;
    }
}
