//! The closest-feature walk: Lin–Canny (Lin 1993, ch. 3 and appendix B) in the form of
//! Mirtich's V-Clip (1998), which also detects penetration.
//!
//! The state is a pair of features, one per body. Two features are the closest pair iff
//! each one's closest point to the other lies in the other's Voronoi region. Each step
//! tests the pair and, when a test fails, moves one feature to the neighbour behind the
//! violated Voronoi plane; the distance between the features does not increase, so from a
//! previous frame's pair (coherence) the walk usually ends in 0–2 steps.
//!
//! States: vertex–vertex, vertex–edge, vertex–face, edge–edge, edge–face (and their
//! mirrors). Face–face never occurs: like V-Clip, the edge–face state moves the edge to a
//! vertex, except where the edge is parallel to the face over the part inside the face's
//! prism (crossed planks, a plank on a crate): in front of the face, that edge–face pair
//! is terminal when the face's point is in the edge's region too, and its closest points
//! are taken at an end of that part; behind it, the edge goes to the local-minimum search
//! as a vertex below a face does. An edge is tested
//! against a region by clipping it to the region's planes; where the clipped part is not
//! empty, the sign of the derivative of the distance at the clip points says whether the
//! minimum lies beyond a plane (then the walk moves there). Where an edge misses a region
//! between two planes, the walk moves to the neighbour whose region holds the point of
//! the edge closest to the current feature (the distance then strictly drops).
//!
//! Penetration: an edge that crosses a face plane inside the face's prism, or a vertex
//! below a face with every face of that body above it (V-Clip's local-minimum search over
//! all faces). Termination: steps are bounded by `max_steps` and a pair seen twice ends
//! the walk; both return `Failed`, never a loop.
//!
//! Ties: everyday shapes put closest points exactly on Voronoi planes. Every signed
//! distance, clip, derivative sign and face height counts only beyond a tolerance,
//! [`TOL_REL`] times the size of the coordinates in the walk's frame, far above their
//! rounding: every move is one exact arithmetic would make too, so noise cannot send the
//! walk round a cycle. At a terminal pair within the tolerance, exact predicates
//! (`super::touch`) decide whether the features touch, and a face at them with the other
//! body beyond its plane (`face_apart`), else the separating-axis test over the candidates
//! where they meet (`sat::max_separation_around`), tells touching from overlap.

use glam::DVec3;
use smallvec::SmallVec;

use super::placement::Placement;
use super::{sat, touch};
use crate::bodies::Pose;
use crate::geometry::closest::{
    closest_on_segment, gap, segments_closest, segments_closest_params,
};
use crate::geometry::{ConvexPolytope, FeatureId, VoronoiPlane, VoronoiPlanes};

/// How a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkState {
    /// The bodies are disjoint; the result is exact up to rounding.
    Separated,
    /// The closest features touch (decided by exact predicates on the placed coordinates),
    /// the bodies do not overlap: `distance` is exactly 0 and the points are where they
    /// touch.
    Touching,
    /// The bodies overlap; `distance` is 0 and the points are a witness of the overlap.
    Penetrating,
    /// The walk gave up; the result is the last pair's and must not be trusted.
    Failed(WalkFailure),
}

/// Why a walk failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkFailure {
    /// `max_steps` steps were taken.
    StepLimit,
    /// A feature pair came back (a tie the rules did not break).
    Cycle,
}

/// What the walk needs.
#[derive(Clone, Copy, Debug)]
pub struct WalkInput<'a> {
    /// Body A.
    pub a: &'a ConvexPolytope,
    /// Pose of A.
    pub pose_a: Pose,
    /// Body B.
    pub b: &'a ConvexPolytope,
    /// Pose of B.
    pub pose_b: Pose,
    /// Where to start: a previous result's `features` (warm start), or `None` (cold).
    pub start: Option<(FeatureId, FeatureId)>,
    /// Step bound; `None` picks 4 × (features of A + features of B) + 64.
    pub max_steps: Option<u32>,
    /// The caller has proved the bodies apart at these poses (conservative advancement,
    /// after a step that keeps them apart): a stop closer than 1.26e-6 of the size needs
    /// no proof that they are, which is most of the walk at a time of impact's last
    /// evaluation. Stops within the rounding are still settled as without it.
    pub apart: bool,
}

impl<'a> WalkInput<'a> {
    /// A cold walk (no start pair) with the default step bound.
    pub fn new(a: &'a ConvexPolytope, pose_a: Pose, b: &'a ConvexPolytope, pose_b: Pose) -> Self {
        WalkInput {
            a,
            pose_a,
            b,
            pose_b,
            start: None,
            max_steps: None,
            apart: false,
        }
    }
}

/// What the walk found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkOutput {
    /// How it ended.
    pub state: WalkState,
    /// Distance between the bodies (0 when penetrating).
    pub distance: f64,
    /// Closest point on A, world space.
    pub point_a: DVec3,
    /// Closest point on B, world space.
    pub point_b: DVec3,
    /// The closest features (A's, B's): the cache for the next query.
    pub features: (FeatureId, FeatureId),
    /// Steps taken.
    pub steps: u32,
    /// For [`WalkState::Touching`]: an axis along which the bodies touch (unit, world,
    /// from A to B), their contact normal: the normal of a touching face that has the
    /// other body beyond its plane, else the separating-axis test's best axis. Zero
    /// otherwise.
    pub touching_axis: DVec3,
}

/// Whether two polytopes touch or overlap: the walk, and where it gives up the exact
/// separating-axis test.
pub fn collide(a: &ConvexPolytope, pose_a: &Pose, b: &ConvexPolytope, pose_b: &Pose) -> bool {
    match walk(&WalkInput::new(a, *pose_a, b, *pose_b)).state {
        WalkState::Penetrating | WalkState::Touching => true,
        WalkState::Separated => false,
        WalkState::Failed(_) => sat::intersects(a, pose_a, b, pose_b),
    }
}

/// A per-pair cache: keeps the last closest features so a sequence of slightly moved poses
/// is answered in expected constant time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkCache {
    /// The last closest features, if any.
    pub features: Option<(FeatureId, FeatureId)>,
}

impl WalkCache {
    /// Walks from the cached pair and remembers the new one.
    pub fn query(
        &mut self,
        a: &ConvexPolytope,
        pose_a: Pose,
        b: &ConvexPolytope,
        pose_b: Pose,
    ) -> WalkOutput {
        let out = walk(&WalkInput {
            start: self.features,
            ..WalkInput::new(a, pose_a, b, pose_b)
        });
        self.features = match out.state {
            WalkState::Failed(_) => None,
            _ => Some(out.features),
        };
        out
    }
}

/// A body placed in the walk's frame (A's body frame), with the walk's tolerance.
struct Body<'a> {
    poly: &'a ConvexPolytope,
    place: Placement,
    /// Below this, a signed distance or a height difference is rounding noise: a plane is
    /// violated, a derivative has a sign, only beyond it (see the module comment).
    tol: f64,
}

impl Body<'_> {
    fn point(&self, p: DVec3) -> DVec3 {
        self.place.point(p)
    }

    fn vector(&self, v: DVec3) -> DVec3 {
        self.place.vector(v)
    }

    fn vertex(&self, v: u32) -> DVec3 {
        self.point(self.poly.vertex(v))
    }

    fn edge(&self, e: u32) -> (DVec3, DVec3) {
        let [a, b] = self.poly.edge_vertices(e as usize);
        (self.vertex(a), self.vertex(b))
    }

    /// Edge `e`'s direction (head less tail) rotated from the body's frame: the placed
    /// ends' difference carries their rounding, a large part of a short edge's direction.
    fn edge_direction(&self, e: u32) -> DVec3 {
        let [t, h] = self.poly.edge_vertices(e as usize);
        self.vector(self.poly.vertex(h) - self.poly.vertex(t))
    }

    /// A point of the walk's frame in the body's own, where its Voronoi planes are
    /// tested: one point moved instead of every plane (the same signs beyond the
    /// tolerance, which is far above either frame's rounding).
    fn local(&self, x: DVec3) -> DVec3 {
        self.place.inverse_point(x)
    }

    /// The planes of `f`'s region.
    fn planes(&self, f: FeatureId) -> VoronoiPlanes<'_> {
        self.poly.voronoi_planes(f)
    }

    /// Clips the segment `(t, h)` (walk's frame) against `f`'s region.
    fn clip(&self, f: FeatureId, t: DVec3, h: DVec3) -> Clip {
        clip_edge(self.local(t), self.local(h), self.planes(f), self.tol)
    }

    /// The plane of edge `e`'s region most violated by `x`: its end planes first (the
    /// first two), then its face planes.
    fn edge_most_violated(&self, e: u32, x: DVec3) -> Option<FeatureId> {
        self.most_violated(self.poly.edge_end_planes(e), x)
            .or_else(|| self.most_violated(self.poly.edge_side_planes(e), x))
    }

    /// The plane of edge `e`'s region most violated by `x`, face planes first.
    fn edge_most_violated_sides_first(&self, e: u32, x: DVec3) -> Option<FeatureId> {
        self.most_violated(self.poly.edge_side_planes(e), x)
            .or_else(|| self.most_violated(self.poly.edge_end_planes(e), x))
    }

    /// Unit normal and offset of face `f`.
    fn face(&self, f: u32) -> (DVec3, f64) {
        let n = self.vector(self.poly.face_normal(f as usize));
        (n, self.place.offset(n, self.poly.face_offset(f as usize)))
    }

    /// Height of `x` over face `f`'s plane, with noise snapped to 0.
    fn height(&self, f: u32, x: DVec3) -> f64 {
        let (n, d) = self.face(f);
        self.snap(n.dot(x) - d)
    }

    /// The slope `n·dir` of a height over a face's plane (placed unit normal `n`) along
    /// `dir`, or 0 within the rounding of the normal and of `dir`'s ends' coordinates:
    /// read from the normal, it keeps its sign however close to the face the points are
    /// (see `clip_rate`).
    fn slope(&self, normal: DVec3, dir: DVec3) -> f64 {
        let r = normal.dot(dir);
        if r.abs() > self.tol + TOL_REL * dir.length() {
            r
        } else {
            0.0
        }
    }

    /// `s`, or 0 when it is within the tolerance.
    fn snap(&self, s: f64) -> f64 {
        if s.abs() <= self.tol { 0.0 } else { s }
    }

    /// Feature `f` in the walk's frame.
    fn feature(&self, f: FeatureId) -> Placed {
        match f {
            FeatureId::Vertex(v) => Placed::Vertex(self.vertex(v)),
            FeatureId::Edge(e) => {
                let (t, h) = self.edge(e);
                Placed::Edge(t, h)
            }
            FeatureId::Face(face) => {
                let (n, d) = self.face(face);
                Placed::Face(n, d)
            }
        }
    }

    /// Closest point of feature `f` to the point `x`.
    fn closest_to(&self, f: FeatureId, x: DVec3) -> DVec3 {
        self.feature(f).closest_to(x)
    }

    /// The plane among `planes` (of a region of this body) most violated by `x` (walk's
    /// frame), beyond the tolerance, if any.
    fn most_violated(
        &self,
        planes: impl IntoIterator<Item = VoronoiPlane>,
        x: DVec3,
    ) -> Option<FeatureId> {
        VoronoiPlane::most_violated(planes, self.local(x), self.tol)
    }
}

/// A feature's geometry in the walk's frame: placed once, asked several times.
#[derive(Clone, Copy, Debug)]
enum Placed {
    Vertex(DVec3),
    /// Tail and head.
    Edge(DVec3, DVec3),
    /// A face's plane: unit normal and offset.
    Face(DVec3, f64),
}

impl Placed {
    /// Closest point of the feature to `x` (of a face, its plane's: the walk asks only
    /// for points inside the face's prism).
    fn closest_to(&self, x: DVec3) -> DVec3 {
        match *self {
            Placed::Vertex(v) => v,
            Placed::Edge(t, h) => closest_on_segment(t, h, x).0,
            Placed::Face(n, d) => x - n * (n.dot(x) - d),
        }
    }
}

/// Result of clipping an edge against a Voronoi region.
enum Clip {
    /// The part `[lo, hi]` of the edge is inside; the planes that cut it, if any.
    Inside {
        lo: f64,
        hi: f64,
        n_lo: Option<FeatureId>,
        n_hi: Option<FeatureId>,
    },
    /// No part of the edge is inside.
    Excluded,
}

/// Clips the segment `t + λ (h − t)`, λ ∈ [0, 1], against planes (region side ≥ 0, with
/// `tol` of slack: a segment lying on a plane is inside it, whatever the rounding). The
/// segment and the planes are in one frame; λ is the same in every frame.
fn clip_edge(t: DVec3, h: DVec3, planes: VoronoiPlanes<'_>, tol: f64) -> Clip {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut n_lo, mut n_hi) = (None, None);
    for p in planes {
        let (dt, dh) = (p.signed_distance(t), p.signed_distance(h));
        let (out_t, out_h) = (dt < -tol, dh < -tol);
        if out_t && out_h {
            return Clip::Excluded;
        }
        if out_t {
            let l = dt / (dt - dh);
            if l > lo {
                lo = l;
                n_lo = Some(p.neighbor);
            }
        } else if out_h {
            let l = dt / (dt - dh);
            if l < hi {
                hi = l;
                n_hi = Some(p.neighbor);
            }
        }
        if lo > hi {
            return Clip::Excluded;
        }
    }
    Clip::Inside { lo, hi, n_lo, n_hi }
}

enum Step {
    Continue,
    /// A closest pair.
    Done,
    /// A closest pair whose closest points (on the first body, on the second) the step
    /// has already computed.
    DoneAt(DVec3, DVec3),
    Penetrating(DVec3),
}

/// Relative size of the walk's tolerance: signed distances in the walk's frame carry a
/// rounding error of a few ulps of the largest coordinate (B is rotated into A's frame,
/// plane offsets are dot products), far below this, so a plane violated by more than
/// the tolerance is violated in exact arithmetic too.
pub const TOL_REL: f64 = 1e-13;

/// Closest points within this many tolerances of each other stop the walk without
/// proving the bodies apart (see `walk`): the separating-axis test decides.
const NEAR: f64 = 16.0;

/// The walk. See the module comment.
pub fn walk(input: &WalkInput<'_>) -> WalkOutput {
    let (place, world_a) = Placement::pair(&input.pose_a, &input.pose_b);
    let tol = TOL_REL * place.scale(input.a, input.b);
    let a = Body {
        poly: input.a,
        place: Placement::IDENTITY,
        tol,
    };
    let b = Body {
        poly: input.b,
        place,
        tol,
    };
    let (mut fa, mut fb) = input
        .start
        .filter(|&(x, y)| valid(input.a, x) && valid(input.b, y))
        .unwrap_or_else(|| cold_start(&a, &b));
    let max_steps = input.max_steps.unwrap_or_else(|| {
        let count = |p: &ConvexPolytope| (p.num_vertices() + p.num_edges() + p.num_faces()) as u32;
        4 * (count(input.a) + count(input.b)) + 64
    });
    let mut seen = Seen::default();
    let mut steps = 0;
    let finish = |state, fa, fb, steps, pa: DVec3, pb: DVec3| {
        let to_world = |p: DVec3| world_a.point(p);
        WalkOutput {
            state,
            distance: match state {
                WalkState::Penetrating | WalkState::Touching => 0.0,
                _ => gap(pa, pb),
            },
            point_a: to_world(pa),
            point_b: to_world(pb),
            features: (fa, fb),
            steps,
            touching_axis: DVec3::ZERO,
        }
    };
    loop {
        let step = match (fa, fb) {
            (FeatureId::Vertex(_), FeatureId::Vertex(_)) => vertex_vertex(&a, &mut fa, &b, &mut fb),
            (FeatureId::Vertex(_), FeatureId::Edge(_)) => vertex_edge(&a, &mut fa, &b, &mut fb),
            (FeatureId::Edge(_), FeatureId::Vertex(_)) => vertex_edge(&b, &mut fb, &a, &mut fa),
            (FeatureId::Vertex(_), FeatureId::Face(_)) => vertex_face(&a, &mut fa, &b, &mut fb),
            (FeatureId::Face(_), FeatureId::Vertex(_)) => vertex_face(&b, &mut fb, &a, &mut fa),
            (FeatureId::Edge(_), FeatureId::Edge(_)) => edge_edge(&a, &mut fa, &b, &mut fb),
            (FeatureId::Edge(_), FeatureId::Face(_)) => edge_face(&a, &mut fa, &b, &mut fb),
            (FeatureId::Face(_), FeatureId::Edge(_)) => edge_face(&b, &mut fb, &a, &mut fa),
            (FeatureId::Face(_), FeatureId::Face(_)) => face_face(&a, &mut fa, &b, &mut fb),
        };
        match step {
            Step::Done | Step::DoneAt(..) => {
                let (mut pa, mut pb) = match step {
                    Step::DoneAt(pa, pb) => (pa, pb),
                    _ => closest_points(&a, fa, &b, fb),
                };
                let mut d = gap(pa, pb);
                let mut touching = pa == pb || (d <= tol && features_touch(&a, fa, &b, fb));
                if !touching
                    && d <= NEAR * tol
                    && let Some((x, y)) = edges_touching_around(&a, fa, &b, fb)
                {
                    // Touching at an edge beside the stop: the bodies touch, and their
                    // distance is 0, not the features' (coplanar caps of 1,024-sided
                    // cylinders, one turned 5e-10 about their axis, stopped at a rim
                    // vertex 3e-12 beside the other's rim edge, which its own rim edge
                    // crosses).
                    (fa, fb) = (FeatureId::Edge(x), FeatureId::Edge(y));
                    (pa, pb) = closest_points(&a, fa, &b, fb);
                    d = gap(pa, pb);
                    touching = true;
                }
                if !touching {
                    // Within the tolerance of each other the features meet every region's
                    // test (each is a distance along the planes' normals, none beyond the
                    // tolerance), so the stop proves nothing: a cube standing on its corner
                    // with the corner 2e-16 inside a crate's side and sunk 0.1 below its
                    // top stopped there, 3e-16 apart, its edges deep in the crate. A face
                    // at the features with the other body beyond it shows them apart, else
                    // the separating-axis test decides.
                    if d <= NEAR * tol {
                        // The candidates where the features meet first: an axis there
                        // that separates them settles it (crates 1e-13 apart stopped at
                        // two edges beside the corner that is closest were called
                        // overlapping by the arcs' look alone). Where none does, two edges
                        // this near whose arcs clearly do not cross overlap as two that meet
                        // do (their wedges cannot be separated, and meet within the edges'
                        // reach): the test over every edge pair took 4.2 s here on round
                        // hulls of 10,242 vertices.
                        if face_apart(input.a, input.b, &b.place, (fa, fb), 0.0).is_none()
                            && separation_around(input, (&a, fa, pa), (&b, fb, pb)).distance < 0.0
                            && (edges_cannot_touch(input.a, input.b, &b.place, (fa, fb))
                                || sat::max_separation_placed(input.a, input.b, &b.place).distance
                                    < 0.0)
                        {
                            return finish(WalkState::Penetrating, fa, fb, steps, pa, pb);
                        }
                    } else if ((thin(input.a, fa) || thin(input.b, fb))
                        && !apart_across(&a, fa, &b, fb, (pa, pb), d))
                        || (!input.apart
                            && d <= PROVE_BELOW * (a.tol / TOL_REL)
                            && !proved_apart(input, (&a, fa, pa), (&b, fb, pb)))
                    {
                        return unproved(
                            input,
                            &b.place,
                            fa,
                            fb,
                            steps,
                            (world_a.point(pa), world_a.point(pb)),
                        );
                    }
                    return finish(WalkState::Separated, fa, fb, steps, pa, pb);
                }
                // At distance 0 the features alone cannot tell touching from overlap
                // (identical bodies at identical poses touch at every feature): a face at
                // them with the other body beyond its plane shows them touching (crates
                // at a face, an edge or a corner), else the separating-axis test over the
                // candidates where they meet decides, as the whole test would.
                let axis = match face_apart(input.a, input.b, &b.place, (fa, fb), 0.0) {
                    Some((axis, _)) => axis,
                    None => {
                        let best = separation_around(input, (&a, fa, pa), (&b, fb, pb));
                        if best.distance < 0.0 {
                            return finish(WalkState::Penetrating, fa, fb, steps, pa, pb);
                        }
                        best.axis
                    }
                };
                return WalkOutput {
                    touching_axis: world_a.vector(axis),
                    ..finish(WalkState::Touching, fa, fb, steps, pa, pb)
                };
            }
            Step::Penetrating(witness) => {
                return finish(WalkState::Penetrating, fa, fb, steps, witness, witness);
            }
            Step::Continue => {
                steps += 1;
                let failure = if steps >= max_steps {
                    Some(WalkFailure::StepLimit)
                } else if seen.contains((fa, fb)) {
                    Some(WalkFailure::Cycle)
                } else {
                    None
                };
                if let Some(failure) = failure {
                    let (pa, pb) = closest_points(&a, fa, &b, fb);
                    return finish(WalkState::Failed(failure), fa, fb, steps, pa, pb);
                }
                seen.push((fa, fb));
            }
        }
    }
}

/// Below this share of the coordinates' size a stop's distance is proved (see
/// [`proved_apart`]): the regions' tests place the direction between closest points `d`
/// apart only to within the tolerance over `d`, an angle at which a body of size `s` can
/// reach `s · tol / d` past the other, more than `d` below `√(tol · s)`; four times that
/// (√[`TOL_REL`] is 3.2e-7).
const PROVE_BELOW: f64 = 4.0 * 3.2e-7;

/// Whether bodies the walk stopped `pa`, `pb` apart (a gap below [`PROVE_BELOW`] of their
/// size) are shown apart by a face at their features with the other body beyond it, else
/// by the separating-axis test over the candidates there: two cubes a corner 1e-11 above a
/// corner, one tipped by 0.03 rad about the line through them (its far side 3% of its
/// width into the other), passed every region's test within the tolerance and were called
/// 1e-11 apart.
fn proved_apart(
    input: &WalkInput<'_>,
    (a, fa, pa): (&Body<'_>, FeatureId, DVec3),
    (b, fb, pb): (&Body<'_>, FeatureId, DVec3),
) -> bool {
    face_apart(input.a, input.b, &b.place, (fa, fb), 0.0).is_some()
        || separation_around(input, (a, fa, pa), (b, fb, pb)).distance >= 0.0
}

/// Where two faces meet this close to flat (the cosine of their normals' angle above
/// 1 − FLAT, an angle of 1.4e-2), the region of the edge between them, and of its ends,
/// is a wedge too thin for its tests: a point `h` behind both faces is within `h` times
/// the angle of its planes, inside the tolerance for `h` up to 7e-12 of the coordinates'
/// size at this angle, and up to 1e-4 at the angle of a face bulged by 1e-9.
const FLAT: f64 = 1e-4;

/// Whether feature `f` is an edge between faces near flat ([`FLAT`]), or a vertex of one:
/// its region's tests cannot be trusted to tell a point behind the faces (see
/// [`apart_across`]).
fn thin(p: &ConvexPolytope, f: FeatureId) -> bool {
    let flat = |e: usize| {
        let [f0, f1] = p.edge_faces(e);
        p.face_normal(f0 as usize).dot(p.face_normal(f1 as usize)) > 1.0 - FLAT
    };
    match f {
        FeatureId::Edge(e) => flat(e as usize),
        FeatureId::Vertex(v) => p
            .vertex_out(v as usize)
            .iter()
            .any(|&h| flat(h as usize / 2)),
        FeatureId::Face(_) => false,
    }
}

/// Whether the plane square to the features' contact normal through the closest points
/// `pa`, `pb` (the walk's frame, `d` apart) has A behind `pa` and B beyond `pb`, each within the
/// tolerance and the normal's rounding: two support queries that prove the stop. The
/// region tests prove it too in exact arithmetic, but each is a distance against the
/// tolerance, and where two faces are a hair from coplanar the region of the edge between
/// them is a wedge that thin: a point 1e-4 behind both faces is within 2e-13 of its
/// planes (a sliver 1e-4 inside a box whose face bulges by 1e-9 was called 1e-4 apart).
fn apart_across(
    a: &Body<'_>,
    fa: FeatureId,
    b: &Body<'_>,
    fb: FeatureId,
    (pa, pb): (DVec3, DVec3),
    d: f64,
) -> bool {
    let between = (pb - pa) / d;
    // A face's normal or two edges' cross product is exact to rounding; the direction
    // between the points is off by their rounding over the distance, and so is the
    // support along it, by that over the bodies' size.
    let (n, rounding) = match (fa, fb) {
        (FeatureId::Face(f), _) => (a.face(f).0, 0.0),
        (_, FeatureId::Face(g)) => (-b.face(g).0, 0.0),
        (FeatureId::Edge(e), FeatureId::Edge(g)) => {
            let (ea, eb) = (a.edge_direction(e), b.edge_direction(g));
            let c = ea.cross(eb);
            if c.length() > 1e-6 * ea.length() * eb.length() {
                let c = c.normalize();
                (if c.dot(between) < 0.0 { -c } else { c }, 0.0)
            } else {
                (between, 1.0)
            }
        }
        _ => (between, 1.0),
    };
    let size = a.tol / TOL_REL;
    let slack = a.tol + rounding * 64.0 * f64::EPSILON * size * size / d;
    // Climbs start at the features, where the supports are.
    let at = |p: &Body<'_>, f: FeatureId| match f {
        FeatureId::Vertex(v) => v,
        FeatureId::Edge(e) => p.poly.edge_vertices(e as usize)[0],
        FeatureId::Face(f) => p
            .poly
            .face_edges(f as usize)
            .next()
            .map_or(0, |e| p.poly.edge_vertices(e as usize)[0]),
    };
    let top_a = a.poly.extreme(n, at(a, fa)).1;
    let local = b.place.inverse_vector(-n);
    let low_b = -b.poly.extreme(local, at(b, fb)).1 + n.dot(b.place.translation);
    top_a - n.dot(pa) <= slack && n.dot(pb) - low_b <= slack
}

/// The answer where a stop is not proved (see [`apart_across`]): overlapping by the
/// separating-axis test, else the closest pair by enumeration.
fn unproved(
    input: &WalkInput<'_>,
    place: &Placement,
    fa: FeatureId,
    fb: FeatureId,
    steps: u32,
    (pa, pb): (DVec3, DVec3),
) -> WalkOutput {
    let output = |state, distance, point_a, point_b, features| WalkOutput {
        state,
        distance,
        point_a,
        point_b,
        features,
        steps,
        touching_axis: DVec3::ZERO,
    };
    let best = sat::max_separation_placed(input.a, input.b, place);
    if best.distance < 0.0 {
        return output(WalkState::Penetrating, 0.0, pa, pb, (fa, fb));
    }
    let c = crate::geometry::brute::polytope_closest_pair(
        input.a,
        &input.pose_a,
        input.b,
        &input.pose_b,
    );
    if c.distance == 0.0 {
        let axis = input.pose_a.rotation * best.axis;
        return WalkOutput {
            touching_axis: axis,
            ..output(WalkState::Touching, 0.0, c.point_a, c.point_b, c.features)
        };
    }
    output(
        WalkState::Separated,
        c.distance,
        c.point_a,
        c.point_b,
        c.features,
    )
}

/// Whether two edges the walk stopped at within [`NEAR`] tolerances of each other, where
/// no candidate about their points separates the bodies, show them overlapping: their
/// Gauss arcs (A's, and B's negated) clearly do not cross, so no plane between their
/// closest points has both bodies on its sides (a plane supporting a body at a point of
/// an edge has its normal on the edge's arc). Alone it misreads points near an edge's end,
/// where another feature's candidates separate bodies 1e-13 apart. Where the
/// arcs cross, or nearly, the candidates there and then the separating-axis test decide:
/// two round hulls of 10,242 vertices sunk 0.001 into each other stopped at two such
/// edges 5.6e-17 apart, and the test took every one of their E_A × E_B edge pairs (4.2 s
/// a query).
fn edges_cannot_touch(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    place: &Placement,
    (fa, fb): (FeatureId, FeatureId),
) -> bool {
    let (FeatureId::Edge(ea), FeatureId::Edge(eb)) = (fa, fb) else {
        return false;
    };
    let [a0, a1] = a.edge_faces(ea as usize);
    let [b0, b1] = b.edge_faces(eb as usize);
    sat::arcs_clearly_apart(
        a.face_normal(a0 as usize),
        a.face_normal(a1 as usize),
        -place.vector(b.face_normal(b0 as usize)),
        -place.vector(b.face_normal(b1 as usize)),
    )
}

/// The separating-axis test over the candidates where the features `fa`, `fb` meet at
/// `pa`, `pb` (the walk's frame; see [`sat::max_separation_around`]), each feature's
/// ends and sides within [`NEAR`] tolerances of its point counted in.
fn separation_around(
    input: &WalkInput<'_>,
    (a, fa, pa): (&Body<'_>, FeatureId, DVec3),
    (b, fb, pb): (&Body<'_>, FeatureId, DVec3),
) -> sat::Separation {
    let points = (a.local(pa), b.local(pb));
    separation_at((input.a, input.b, &b.place), (fa, fb), points, a.tol)
}

/// [`separation_around`] of bodies placed by `place`, at points each in its own body's
/// frame, with the walk's tolerance `tol`.
fn separation_at(
    (a, b, place): (&ConvexPolytope, &ConvexPolytope, &Placement),
    (fa, fb): (FeatureId, FeatureId),
    (pa, pb): (DVec3, DVec3),
    tol: f64,
) -> sat::Separation {
    let at_a = sat::Around::at(a, fa, pa, NEAR * tol);
    let at_b = sat::Around::at(b, fb, pb, NEAR * tol);
    sat::max_separation_around(a, b, place, (&at_a, &at_b), tol)
}

/// The normal (A's frame, A to B) of a face at the features `fa`, `fb` (a face itself,
/// or one beside the edge or around the vertex) along which the bodies are apart by at
/// least `floor`, and that separation, each by the separating-axis test's own face gap
/// (`sat::face_gap_a`, `face_gap_b`: with `floor` 0 that test would find them touching
/// too): crates touching at a face, an edge or a corner need no more. `None` when no such
/// face shows it.
pub(crate) fn face_apart(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    place: &Placement,
    (fa, fb): (FeatureId, FeatureId),
    floor: f64,
) -> Option<(DVec3, f64)> {
    let faces = |p: &ConvexPolytope, f: FeatureId| -> SmallVec<[u32; 8]> {
        match f {
            FeatureId::Face(f) => SmallVec::from_slice(&[f]),
            FeatureId::Edge(e) => SmallVec::from_slice(&p.edge_faces(e as usize)),
            FeatureId::Vertex(v) => p
                .vertex_out(v as usize)
                .iter()
                .map(|&h| p.half_edge_face(h))
                .collect(),
        }
    };
    // Each support query climbs from the last one's answer: the faces about a vertex
    // come in order, and each climbed from vertex 0 across the other body (a cone's apex
    // of 16,384 faces against another cone's made that quadratic).
    let mut warm = 0;
    for f in faces(a, fa) {
        let (v, gap) = sat::face_gap_a(a, b, place, f as usize, warm);
        warm = v;
        if gap >= floor {
            return Some((a.face_normal(f as usize), gap));
        }
    }
    let a_in_b = place.inverse_translation();
    let mut warm = 0;
    for g in faces(b, fb) {
        let (v, gap) = sat::face_gap_b(a, b, place, a_in_b, g as usize, warm);
        warm = v;
        if gap >= floor {
            return Some((place.vector(-b.face_normal(g as usize)), gap));
        }
    }
    None
}

/// The feature pairs a walk has visited: a warm walk takes a few steps, so the first
/// ones live on the stack and a walk that needs no more allocates nothing.
#[derive(Default)]
struct Seen {
    first: [Option<(FeatureId, FeatureId)>; 8],
    more: Vec<(FeatureId, FeatureId)>,
}

impl Seen {
    fn contains(&self, pair: (FeatureId, FeatureId)) -> bool {
        self.first.contains(&Some(pair)) || self.more.contains(&pair)
    }

    fn push(&mut self, pair: (FeatureId, FeatureId)) {
        match self.first.iter_mut().find(|p| p.is_none()) {
            Some(free) => *free = Some(pair),
            None => self.more.push(pair),
        }
    }
}

/// True when the terminal features share a point exactly (see `touch`).
fn features_touch(a: &Body<'_>, fa: FeatureId, b: &Body<'_>, fb: FeatureId) -> bool {
    let ring = |p: &Body<'_>, f: u32| -> Vec<DVec3> {
        p.poly
            .face_vertices(f as usize)
            .map(|v| p.vertex(v))
            .collect()
    };
    match (fa, fb) {
        (FeatureId::Vertex(u), FeatureId::Vertex(w)) => a.vertex(u) == b.vertex(w),
        (FeatureId::Vertex(u), FeatureId::Edge(e)) => {
            let (t, h) = b.edge(e);
            touch::collinear(t, h, a.vertex(u))
        }
        (FeatureId::Vertex(u), FeatureId::Face(f)) => touch::on_plane(&ring(b, f), a.vertex(u)),
        (FeatureId::Edge(x), FeatureId::Edge(y)) => {
            let ((p0, p1), (q0, q1)) = (a.edge(x), b.edge(y));
            touch::segments_touch(p0, p1, q0, q1)
        }
        (FeatureId::Edge(e), FeatureId::Face(f)) => {
            // An edge resting on the face, or touching it at an end (a corner on a face,
            // where the walk stopped at an edge from the corner: its closest point there).
            let (t, h) = a.edge(e);
            let r = ring(b, f);
            touch::on_plane(&r, t) || touch::on_plane(&r, h)
        }
        (FeatureId::Face(_), FeatureId::Face(_)) => false,
        // The mirrors: touching is symmetric.
        (FeatureId::Edge(_) | FeatureId::Face(_), _) => features_touch(b, fb, a, fa),
    }
}

/// Edge pairs [`edges_touching_around`] tests at most.
const AROUND_PAIRS: usize = 64;

/// A's and B's edges at the stop's features (a vertex's edges, an edge itself; none of
/// a face, whose edges can be many), the first pair that shares a point exactly; none
/// past [`AROUND_PAIRS`] pairs (the apexes of many-sided cones).
fn edges_touching_around(
    a: &Body<'_>,
    fa: FeatureId,
    b: &Body<'_>,
    fb: FeatureId,
) -> Option<(u32, u32)> {
    let edges = |p: &Body<'_>, f: FeatureId| -> SmallVec<[u32; 8]> {
        match f {
            FeatureId::Vertex(v) => p
                .poly
                .vertex_out(v as usize)
                .iter()
                .map(|&h| h / 2)
                .collect(),
            FeatureId::Edge(e) => SmallVec::from_slice(&[e]),
            FeatureId::Face(_) => SmallVec::new(),
        }
    };
    let (at_a, at_b) = (edges(a, fa), edges(b, fb));
    // Two cones' apexes of 4,096 sides each would make 16.7M tests (2.8 s a query).
    if at_a.len() * at_b.len() > AROUND_PAIRS {
        return None;
    }
    at_a.iter().find_map(|&x| {
        let (p0, p1) = a.edge(x);
        at_b.iter().find_map(|&y| {
            let (q0, q1) = b.edge(y);
            touch::segments_touch(p0, p1, q0, q1).then_some((x, y))
        })
    })
}

fn valid(p: &ConvexPolytope, f: FeatureId) -> bool {
    match f {
        FeatureId::Vertex(v) => (v as usize) < p.num_vertices(),
        FeatureId::Edge(e) => (e as usize) < p.num_edges(),
        FeatureId::Face(x) => (x as usize) < p.num_faces(),
    }
}

/// Vertices facing each other along the line between the bodies' centroids.
/// Where either support vertex lies on a face of more than [`WIDE_FACE`] sides facing
/// the other body (its normal within 60° of the line between the centroids), the walk
/// starts at that face and the other body's vertex nearest its plane instead: from a rim
/// vertex it went round the face a vertex a step, each step clipping against all its
/// sides (a drum of 16,384 sides hovering over another, tilted 1e-6: 7,410 steps, 0.8 s).
fn cold_start(a: &Body<'_>, b: &Body<'_>) -> (FeatureId, FeatureId) {
    let (ca, cb) = (a.point(a.poly.centroid()), b.point(b.poly.centroid()));
    let d = (cb - ca).try_normalize().unwrap_or(DVec3::X);
    let (va, _) = a.poly.extreme(d, 0);
    let (vb, _) = b.poly.extreme(b.place.inverse_vector(-d), 0);
    // The widest-facing face at vertex `v` of `p`, with its normal in A's frame.
    let wide_face = |p: &Body<'_>, v: u32, toward: DVec3| {
        p.poly
            .vertex_out(v as usize)
            .iter()
            .map(|&h| p.poly.half_edge_face(h))
            .filter(|&f| p.poly.face_half_edges(f as usize).len() > WIDE_FACE)
            .map(|f| (f, p.place.vector(p.poly.face_normal(f as usize))))
            .filter(|(_, n)| n.dot(toward) > 0.5)
            .max_by(|x, y| x.1.dot(toward).total_cmp(&y.1.dot(toward)))
    };
    if let Some((f, n)) = wide_face(a, va, d) {
        let (v, _) = b.poly.extreme(b.place.inverse_vector(-n), 0);
        return (FeatureId::Face(f), FeatureId::Vertex(v));
    }
    if let Some((g, n)) = wide_face(b, vb, -d) {
        let (v, _) = a.poly.extreme(-n, 0);
        return (FeatureId::Vertex(v), FeatureId::Face(g));
    }
    (FeatureId::Vertex(va), FeatureId::Vertex(vb))
}

/// Faces of more sides than this start a cold walk at them (see [`cold_start`]).
const WIDE_FACE: usize = 32;

/// Closest points of a terminal (or current) pair.
fn closest_points(a: &Body<'_>, fa: FeatureId, b: &Body<'_>, fb: FeatureId) -> (DVec3, DVec3) {
    match (fa, fb) {
        (FeatureId::Edge(x), FeatureId::Edge(y)) => {
            let (p0, p1) = a.edge(x);
            let (q0, q1) = b.edge(y);
            segments_closest(p0, p1, q0, q1)
        }
        (FeatureId::Vertex(v), _) => {
            let p = a.vertex(v);
            (p, b.closest_to(fb, p))
        }
        (_, FeatureId::Vertex(v)) => {
            let q = b.vertex(v);
            (a.closest_to(fa, q), q)
        }
        (FeatureId::Edge(x), FeatureId::Face(y)) => edge_face_points(a, x, b, y),
        (FeatureId::Face(x), FeatureId::Edge(y)) => {
            let (pb, pa) = edge_face_points(b, y, a, x);
            (pa, pb)
        }
        (FeatureId::Face(_), FeatureId::Face(_)) => {
            let q = b.vertex(b.poly.face_vertices(face_index(fb)).next().unwrap_or(0));
            (a.closest_to(fa, q), q)
        }
    }
}

/// Closest points of edge `e` of `p` and face `f` of `q` (point on the edge first): the
/// end of the edge's part inside the face's prism that is nearer the face's plane, and its
/// projection, which lies on the face. (An edge parallel to the face is closest along the
/// whole part; either end will do.)
fn edge_face_points(p: &Body<'_>, e: u32, q: &Body<'_>, f: u32) -> (DVec3, DVec3) {
    let (t, h) = p.edge(e);
    let (lo, hi) = match q.clip(FeatureId::Face(f), t, h) {
        Clip::Inside { lo, hi, .. } => (lo, hi),
        // Not a terminal pair: the whole edge.
        Clip::Excluded => (0.0, 1.0),
    };
    let (pl, ph) = (t + (h - t) * lo, t + (h - t) * hi);
    let (n, d) = q.face(f);
    let pick = if (n.dot(pl) - d).abs() <= (n.dot(ph) - d).abs() {
        pl
    } else {
        ph
    };
    (pick, q.closest_to(FeatureId::Face(f), pick))
}

fn face_index(f: FeatureId) -> usize {
    match f {
        FeatureId::Face(i) => i as usize,
        _ => 0,
    }
}

fn vertex_vertex(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(vp), FeatureId::Vertex(vq)) = (*x, *y) else {
        unreachable!()
    };
    let (u, w) = (p.vertex(vp), q.vertex(vq));
    if let Some(n) = p.most_violated(p.planes(*x), w) {
        *x = n;
        return Step::Continue;
    }
    if let Some(n) = q.most_violated(q.planes(*y), u) {
        *y = n;
        return Step::Continue;
    }
    Step::Done
}

/// The edge of face `f` nearest to the segment `(t, h)`.
fn nearest_boundary_edge(p: &Body<'_>, f: u32, t: DVec3, h: DVec3) -> FeatureId {
    let mut best = (f64::INFINITY, FeatureId::Face(f));
    for e in p.poly.face_edges(f as usize) {
        let (a0, a1) = p.edge(e);
        let (c, d) = segments_closest(t, h, a0, a1);
        let dist = c.distance_squared(d);
        if dist < best.0 {
            best = (dist, FeatureId::Edge(e));
        }
    }
    best.1
}

/// Moves `x` when the edge `(t, h)` misses `x`'s region or its distance to `x` is smallest
/// beyond a clip plane (`placed` is `x` in the walk's frame). Returns `Some(step)` when
/// `x` moved.
fn clip_against(
    p: &Body<'_>,
    x: &mut FeatureId,
    placed: Placed,
    t: DVec3,
    h: DVec3,
) -> Option<Step> {
    let dir = h - t;
    match p.clip(*x, t, h) {
        Clip::Excluded => {
            // Move to the neighbour holding the point of x closest to the edge: the edge
            // misses x's region, so that point is on x's boundary (a vertex of an edge,
            // an edge of a face) or, for a vertex, the region behind its most violated
            // plane holds the edge's closest point.
            match (*x, placed) {
                (FeatureId::Vertex(_), Placed::Vertex(u)) => {
                    let c = closest_on_segment(t, h, u).0;
                    *x = p.most_violated(p.planes(*x), c)?;
                }
                (FeatureId::Edge(e), Placed::Edge(a0, a1)) => {
                    let (sc, tx) = segments_closest_params(t, h, a0, a1);
                    let c = t + (h - t) * sc;
                    let [tail, head] = p.poly.edge_vertices(e as usize);
                    *x = if tx <= 0.0 {
                        FeatureId::Vertex(tail)
                    } else if tx >= 1.0 {
                        FeatureId::Vertex(head)
                    } else {
                        // Closest inside the edge: the face whose side the edge passes.
                        p.edge_most_violated_sides_first(e, c)?
                    };
                }
                (FeatureId::Face(f), _) => {
                    *x = nearest_boundary_edge(p, f, t, h);
                }
                _ => unreachable!("a feature is placed as its own kind"),
            }
            Some(Step::Continue)
        }
        Clip::Inside { lo, hi, n_lo, n_hi } => {
            // The sign of the distance's derivative along the edge, at the clip points:
            // only a sign beyond rounding moves the feature (a minimum lying exactly on
            // the plane, as between crossed planks, stays).
            let rate = |n: FeatureId, pt: DVec3| clip_rate(p, (*x, placed), n, pt, dir);
            if let Some(n) = n_lo
                && rate(n, t + dir * lo) > 0.0
            {
                *x = n;
                return Some(Step::Continue);
            }
            if let Some(n) = n_hi
                && rate(n, t + dir * hi) < 0.0
            {
                *x = n;
                return Some(Step::Continue);
            }
            None
        }
    }
}

/// The sign of the derivative, along `dir`, of the distance from the edge's point `pt` to
/// `x` (placed as `placed`), at a clip point on the plane between `x`'s region and its
/// neighbour `n`'s: positive or negative beyond rounding, else 0.
///
/// Where that plane lies between an edge's region and a face's (the edge one of the
/// face's), the point is `h` above the face's plane along its normal `n_f`, and the
/// derivative is `n_f·dir`: taken so, from the face's normal, whatever `h`. Taken as
/// `(pt − c)·dir` (`c` the closest point of `x`) it is `h·(n_f·dir)`, whose rounding is
/// that of the coordinates (a few ulps of their size) where its value shrinks with `h`:
/// a plank on a slab tilted by 1e-7 and 1e-8 above it went unseen, and the walk stopped
/// at a pair 3 times the distance apart (up to 330 times over tilts and heights from
/// 1e-10 to 1e-5; tests/walk.rs). Elsewhere (a vertex's region) there is no
/// face, and the product is compared with the walk's tolerance times `|dir|`.
fn clip_rate(
    p: &Body<'_>,
    (x, placed): (FeatureId, Placed),
    n: FeatureId,
    pt: DVec3,
    dir: DVec3,
) -> f64 {
    let face = match (x, n) {
        (FeatureId::Edge(_), FeatureId::Face(f)) | (FeatureId::Face(f), FeatureId::Edge(_)) => {
            Some(f)
        }
        _ => None,
    };
    if let Some(f) = face {
        let (normal, offset) = p.face(f);
        if p.snap(normal.dot(pt) - offset) > 0.0 {
            return p.slope(normal, dir);
        }
    }
    let w = pt - placed.closest_to(pt);
    let edge = match (x, n) {
        (FeatureId::Vertex(_), FeatureId::Edge(e)) | (FeatureId::Edge(e), FeatureId::Vertex(_)) => {
            Some(e)
        }
        _ => None,
    };
    if let Some(e) = edge {
        // The plane between an edge's region and its end's is square to the edge (unit
        // `u`), and `pt` lies on it, at the end's point `c`: `w = pt − c` has no part
        // along `u`, so the derivative `w·dir` is `w⊥·dir⊥`, both parts square to `u`.
        // Taken so, the rounding of `w` along `u` (a few ulps of the coordinates) is not
        // multiplied by `dir`'s part along `u`, which is nearly all of it where `dir` runs
        // nearly parallel to the edge: a plank's edge along a crate's, tilted by 1e-9 and
        // a hair from it, has a derivative of 1e-18 under that noise, and the walk stopped
        // at an end 7.6e-10 from a crate the plank overlapped by 1.2e-9. What is left is
        // the rounding of `w⊥` times `dir⊥` and of `u` times `w`.
        let u = p.edge_direction(e).normalize_or_zero();
        let (w_perp, dir_perp) = (w - u * w.dot(u), dir - u * dir.dot(u));
        let r = w_perp.dot(dir_perp);
        return if r.abs() > p.tol * dir_perp.length() + TOL_REL * w.length() * dir.length() {
            r
        } else {
            0.0
        };
    }
    let r = w.dot(dir);
    if r.abs() > p.tol * dir.length() {
        r
    } else {
        0.0
    }
}

fn vertex_edge(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(v), FeatureId::Edge(e)) = (*x, *y) else {
        unreachable!()
    };
    let u = p.vertex(v);
    // The vertex against the edge's region: end planes first, then face planes.
    if let Some(n) = q.edge_most_violated(e, u) {
        *y = n;
        return Step::Continue;
    }
    let (t, h) = q.edge(e);
    clip_against(p, x, Placed::Vertex(u), t, h).unwrap_or(Step::Done)
}

fn edge_edge(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Edge(ex), FeatureId::Edge(ey)) = (*x, *y) else {
        unreachable!()
    };
    let ((pt, ph), (qt, qh)) = (p.edge(ex), q.edge(ey));
    if let Some(step) = clip_against(p, x, Placed::Edge(pt, ph), qt, qh) {
        return step;
    }
    if let Some(step) = clip_against(q, y, Placed::Edge(qt, qh), pt, ph) {
        return step;
    }
    let (cp, cq) = segments_closest(pt, ph, qt, qh);
    Step::DoneAt(cp, cq)
}

fn vertex_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Vertex(v), FeatureId::Face(f)) = (*x, *y) else {
        unreachable!()
    };
    let u = p.vertex(v);
    if let Some(n) = q.most_violated(q.planes(*y), u) {
        *y = n;
        return Step::Continue;
    }
    let (n, _) = q.face(f);
    let s = q.height(f, u);
    if s == 0.0 {
        return Step::Done; // touching, up to rounding: `features_touch` decides
    }
    // An edge of the vertex along which the distance to the face plane drops.
    let mut best: Option<(f64, FeatureId)> = None;
    for &he in p.poly.vertex_out(v as usize) {
        let w = p.vertex(p.poly.half_edge_target(he));
        let rate = s.signum() * n.dot(w - u);
        if rate < -p.tol && best.is_none_or(|(r, _)| rate < r) {
            best = Some((rate, FeatureId::Edge(he / 2)));
        }
    }
    if let Some((_, edge)) = best {
        *x = edge;
        return Step::Continue;
    }
    if s > 0.0 {
        return Step::Done;
    }
    // Below the face: either inside q's body or past another of its faces.
    local_minimum(q, y, u)
}

/// V-Clip's local-minimum search: the face of `q` most above `u`, or penetration.
fn local_minimum(q: &Body<'_>, y: &mut FeatureId, u: DVec3) -> Step {
    let mut best = (f64::NEG_INFINITY, 0u32);
    for f in 0..q.poly.num_faces() as u32 {
        let (n, d) = q.face(f);
        let s = n.dot(u) - d;
        if s > best.0 {
            best = (s, f);
        }
    }
    if best.0 < -q.tol {
        return Step::Penetrating(u);
    }
    if FeatureId::Face(best.1) == *y {
        return Step::Done; // on the face's plane: touching
    }
    *y = FeatureId::Face(best.1);
    Step::Continue
}

fn edge_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Edge(e), FeatureId::Face(f)) = (*x, *y) else {
        unreachable!()
    };
    let (t, h) = p.edge(e);
    let dir = h - t;
    match q.clip(*y, t, h) {
        Clip::Excluded => {
            *y = nearest_boundary_edge(q, f, t, h);
            Step::Continue
        }
        Clip::Inside { lo, hi, n_lo, n_hi } => {
            let (pl, ph) = (t + dir * lo, t + dir * hi);
            let (normal, offset) = q.face(f);
            let height = |x: DVec3| q.snap(normal.dot(x) - offset);
            let (sl, sh) = (height(pl), height(ph));
            if sl * sh < 0.0 {
                // The edge crosses the face inside its prism.
                let x = pl + (ph - pl) * (sl / (sl - sh));
                // On the face's rim (within the tolerance of a side plane) the crossing
                // may be a touch along the face's edge: two sheets 2^-30 thick face to
                // face, one's bottom edge crossing the other's side face where it meets
                // its top, were called overlapping. The bodies meet there at distance 0,
                // where a face between them or the separating-axis test decides.
                let local = q.local(x);
                if q.planes(*y)
                    .any(|plane| plane.signed_distance(local) <= q.tol)
                {
                    return Step::DoneAt(x, x);
                }
                return Step::Penetrating(x);
            }
            if sl == 0.0 && sh == 0.0 {
                return Step::Done; // the edge lies in the face: touching, up to rounding
            }
            let side = if sl != 0.0 { sl.signum() } else { sh.signum() };
            // How |s| changes along the edge: the slope of its height over the face's plane
            // (the face's normal along the edge), not the heights' difference over the
            // clipped part, which for a part cut short by a corner of the face is below
            // the tolerance at any slope (a plank tilted by 1e-10 across a slab's corner
            // read as parallel, and the walk stopped twice the distance apart; see
            // `clip_rate`).
            let change = side * q.slope(normal, dir);
            if change == 0.0 && side < 0.0 {
                // Parallel to the face and behind it over the part inside the face's
                // prism: inside q's body or past another of its faces, as a vertex below a
                // face is (equal crates stacked 5e-10 into each other, 4e-10 apart across,
                // stopped here at a side face and its neighbour's bottom edge 1.5e-10
                // behind it, and were called apart by that much).
                return local_minimum(q, y, (pl + ph) * 0.5);
            }
            if change == 0.0 {
                // Parallel to the face over the whole clipped part: a closest pair when
                // the face's point is in the edge's region too (crossed planks, a plank on
                // a crate); otherwise the edge's neighbour there is closer.
                let pf = q.closest_to(*y, pl);
                return match p.most_violated(p.planes(*x), pf) {
                    None => Step::Done,
                    Some(nb) => {
                        *x = nb;
                        Step::Continue
                    }
                };
            }
            if let Some(nb) = n_lo
                && change > 0.0
            {
                *y = nb;
                return Step::Continue;
            }
            if let Some(nb) = n_hi
                && change < 0.0
            {
                *y = nb;
                return Step::Continue;
            }
            // The minimum is at an end of the edge, inside the prism: go to it.
            let [tail, head] = p.poly.edge_vertices(e as usize);
            *x = FeatureId::Vertex(if change > 0.0 { tail } else { head });
            Step::Continue
        }
    }
}

/// Face–face is not a V-Clip state; it can only be a warm start. Step A's face to the
/// vertex of it closest to B's face plane.
fn face_face(p: &Body<'_>, x: &mut FeatureId, q: &Body<'_>, y: &mut FeatureId) -> Step {
    let (FeatureId::Face(fp), FeatureId::Face(fq)) = (*x, *y) else {
        unreachable!()
    };
    let (n, d) = q.face(fq);
    let v = p
        .poly
        .face_vertices(fp as usize)
        .min_by(|&a, &b| {
            (n.dot(p.vertex(a)) - d)
                .abs()
                .total_cmp(&(n.dot(p.vertex(b)) - d).abs())
        })
        .unwrap_or(0);
    *x = FeatureId::Vertex(v);
    Step::Continue
}

/// Edge `e` of `p` placed by `pose`: head minus tail, world frame.
pub fn edge_direction(p: &ConvexPolytope, pose: &Pose, e: u32) -> DVec3 {
    let [u, v] = p.edge_vertices(e as usize);
    pose.rotation * (p.vertex(v) - p.vertex(u))
}

/// The rounding of two bodies' closest points' difference at these poses: 64 ulps of the
/// largest of their origins' coordinates plus their reaches. Points nearer than this give
/// no direction of their own (at 1e9 from the world origin, boxes touching to the rounding
/// of their placed corners had closest points in any direction).
pub fn points_rounding(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> f64 {
    let largest = pose_a
        .translation
        .abs()
        .max_element()
        .max(pose_b.translation.abs().max_element());
    64.0 * f64::EPSILON * (largest + a.radius() + b.radius())
}

/// The contact normal (unit, A to B) of closest features whose points are `distance`
/// apart (a walk's or enumeration's, at these poses). Farther apart than `near` (at least
/// [`points_rounding`]), [`contact_normal`] with the points' difference over `distance`;
/// nearer, their
/// difference is mostly rounding and gives no direction: a face's normal where a face is
/// among the features, else a face beside them along which the bodies are apart by at
/// least minus the walk's tolerance (`face_apart`), else the best axis among the
/// candidates where they meet (`sat::max_separation_around`) where it shows them that
/// near, else the separating-axis test's best axis (two edges' cross product has no sign
/// there, parallel ones not even a direction).
#[allow(clippy::too_many_arguments)]
pub fn touch_normal(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
    features: (FeatureId, FeatureId),
    (point_a, point_b): (DVec3, DVec3),
    distance: f64,
    near: f64,
) -> DVec3 {
    if distance > near {
        // The points' own difference made unit: `distance` was measured in A's frame, and
        // the world points' rounding over it (1e-7 apart, 5e-9) would be the normal's
        // error in length.
        let between = point_b - point_a;
        let between = between / gap(point_a, point_b);
        return contact_normal(a, pose_a, b, pose_b, features, between);
    }
    if let (FeatureId::Face(_), _) | (_, FeatureId::Face(_)) = features {
        return contact_normal(a, pose_a, b, pose_b, features, DVec3::ZERO);
    }
    let (place, world_a) = Placement::pair(pose_a, pose_b);
    let tol = TOL_REL * place.scale(a, b);
    if let Some((n, _)) = face_apart(a, b, &place, features, -tol) {
        return world_a.vector(n);
    }
    // The candidates where the features meet (bodies touching at corners of round hulls:
    // the whole test took 65 s at 40,962 vertices), else the whole test.
    let points = (
        world_a.inverse_point(point_a),
        place.inverse_point(world_a.inverse_point(point_b)),
    );
    let best = separation_at((a, b, &place), features, points, tol);
    if best.distance >= -tol {
        world_a.vector(best.axis)
    } else {
        sat::max_separation(a, pose_a, b, pose_b).axis
    }
}

/// The contact normal (unit, A to B) of closest features (a walk's, at its poses): a
/// face's normal or two edges' cross product, exact to rounding however small the
/// distance, and otherwise the direction between the closest points (`between`, unit;
/// two edges' cross product takes its sign from it).
pub fn contact_normal(
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
