//! Time of impact by conservative advancement (Mirtich 1996; Zhang, Lee, Kim, "C2A",
//! ../shared/seeds/002_*) for two convex polytopes under screw motions
//! ([`crate::motion::ScrewMotion`]).
//!
//! At time `t` the closest-feature walk (warm-started from the previous iteration's
//! features) gives the distance `d`, the closest points and features; `n` is the contact
//! normal from A to B, taken from the features (a face's normal, two edges' cross
//! product) because the direction between two points `d` apart is rounded by about
//! `ε·size/d`, which near contact turns a few ulps into a tilt that loses more separation
//! than the tolerance. The bodies' separation along the fixed direction `n`,
//! `sep(t) = min_B x·n − max_A x·n`, is measured by two support queries (it equals `d`
//! in exact arithmetic; measured, a rounded `n` cannot make it larger than it is). A
//! point fixed in a body moves at `v + ω × (x − T(t))`, so along `n` no point of A gains
//! more than `v_A·n + |ω_A × n| r_A` per unit of time and no point of B loses more than
//! `−v_B·n + |ω_B × n| r_B`, with `r` the body's swing radius: the largest distance of a
//! vertex from the rotation axis through the body origin (fixed in the body frame, so
//! valid for the whole step, and never larger than the largest distance from the
//! origin). Hence `sep(t + Δ) ≥ sep(t) − μΔ` with
//!
//! `μ = max(0, (v_A − v_B)·n) + |ω_A × n| r_A + |ω_B × n| r_B`,
//!
//! every term non-negative, none able to cancel another (FCL's signed bound could, and
//! stepped past contacts). The walk advances by `Δ = (sep − τ/2)/μ`, so the separation
//! stays at least `τ/2` over every step; where the direction-free step
//! `(d − τ/2)/(|v_A − v_B| + |ω_A| r_A + |ω_B| r_B)` is longer it takes that one (no two
//! points approach faster, so neither does the distance), and where the envelope step
//! (`Advancement::envelope_step`) is longer, that one. It stops when `d ≤ τ` (a hit),
//! when a step passes the end (a miss), or after `max_iterations` (capped: the answer is
//! the time the last step proved safe, never later). `τ` is the contact tolerance, by
//! default [`TOI_TOL_REL`] times the size of the coordinates.
//!
//! Hence the reported time is never later than the first contact, and the distance there
//! is at most `τ`; the time error is `τ` over the closing speed at contact.
//!
//! The two bounds above close a fixed fraction of the gap per step, `(closing speed of
//! the nearest points) / μ`: convergence is linear, and slow for a grazing or spinning
//! pair. The envelope step converges quadratically. It bounds every vertex pair's
//! separation along a direction that turns with the closest features (a face with its
//! body; two edges at the spin that keeps both square to it), each pair by its exact rate
//! now and a bound on the second derivative, and finds the longest interval over which
//! the smallest of those bounds stays above `τ/2` by a few support queries. At contact
//! the closest features' points all close at the distance's own rate, so what is left of
//! the gap after a step is second order in the step. On random rotating 8–512-vertex
//! hulls it takes 6.5–7 evaluations per pair where the linear bounds (with Lin's eq. 5.1
//! along a fixed and a carried normal, the previous steps) took 14–20. Tried before it: a
//! secant step on `d(t)` converges fast but proves nothing (it can step over a thin
//! part); a per-vertex bound along a fixed normal (19 → 15 evaluations, each 60% dearer).

use glam::DVec3;

use super::depth::{self, DepthInput};
use super::sat;
use super::walk::{self, WalkInput, WalkState};
use crate::bodies::Pose;
use crate::geometry::{ConvexPolytope, FeatureId, brute};
use crate::motion::ScrewMotion;

/// Default contact tolerance, relative to the size of the coordinates (the bodies' reach
/// plus their offset): far above the walk's rounding (1e-16 relative), and small enough
/// that the time error it allows is below 1e-8 of the step for any pair that closes at a
/// speed of at least 1/10 of its size per step.
pub const TOI_TOL_REL: f64 = 1e-9;

/// A contact distance: finite and positive, checked when made (a zero, negative or NaN
/// `τ` would make the steps `(sep − τ/2)/μ` step past contacts or never end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactTolerance(f64);

impl ContactTolerance {
    /// `τ`, or the error naming why it cannot be one.
    pub fn new(tau: f64) -> crate::Result<Self> {
        if tau.is_finite() && tau > 0.0 {
            Ok(ContactTolerance(tau))
        } else {
            Err(crate::Error::Motion(format!(
                "a contact tolerance must be finite and positive, got {tau}"
            )))
        }
    }

    /// The distance.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Default iteration cap.
pub const MAX_ITERATIONS: u32 = 10_000;

/// What conservative advancement needs.
#[derive(Clone, Copy, Debug)]
pub struct ToiInput<'a> {
    /// Body A.
    pub a: &'a ConvexPolytope,
    /// A's motion over the step.
    pub motion_a: ScrewMotion,
    /// Body B.
    pub b: &'a ConvexPolytope,
    /// B's motion over the step.
    pub motion_b: ScrewMotion,
    /// Contact distance `τ`; `None`: [`TOI_TOL_REL`] × the size of the coordinates.
    pub tolerance: Option<ContactTolerance>,
    /// Iteration cap; `None`: [`MAX_ITERATIONS`].
    pub max_iterations: Option<u32>,
    /// Closest features to start the walk from (a previous answer's), or `None`.
    pub start: Option<(FeatureId, FeatureId)>,
}

impl<'a> ToiInput<'a> {
    /// Default tolerance and cap, cold start.
    pub fn new(
        a: &'a ConvexPolytope,
        motion_a: ScrewMotion,
        b: &'a ConvexPolytope,
        motion_b: ScrewMotion,
    ) -> Self {
        Self {
            a,
            motion_a,
            b,
            motion_b,
            tolerance: None,
            max_iterations: None,
            start: None,
        }
    }
}

/// How advancement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToiState {
    /// The bodies come within the tolerance at `toi` (touching at the start counts, with
    /// `toi = 0`).
    Hit,
    /// The bodies overlap at the start (`toi = 0`): there is no time of first contact.
    Overlapping,
    /// No contact over the step (`toi = 1`: safe through the end).
    Miss,
    /// The iteration cap was reached: no contact before `toi`, nothing known after.
    Capped,
}

/// What advancement found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToiOutput {
    /// How it ended.
    pub state: ToiState,
    /// The time of impact (Hit), 0 (Overlapping), 1 (Miss) or the last safe time (Capped).
    pub toi: f64,
    /// Distance at the last evaluation: at `toi` for a hit or an overlap, before the last
    /// step for a miss or a capped run (0 when overlapping).
    pub distance: f64,
    /// Closest point on A at the last evaluation, world space (a witness of overlap when
    /// overlapping).
    pub point_a: DVec3,
    /// Closest point on B at the last evaluation, world space.
    pub point_b: DVec3,
    /// Unit normal from A to B at the last evaluation (a separating axis's direction when the bodies
    /// touch or overlap at the start).
    pub normal: DVec3,
    /// The closest features at the last evaluation: the warm start for the next query.
    pub features: (FeatureId, FeatureId),
    /// Distance evaluations taken.
    pub iterations: u32,
}

/// One pair's advancement, one distance evaluation per [`Advancement::step`]: the loop of
/// [`time_of_impact`], and the unit of work of a queue that interleaves many pairs.
#[derive(Clone, Debug)]
pub struct Advancement<'a> {
    input: ToiInput<'a>,
    /// The time the bodies are known to be apart until (the next evaluation's).
    t: f64,
    tol: f64,
    cap: u32,
    swing_a: f64,
    swing_b: f64,
    features: Option<(FeatureId, FeatureId)>,
    support: (u32, u32),
    /// Warm starts of the envelope step's support queries.
    spin_support: (u32, u32),
    iterations: u32,
}

/// The outcome of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// Apart until this time; step again there.
    Until(f64),
    /// Finished.
    Done(ToiOutput),
}

impl<'a> Advancement<'a> {
    /// Starts at `t = 0`.
    pub fn new(input: ToiInput<'a>) -> Self {
        let scale = |t: f64| {
            let (pa, pb) = (input.motion_a.at(t), input.motion_b.at(t));
            input.a.reach()
                + input.b.reach()
                + (pb.translation - pa.translation).abs().max_element()
        };
        Self {
            tol: input
                .tolerance
                .map(ContactTolerance::get)
                .unwrap_or_else(|| TOI_TOL_REL * scale(0.0).max(scale(1.0))),
            cap: input.max_iterations.unwrap_or(MAX_ITERATIONS).max(1),
            swing_a: input.motion_a.swing_radius(input.a.vertices()),
            swing_b: input.motion_b.swing_radius(input.b.vertices()),
            features: input.start,
            support: (0, 0),
            spin_support: (0, 0),
            iterations: 0,
            t: 0.0,
            input,
        }
    }

    /// The time the bodies are known to be apart until.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The contact tolerance `τ` in use.
    pub fn tolerance(&self) -> f64 {
        self.tol
    }

    /// Evaluates the distance at [`Self::time`] and either finishes or advances.
    pub fn step(&mut self) -> Progress {
        let inp = self.input;
        let t = self.t;
        let (pose_a, pose_b) = (inp.motion_a.at(t), inp.motion_b.at(t));
        self.iterations += 1;
        let w = walk::walk(&WalkInput {
            start: self.features,
            ..WalkInput::new(inp.a, pose_a, inp.b, pose_b)
        });
        let (state, distance, point_a, point_b, features) = match w.state {
            WalkState::Failed(_) => {
                // The walk gave up: the exact separating-axis test and enumeration answer.
                if sat::intersects(inp.a, &pose_a, inp.b, &pose_b) {
                    let (f, p) = (w.features, w.point_a);
                    (WalkState::Penetrating, 0.0, p, p, f)
                } else {
                    let c = brute::polytope_closest_pair(inp.a, &pose_a, inp.b, &pose_b);
                    let state = if c.distance == 0.0 {
                        WalkState::Touching
                    } else {
                        WalkState::Separated
                    };
                    (state, c.distance, c.point_a, c.point_b, c.features)
                }
            }
            s => (s, w.distance, w.point_a, w.point_b, w.features),
        };
        self.features = Some(features);
        let iterations = self.iterations;
        let output = |state, toi, normal| ToiOutput {
            state,
            toi,
            distance,
            point_a,
            point_b,
            normal,
            features,
            iterations,
        };
        if state != WalkState::Separated {
            // Touching or overlapping (at the start; later only if rounding let a step
            // end a hair short of safe): the separating-axis test's best axis is the
            // normal. The Gauss-map walk finds the same axis (the largest separation is
            // minus the depth) without trying every edge pair, which on round hulls (an
            // icosphere's 480 edges: 230,000 pairs) is most of a crowd's impact time.
            let axis = depth::walk(&DepthInput::new(inp.a, pose_a, inp.b, pose_b))
                .map(|p| p.normal)
                .unwrap_or_else(|| sat::max_separation(inp.a, &pose_a, inp.b, &pose_b).axis);
            let state = if state == WalkState::Penetrating && t == 0.0 {
                ToiState::Overlapping
            } else {
                ToiState::Hit
            };
            return Progress::Done(output(state, t, axis));
        }
        let n = contact_normal(
            inp.a,
            &pose_a,
            inp.b,
            &pose_b,
            features,
            (point_b - point_a) / distance,
        );
        if distance <= self.tol {
            return Progress::Done(output(ToiState::Hit, t, n));
        }
        let (ma, mb) = (inp.motion_a, inp.motion_b);
        // The step along n: the separation there, measured, closes at most at μ.
        let sep = self.separation(&pose_a, &pose_b, n).min(distance);
        let mu = (ma.linear() - mb.linear()).dot(n).max(0.0)
            + ma.angular().cross(n).length() * self.swing_a
            + mb.angular().cross(n).length() * self.swing_b;
        // The step free of any direction: the distance closes no faster than any two
        // points approach. It carries the walk where n is rounded too coarsely for the
        // separation along it to show the distance (vertex against vertex or edge at a
        // distance near the rounding of the points' difference).
        let speed = (ma.linear() - mb.linear()).length()
            + ma.angular().length() * self.swing_a
            + mb.angular().length() * self.swing_b;
        let goal = self.tol / 2.0;
        let s1 = (sep - goal) / mu;
        let s2 = (distance - goal) / speed;
        let s3 = self.envelope_step(
            (&pose_a, &pose_b),
            n,
            (sep - goal, s1.max(s2)),
            features,
            (point_a, point_b),
        );
        let step = s1.max(s2).max(s3);
        // Zero speeds give an infinite step: nothing moves closer.
        let next = t + step;
        if next >= 1.0 || !next.is_finite() {
            return Progress::Done(output(ToiState::Miss, 1.0, n));
        }
        self.t = next;
        if self.iterations >= self.cap {
            return Progress::Done(output(ToiState::Capped, next, n));
        }
        Progress::Until(next)
    }

    /// The longest time the separation along a turning direction `u(τ)` is proved to stay
    /// above the goal: `u` starts at the contact normal `n` and turns at a constant
    /// angular velocity `ω_F` chosen so the closest features stay square to it (see
    /// [`carrier_spin`]), which makes the bound tight at contact: every point of the
    /// closest features then closes at the true rate of the distance, so near contact the
    /// step closes all but a second-order part of the gap.
    ///
    /// For vertices `x` of A and `y` of B, `(y − x)·u` over the step is at least `g(s) =
    /// (H_y − H_x) + (R_y − R_x)s − αs²/2` (`s = τ − t`; `H = (p − o)·u` and `R` its rate
    /// now, `o` a fixed point), because the second derivative of `(y − x)·u` is
    /// `(ÿ − ẍ)·u + 2(ẏ − ẋ)·u̇ + (y − x)·ü` and, with `ÿ = ω_B × (ω_B × (y − T_B))`,
    /// `u̇ = ω_F × u`, `ü = ω_F × (ω_F × u)`, is at most
    ///
    /// `α = |ω_A|² r_A + |ω_B|² r_B + 2|ω_F| V + |ω_F|² (|D|max + ρ_A + ρ_B)`
    ///
    /// (`r`: swing radius, `ρ`: largest vertex distance from the body origin, `V`: the
    /// bound on any two points' relative speed, `|D|max` the larger of the origins'
    /// distance now and at the end: it is linear in `t`). `f(s) = min g − goal` is
    /// concave (a minimum of concave functions), positive at 0, so `f(Δ) ≥ 0` proves the
    /// whole `[t, t + Δ]`. `min_y (H_y + R_y s)` is linear in `y`, one support query, and so
    /// is A's side: each trial costs two. The trial starts at the root of the closest
    /// points' `g`; where `f` is negative there, the next is the root of the pair that
    /// makes it so, smaller, and no pair can make it so twice (the roots decrease and a
    /// pair's `g` is positive below its root), so the search ends.
    fn envelope_step(
        &mut self,
        (pose_a, pose_b): (&Pose, &Pose),
        n: DVec3,
        (margin, floor): (f64, f64),
        features: (FeatureId, FeatureId),
        (point_a, point_b): (DVec3, DVec3),
    ) -> f64 {
        if margin <= 0.0 {
            return 0.0;
        }
        let inp = self.input;
        let (ma, mb) = (inp.motion_a, inp.motion_b);
        let (wa, wb) = (ma.angular(), mb.angular());
        let spin = carrier_spin((inp.a, pose_a), (inp.b, pose_b), features, n, (wa, wb));
        let o = (point_a + point_b) * 0.5;
        let k = spin.cross(n);
        let speed = (ma.linear() - mb.linear()).length()
            + wa.length() * self.swing_a
            + wb.length() * self.swing_b;
        let d_now = pose_b.translation - pose_a.translation;
        let d_end = mb.end().translation - ma.end().translation;
        let far = d_now.length().max(d_end.length()) + inp.a.radius() + inp.b.radius();
        let ws = spin.length();
        // A normal turning with one body leaves that body's vertices where they are
        // along it: only the other's terms remain (with `T_P` the carrier's origin,
        // `(y − T_P)·u` changes at second order by `ÿ·u + 2(ẏ − v_P)·u̇ + (y − T_P)·ü`).
        let carried = |wp: DVec3, wq: DVec3, swing_q: f64, reach_q: f64| {
            let wpl = wp.length();
            wq.length_squared() * swing_q
                + 2.0 * wpl * ((ma.linear() - mb.linear()).length() + wq.length() * swing_q)
                + wpl * wpl * (d_now.length().max(d_end.length()) + reach_q)
        };
        let alpha = if spin == wa && wa != DVec3::ZERO {
            carried(wa, wb, self.swing_b, inp.b.radius())
        } else if spin == wb && wb != DVec3::ZERO {
            carried(wb, wa, self.swing_a, inp.a.radius())
        } else {
            wa.length_squared() * self.swing_a
                + wb.length_squared() * self.swing_b
                + 2.0 * ws * speed
                + ws * ws * far
        };
        // Height over o along n and its rate, for a point p fixed in a body at `pose`
        // moving at (v, ω).
        let height = |p: DVec3| (p - o).dot(n);
        let rate = |p: DVec3, pose: &Pose, v: DVec3, w: DVec3| {
            v.dot(n) + (p - pose.translation).dot(n.cross(w)) + (p - o).dot(k)
        };
        let goal = self.tol / 2.0;
        // Roots aim a little above the goal: one aimed at it exactly lands a rounding
        // error either side, and below it the trial fails.
        let aim = self.tol * 0.75;
        let pair_root =
            |(hx, rx): (f64, f64), (hy, ry): (f64, f64)| lin_step(rx - ry, alpha, hy - hx - aim);
        let mut step = pair_root(
            (height(point_a), rate(point_a, pose_a, ma.linear(), wa)),
            (height(point_b), rate(point_b, pose_b, mb.linear(), wb)),
        );
        // A proof to the end of the motion is a miss; nothing longer is needed.
        let rest = 1.0 - self.t;
        step = step.min(rest);
        let mut warm = self.spin_support;
        for _ in 0..ENVELOPE_TRIALS {
            // Every later trial is shorter: none can beat a step already proved.
            if step <= floor {
                break;
            }
            let s = step;
            let place = |p: &ConvexPolytope, pose: &Pose, v: DVec3, w: DVec3, sign: f64, start| {
                let dir = n + (n.cross(w) + k) * s;
                let (vertex, _) = extreme(p, pose.rotation.conjugate() * (dir * sign), start);
                let x = pose.transform_point(p.vertex(vertex));
                (vertex, (height(x), rate(x, pose, v, w)))
            };
            let (va, xa) = place(inp.a, pose_a, ma.linear(), wa, 1.0, warm.0);
            let (vb, yb) = place(inp.b, pose_b, mb.linear(), wb, -1.0, warm.1);
            warm = (va, vb);
            let at = |(h, r): (f64, f64)| h + r * s;
            if at(yb) - at(xa) - alpha * s * s / 2.0 >= goal {
                self.spin_support = warm;
                return if s == rest { f64::INFINITY } else { s };
            }
            let next = pair_root(xa, yb);
            // The active pair's root lies below s in exact arithmetic; rounding that says
            // otherwise ends the search.
            if next >= s {
                break;
            }
            step = next;
        }
        self.spin_support = warm;
        0.0
    }

    /// `min over B of x·n − max over A of x·n` at the given poses (world `n`), by support
    /// queries warm-started from the last ones.
    fn separation(&mut self, pose_a: &Pose, pose_b: &Pose, n: DVec3) -> f64 {
        let (va, ha) = extreme(
            self.input.a,
            pose_a.rotation.conjugate() * n,
            self.support.0,
        );
        let (vb, hb) = extreme(
            self.input.b,
            pose_b.rotation.conjugate() * -n,
            self.support.1,
        );
        self.support = (va, vb);
        (-hb + pose_b.translation.dot(n)) - (ha + pose_a.translation.dot(n))
    }
}

/// Below this many vertices a support query scans them all: cheaper than climbing the
/// vertex graph from the warm start through its adjacency lists.
const SCAN_VERTICES: usize = 24;

/// The vertex of `p` farthest along `dir` (body frame) and its height: the same value as
/// [`ConvexPolytope::support`], by a scan on small bodies.
fn extreme(p: &ConvexPolytope, dir: DVec3, warm: u32) -> (u32, f64) {
    if p.num_vertices() <= SCAN_VERTICES {
        p.support_brute(dir)
    } else {
        p.support(dir, warm)
    }
}

/// The time until a gap `margin` closing at `rate` now, the rate growing by at most
/// `growth` per unit of time, can have closed: the positive root of `margin − rate·Δ −
/// growth·Δ²/2` (Lin's eq. 5.1); infinite when nothing closes.
fn lin_step(rate: f64, growth: f64, margin: f64) -> f64 {
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

/// Envelope-step trials per evaluation (each two support queries); near contact the
/// first one holds.
const ENVELOPE_TRIALS: u32 = 4;

/// The angular velocity `ω_F` at which the envelope step turns the contact normal `n`: one
/// that keeps the closest features square to it, so that their points close at one rate.
/// A face turns with its body; so does an edge against a vertex. Two edges need `u` to
/// stay square to both: `d/dτ (e·u) = (ω − ω_F)·(e × u)` for an edge `e` on a body
/// turning at `ω`, so `ω_F` solves `ω_F·(e_A × n) = ω_A·(e_A × n)` and `ω_F·(e_B × n) =
/// ω_B·(e_B × n)`, taken in the plane square to `n` (turning about `n` moves nothing);
/// nearly parallel edges make that ill-posed, and take A's spin. Two vertices need no
/// turn. Any `ω_F` gives a proof; this choice makes it tight.
fn carrier_spin(
    (a, pose_a): (&ConvexPolytope, &Pose),
    (b, pose_b): (&ConvexPolytope, &Pose),
    features: (FeatureId, FeatureId),
    n: DVec3,
    (wa, wb): (DVec3, DVec3),
) -> DVec3 {
    match features {
        (FeatureId::Face(_), _) | (FeatureId::Edge(_), FeatureId::Vertex(_)) => wa,
        (_, FeatureId::Face(_)) | (FeatureId::Vertex(_), FeatureId::Edge(_)) => wb,
        (FeatureId::Vertex(_), FeatureId::Vertex(_)) => DVec3::ZERO,
        (FeatureId::Edge(e), FeatureId::Edge(g)) => {
            let (a1, b1) = (
                edge_direction(a, pose_a, e).cross(n),
                edge_direction(b, pose_b, g).cross(n),
            );
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

/// Edge `e` of `p` placed by `pose`: head minus tail, world frame.
fn edge_direction(p: &ConvexPolytope, pose: &Pose, e: u32) -> DVec3 {
    let [u, v] = p.edge_vertices(e as usize);
    pose.rotation * (p.vertex(v) - p.vertex(u))
}

/// The contact normal (unit, A to B) of the closest features: a face's normal or two
/// edges' cross product, exact to rounding however small the distance, and otherwise the
/// direction between the closest points (`between`).
fn contact_normal(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
    features: (FeatureId, FeatureId),
    between: DVec3,
) -> DVec3 {
    let edge = edge_direction;
    match features {
        (FeatureId::Face(f), _) => pose_a.rotation * a.face_normal(f as usize),
        (_, FeatureId::Face(g)) => -(pose_b.rotation * b.face_normal(g as usize)),
        (FeatureId::Edge(e), FeatureId::Edge(g)) => {
            let (ea, eb) = (edge(a, pose_a, e), edge(b, pose_b, g));
            let c = ea.cross(eb);
            // Nearly parallel edges have no normal of their own.
            if c.length() > 1e-6 * ea.length() * eb.length() {
                let c = c.normalize();
                if c.dot(between) < 0.0 { -c } else { c }
            } else {
                between
            }
        }
        _ => between,
    }
}

/// Conservative advancement from `t = 0` to the first contact or the end of the step.
pub fn time_of_impact(input: &ToiInput<'_>) -> ToiOutput {
    let mut run = Advancement::new(*input);
    loop {
        if let Progress::Done(out) = run.step() {
            return out;
        }
    }
}
