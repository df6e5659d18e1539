//! "May these boxes touch during this step?" for boxes carried by bodies with linear and
//! angular velocity (Eberly, "Intersection of objects with linear and angular velocities
//! using oriented bounding boxes", ../shared/seeds/003_*): the step is cut into
//! sub-intervals, and on each one the boxes move linearly and meet the 15-axis separating
//! test with velocity. Eberly's sub-intervals approximate the rotation; here each box is
//! also grown by how far rotation can carry its points from where linear motion puts
//! them, so the answer is conservative: never "separated" when the boxes touch at some
//! time of the interval.
//!
//! The bound. A body point moves as `x(t) = T(t0) + (t − t0) v + R(t) y` with
//! `R(t) = exp((t − t0)[ω]) R(t0)`. Against the box frozen at `R(t0)` and translated by
//! `(t − t0) v`, the point is off by `|(R(t) − R(t0)) y| = 2 sin(θ/2) ρ ≤ θ ρ`, with
//! `θ = |ω| (t − t0)` and `ρ` the point's distance from the rotation axis through the
//! body origin (the largest over the box's corners bounds every point of the box). So on
//! `[t0, t1]` the box lies in the linearly moving frozen box grown by a ball of radius
//! `ε = |ω| (t1 − t0) ρ`, whose projection on a unit axis is the box's radius plus `ε`.
//!
//! On a sub-interval both boxes move linearly, so along a fixed axis `L` the centres'
//! separation `L·(D0 + s Δv)` is linear in `s`: the boxes are apart along `L` over the
//! whole sub-interval when it exceeds the summed radii (plus `ε`s) at both ends with the
//! same sign. The 15 axes are the boxes' axes at `t0` and their cross products. A
//! sub-interval that no axis separates is halved, down to `max_depth` levels; one that is
//! still not separated there answers "may collide".
//!
//! Rounding: radii are grown by 1e-12 of the coordinates' size, far above the rounding
//! of the projections, so a rounding error never turns a touch into "separated".

use glam::DVec3;

use crate::bodies::Pose;
use crate::geometry::HullTree;
use crate::geometry::hull_tree::NodeKind;
use crate::geometry::obb::Obb;
use crate::motion::ScrewMotion;

/// Default halvings of the step: at most 2^8 sub-intervals.
pub const MAX_DEPTH: u32 = 8;

/// Relative growth of the radii against rounding.
const ROUND_REL: f64 = 1e-12;

/// A box carried by a body over a step.
#[derive(Clone, Copy, Debug)]
pub struct MovingBox<'a> {
    /// The box, in the body's frame.
    pub obb: &'a Obb,
    /// The body's motion over the step (`t` in `[0, 1]`).
    pub motion: &'a ScrewMotion,
    /// How far the box's points are from the rotation axis (at most): see
    /// [`MovingBox::new`].
    pub swing: f64,
}

impl<'a> MovingBox<'a> {
    /// The box on its motion.
    pub fn new(obb: &'a Obb, motion: &'a ScrewMotion) -> Self {
        MovingBox {
            obb,
            motion,
            swing: motion.swing_radius(&obb.corners()),
        }
    }

    /// The box in world space at `t`: centre and axes.
    fn placed(&self, pose: &Pose) -> (DVec3, [DVec3; 3]) {
        let q = pose.rotation;
        (
            pose.transform_point(self.obb.center),
            [
                q * self.obb.axes.x_axis,
                q * self.obb.axes.y_axis,
                q * self.obb.axes.z_axis,
            ],
        )
    }
}

/// True when the two boxes are proved apart over the whole step (`t` in `[0, 1]`);
/// false means they may touch.
pub fn separated_during(a: &MovingBox<'_>, b: &MovingBox<'_>, max_depth: u32) -> bool {
    separated_on(a, b, 0.0, 1.0, max_depth)
}

fn separated_on(a: &MovingBox<'_>, b: &MovingBox<'_>, t0: f64, t1: f64, depth: u32) -> bool {
    if separated_linear(a, b, t0, t1) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let mid = 0.5 * (t0 + t1);
    separated_on(a, b, t0, mid, depth - 1) && separated_on(a, b, mid, t1, depth - 1)
}

/// The separating-axis test on `[t0, t1]` with both boxes moving linearly from their
/// poses at `t0`, grown by their rotation bound.
fn separated_linear(a: &MovingBox<'_>, b: &MovingBox<'_>, t0: f64, t1: f64) -> bool {
    let dt = t1 - t0;
    let (pa, pb) = (a.motion.at(t0), b.motion.at(t0));
    let (ca, axes_a) = a.placed(&pa);
    let (cb, axes_b) = b.placed(&pb);
    let grow_a = a.motion.angular().length() * dt * a.swing;
    let grow_b = b.motion.angular().length() * dt * b.swing;
    let d0 = cb - ca;
    let d1 = d0 + dt * (b.motion.linear() - a.motion.linear());
    let size = ca.abs().max_element()
        + cb.abs().max_element()
        + a.obb.half.length()
        + b.obb.half.length()
        + d1.abs().max_element();
    let slack = grow_a + grow_b + ROUND_REL * size;
    let radius = |axes: &[DVec3; 3], half: DVec3, l: DVec3| {
        half.x * axes[0].dot(l).abs()
            + half.y * axes[1].dot(l).abs()
            + half.z * axes[2].dot(l).abs()
    };
    let apart = |l: DVec3| {
        let r = radius(&axes_a, a.obb.half, l) + radius(&axes_b, b.obb.half, l) + slack;
        let (s0, s1) = (l.dot(d0), l.dot(d1));
        (s0 > r && s1 > r) || (s0 < -r && s1 < -r)
    };
    if axes_a.iter().chain(&axes_b).any(|&l| apart(l)) {
        return true;
    }
    for &x in &axes_a {
        for &y in &axes_b {
            // Parallel axes give no new direction (the face axes cover them).
            if let Some(l) = x.cross(y).try_normalize()
                && apart(l)
            {
                return true;
            }
        }
    }
    false
}

/// The piece pairs of two hull trees whose boxes may touch during the step: the OBB trees
/// walked pair by pair, a node pair dropped when its boxes are proved apart over the whole
/// step. Every piece pair that touches at some time of the step is in the list.
pub fn piece_pairs_during(
    a: &HullTree,
    motion_a: &ScrewMotion,
    b: &HullTree,
    motion_b: &ScrewMotion,
    max_depth: u32,
) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![(HullTree::ROOT, HullTree::ROOT)];
    while let Some((na, nb)) = stack.pop() {
        let (x, y) = (a.node(na), b.node(nb));
        let apart = separated_during(
            &MovingBox::new(&x.obb, motion_a),
            &MovingBox::new(&y.obb, motion_b),
            max_depth,
        );
        if apart {
            continue;
        }
        match (x.kind, y.kind) {
            (NodeKind::Leaf(pa), NodeKind::Leaf(pb)) => out.push((pa, pb)),
            (NodeKind::Inner([l, r]), NodeKind::Leaf(_)) => stack.extend([(l, nb), (r, nb)]),
            (NodeKind::Leaf(_), NodeKind::Inner([l, r])) => stack.extend([(na, l), (na, r)]),
            (NodeKind::Inner([l, r]), NodeKind::Inner([m, n])) => {
                if x.obb.half.length() >= y.obb.half.length() {
                    stack.extend([(l, nb), (r, nb)]);
                } else {
                    stack.extend([(na, m), (na, n)]);
                }
            }
        }
    }
    out.sort_unstable();
    out
}
