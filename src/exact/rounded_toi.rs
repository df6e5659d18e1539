//! Time of impact for rounded bodies (spheres, capsules, rounded polytopes) under screw
//! motions: conservative advancement on the cores. No point of a core moves faster,
//! relative to the other core, than `|v_A − v_B| + |ω_A| ρ_A + |ω_B| ρ_B` per unit of `t`
//! (`ρ` the core's largest distance from its rotation axis), so the gap between the
//! surfaces, the cores' distance less both radii, closes no faster; advancing by
//! `(gap − τ/2)` over that bound keeps the bodies at least `τ/2` apart over every step.
//! Along the cores' closest direction `n` (fixed for the step) the cores' separation,
//! measured by support queries, shrinks no faster than
//! `max(0, (v_A − v_B)·n) + |ω_A × n| ρ_A + |ω_B × n| ρ_B`, which gives a second step,
//! usually much longer for bodies closing head-on; the longer of the two proofs is taken. It
//! stops when the gap is at most `τ` (a hit, never later than the first contact), past
//! the end (a miss), or at the iteration cap (the last time proved safe). Two plain
//! polytopes (radius 0) are better served by `exact::advance`, whose steps also use the
//! closing rate along the contact normal.

use glam::DVec3;

use super::advance::{ContactTolerance, MAX_ITERATIONS, TOI_TOL_REL, ToiOutput, ToiState};
use super::rounded::{self, Contact};
use crate::geometry::rounded::Rounded;
use crate::motion::ScrewMotion;

/// The first contact of two rounded bodies over their motions (`t` in `[0, 1]`).
pub fn time_of_impact(
    a: &Rounded,
    motion_a: ScrewMotion,
    b: &Rounded,
    motion_b: ScrewMotion,
    tolerance: Option<ContactTolerance>,
    max_iterations: Option<u32>,
) -> ToiOutput {
    let scale = |t: f64| {
        let (pa, pb) = (motion_a.at(t), motion_b.at(t));
        a.reach() + b.reach() + (pb.translation - pa.translation).abs().max_element()
    };
    let tol = tolerance
        .map(ContactTolerance::get)
        .unwrap_or_else(|| TOI_TOL_REL * scale(0.0).max(scale(1.0)));
    let cap = max_iterations.unwrap_or(MAX_ITERATIONS).max(1);
    let (swing_a, swing_b) = (
        motion_a.swing_radius(&a.core_points()),
        motion_b.swing_radius(&b.core_points()),
    );
    let bound = (motion_a.linear() - motion_b.linear()).length()
        + motion_a.angular().length() * swing_a
        + motion_b.angular().length() * swing_b;
    let mut t = 0.0;
    let mut iterations = 0;
    loop {
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
        match d.contact {
            Contact::Penetrating if t == 0.0 => return answer(ToiState::Overlapping, 0.0),
            Contact::Penetrating | Contact::Touching => return answer(ToiState::Hit, t),
            Contact::Separated if d.distance <= tol => return answer(ToiState::Hit, t),
            Contact::Separated => {}
        }
        // Two steps, each a proof, the longer taken. Direction-free: no two core points
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
        let along = if n == DVec3::ZERO {
            0.0
        } else {
            let sep = rounded::core_separation(a, &pa, b, &pb, n) - a.radius - b.radius;
            let rate = (motion_a.linear() - motion_b.linear()).dot(n).max(0.0)
                + motion_a.angular().cross(n).length() * swing_a
                + motion_b.angular().cross(n).length() * swing_b;
            if rate > 0.0 {
                (sep - 0.5 * tol) / rate
            } else if sep > 0.5 * tol {
                f64::INFINITY
            } else {
                0.0
            }
        };
        let step = free.max(along);
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
