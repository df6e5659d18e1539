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
//! same sign. The 15 axes are the boxes' axes at `t0` and their cross products (not
//! normalised: a cross product of unit axes is at most unit long, so the unnormalised
//! test, with the growth added whole, is the normalised one or stricter). A sub-interval
//! that no axis separates is halved, down to `max_depth` levels; one that is still not
//! separated there answers "may collide". The sub-intervals are dyadic, so the bodies'
//! relative placement at their starts ([`Sweep`]) is computed once per step and shared by
//! every box pair tested on it.
//!
//! Two trees ([`candidates_during`]) are walked over node pairs and sub-intervals
//! together: a pair of boxes not proved apart on an interval is split in time where the
//! motion over the interval is larger than the boxes, else split into its children on the
//! same interval (the pieces under a box lie in it, so where the boxes are apart so are
//! they); a piece pair is kept when a sub-interval of the deepest level is left.
//!
//! Rounding: radii are grown by 1e-12 of the coordinates' size, far above the rounding
//! of the projections, so a rounding error never turns a touch into "separated".

use glam::{DMat3, DVec3};

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
}

/// B's body frame in A's at a time of the step.
#[derive(Clone, Copy, Debug)]
struct Relative {
    /// B's rotation in A's frame.
    rotation: DMat3,
    /// B's origin in A's frame.
    origin: DVec3,
    /// B's origin velocity less A's, in A's frame.
    velocity: DVec3,
    /// The largest world coordinate of the origins (for the rounding slack).
    size: f64,
}

/// Halvings whose sub-intervals' starts a [`Sweep`] keeps (257 placements); deeper ones
/// are computed each time asked.
const KEPT_DEPTH: u32 = 8;

/// Two bodies' motions over a step, their relative placement at the starts of the dyadic
/// sub-intervals computed once each (down to `KEPT_DEPTH` halvings), when first asked.
#[derive(Clone, Debug)]
pub struct Sweep<'a> {
    motion_a: &'a ScrewMotion,
    motion_b: &'a ScrewMotion,
    max_depth: u32,
    /// At `t = i / 2^KEPT_DEPTH` (or `2^max_depth` when that is shallower).
    frames: Vec<Option<Relative>>,
}

impl<'a> Sweep<'a> {
    /// The step of two motions, halved down to `max_depth` levels (at most 30).
    pub fn new(motion_a: &'a ScrewMotion, motion_b: &'a ScrewMotion, max_depth: u32) -> Self {
        let max_depth = max_depth.min(30);
        Sweep {
            motion_a,
            motion_b,
            max_depth,
            frames: vec![None; (1usize << max_depth.min(KEPT_DEPTH)) + 1],
        }
    }

    /// True when the boxes (carried by this sweep's motions, A's and B's) are proved apart
    /// over the whole step; false means they may touch.
    pub fn separated(&mut self, a: &MovingBox<'_>, b: &MovingBox<'_>) -> bool {
        self.separated_on(a, b, 0, 0)
    }

    /// Over the `k`-th interval of `level` (`[k, k + 1] / 2^level`), halving down to the
    /// deepest level.
    fn separated_on(&mut self, a: &MovingBox<'_>, b: &MovingBox<'_>, level: u32, k: usize) -> bool {
        if self.apart_on(a, b, level, k) {
            return true;
        }
        if level == self.max_depth {
            return false;
        }
        self.separated_on(a, b, level + 1, 2 * k) && self.separated_on(a, b, level + 1, 2 * k + 1)
    }

    /// The relative placement at `t = i / 2^max_depth`.
    fn frame(&mut self, i: usize) -> Relative {
        // Kept where the time falls on the kept grid.
        let shift = self.max_depth.saturating_sub(KEPT_DEPTH);
        let kept = (i & ((1 << shift) - 1) == 0).then_some(i >> shift);
        if let Some(f) = kept.and_then(|k| self.frames[k]) {
            return f;
        }
        let t = i as f64 / (1usize << self.max_depth) as f64;
        let (pa, pb) = (self.motion_a.at(t), self.motion_b.at(t));
        let to_a = DMat3::from_quat(pa.rotation).transpose();
        let f = Relative {
            rotation: to_a * DMat3::from_quat(pb.rotation),
            origin: to_a * (pb.translation - pa.translation),
            velocity: to_a * (self.motion_b.linear() - self.motion_a.linear()),
            size: pa.translation.abs().max_element() + pb.translation.abs().max_element(),
        };
        if let Some(k) = kept {
            self.frames[k] = Some(f);
        }
        f
    }

    /// How far the boxes can move relative to each other over an interval of `level`:
    /// the relative motion of the origins and both rotation bounds.
    fn reach(&self, a: &MovingBox<'_>, b: &MovingBox<'_>, level: u32) -> f64 {
        let dt = 1.0 / (1u64 << level) as f64;
        dt * self
            .motion_a
            .approach_speed(a.swing, self.motion_b, b.swing)
    }

    /// The separating-axis test on the `k`-th interval of `level`, both boxes moving
    /// linearly from their placement at its start, grown by their rotation bound; in A's
    /// box frame (B's axes there are the columns of `r`).
    fn apart_on(&mut self, a: &MovingBox<'_>, b: &MovingBox<'_>, level: u32, k: usize) -> bool {
        let dt = 1.0 / (1u64 << level) as f64;
        let f = self.frame(k << (self.max_depth - level));
        let to_box = a.obb.axes.transpose();
        let r = to_box * f.rotation * b.obb.axes;
        let centre = f.rotation * b.obb.center + f.origin - a.obb.center;
        let p = to_box * centre;
        let q = p + to_box * f.velocity * dt;
        let grow = dt
            * (self.motion_a.angular().length() * a.swing
                + self.motion_b.angular().length() * b.swing);
        let size = f.size
            + a.obb.center.abs().max_element()
            + b.obb.center.abs().max_element()
            + a.obb.half.length()
            + b.obb.half.length()
            + q.abs().max_element();
        let slack = grow + ROUND_REL * size;
        let (ha, hb) = (a.obb.half.to_array(), b.obb.half.to_array());
        // m[j][i] = A_i · B_j, and its magnitudes.
        let m = [
            r.x_axis.to_array(),
            r.y_axis.to_array(),
            r.z_axis.to_array(),
        ];
        let e = m.map(|c| c.map(f64::abs));
        let (p, q) = (p.to_array(), q.to_array());
        let apart = |s0: f64, s1: f64, reach: f64| {
            let reach = reach + slack;
            (s0 > reach && s1 > reach) || (s0 < -reach && s1 < -reach)
        };
        for i in 0..3 {
            let reach = ha[i] + hb[0] * e[0][i] + hb[1] * e[1][i] + hb[2] * e[2][i];
            if apart(p[i], q[i], reach) {
                return true;
            }
        }
        let dot = |c: [f64; 3], v: [f64; 3]| c[0] * v[0] + c[1] * v[1] + c[2] * v[2];
        for j in 0..3 {
            if apart(dot(m[j], p), dot(m[j], q), hb[j] + dot(e[j], ha)) {
                return true;
            }
        }
        for i in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            for j in 0..3 {
                let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
                // A_i × B_j.
                let s0 = p[i2] * m[j][i1] - p[i1] * m[j][i2];
                let s1 = q[i2] * m[j][i1] - q[i1] * m[j][i2];
                let reach =
                    ha[i1] * e[j][i2] + ha[i2] * e[j][i1] + hb[j1] * e[j2][i] + hb[j2] * e[j1][i];
                if apart(s0, s1, reach) {
                    return true;
                }
            }
        }
        false
    }
}

/// True when the two boxes are proved apart over the whole step (`t` in `[0, 1]`);
/// false means they may touch.
pub fn separated_during(a: &MovingBox<'_>, b: &MovingBox<'_>, max_depth: u32) -> bool {
    Sweep::new(a.motion, b.motion, max_depth).separated(a, b)
}

/// A piece pair the filter kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// A's piece, B's piece.
    pub pieces: (u32, u32),
    /// The pieces are proved apart over `[0, apart_until]`: the start of the first
    /// sub-interval where their boxes were not.
    pub apart_until: f64,
}

/// The piece pairs of two hull trees whose boxes may touch during the step, in order:
/// see [`candidates_during`].
pub fn piece_pairs_during(
    a: &HullTree,
    motion_a: &ScrewMotion,
    b: &HullTree,
    motion_b: &ScrewMotion,
    max_depth: u32,
) -> Vec<(u32, u32)> {
    candidates_during(a, motion_a, b, motion_b, max_depth)
        .into_iter()
        .map(|c| c.pieces)
        .collect()
}

/// The piece pairs of two hull trees whose boxes may touch during the step, in order of
/// their pieces: the OBB trees and the step's sub-intervals walked together (see the
/// module comment), a node pair dropped on an interval where its boxes are proved apart.
/// Every piece pair that touches at some time of the step is in the list, and touches
/// only after its `apart_until`. (A node pair's earlier half is walked first, and the
/// node splits keep the interval, so the first interval kept of a pair is its earliest.)
pub fn candidates_during(
    a: &HullTree,
    motion_a: &ScrewMotion,
    b: &HullTree,
    motion_b: &ScrewMotion,
    max_depth: u32,
) -> Vec<Candidate> {
    candidates(
        Boxes::Tree(a),
        motion_a,
        Boxes::Tree(b),
        motion_b,
        max_depth,
    )
}

/// The pieces of a hull tree whose boxes may touch the box `b` (carried by B's motion)
/// during the step, as [`candidates_during`] with B a tree of one piece (piece 0).
pub fn pieces_near_box(
    a: &HullTree,
    motion_a: &ScrewMotion,
    b: &Obb,
    motion_b: &ScrewMotion,
    max_depth: u32,
) -> Vec<Candidate> {
    candidates(Boxes::Tree(a), motion_a, Boxes::One(b), motion_b, max_depth)
}

/// A box tree: a hull tree's, or one box (a leaf, piece 0).
#[derive(Clone, Copy)]
enum Boxes<'a> {
    Tree(&'a HullTree),
    One(&'a Obb),
}

impl Boxes<'_> {
    fn obb(&self, n: u32) -> &Obb {
        match self {
            Boxes::Tree(t) => &t.node(n).obb,
            Boxes::One(b) => b,
        }
    }

    fn kind(&self, n: u32) -> NodeKind {
        match self {
            Boxes::Tree(t) => t.node(n).kind,
            Boxes::One(_) => NodeKind::Leaf(0),
        }
    }

    fn nodes(&self) -> usize {
        match self {
            Boxes::Tree(t) => t.num_nodes(),
            Boxes::One(_) => 1,
        }
    }

    fn pieces(&self) -> usize {
        match self {
            Boxes::Tree(t) => t.num_pieces(),
            Boxes::One(_) => 1,
        }
    }
}

fn candidates(
    a: Boxes<'_>,
    motion_a: &ScrewMotion,
    b: Boxes<'_>,
    motion_b: &ScrewMotion,
    max_depth: u32,
) -> Vec<Candidate> {
    let mut sweep = Sweep::new(motion_a, motion_b, max_depth);
    let max_depth = sweep.max_depth;
    // Each node's swing radius, when first asked.
    let (mut swing_a, mut swing_b) = (vec![f64::NAN; a.nodes()], vec![f64::NAN; b.nodes()]);
    let swing = |swings: &mut [f64], tree: Boxes<'_>, motion: &ScrewMotion, n: u32| {
        let s = &mut swings[n as usize];
        if s.is_nan() {
            *s = motion.swing_radius(&tree.obb(n).corners());
        }
        *s
    };
    // One bit a piece pair: kept already (its other intervals need no test).
    let mut kept = vec![0u64; (a.pieces() * b.pieces()).div_ceil(64)];
    let mut out = Vec::new();
    // (node of A, node of B, level, interval)
    let mut stack = vec![(HullTree::ROOT, HullTree::ROOT, 0u32, 0usize)];
    while let Some((na, nb, level, k)) = stack.pop() {
        let (kind_a, kind_b) = (a.kind(na), b.kind(nb));
        let leaves = match (kind_a, kind_b) {
            (NodeKind::Leaf(pa), NodeKind::Leaf(pb)) => {
                let slot = pa as usize * b.pieces() + pb as usize;
                if kept[slot / 64] & (1 << (slot % 64)) != 0 {
                    continue;
                }
                Some(slot)
            }
            _ => None,
        };
        let (x, y) = (a.obb(na), b.obb(nb));
        let boxes = (
            MovingBox {
                obb: x,
                motion: motion_a,
                swing: swing(&mut swing_a, a, motion_a, na),
            },
            MovingBox {
                obb: y,
                motion: motion_b,
                swing: swing(&mut swing_b, b, motion_b, nb),
            },
        );
        if sweep.apart_on(&boxes.0, &boxes.1, level, k) {
            continue;
        }
        let long = level < max_depth
            && (leaves.is_some()
                || sweep.reach(&boxes.0, &boxes.1, level) > x.half.length().max(y.half.length()));
        if long {
            stack.extend([(na, nb, level + 1, 2 * k + 1), (na, nb, level + 1, 2 * k)]);
            continue;
        }
        match (kind_a, kind_b) {
            (NodeKind::Leaf(pa), NodeKind::Leaf(pb)) => {
                if let Some(slot) = leaves {
                    kept[slot / 64] |= 1 << (slot % 64);
                }
                out.push(Candidate {
                    pieces: (pa, pb),
                    apart_until: k as f64 / (1u64 << level) as f64,
                });
            }
            (NodeKind::Inner([l, r]), NodeKind::Leaf(_)) => {
                stack.extend([(l, nb, level, k), (r, nb, level, k)]);
            }
            (NodeKind::Leaf(_), NodeKind::Inner([l, r])) => {
                stack.extend([(na, l, level, k), (na, r, level, k)]);
            }
            (NodeKind::Inner([l, r]), NodeKind::Inner([m, n])) => {
                if x.half.length() >= y.half.length() {
                    stack.extend([(l, nb, level, k), (r, nb, level, k)]);
                } else {
                    stack.extend([(na, m, level, k), (na, n, level, k)]);
                }
            }
        }
    }
    out.sort_unstable_by_key(|c| c.pieces);
    out
}
