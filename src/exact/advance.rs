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
//! points approach faster, so neither does the distance; it carries vertex–vertex and
//! vertex–edge pairs, whose normal is the rounded difference, the last stretch), and so
//! are two steps from Lin's eq. 5.1 (the closing rate now and a bound on its growth): one
//! along the fixed `n`, one against the plane carried by the face owner's frame, which a
//! turning face does not lift its own vertices against. It stops when `d ≤ τ` (a hit),
//! when every step is infinite or passes the end (a miss), or after `max_iterations` (capped: the answer is the
//! time the last step proved safe, never later). `τ` is the contact tolerance, by default
//! [`TOI_TOL_REL`] times the size of the coordinates.
//!
//! Hence the reported time is never later than the first contact, and the distance there
//! is at most `τ`; the time error is `τ` over the closing speed at contact.
//!
//! Convergence is linear near contact: each step closes the fraction `(closing speed of
//! the nearest points) / μ` of the gap, so a grazing or spinning pair takes more steps.
//! Tried: a secant step on `d(t)` near contact converges faster but is not conservative
//! (it can step over a thin part), so it would need the same proof of safety per step.
//! Tried: a per-vertex bound (each vertex's own speed along `n` and its depth below the
//! extreme, so a fast vertex far behind the contact does not shorten the step), searched
//! by doubling and bisection: 19 → 15 evaluations per pair on 8-vertex hulls, but each
//! evaluation cost 60% more, a net loss. What remains after the carried-plane step: the
//! growth bounds take each body's farthest vertex, and edge–edge contacts have no plane
//! that one body carries unchanged.

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
    /// Warm starts of the support queries in the spin directions.
    spin_support: (u32, u32),
    /// Warm starts of the support queries of the carried-plane step (B's, A's).
    carried_support: (u32, u32),
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
            carried_support: (0, 0),
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
        let step = ((sep - goal) / mu)
            .max((distance - goal) / speed)
            .max(self.accelerated_step(&pose_a, &pose_b, n, sep - goal))
            .max(self.carried_step((&pose_a, &pose_b), n, sep - goal, features));
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

    /// The time until the separation along `n` can have closed by `margin`, from the rate
    /// at which it closes now and a bound on how fast that rate grows (Lin's eq. 5.1,
    /// `t_c = (√(W² + 2αm) − W)/α`). Now, no point of A moves along `n` faster than
    /// `v_A·n + max_A (x − T_A)·(n × ω_A)` and no point of B back along it faster than
    /// `−v_B·n + max_B (x − T_B)·(ω_B × n)` (support queries: the exact maxima, not
    /// bounds of signed parts); their sum is `W`. A point's speed along `n` changes at most
    /// at its acceleration, `|ω|²` times its distance from the axis, so `α = |ω_A|² r_A +
    /// |ω_B|² r_B` and the separation stays above `m − WΔ − αΔ²/2`. Near contact `W` is
    /// the true closing rate rather than a bound over the whole step, so this step closes
    /// nearly the whole gap where the others close a fraction. Infinite when nothing closes.
    fn accelerated_step(&mut self, pose_a: &Pose, pose_b: &Pose, n: DVec3, margin: f64) -> f64 {
        if margin <= 0.0 {
            return 0.0;
        }
        let (ma, mb) = (self.input.motion_a, self.input.motion_b);
        let (wa, wb) = (ma.angular(), mb.angular());
        let spin = |p: &ConvexPolytope, pose: &Pose, u: DVec3, start: u32| {
            if u == DVec3::ZERO {
                (start, 0.0)
            } else {
                p.support(pose.rotation.conjugate() * u, start)
            }
        };
        let (sa, ha) = spin(self.input.a, pose_a, n.cross(wa), self.spin_support.0);
        let (sb, hb) = spin(self.input.b, pose_b, wb.cross(n), self.spin_support.1);
        self.spin_support = (sa, sb);
        let rate = (ma.linear() - mb.linear()).dot(n) + ha + hb;
        let growth = wa.length_squared() * self.swing_a + wb.length_squared() * self.swing_b;
        lin_step(rate, growth, margin)
    }

    /// Lin's step for the plane carried by one body's frame: the face owner's (A's when
    /// no face is among the closest features). A face that turns lifts its far vertices
    /// along a fixed normal faster than the distance closes; relative to a plane that
    /// turns with it, they do not move at all. With P the owner, Q the other, `m` the
    /// normal from P to Q at the current time carried as `m(t) = R_P(t) R_P⁻¹ m`, and `D =
    /// T_Q − T_P`, the separation is `min_Q (y − T_P)·m(t) − c` (c: P's own support, fixed)
    /// and a vertex's term changes at `(v_Q − v_P)·m + D·(ω_P × m) + (y − T_Q)·(m × Ω)`,
    /// `Ω = ω_Q − ω_P`. The closing rate now, `W`, takes the largest of its negations by
    /// one support query of Q; the rate's own change is at most `α = 2|v_Q − v_P||ω_P| +
    /// |ω_P|²|D|max + |Ω|(|ω_Q| r_Q + |ω_P| R_Q)` (`r`: swing radius, `R`: reach, `|D|max`
    /// the larger of `|D|` now and at the end, D being linear in t).
    fn carried_step(
        &mut self,
        (pose_a, pose_b): (&Pose, &Pose),
        n: DVec3,
        margin: f64,
        features: (FeatureId, FeatureId),
    ) -> f64 {
        if margin <= 0.0 {
            return 0.0;
        }
        let inp = self.input;
        let b_owns = matches!(
            features,
            (
                FeatureId::Vertex(_) | FeatureId::Edge(_),
                FeatureId::Face(_)
            )
        );
        let (mp, mq, q, pose_p, pose_q, m, swing_q, warm) = if b_owns {
            let warm = &mut self.carried_support.1;
            (
                inp.motion_b,
                inp.motion_a,
                inp.a,
                pose_b,
                pose_a,
                -n,
                self.swing_a,
                warm,
            )
        } else {
            let warm = &mut self.carried_support.0;
            (
                inp.motion_a,
                inp.motion_b,
                inp.b,
                pose_a,
                pose_b,
                n,
                self.swing_b,
                warm,
            )
        };
        let (wp, wq) = (mp.angular(), mq.angular());
        let spin = wq - wp;
        let relative = mq.linear() - mp.linear();
        let d = pose_q.translation - pose_p.translation;
        let u = spin.cross(m);
        let h = if u == DVec3::ZERO {
            0.0
        } else {
            let (vertex, h) = q.support(pose_q.rotation.conjugate() * u, *warm);
            *warm = vertex;
            h
        };
        let rate = -relative.dot(m) - d.dot(wp.cross(m)) + h;
        let d_end = mq.end().translation - mp.end().translation;
        let wpl = wp.length();
        let growth = 2.0 * relative.length() * wpl
            + wpl * wpl * d.length().max(d_end.length())
            + spin.length() * (wq.length() * swing_q + wpl * q.radius());
        lin_step(rate, growth, margin)
    }

    /// `min over B of x·n − max over A of x·n` at the given poses (world `n`), by support
    /// queries warm-started from the last ones.
    fn separation(&mut self, pose_a: &Pose, pose_b: &Pose, n: DVec3) -> f64 {
        let (va, ha) = self
            .input
            .a
            .support(pose_a.rotation.conjugate() * n, self.support.0);
        let (vb, hb) = self
            .input
            .b
            .support(pose_b.rotation.conjugate() * -n, self.support.1);
        self.support = (va, vb);
        (-hb + pose_b.translation.dot(n)) - (ha + pose_a.translation.dot(n))
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
    let edge = |p: &ConvexPolytope, pose: &Pose, e: u32| {
        let [u, v] = p.edge_vertices(e as usize);
        pose.rotation * (p.vertex(v) - p.vertex(u))
    };
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
