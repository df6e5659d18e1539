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
//! points approach faster, so neither does the distance), where the envelope step
//! ([`super::envelope::step`]) is longer, that one, and where the bodies' balls stay
//! `τ/2` apart longer, that time (each body stays within its radius of its origin however
//! it turns and the origins move on lines, so it is the first root of a quadratic: free of
//! the spins the other bounds pay for, it carries a spinning pair across the far part of
//! its approach, or past the end, in one step). While those balls are more than `τ` apart
//! the walk waits: the balls' step alone carries the pair to where they come within
//! `τ/2`, so a pair walks first where its bodies can be near (one whose balls stay apart
//! to the end still walks once, for the miss's distance and features); on the toi
//! bench's pairs that is 11% fewer instructions and 7% fewer cache misses a query at 8
//! vertices, 19% and 9% at 32. It stops when `d ≤ τ` (a hit),
//! when a step passes the end (a miss), or after `max_iterations` (capped: the answer is
//! the time the last step proved safe, never later). `τ` is the contact tolerance, by
//! default [`TOI_TOL_REL`] times the size of the coordinates, and at least the rounding
//! of a position along the motion (`default_tolerance`).
//!
//! Hence the reported time is never later than the first contact, and the distance there
//! is at most `τ`; the time error is `τ` over the closing speed at contact.
//!
//! The two bounds above close a fixed fraction of the gap per step, `(closing speed of
//! the nearest points) / μ`: convergence is linear, and slow for a grazing or spinning
//! pair. The envelope step ([`super::envelope`]) converges quadratically: it bounds every
//! vertex pair's separation along a normal that turns with the closest features by the
//! pair's exact rate now and a bound on its second derivative, so at contact what is left
//! of the gap is second order in the step. On random rotating 8–512-vertex hulls it takes
//! 6.5–7 evaluations per pair where the linear bounds (with Lin's eq. 5.1 along a fixed
//! and a carried normal, the previous steps) took 14–20; with the balls' step, 4.1–5.8.
//! Tried after both: steps between walks from the last features' normal (the
//! separation along any normal proves a step, and where it matches the features'
//! distance it pins the distance without a walk): the same evaluations, each no cheaper
//! on 8–32-vertex hulls, since the walk from a pair that is still closest costs little
//! more than placing the features. Tried before it: a secant step on
//! `d(t)` converges fast but proves nothing (it can step over a thin part); a per-vertex
//! bound along a fixed normal (19 → 15 evaluations, each 60% dearer). Tried after it: a
//! second trial with a normal that does not turn when the first fails (the far phase is
//! bound by the second-order term): 4% fewer evaluations, 5% more instructions; the
//! second derivative measured now (two more support queries: it is linear in the point)
//! with a bound on its change (third order) instead of one bound for the whole step: 12%
//! fewer evaluations, 6–12% more instructions.

use glam::DVec3;

use super::depth::{self, DepthInput};
use super::envelope::{self, Limits, Side, Square};
use super::sat;
use super::walk::{self, WalkInput, WalkState, contact_normal, edge_direction};
use crate::bodies::Pose;
use crate::geometry::polytope::PREFETCH_PARTS;
use crate::geometry::rounded::{Core, Rounded};
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

/// The rounding of a position along a motion, in ulps of its largest coordinate, that the
/// default tolerance stays above (see [`default_tolerance`]).
const POSITION_ULPS: f64 = 64.0;

/// The default contact distance `τ` for bodies of the given reaches on the given motions:
/// [`TOI_TOL_REL`] times the size of their coordinates relative to each other (the
/// reaches plus the offset between their origins, the larger at either end of the step),
/// and never below [`POSITION_ULPS`] ulps of the largest origin coordinate over the step.
/// A pose along a motion is rounded to the ulps of its coordinates, so bodies far from the
/// world origin and small against that distance (1e-6 boxes at 1e6) are placed no closer
/// than that to where the motion puts them; a step that keeps the placed bodies `τ/2`
/// apart then keeps the exact ones apart too, where a tolerance relative to their sizes
/// alone ended after their first contact.
pub(crate) fn default_tolerance(
    (reach_a, motion_a): (f64, &ScrewMotion),
    (reach_b, motion_b): (f64, &ScrewMotion),
) -> f64 {
    [0.0, 1.0]
        .map(|t| {
            contact_tolerance(
                (reach_a, motion_a.at_origin(t)),
                (reach_b, motion_b.at_origin(t)),
            )
        })
        .into_iter()
        .fold(0.0, f64::max)
}

/// The contact distance `τ` of bodies of the given reaches standing with their origins at
/// `origin_a` and `origin_b`: the default tolerance of a step that moves neither
/// ([`TOI_TOL_REL`] times the reaches plus the origins' offset, never below 64 ulps of the
/// largest origin coordinate). Bodies this close are in contact: conservative advancement
/// reports them so, and the World's contacts include them whatever the speculative
/// distance (crates stacked on a grid of 0.1 are 1e-17 apart or overlapping as the grid's
/// rounding falls, and are all in contact).
pub fn contact_tolerance(
    (reach_a, origin_a): (f64, DVec3),
    (reach_b, origin_b): (f64, DVec3),
) -> f64 {
    let relative = reach_a + reach_b + (origin_b - origin_a).abs().max_element();
    let absolute = origin_a
        .abs()
        .max_element()
        .max(origin_b.abs().max_element());
    (TOI_TOL_REL * relative).max(POSITION_ULPS * f64::EPSILON * absolute)
}

/// Whether balls of radii `reach_a` and `reach_b` (each at least the largest distance of
/// a point of its body from the body origin) about the origins stay more than twice the
/// default tolerance apart over the whole step: then the bodies do, however they turn,
/// and the pair is a miss with no walk. The tolerance is taken with these radii, at least
/// every one the exact queries take for the bodies or their pieces (each is relative to
/// reaches no larger). For callers that want only contacts: [`time_of_impact`] still
/// walks such a pair once, for a miss's distance and features.
pub fn balls_stay_apart(
    (reach_a, motion_a): (f64, &ScrewMotion),
    (reach_b, motion_b): (f64, &ScrewMotion),
) -> bool {
    // Twice the tolerance: a margin over the rounding of the balls' step.
    let goal = 2.0 * default_tolerance((reach_a, motion_a), (reach_b, motion_b));
    let (oa, ob) = (motion_a.at_origin(0.0), motion_b.at_origin(0.0));
    let v = motion_b.linear() - motion_a.linear();
    sphere_step(oa, reach_a, ob, reach_b, v, goal) > 1.0
}

/// Whether bodies at least `distance` apart at the start of the step (of the given reaches,
/// each at least the largest distance of a point of its body from the body origin) stay
/// more than twice the default tolerance apart over it: no two of their points approach
/// faster than the origins' relative speed plus each body's spin times its reach, the
/// direction-free step the advancement takes after its first walk. For callers that hold
/// a distance for the step's start poses already and want only contacts.
pub fn apart_throughout(
    distance: f64,
    (reach_a, motion_a): (f64, &ScrewMotion),
    (reach_b, motion_b): (f64, &ScrewMotion),
) -> bool {
    let approach = motion_a.approach_speed(reach_a, motion_b, reach_b);
    let goal = 2.0 * default_tolerance((reach_a, motion_a), (reach_b, motion_b));
    distance - approach > goal
}

/// Whether two convex bodies touching at the start of the step, with contact normal `n`
/// (unit, from A to B), stay in that contact or part over it: no point of either body
/// moves toward the other along `n` by more than `τ/2` over the whole step, `τ` their
/// contact tolerance at the start poses ([`contact_tolerance`]; at most the step's). A point fixed in a body moves along `n` at `v·n + (ω × r)·n`, with
/// `|(ω × r)·n| ≤ |ω × n|·|r|` and `|r|` at most the body's reach, so their separation
/// along `n`, and with it their distance, never falls more than `τ/2` below its start: a
/// crate sliding on a floor, turning about the floor's normal or lifting off it is in its
/// contact throughout, and meets the floor at no later time. For callers that report the
/// contacts at the start poses apart and want only new ones. Convex bodies only: one
/// plane separates them, where a non-convex body's other pieces may meet later.
pub fn holds_or_parts(
    n: DVec3,
    (reach_a, motion_a): (f64, &ScrewMotion),
    (reach_b, motion_b): (f64, &ScrewMotion),
) -> bool {
    let approach = (motion_a.linear() - motion_b.linear()).dot(n).max(0.0)
        + motion_a.angular().cross(n).length() * reach_a
        + motion_b.angular().cross(n).length() * reach_b;
    // Half the contact tolerance at the start poses: the step's tolerance grows with the
    // bodies' offset at its end, and a crate touching a floor and moving 1e9 times its size
    // a step was held while it sank into the floor by most of its height.
    let tau = contact_tolerance(
        (reach_a, motion_a.at_origin(0.0)),
        (reach_b, motion_b.at_origin(0.0)),
    );
    approach <= tau / 2.0
}

/// Whether an answer of advancement is a contact held from the start: a hit at 0 whose
/// bodies (convex, of the given reaches and motions) stay in that contact or part
/// ([`holds_or_parts`] along the answer's normal). For callers that want only new contacts.
pub fn held_from_start(
    out: &ToiOutput,
    (reach_a, motion_a): (f64, &ScrewMotion),
    (reach_b, motion_b): (f64, &ScrewMotion),
) -> bool {
    out.state == ToiState::Hit
        && out.toi == 0.0
        && holds_or_parts(out.normal, (reach_a, motion_a), (reach_b, motion_b))
}

/// The reach to bound a rounded body's spin by in [`holds_or_parts`] along `n`: its ball
/// turns into itself, so only its core's points move its support along `n`, each at most
/// `|ω|` times its distance from the rotation axis (which the turning leaves as it is);
/// never more than the body's reach. A ball spinning about its centre, or a capsule about
/// its own axis, moves no support at all (each was an impact at 0 on a floor it rested
/// on, and lost its frame).
pub fn rounded_spin_reach(body: &Rounded, motion: &ScrewMotion, n: DVec3) -> f64 {
    let w = motion.angular();
    let across = w.cross(n).length();
    if across == 0.0 {
        return body.reach();
    }
    let axis = motion.at(0.0).rotation.inverse() * w.normalize();
    let swing = body
        .core_points()
        .iter()
        .map(|p| p.cross(axis).length())
        .fold(0.0, f64::max);
    body.reach().min(w.length() * swing / across)
}

/// Whether two rounded bodies' contact (a hit of advancement; a polytope is a rounded body
/// of radius 0) holds or parts: at 0 along the answer's normal, each body's spin bounded by
/// its core ([`rounded_spin_reach`]); at 0 or later, along any face at a polytope core's
/// closest feature that separates them at the hit to within half the default tolerance
/// (as [`held_from_start_polytopes`]: a ball sliding across the seam between two tiles
/// meets the next tile's edge, whose top it does not close on).
pub fn held_rounded(
    out: &ToiOutput,
    (a, motion_a): (&Rounded, &ScrewMotion),
    (b, motion_b): (&Rounded, &ScrewMotion),
) -> bool {
    if out.state != ToiState::Hit {
        return false;
    }
    let holds = |n: DVec3| {
        holds_or_parts(
            n,
            (rounded_spin_reach(a, motion_a, n), motion_a),
            (rounded_spin_reach(b, motion_b, n), motion_b),
        )
    };
    if out.toi == 0.0 && holds(out.normal) {
        return true;
    }
    let (pose_a, pose_b) = (motion_a.at(out.toi), motion_b.at(out.toi));
    let slack = hit_slack((a.reach(), &pose_a), (b.reach(), &pose_b));
    let support = |r: &Rounded, pose: &Pose, n: DVec3| {
        r.core_support(pose.rotation.inverse() * n).0 + r.radius + n.dot(pose.translation)
    };
    let gap = |n: DVec3| -support(b, &pose_b, -n) - support(a, &pose_a, n);
    face_normals_at(
        out.features,
        (polytope_core(a), &pose_a),
        (polytope_core(b), &pose_b),
    )
    .any(|n| holds(n) && gap(n) >= -slack)
}

/// Whether two polytopes' contact (a hit of advancement) holds or parts: at 0 as
/// [`held_from_start`] says along the answer's normal; at 0 or later, along any face at
/// their closest features (A's faces' normals, B's reversed) that separates them at the
/// hit to within half the default tolerance ([`holds_or_parts`] along it over the step:
/// the bound holds from any time on). Touching bodies may have several separating planes,
/// and they hold or part if they do along any one. A crate sliding across the seam between
/// two tiles laid side by side meets the second tile's edge at the seam, where the
/// answer's normal may be the tile's side (the crate closes on that, and was stopped at
/// every seam); the tile's top separates them too, and along it the crate does not close.
pub fn held_from_start_polytopes(
    out: &ToiOutput,
    (a, reach_a, motion_a): (&ConvexPolytope, f64, &ScrewMotion),
    (b, reach_b, motion_b): (&ConvexPolytope, f64, &ScrewMotion),
) -> bool {
    if out.state != ToiState::Hit {
        return false;
    }
    let (ends_a, ends_b) = ((reach_a, motion_a), (reach_b, motion_b));
    if out.toi == 0.0 && holds_or_parts(out.normal, ends_a, ends_b) {
        return true;
    }
    let (pose_a, pose_b) = (motion_a.at(out.toi), motion_b.at(out.toi));
    let slack = hit_slack((reach_a, &pose_a), (reach_b, &pose_b));
    // The gap along `n` (unit, A to B) between the bodies' supporting planes.
    let gap = |n: DVec3| {
        let top_a = a.extreme(pose_a.rotation.inverse() * n, 0).1 + n.dot(pose_a.translation);
        let low_b = -b.extreme(pose_b.rotation.inverse() * -n, 0).1 + n.dot(pose_b.translation);
        low_b - top_a
    };
    face_normals_at(out.features, (Some(a), &pose_a), (Some(b), &pose_b))
        .any(|n| holds_or_parts(n, ends_a, ends_b) && gap(n) >= -slack)
}

/// How far apart along a face's normal two bodies at a hit's poses may overlap and still
/// count as separated by it: half their contact tolerance there ([`contact_tolerance`] at
/// those poses), which is the poses' rounding. Not the step's tolerance: that grows with
/// the bodies' offset at the step's ends, and two boxes 1 across closing at 2e11 a second
/// took 3.3 there, so at their hit, 2.2 apart along x, the faces along z, overlapping by
/// their whole height, passed as separating them: the hit was judged held and dropped,
/// and the boxes passed through each other.
fn hit_slack((reach_a, pose_a): (f64, &Pose), (reach_b, pose_b): (f64, &Pose)) -> f64 {
    contact_tolerance((reach_a, pose_a.translation), (reach_b, pose_b.translation)) / 2.0
}

/// A rounded body's core where it is a polytope.
fn polytope_core(r: &Rounded) -> Option<&ConvexPolytope> {
    match &r.core {
        Core::Polytope(p) => Some(p),
        _ => None,
    }
}

/// The world normals (A to B) of the faces at the closest features `features`: A's faces'
/// normals, then B's reversed; a body that is no polytope (`None`) has none.
fn face_normals_at<'p>(
    (fa, fb): (FeatureId, FeatureId),
    (a, pose_a): (Option<&'p ConvexPolytope>, &'p Pose),
    (b, pose_b): (Option<&'p ConvexPolytope>, &'p Pose),
) -> impl Iterator<Item = DVec3> + 'p {
    let normals = move |p: Option<&'p ConvexPolytope>, f, pose: &'p Pose, sign: f64| {
        p.into_iter().flat_map(move |p| {
            faces_at(p, f).map(move |i| sign * (pose.rotation * p.face_normal(i)))
        })
    };
    normals(a, fa, pose_a, 1.0).chain(normals(b, fb, pose_b, -1.0))
}

/// The faces that hold a feature: a face itself, an edge's two, a vertex's ring.
fn faces_at(p: &ConvexPolytope, feature: FeatureId) -> impl Iterator<Item = usize> + '_ {
    let (one, edge, ring): (Option<u32>, Option<[u32; 2]>, &[u32]) = match feature {
        FeatureId::Face(f) => (Some(f), None, &[]),
        FeatureId::Edge(e) => (None, Some(p.edge_faces(e as usize)), &[]),
        FeatureId::Vertex(v) => (None, None, p.vertex_out(v as usize)),
    };
    one.into_iter()
        .chain(edge.into_iter().flatten())
        .chain(ring.iter().map(|&h| p.half_edge_face(h)))
        .map(|f| f as usize)
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
    /// How far each body's points are from its rotation axis: made when first needed
    /// (a pair proved apart to the end by the bodies' reaches never needs them).
    swings: Option<(f64, f64)>,
    features: Option<(FeatureId, FeatureId)>,
    support: (u32, u32),
    /// Warm starts of the envelope step's support queries.
    spin_support: (u32, u32),
    iterations: u32,
    /// The last step was the balls' alone: this one walks.
    walk_due: bool,
    /// [`Self::time`] was reached by a step of ours, so the bodies are at least `τ/2`
    /// apart there and the walk need not prove a near stop apart.
    stepped: bool,
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
        Self {
            tol: input
                .tolerance
                .map(ContactTolerance::get)
                .unwrap_or_else(|| {
                    default_tolerance(
                        (input.a.reach(), &input.motion_a),
                        (input.b.reach(), &input.motion_b),
                    )
                }),
            cap: input.max_iterations.unwrap_or(MAX_ITERATIONS).max(1),
            swings: None,
            features: input.start,
            support: (0, 0),
            spin_support: (0, 0),
            iterations: 0,
            walk_due: false,
            stepped: false,
            t: 0.0,
            input,
        }
    }

    /// Starts at `t` (clamped to `[0, 1]`; NaN starts at 0) instead: the caller has proved
    /// the bodies apart over `[0, t]` (a filter over the step's sub-intervals).
    pub fn starting_at(mut self, t: f64) -> Self {
        self.t = start_time(t);
        self
    }

    /// The time the bodies are known to be apart until.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// Distance evaluations (walks) so far: the balls' steps are not counted.
    pub fn evaluations(&self) -> u32 {
        self.iterations
    }

    /// The contact tolerance `τ` in use.
    pub fn tolerance(&self) -> f64 {
        self.tol
    }

    /// Evaluates the distance at [`Self::time`] and either finishes or advances; while the
    /// balls about the bodies' origins are more than `τ` apart and meet before the end, it
    /// advances to where they come within `τ/2` instead, with no walk (not counted in
    /// [`ToiOutput::iterations`]; at most one such step follows each evaluation).
    pub fn step(&mut self) -> Progress {
        let inp = &self.input;
        let t = self.t;
        // While the balls about the bodies' origins are apart, their step needs no walk
        // (see the module comment), unless it reaches the end: a miss is answered by a walk,
        // with its distance and features.
        if !self.walk_due {
            let (step, gap) = self.balls(t);
            let next = t + step;
            if gap > self.tol && next < 1.0 {
                self.t = next;
                self.stepped = true;
                // Never twice running: rounding cannot make it a loop of empty steps.
                self.walk_due = true;
                return Progress::Until(next);
            }
        }
        self.walk_due = false;
        let (pose_a, pose_b) = (inp.motion_a.at(t), inp.motion_b.at(t));
        self.iterations += 1;
        let w = walk::walk(&WalkInput {
            start: self.features,
            apart: self.stepped,
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
            let (axis, depth) = depth::walk(&DepthInput::new(inp.a, pose_a, inp.b, pose_b))
                .map(|p| (p.normal, p.depth))
                .unwrap_or_else(|| {
                    let s = sat::max_separation(inp.a, &pose_a, inp.b, &pose_b);
                    (s.axis, -s.distance)
                });
            // Overlapping within the tolerance is touching (a stack written in decimals
            // overlaps by its rounding, 1e-17): a hit at 0 whose bodies may close, where an
            // overlap was left to the contacts, and a crate given a neighbour's speed in the
            // same frame moved a frame's travel into the crate it rested on.
            let state = if state == WalkState::Penetrating && t == 0.0 && depth > self.tol {
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
            // Unit: the points are world coordinates, the distance the walk's (in A's
            // frame); far from the world origin their ratio strays from 1, and a longer
            // normal overstates the separation measured along it.
            (point_b - point_a).try_normalize().unwrap_or(DVec3::X),
        );
        if distance <= self.tol {
            // Within the rounding of the points (boxes at 1e9 touching to the rounding of
            // their corners) their direction is noise: a face, or the best axis, gives it.
            let near = walk::points_rounding(inp.a, &pose_a, inp.b, &pose_b);
            let n = if distance > near {
                n
            } else {
                walk::touch_normal(
                    inp.a,
                    &pose_a,
                    inp.b,
                    &pose_b,
                    features,
                    (point_a, point_b),
                    distance,
                    near,
                )
            };
            return Progress::Done(output(ToiState::Hit, t, n));
        }
        // Apart to the end by the direction-free step with each body's reach for its swing
        // (a reach is at least the swing, so this step is at most the one below): a miss,
        // with no swing, separation or envelope made.
        let reach_speed =
            inp.motion_a
                .approach_speed(inp.a.radius(), &inp.motion_b, inp.b.radius());
        let next = t + (distance - self.tol / 2.0) / reach_speed;
        if next >= 1.0 || !next.is_finite() {
            return Progress::Done(output(ToiState::Miss, 1.0, n));
        }
        let sep = self.separation(&pose_a, &pose_b, n).min(distance);
        let step = self.proved_step(
            (&pose_a, &pose_b),
            features,
            (point_a, point_b),
            n,
            (sep, distance),
        );
        // Zero speeds give an infinite step: nothing moves closer.
        let next = t + step;
        if next >= 1.0 || !next.is_finite() {
            return Progress::Done(output(ToiState::Miss, 1.0, n));
        }
        self.t = next;
        self.stepped = true;
        if self.iterations >= self.cap {
            return Progress::Done(output(ToiState::Capped, next, n));
        }
        Progress::Until(next)
    }

    /// The longest of the steps that prove the bodies apart from the current time on,
    /// given the features and their points, the normal `n`, the separation along it
    /// (`sep`, measured) and a lower bound on the distance (`distance`).
    fn proved_step(
        &mut self,
        (pose_a, pose_b): (&Pose, &Pose),
        features: (FeatureId, FeatureId),
        (point_a, point_b): (DVec3, DVec3),
        n: DVec3,
        (sep, distance): (f64, f64),
    ) -> f64 {
        let (swing_a, swing_b) = self.swings();
        let inp = &self.input;
        let (ma, mb) = (&inp.motion_a, &inp.motion_b);
        let mu = (ma.linear() - mb.linear()).dot(n).max(0.0)
            + ma.angular().cross(n).length() * swing_a
            + mb.angular().cross(n).length() * swing_b;
        // The step free of any direction: the distance closes no faster than any two
        // points approach. It carries the walk where n is rounded too coarsely for the
        // separation along it to show the distance (vertex against vertex or edge at a
        // distance near the rounding of the points' difference).
        let speed = ma.approach_speed(swing_a, mb, swing_b);
        let goal = self.tol / 2.0;
        let s1 = (sep - goal) / mu;
        let s2 = (distance - goal) / speed;
        let s3 = {
            let warm = &mut self.spin_support;
            let (mut warm_a, mut warm_b) = *warm;
            let mut support_a = |d: DVec3| {
                warm_a = inp.a.extreme(d, warm_a).0;
                inp.a.vertex(warm_a)
            };
            let mut support_b = |d: DVec3| {
                warm_b = inp.b.extreme(d, warm_b).0;
                inp.b.vertex(warm_b)
            };
            let s3 = envelope::step(
                Side {
                    motion: ma,
                    pose: *pose_a,
                    swing: swing_a,
                    reach: inp.a.radius(),
                    feature: square(inp.a, pose_a, features.0),
                    point: point_a,
                    support: &mut support_a,
                },
                Side {
                    motion: mb,
                    pose: *pose_b,
                    swing: swing_b,
                    reach: inp.b.radius(),
                    feature: square(inp.b, pose_b, features.1),
                    point: point_b,
                    support: &mut support_b,
                },
                n,
                Limits {
                    margin: sep - goal,
                    goal,
                    aim: self.tol * 0.75,
                    floor: s1.max(s2),
                    rest: 1.0 - self.t,
                },
            );
            *warm = (warm_a, warm_b);
            s3
        };
        let s4 = self.balls(self.t).0;
        s1.max(s2).max(s3).max(s4)
    }

    /// Each body's swing radius about its rotation axis, made once.
    fn swings(&mut self) -> (f64, f64) {
        let inp = &self.input;
        *self.swings.get_or_insert_with(|| {
            (
                inp.motion_a.swing_radius(inp.a.vertices()),
                inp.motion_b.swing_radius(inp.b.vertices()),
            )
        })
    }

    /// The balls about the bodies' origins at time `t`: how long they stay `τ/2` apart
    /// ([`sphere_step`]), and their gap now.
    fn balls(&self, t: f64) -> (f64, f64) {
        let inp = &self.input;
        let (ma, mb) = (&inp.motion_a, &inp.motion_b);
        let (oa, ob) = (ma.at_origin(t), mb.at_origin(t));
        let (ra, rb) = (inp.a.radius(), inp.b.radius());
        let step = sphere_step(oa, ra, ob, rb, mb.linear() - ma.linear(), self.tol / 2.0);
        (step, ob.distance(oa) - ra - rb)
    }

    /// `min over B of x·n − max over A of x·n` at the given poses (world `n`), by support
    /// queries warm-started from the last ones.
    fn separation(&mut self, pose_a: &Pose, pose_b: &Pose, n: DVec3) -> f64 {
        let (va, ha) = self
            .input
            .a
            .extreme(pose_a.rotation.conjugate() * n, self.support.0);
        let (vb, hb) = self
            .input
            .b
            .extreme(pose_b.rotation.conjugate() * -n, self.support.1);
        self.support = (va, vb);
        (-hb + pose_b.translation.dot(n)) - (ha + pose_a.translation.dot(n))
    }
}

/// How long two balls, about origins `oa` and `ob` with radii `ra` and `rb`, whose
/// offset `ob − oa` changes at `v` per unit of time, stay more than `goal` apart: each
/// body stays within its radius of its origin however it turns, so this is a step that
/// holds whatever the spins (where the other steps pay for them). Infinite when they
/// never come that close; 0 when they are that close now.
///
/// The discriminant is worked out as `|v|² R² − |d × v|²` (Lagrange's identity), not
/// `(d·v)² − |v|² (|d|² − R²)`: with balls far smaller than their offset (points, grains
/// crossing many times their size in a step) the two terms of the second form agree to
/// the last bit, and a head-on approach read as a miss. A discriminant within rounding of
/// zero (a graze of the two balls) counts as meeting, at the closest approach.
pub(crate) fn sphere_step(oa: DVec3, ra: f64, ob: DVec3, rb: f64, v: DVec3, goal: f64) -> f64 {
    let d = ob - oa;
    let reach = ra + rb + goal;
    // |d + s v|² = reach²: a s² + 2 b s + c = 0.
    let (a, b, c) = (
        v.length_squared(),
        d.dot(v),
        d.length_squared() - reach * reach,
    );
    if c <= 0.0 {
        return 0.0;
    }
    if b >= 0.0 || a == 0.0 {
        return f64::INFINITY;
    }
    let meet = a * (reach * reach);
    let disc = meet - d.cross(v).length_squared();
    // Each term is rounded by a few ulps of `meet` where they nearly cancel.
    if disc < -1e-12 * meet {
        return f64::INFINITY;
    }
    if disc <= 0.0 {
        // A graze: the closest approach, where the balls' gap is `goal` to within 1e-12
        // of `reach`.
        return -b / a;
    }
    // The smaller root, in the form that does not cancel: c / (−b + √disc).
    c / (-b + disc.sqrt())
}

/// A closest feature as the envelope step sees it.
pub(crate) fn square(p: &ConvexPolytope, pose: &Pose, f: FeatureId) -> Square {
    match f {
        FeatureId::Vertex(_) => Square::Vertex,
        FeatureId::Edge(e) => Square::Edge(edge_direction(p, pose, e)),
        FeatureId::Face(_) => Square::Face,
    }
}

/// A start time proved safe by a caller, in `[0, 1]`: NaN (no proof) is 0.
pub(crate) fn start_time(t: f64) -> f64 {
    if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) }
}

/// [`time_of_impact`] of many pairs, in their order. While one pair advances, the next
/// pair's tables are brought toward the cache, a part before each step
/// ([`ConvexPolytope::prefetch_part`]), and the fields of the pair after it that say where
/// its tables are ([`ConvexPolytope::prefetch_fields`]): the same answers, sooner when the
/// bodies are many and distinct. The inputs are taken as they are made, three at a time:
/// a batch of thousands is never held whole (gathered into a vector first, a pair's
/// motions are written out and read back, two more trips to memory than the query's own).
pub fn times_of_impact<'a>(inputs: impl IntoIterator<Item = ToiInput<'a>>) -> Vec<ToiOutput> {
    let mut inputs = inputs.into_iter();
    let mut out = Vec::with_capacity(inputs.size_hint().0);
    let (mut now, mut next) = (inputs.next(), inputs.next());
    while let Some(input) = now {
        let after = inputs.next();
        if let Some(after) = &after {
            after.a.prefetch_fields();
            after.b.prefetch_fields();
        }
        let bodies = next.as_ref().map(|n| [n.a, n.b]);
        let prefetch = |part: usize| {
            for body in bodies.iter().flatten() {
                body.prefetch_part(part);
            }
        };
        let mut parts = 0..PREFETCH_PARTS;
        let mut run = Advancement::new(input);
        out.push(loop {
            if let Some(part) = parts.next() {
                prefetch(part);
            }
            if let Progress::Done(done) = run.step() {
                parts.for_each(prefetch);
                break done;
            }
        });
        (now, next) = (next, after);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The balls' gap, sampled densely over the step, never drops below `goal` (up to the
    /// rounding of coordinates near 10, 1e-13), and the step is tight: just past it the gap
    /// is below `goal`.
    #[test]
    fn the_sphere_step_keeps_the_balls_apart_and_is_tight() {
        let mut rng = Rng::new(0x5fe);
        let goal = 1e-9;
        let mut tight = 0;
        for _ in 0..2000 {
            let oa = rng.unit_vector() * rng.range(0.0, 3.0);
            let ob = oa + rng.unit_vector() * rng.range(1.0, 5.0);
            let (ra, rb) = (rng.range(0.1, 1.0), rng.range(0.1, 1.0));
            // Mostly closing, some grazing or parting.
            let v = (oa - ob + rng.unit_vector() * 3.0) * rng.range(0.0, 3.0);
            let step = sphere_step(oa, ra, ob, rb, v, goal);
            let gap = |s: f64| (ob + v * s - oa).length() - ra - rb;
            let now = gap(0.0);
            assert!(step >= 0.0);
            if now <= goal {
                assert_eq!(step, 0.0);
                continue;
            }
            let end = if step.is_finite() { step } else { 100.0 };
            for k in 0..=1000 {
                let s = end * f64::from(k) / 1000.0;
                assert!(gap(s) >= goal - 1e-13, "gap {} at {s} of {step}", gap(s));
            }
            if step.is_finite() {
                assert!(gap(step * (1.0 + 1e-9) + 1e-12) < goal * (1.0 + 1e-3) + 1e-12);
                tight += 1;
            } else {
                // Never closer than goal: the least gap over all time, by the foot of the
                // perpendicular from the origin offset onto the line of motion.
                let d = ob - oa;
                let s = if v.length_squared() > 0.0 {
                    (-d.dot(v) / v.length_squared()).max(0.0)
                } else {
                    0.0
                };
                assert!(gap(s) >= goal - 1e-13);
            }
        }
        assert!(tight > 200, "{tight} finite steps");
    }

    /// Balls at rest, touching now, or moving apart.
    #[test]
    fn the_sphere_step_at_rest_touching_and_parting() {
        let (ra, rb) = (1.0, 1.0);
        let at_rest = sphere_step(DVec3::ZERO, ra, DVec3::X * 3.0, rb, DVec3::ZERO, 0.0);
        assert_eq!(at_rest, f64::INFINITY);
        let touching = sphere_step(DVec3::ZERO, ra, DVec3::X * 2.0, rb, -DVec3::X, 0.0);
        assert_eq!(touching, 0.0);
        let parting = sphere_step(DVec3::ZERO, ra, DVec3::X * 3.0, rb, DVec3::X, 0.0);
        assert_eq!(parting, f64::INFINITY);
        // Head on: 1 apart closing at 2 meet at 1/2.
        let head_on = sphere_step(DVec3::ZERO, ra, DVec3::X * 3.0, rb, -DVec3::X * 2.0, 0.0);
        assert!((head_on - 0.5).abs() < 1e-15, "{head_on}");
    }

    /// Balls far smaller than their offset (points, grains crossing 1e12 times their size):
    /// head on, or passing within the reach, they meet at the analytic time (the first
    /// time the offset's length is the reach), never later; passing outside it, never. The
    /// textbook discriminant read every head-on case here as a miss.
    #[test]
    fn tiny_balls_far_apart_meet_at_the_analytic_time() {
        let mut rng = Rng::new(0x7b1);
        let (mut met, mut passed) = (0, 0);
        for _ in 0..20_000 {
            let size = 10f64.powf(rng.range(-12.0, -3.0));
            let (ra, rb, goal) = (
                size * rng.range(0.0, 1.0),
                size * rng.range(0.0, 1.0),
                size * rng.range(1e-3, 1.0),
            );
            let reach = ra + rb + goal;
            let oa = rng.unit_vector() * rng.range(0.0, 3.0);
            let along = rng.unit_vector();
            // The line of motion passes the other origin at a miss distance from 0 (head
            // on) to twice the reach.
            let miss = reach * [0.0, rng.range(0.0, 2.0)][usize::from(rng.range(0.0, 1.0) < 0.5)];
            let across = along.any_orthonormal_vector();
            let ob = oa - along * rng.range(0.5, 2.0) + across * miss;
            let v = along * rng.range(0.5, 5.0);
            let step = sphere_step(oa, ra, ob, rb, v, goal);
            // The closest approach, free of cancellation: |d × v| / |v|.
            let d = ob - oa;
            let closest = d.cross(v).length() / v.length();
            if closest < reach * (1.0 - 1e-9) {
                // First time |d + s v| = reach: the foot of the perpendicular less the
                // half chord.
                let foot = -d.dot(v) / v.length_squared();
                let half = (reach * reach - closest * closest).sqrt() / v.length();
                let truth = foot - half;
                assert!(
                    step.is_finite(),
                    "a meeting read as a miss: {d} {v} {reach}"
                );
                assert!(step <= truth * (1.0 + 1e-9), "{step} after {truth}");
                assert!(step >= truth - 1e-6 * foot, "{step} long before {truth}");
                met += 1;
            } else if closest > reach * (1.0 + 1e-9) {
                assert!(step == f64::INFINITY || step >= -d.dot(v) / v.length_squared());
                passed += 1;
            }
        }
        assert!(met > 9_000 && passed > 4_000, "{met} met, {passed} passed");
    }
}
