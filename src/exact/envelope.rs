//! The envelope step of conservative advancement: how long two convex bodies on screw
//! motions are proved to stay apart, with a bound that is tight at contact.
//!
//! Let `u(τ)` start at a unit direction `n` (from A to B) at time `t` and turn at a
//! constant angular velocity `ω_F` (`u̇ = ω_F × u`). For points `x` of A and `y` of B
//! fixed in their bodies, write `s = τ − t`, `H = (p − o)·u` and `R` its rate now (`o` any
//! fixed point). The second derivative of `(y − x)·u` is `(ÿ − ẍ)·u + 2(ẏ − ẋ)·u̇ + (y −
//! x)·ü`; with `ÿ = ω_B × (ω_B × (y − T_B))` (the origin moves linearly), `|u̇| ≤ |ω_F|`,
//! `|ü| ≤ |ω_F|²`, it is at most
//!
//! `α = |ω_A|² r_A + |ω_B|² r_B + 2|ω_F| V + |ω_F|² (|D|max + ρ_A + ρ_B)`
//!
//! (`r`: swing radius, `ρ`: largest distance of a point from the body origin, `V = |v_A −
//! v_B| + |ω_A| r_A + |ω_B| r_B` the bound on two points' relative speed, `|D|max` the
//! larger of the origins' distance now and at the end: it is linear in `t`). When `u`
//! turns with one body (`ω_F = ω_P`), that body's points keep their place along it and
//! only the other's terms remain: `α = |ω_Q|² r_Q + 2|ω_P|(|v_Q − v_P| + |ω_Q| r_Q) +
//! |ω_P|²(|D|max + ρ_Q)`.
//!
//! So `(y − x)·u ≥ g(s) = (H_y − H_x) + (R_y − R_x)s − αs²/2` over the step, for every
//! pair. `f(s) = min g − goal` is concave (a minimum of concave functions) and positive at
//! 0, so `f(Δ) ≥ 0` proves the whole `[t, t + Δ]`: every pair, hence the bodies (their
//! extremes along `u` are points of their cores), stays `goal` apart along `u(τ)`.
//! `min_y (H_y + R_y s)` is linear in `y`: one support query per body and trial. The first
//! trial is the root of the closest points' `g`; where `f` is negative there, the next is
//! the root of the pair that makes it so, which is smaller, and no pair can do so twice
//! (the roots decrease, and a pair's `g` is positive below its root), so the search ends.
//!
//! Any `n`, `ω_F` and `o` give a proof; the choice makes it tight. `ω_F` keeps the closest
//! features square to `u` ([`carrier_spin`]), so at contact every point of them closes at
//! the distance's own rate and what is left of the gap after a step is second order in
//! the step: near contact the step converges quadratically, where the first-order bounds
//! close a fixed fraction of the gap.

use glam::DVec3;

use crate::bodies::Pose;
use crate::motion::ScrewMotion;

/// What of a closest feature has to stay square to the turning normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Square {
    /// A point: nothing.
    Vertex,
    /// A segment, by its direction (world).
    Edge(DVec3),
    /// A face: the normal turns with its body.
    Face,
}

/// One body's part in the step.
pub struct Side<'m, F> {
    /// The body's motion over the whole step `[0, 1]`.
    pub motion: &'m ScrewMotion,
    /// Its pose at the current time.
    pub pose: Pose,
    /// Largest distance of a core point from the rotation axis through the body origin.
    pub swing: f64,
    /// Largest distance of a core point from the body origin.
    pub reach: f64,
    /// Its closest feature.
    pub feature: Square,
    /// Its closest point (world).
    pub point: DVec3,
    /// The core point (body frame) farthest along a body-frame direction.
    pub support: F,
}

impl<F> std::fmt::Debug for Side<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("motion", &self.motion)
            .field("pose", &self.pose)
            .field("swing", &self.swing)
            .field("reach", &self.reach)
            .field("feature", &self.feature)
            .field("point", &self.point)
            .finish_non_exhaustive()
    }
}

/// The separations the step works with (of the cores, along `n`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The separation along `n` now, measured, less `goal`: positive.
    pub margin: f64,
    /// The separation to keep.
    pub goal: f64,
    /// What the trials' roots aim at: a little above `goal`, so that a root aimed at it
    /// exactly does not land a rounding error below it and fail.
    pub aim: f64,
    /// A step already proved: the search stops when it cannot beat it.
    pub floor: f64,
    /// Time left to the end of the motion: a proof that far is returned as infinite.
    pub rest: f64,
}

/// Envelope-step trials per call (two support queries each); near contact the first one
/// holds.
const TRIALS: u32 = 4;

/// The longest step the envelope proves (0 when none beats `floor`; infinite when it
/// proves the rest of the motion).
pub fn step<FA, FB>(a: Side<'_, FA>, b: Side<'_, FB>, n: DVec3, limits: Limits) -> f64
where
    FA: FnMut(DVec3) -> DVec3,
    FB: FnMut(DVec3) -> DVec3,
{
    if limits.margin <= 0.0 {
        return 0.0;
    }
    let (wa, wb) = (a.motion.angular(), b.motion.angular());
    let spin = carrier_spin(a.feature, b.feature, n, (wa, wb));
    let relative = (a.motion.linear() - b.motion.linear()).length();
    let d_now = b.pose.translation - a.pose.translation;
    let d_end = b.motion.end().translation - a.motion.end().translation;
    let d_max = d_now.length().max(d_end.length());
    let carried = |wp: DVec3, (wq, swing, reach): (DVec3, f64, f64)| {
        let wpl = wp.length();
        wq.length_squared() * swing
            + 2.0 * wpl * (relative + wq.length() * swing)
            + wpl * wpl * (d_max + reach)
    };
    let alpha = if spin == wa && wa != DVec3::ZERO {
        carried(wa, (wb, b.swing, b.reach))
    } else if spin == wb && wb != DVec3::ZERO {
        carried(wb, (wa, a.swing, a.reach))
    } else {
        let ws = spin.length();
        wa.length_squared() * a.swing
            + wb.length_squared() * b.swing
            + 2.0 * ws * (relative + wa.length() * a.swing + wb.length() * b.swing)
            + ws * ws * (d_max + a.reach + b.reach)
    };
    let o = (a.point + b.point) * 0.5;
    let k = spin.cross(n);
    // Height over o along n, and its rate for a point fixed in a body at `pose` moving at
    // `motion`.
    let height = |p: DVec3| (p - o).dot(n);
    let rate = |p: DVec3, motion: &ScrewMotion, pose: &Pose| {
        motion.linear().dot(n)
            + (p - pose.translation).dot(n.cross(motion.angular()))
            + (p - o).dot(k)
    };
    let pair_root =
        |(hx, rx): (f64, f64), (hy, ry): (f64, f64)| lin_step(rx - ry, alpha, hy - hx - limits.aim);
    let mut trial = pair_root(
        (height(a.point), rate(a.point, a.motion, &a.pose)),
        (height(b.point), rate(b.point, b.motion, &b.pose)),
    )
    .min(limits.rest);
    // The core point farthest along the trial's combined direction times `sign` (A: +1,
    // the most; B: −1, the least), with its height and rate.
    let extreme = |motion: &ScrewMotion,
                   pose: &Pose,
                   support: &mut dyn FnMut(DVec3) -> DVec3,
                   s: f64,
                   sign: f64| {
        let dir = n + (n.cross(motion.angular()) + k) * s;
        let x = pose.transform_point(support(pose.rotation.conjugate() * (dir * sign)));
        (height(x), rate(x, motion, pose))
    };
    let (mut support_a, mut support_b) = (a.support, b.support);
    for _ in 0..TRIALS {
        if trial <= limits.floor {
            break;
        }
        let s = trial;
        let xa = extreme(a.motion, &a.pose, &mut support_a, s, 1.0);
        let yb = extreme(b.motion, &b.pose, &mut support_b, s, -1.0);
        let at = |(h, r): (f64, f64)| h + r * s;
        if at(yb) - at(xa) - alpha * s * s / 2.0 >= limits.goal {
            return if s == limits.rest { f64::INFINITY } else { s };
        }
        let next = pair_root(xa, yb);
        // The active pair's root lies below s in exact arithmetic; rounding that says
        // otherwise ends the search.
        if next >= s {
            break;
        }
        trial = next;
    }
    0.0
}

/// The angular velocity `ω_F` at which the normal `n` turns: one that keeps the closest
/// features square to it, so that their points close at one rate. A face turns with its
/// body; so does an edge against a vertex. Two edges need `u` to stay square to both:
/// `d/dτ (e·u) = (ω − ω_F)·(e × u)` for an edge `e` on a body turning at `ω`, so `ω_F`
/// solves `ω_F·(e_A × n) = ω_A·(e_A × n)` and `ω_F·(e_B × n) = ω_B·(e_B × n)`, taken in
/// the plane square to `n` (turning about `n` moves nothing); nearly parallel edges make
/// that ill-posed, and take A's spin. Two vertices need no turn.
pub fn carrier_spin(a: Square, b: Square, n: DVec3, (wa, wb): (DVec3, DVec3)) -> DVec3 {
    match (a, b) {
        (Square::Face, _) | (Square::Edge(_), Square::Vertex) => wa,
        (_, Square::Face) | (Square::Vertex, Square::Edge(_)) => wb,
        (Square::Vertex, Square::Vertex) => DVec3::ZERO,
        (Square::Edge(ea), Square::Edge(eb)) => {
            let (a1, b1) = (ea.cross(n), eb.cross(n));
            let (aa, ab, bb) = (a1.dot(a1), a1.dot(b1), b1.dot(b1));
            let det = aa * bb - ab * ab;
            if det <= 1e-12 * aa * bb {
                return wa;
            }
            let (ra, rb) = (wa.dot(a1), wb.dot(b1));
            let spin = a1 * ((ra * bb - rb * ab) / det) + b1 * ((rb * aa - ra * ab) / det);
            // A near-parallel pair solves to a fast spin, whose second-order terms cost
            // more than the tilt it removes.
            if spin.length() <= 4.0 * wa.length().max(wb.length()) {
                spin
            } else {
                wa
            }
        }
    }
}

/// The time until a gap `margin` closing at `rate` now, the rate growing by at most
/// `growth` per unit of time, can have closed: the positive root of `margin − rate·Δ −
/// growth·Δ²/2` (Lin's eq. 5.1); infinite when nothing closes.
pub fn lin_step(rate: f64, growth: f64, margin: f64) -> f64 {
    if growth > 0.0 {
        let root = (rate * rate + 2.0 * growth * margin).sqrt();
        // Two forms of one root, each free of cancellation on its side.
        if rate > 0.0 {
            2.0 * margin / (root + rate)
        } else {
            (root - rate) / growth
        }
    } else if rate > 0.0 {
        margin / rate
    } else {
        f64::INFINITY
    }
}
