//! Exact separating-axis test for two convex polytopes in f64.
//!
//! Two convex polyhedra are disjoint iff some plane separates them, and a separating
//! direction can always be found among the face normals of either body and the cross
//! products of an edge of A with an edge of B. Only edge pairs whose arcs on the Gauss map
//! cross span a face of the Minkowski difference (Gregorius, "The Separating Axis Test
//! between Convex Polyhedra", GDC 2013); the others are skipped, which also skips every
//! parallel pair. The largest separation over the candidates is the signed gap:
//! positive means separated by at least that much along the axis, zero means touching,
//! negative is minus the minimum overlap over the candidates — the penetration depth
//! (DESIGN.md: the exact candidates of min s(d)).
//!
//! Cost: F_A + F_B support queries (a scan of a small body's vertices, else hill
//! climbing along the faces' order, a step or two each) plus E_A·E_B arc tests, made with
//! no branch on their outcome (see `edge_pairs`), or past 16,384 edge pairs only those of
//! arcs whose boxes meet on a grid (`gridded_edge_pairs`): near-linear on round bodies.
//! This is the exact reference; the Lin–Canny walk answers the same question in expected
//! constant time with coherence, and the Gauss-map depth walk enumerates by it on small
//! bodies at one point. Callgrind, instructions and
//! mispredicted branches a call, on 1,000 random placements at one point: two unit
//! crates 13.6k and 172 -> 12.3k and 26, two 8-vertex random hulls (18 edges each) 24.8k
//! and 309 -> 21.7k and 50; in time two crates 1.6-2.2 -> 1.5-1.9 µs, the 8-vertex hulls
//! 5.5-6.2 -> 2.5-3.4, 16-vertex hulls 18-24 -> 9.3-12.

use std::cell::RefCell;

use glam::DVec3;
use smallvec::SmallVec;

use super::placement::Placement;
use super::touch;
use crate::bodies::Pose;
use crate::geometry::closest::{closest_on_segment, gap};
use crate::geometry::hull::orient3d;
use crate::geometry::polytope::SCAN_VERTICES;
use crate::geometry::{ConvexPolytope, FeatureId};

/// The best separating axis found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Separation {
    /// Signed gap along `axis` (negative: overlap).
    pub distance: f64,
    /// Unit axis in world space, pointing from A to B.
    pub axis: DVec3,
    /// Where the axis comes from: a face of A, a face of B (given as `FeatureId::Face` of
    /// B), or an edge of A crossed with an edge of B.
    pub source: AxisSource,
}

/// Origin of a candidate axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisSource {
    /// Normal of face `0` of A.
    FaceA(FeatureId),
    /// Negated normal of face `0` of B.
    FaceB(FeatureId),
    /// Cross product of edge `0` of A and edge `1` of B.
    Edges(FeatureId, FeatureId),
}

/// Largest separation of A and B over all candidate axes (see the module comment).
pub fn max_separation(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> Separation {
    let mut best = max_separation_placed(a, b, &Placement::new(pose_a, pose_b));
    best.axis = pose_a.rotation * best.axis;
    best
}

/// [`max_separation`] with B placed in A's frame; the axis is in A's frame.
pub fn max_separation_placed(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
) -> Separation {
    let mut best = Separation {
        distance: f64::NEG_INFINITY,
        axis: DVec3::X,
        source: AxisSource::FaceA(FeatureId::Face(0)),
    };
    // Faces of A, in A's frame: gap = min over B of n·x − offset. In the body's face
    // order, each face after a neighbour, so that each support query climbs from the last
    // one's answer a step or two (in index order, two icospheres of 10,242 vertices took
    // 0.1 s a test in the climbs); among equal gaps the first face in index order, as the
    // other loops.
    let mut warm = 0;
    for &f in a.face_order() {
        let f = f as usize;
        let (v, gap) = face_gap_a(a, b, rel, f, warm);
        warm = v;
        let earlier =
            matches!(best.source, AxisSource::FaceA(FeatureId::Face(g)) if f < g as usize);
        if gap > best.distance || (gap == best.distance && earlier) {
            best = Separation {
                distance: gap,
                axis: a.face_normal(f),
                source: AxisSource::FaceA(FeatureId::Face(f as u32)),
            };
        }
    }
    // Faces of B, in B's frame (A seen from B).
    let a_in_b_trans = rel.inverse_translation();
    let mut warm = 0;
    for &f in b.face_order() {
        let f = f as usize;
        let (v, gap) = face_gap_b(a, b, rel, a_in_b_trans, f, warm);
        warm = v;
        let earlier =
            matches!(best.source, AxisSource::FaceB(FeatureId::Face(g)) if f < g as usize);
        if gap > best.distance || (gap == best.distance && earlier) {
            best = Separation {
                distance: gap,
                // The axis points from A to B: minus B's outward normal, in A's frame.
                axis: rel.vector(-b.face_normal(f)),
                source: AxisSource::FaceB(FeatureId::Face(f as u32)),
            };
        }
    }
    // Edge pairs that form a face of the Minkowski difference, in A's frame.
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut placed) => edge_pairs(a, b, rel, &mut placed, best),
        Err(_) => edge_pairs(a, b, rel, &mut Placed::default(), best),
    })
}

/// B's face normals, vertices and the Gauss-map arcs of its edges in A's frame, for the
/// edge pairs' tests: made for every query in the thread's scratch, whose vectors keep
/// their allocations (three of their own a query took a tenth of a box pair's test; on
/// the stack, moving them out of `collect` cost as much).
#[derive(Default)]
struct Placed {
    normals: Vec<DVec3>,
    vertices: Vec<DVec3>,
    arcs: Vec<(DVec3, DVec3, DVec3)>,
}

thread_local! {
    static SCRATCH: RefCell<Placed> = RefCell::new(Placed::default());
}

/// The best of `best` and the edge pairs' axes (see [`max_separation_placed`]), B placed
/// in `placed`.
fn edge_pairs(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
    placed: &mut Placed,
    mut best: Separation,
) -> Separation {
    let Placed {
        normals: b_normals,
        vertices: b_vertices,
        arcs: b_arcs,
    } = placed;
    b_normals.clear();
    b_normals.extend((0..b.num_faces()).map(|f| rel.vector(b.face_normal(f))));
    b_vertices.clear();
    b_vertices.extend(b.vertices().iter().map(|v| rel.point(*v)));
    // Gauss-map arcs of B's edges negated (−nc, −nd) with their planes, made once each
    // (made for every pair, two cross products each, the test on two boxes took 17.1k
    // instructions against 13.6k).
    b_arcs.clear();
    b_arcs.extend((0..b.num_edges()).map(|eb| {
        let [fb0, fb1] = b.edge_faces(eb);
        let (nc, nd) = (-b_normals[fb0 as usize], -b_normals[fb1 as usize]);
        (nc, nd, nd.cross(nc))
    }));
    let centroid_a = a.centroid();
    if a.num_edges() * b.num_edges() > GRID_ABOVE {
        return gridded_edge_pairs(a, b, rel, (b_vertices, b_arcs), best);
    }
    for ea in 0..a.num_edges() {
        let [a0, a1] = a.edge_vertices(ea);
        let [fa0, fa1] = a.edge_faces(ea);
        let (na, nb) = (a.face_normal(fa0 as usize), a.face_normal(fa1 as usize));
        let arc_a = (na, nb, nb.cross(na));
        let pa = a.vertex(a0);
        let da = a.vertex(a1) - pa;
        // Gauss-map arcs of A's edge (na, nb) and of B's edges negated, crossing: a bit
        // for each of 64 of B's edges at a time, set with no branch, then read a set bit
        // at a time (a branch on each pair's test, taken at random, was mispredicted on
        // more than half of a box pair's 144).
        for (first, chunk) in (0..).step_by(64).zip(b_arcs.chunks(64)) {
            let mut bits = 0u64;
            for (k, &arc_b) in chunk.iter().enumerate() {
                bits |= u64::from(arcs_cross_all_tests(arc_a, arc_b)) << k;
            }
            while bits != 0 {
                let eb = first + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let [b0, b1] = b.edge_vertices(eb);
                let pb = b_vertices[b0 as usize];
                // The edge's direction rotated, not its placed ends' difference, which
                // carries their rounding: a sheet 2e-9 thick has edges that short, and
                // its side edge's placed direction was off by 7%, the axis with it, and
                // the gap along that axis (its supports no longer the edges) above the
                // distance.
                let db = rel.vector(b.vertex(b1) - b.vertex(b0));
                let Some((axis, gap)) = edge_axis((pa, da), (pb, db), centroid_a) else {
                    continue;
                };
                if gap > best.distance {
                    best = Separation {
                        distance: gap,
                        axis,
                        source: AxisSource::Edges(
                            FeatureId::Edge(ea as u32),
                            FeatureId::Edge(eb as u32),
                        ),
                    };
                }
            }
        }
    }
    best
}

/// Edge pairs past this many are paired by their Gauss arcs' boxes on a grid
/// ([`gridded_edge_pairs`]) instead of testing every pair: two icospheres of 10,242 vertices
/// (30,720 edges each) overlapping by 1e-15 took 4.1 s for the test over every pair.
const GRID_ABOVE: usize = 1 << 14;

/// [`edge_pairs`] on a grid: only arcs whose boxes overlap can cross
/// ([`arc_box_pairs_on_grid`]), and those pairs are tested as every pair is there, the
/// same axis chosen among equal gaps (the first edge pair in index order), so the answer
/// is the test's over every pair to the last bit.
fn gridded_edge_pairs(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
    (b_vertices, b_arcs): (&[DVec3], &[(DVec3, DVec3, DVec3)]),
    mut best: Separation,
) -> Separation {
    let centroid_a = a.centroid();
    let a_arcs: Vec<(DVec3, DVec3, DVec3)> = (0..a.num_edges())
        .map(|ea| {
            let [fa0, fa1] = a.edge_faces(ea);
            let (na, nb) = (a.face_normal(fa0 as usize), a.face_normal(fa1 as usize));
            (na, nb, nb.cross(na))
        })
        .collect();
    let boxes = |arcs: &[(DVec3, DVec3, DVec3)]| -> Vec<(DVec3, DVec3)> {
        arcs.iter().map(|&(n0, n1, _)| arc_box(n0, n1)).collect()
    };
    arc_box_pairs_on_grid(&boxes(&a_arcs), &boxes(b_arcs), |ea, eb| {
        if !arcs_cross_all_tests(a_arcs[ea], b_arcs[eb]) {
            return;
        }
        let [a0, a1] = a.edge_vertices(ea);
        let pa = a.vertex(a0);
        let [b0, b1] = b.edge_vertices(eb);
        let Some((axis, gap)) = edge_axis(
            (pa, a.vertex(a1) - pa),
            (
                b_vertices[b0 as usize],
                rel.vector(b.vertex(b1) - b.vertex(b0)),
            ),
            centroid_a,
        ) else {
            return;
        };
        let (x, y) = (FeatureId::Edge(ea as u32), FeatureId::Edge(eb as u32));
        let earlier = match best.source {
            AxisSource::Edges(bx, by) => gap == best.distance && (x, y) < (bx, by),
            _ => false,
        };
        if gap > best.distance || earlier {
            best = Separation {
                distance: gap,
                axis,
                source: AxisSource::Edges(x, y),
            };
        }
    });
    best
}

/// A box holding the great-circle arc from unit `n0` to unit `n1` (shorter than a half
/// turn): the arc lies in the triangle of its ends and the point where the tangents at the
/// ends meet, m/cos(φ/2) with m the arc's midpoint and φ its angle. Inflated by 1e-9 so
/// that rounding never drops a crossing; a half-turn arc gets the whole cube.
pub(crate) fn arc_box(n0: DVec3, n1: DVec3) -> (DVec3, DVec3) {
    let sum = n0 + n1;
    let len = sum.length();
    // cos(φ/2) = |n0 + n1| / 2.
    let half_cos = 0.5 * len;
    if half_cos < 1e-6 {
        return (DVec3::splat(-1.0 - 1e-9), DVec3::splat(1.0 + 1e-9));
    }
    let apex = sum / len / half_cos;
    let lo = n0.min(n1).min(apex) - DVec3::splat(1e-9);
    let hi = n0.max(n1).max(apex) + DVec3::splat(1e-9);
    (lo, hi)
}

/// Calls `visit(i, j)` for every box `i` of `boxes_a` and `j` of `boxes_b` that overlap
/// (boxes as `(lo, hi)`), each pair once: a sweep over the boxes' x ranges, in the order
/// of their lower ends. Arcs whose boxes ([`arc_box`]) do not overlap cannot cross, so on
/// round bodies this pairs a few edges with each where testing every pair is quadratic.
pub(crate) fn overlapping_arc_boxes(
    boxes_a: &[(DVec3, DVec3)],
    boxes_b: &[(DVec3, DVec3)],
    mut visit: impl FnMut(usize, usize),
) {
    let order = |boxes: &[(DVec3, DVec3)]| {
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        order.sort_unstable_by(|&i, &j| boxes[i].0.x.total_cmp(&boxes[j].0.x));
        order
    };
    let (order_a, order_b) = (order(boxes_a), order(boxes_b));
    // The box `own` (its index `at`) enters: the other side's live boxes that end before it
    // starts leave, it meets those left, and it goes live on its own side.
    fn enter(
        (at, own): (usize, (DVec3, DVec3)),
        (other, other_live): (&[(DVec3, DVec3)], &mut Vec<usize>),
        own_live: &mut Vec<usize>,
        visit: &mut dyn FnMut(usize, usize),
    ) {
        other_live.retain(|&k| other[k].1.x >= own.0.x);
        for &k in other_live.iter() {
            if boxes_meet(own, other[k]) {
                visit(at, k);
            }
        }
        own_live.push(at);
    }
    let (mut live_a, mut live_b): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < order_a.len() || j < order_b.len() {
        let take_a = j == order_b.len()
            || (i < order_a.len() && boxes_a[order_a[i]].0.x <= boxes_b[order_b[j]].0.x);
        if take_a {
            let ia = order_a[i];
            enter(
                (ia, boxes_a[ia]),
                (boxes_b, &mut live_b),
                &mut live_a,
                &mut visit,
            );
            i += 1;
        } else {
            let jb = order_b[j];
            enter(
                (jb, boxes_b[jb]),
                (boxes_a, &mut live_a),
                &mut live_b,
                &mut |own, k| visit(k, own),
            );
            j += 1;
        }
    }
}

/// Whether two boxes `(lo, hi)` share a point.
fn boxes_meet((alo, ahi): (DVec3, DVec3), (blo, bhi): (DVec3, DVec3)) -> bool {
    alo.cmple(bhi).all() && blo.cmple(ahi).all()
}

/// A box of the grid of [`arc_box_pairs_on_grid`] spanning more cells than this is tested
/// against every box of the other body instead of being entered in its cells (a box's
/// faces meet at a right angle, their arc's box spans half the cube).
const GRID_BIG: usize = 64;

/// Calls `visit(i, j)` for every box `i` of `boxes_a` and `j` of `boxes_b` that overlap
/// (boxes as `(lo, hi)`), each pair once, in no particular order: B's boxes are entered in
/// the cells of a grid over the cube `[-1, 1]³` that holds the Gauss maps (about one arc
/// a cell on a round body; a box reaching past the cube is clamped to its border cells,
/// which keeps every overlap), each of A's looks in its cells, and a pair is visited in
/// the cell of the lower corner of the boxes' overlap alone. On round bodies an x-sweep
/// ([`overlapping_arc_boxes`]) keeps every arc across a band of the sphere live (two
/// icospheres of 30,720 edges: 0.19 s, against 4.1 s for every pair and 14 ms here).
pub(crate) fn arc_box_pairs_on_grid(
    boxes_a: &[(DVec3, DVec3)],
    boxes_b: &[(DVec3, DVec3)],
    mut visit: impl FnMut(usize, usize),
) {
    let g = ((boxes_a.len() + boxes_b.len()) as f64 / 12.0)
        .sqrt()
        .clamp(1.0, 96.0) as usize;
    // The cast truncates toward 0 and saturates: below the cube (and NaN) is cell 0.
    let cell = |v: f64| (((v + 1.0) * 0.5 * g as f64) as usize).min(g - 1);
    let cells = |(lo, hi): (DVec3, DVec3)| {
        let (l, h) = (lo.to_array().map(cell), hi.to_array().map(cell));
        let count = (0..3).map(|k| h[k] + 1 - l[k].min(h[k])).product::<usize>();
        (l, h, count)
    };
    let index = |c: [usize; 3]| (c[0] * g + c[1]) * g + c[2];
    let each_cell = |l: [usize; 3], h: [usize; 3], f: &mut dyn FnMut(usize)| {
        for x in l[0]..=h[0] {
            for y in l[1]..=h[1] {
                for z in l[2]..=h[2] {
                    f(index([x, y, z]));
                }
            }
        }
    };
    // B's small boxes by cell (counted, then placed), its big ones apart.
    let mut start = vec![0u32; g * g * g + 1];
    let mut big_b = Vec::new();
    for (j, &b) in boxes_b.iter().enumerate() {
        let (l, h, count) = cells(b);
        if count > GRID_BIG {
            big_b.push(j);
        } else {
            each_cell(l, h, &mut |c| start[c + 1] += 1);
        }
    }
    for c in 0..g * g * g {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut entries = vec![0u32; start[g * g * g] as usize];
    for (j, &b) in boxes_b.iter().enumerate() {
        let (l, h, count) = cells(b);
        if count <= GRID_BIG {
            each_cell(l, h, &mut |c| {
                entries[fill[c] as usize] = j as u32;
                fill[c] += 1;
            });
        }
    }
    for (i, &a) in boxes_a.iter().enumerate() {
        let (l, h, count) = cells(a);
        if count > GRID_BIG {
            for (j, &b) in boxes_b.iter().enumerate() {
                if boxes_meet(a, b) {
                    visit(i, j);
                }
            }
            continue;
        }
        each_cell(l, h, &mut |c| {
            for &j in &entries[start[c] as usize..start[c + 1] as usize] {
                let b = boxes_b[j as usize];
                if boxes_meet(a, b) && index(a.0.max(b.0).to_array().map(cell)) == c {
                    visit(i, j as usize);
                }
            }
        });
        for &j in &big_b {
            if boxes_meet(a, boxes_b[j]) {
                visit(i, j);
            }
        }
    }
}

/// The axis of A's edge (a point on it and its direction) and B's, their cross product
/// turned away from A's centroid, and the gap along it from A's edge to B's (the bodies'
/// separation along it where their Gauss arcs cross, the edges then being the supports);
/// `None` where the edges are near parallel.
#[inline(always)]
fn edge_axis(
    (pa, da): (DVec3, DVec3),
    (pb, db): (DVec3, DVec3),
    centroid_a: DVec3,
) -> Option<(DVec3, f64)> {
    let axis = da.cross(db);
    let len = axis.length();
    if len <= 1e-12 * da.length() * db.length() {
        return None;
    }
    let mut axis = axis / len;
    if axis.dot(pa - centroid_a) < 0.0 {
        axis = -axis;
    }
    Some((axis, axis.dot(pb - pa)))
}

/// A body's faces and edges at a point where it meets the other body (the body's own
/// frame), and a vertex there to start support queries from: the separating-axis test's
/// candidates that can give a plane through that point.
#[derive(Clone, Debug, Default)]
pub(crate) struct Around {
    faces: SmallVec<[u32; 16]>,
    edges: SmallVec<[u32; 16]>,
    vertex: u32,
    /// The point: an edge's gap is measured from its point nearest it, where the bodies
    /// meet, not from its tail (where they touch exactly, the gap is then exactly 0).
    point: DVec3,
}

impl Around {
    /// The faces and edges of `p` at the point `x` of its feature `f`: those of `f`, and
    /// of each vertex and edge of `f` within `near` of `x`, whose regions of the Gauss map
    /// hold `f`'s (a point of an edge at its end has the end's normals too).
    pub(crate) fn at(p: &ConvexPolytope, f: FeatureId, x: DVec3, near: f64) -> Around {
        let mut around = Around {
            point: x,
            ..Around::default()
        };
        match f {
            FeatureId::Vertex(v) => {
                around.vertex = v;
                around.add_vertex(p, v);
            }
            FeatureId::Edge(e) => {
                around.vertex = p.edge_vertices(e as usize)[0];
                around.add_edge(p, e, x, near);
            }
            FeatureId::Face(face) => {
                around.faces.push(face);
                for e in p.face_edges(face as usize) {
                    around.vertex = p.edge_vertices(e as usize)[0];
                    if gap(around.on_edge(p, e), x) <= near {
                        around.add_edge(p, e, x, near);
                    }
                }
            }
        }
        around.dedup()
    }

    /// The point of `p`'s edge `e` nearest the point, an end exactly where it is nearest.
    fn on_edge(&self, p: &ConvexPolytope, e: u32) -> DVec3 {
        let [t, h] = p.edge_vertices(e as usize);
        match closest_on_segment(p.vertex(t), p.vertex(h), self.point) {
            (_, 0.0) => p.vertex(t),
            (_, 1.0) => p.vertex(h),
            (c, _) => c,
        }
    }

    /// The vertex of `p`'s face `f` nearest the point.
    fn nearest_on_face(&self, p: &ConvexPolytope, f: u32) -> u32 {
        p.face_vertices(f as usize)
            .min_by(|&u, &w| {
                let d = |v: u32| (p.vertex(v) - self.point).length_squared();
                d(u).total_cmp(&d(w))
            })
            .unwrap_or(self.vertex)
    }

    fn add_vertex(&mut self, p: &ConvexPolytope, v: u32) {
        for &h in p.vertex_out(v as usize) {
            self.add(h / 2, p.half_edge_face(h));
        }
    }

    fn add_edge(&mut self, p: &ConvexPolytope, e: u32, x: DVec3, near: f64) {
        let [f0, f1] = p.edge_faces(e as usize);
        self.add(e, f0);
        self.add(e, f1);
        for v in p.edge_vertices(e as usize) {
            if gap(p.vertex(v), x) <= near {
                self.vertex = v;
                self.add_vertex(p, v);
            }
        }
    }

    fn add(&mut self, e: u32, f: u32) {
        self.edges.push(e);
        self.faces.push(f);
    }

    /// Each face and edge once (a vertex's come once each, but an edge's and its end's
    /// share some; a cone's apex has 65,536 of them, too many to look for each in turn).
    fn dedup(mut self) -> Self {
        for list in [&mut self.faces, &mut self.edges] {
            list.sort_unstable();
            list.dedup();
        }
        self
    }
}

/// [`max_separation_placed`] over the candidates at a point where the bodies meet:
/// the faces of `at_a` and `at_b`, and their edge pairs whose Gauss arcs cross, each gap
/// measured as the whole test measures it. Where the bodies share a point, every plane
/// that separates them passes through it, its normal in both bodies' regions of the
/// Gauss map there, and that region's corners are these candidates: the sign is the
/// whole test's (two round hulls of 40,962 vertices meeting pole to pole took 65 s over
/// every edge pair).
pub(crate) fn max_separation_around(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
    (at_a, at_b): (&Around, &Around),
    tol: f64,
) -> Separation {
    let mut best = Separation {
        distance: f64::NEG_INFINITY,
        axis: DVec3::X,
        source: AxisSource::FaceA(FeatureId::Face(0)),
    };
    // Each gap from points where the bodies meet (a face's vertex nearest the point, B's
    // support climbed from its vertex there), not from a face's offset, and one within
    // `tol` of 0 settled by the exact orientation of the points as placed: bodies that
    // touch exactly (on a grid) are exactly 0 apart along a plane through the point.
    let settle = |gap: f64, on_plane: &dyn Fn() -> bool| {
        if gap.abs() <= tol && on_plane() {
            0.0
        } else {
            gap
        }
    };
    for &f in &at_a.faces {
        let n = a.face_normal(f as usize);
        let (v, _) = b.support(rel.inverse_vector(-n), at_b.vertex);
        let w = rel.point(b.vertex(v));
        let gap = settle(n.dot(w - a.vertex(at_a.nearest_on_face(a, f))), &|| {
            let ring: SmallVec<[DVec3; 3]> = a
                .face_vertices(f as usize)
                .take(3)
                .map(|u| a.vertex(u))
                .collect();
            touch::on_plane(&ring, w)
        });
        if gap > best.distance {
            best = Separation {
                distance: gap,
                axis: n,
                source: AxisSource::FaceA(FeatureId::Face(f)),
            };
        }
    }
    for &g in &at_b.faces {
        let n = rel.vector(b.face_normal(g as usize));
        let (u, _) = a.support(-n, at_a.vertex);
        let w = a.vertex(u);
        let gap = settle(
            n.dot(w - rel.point(b.vertex(at_b.nearest_on_face(b, g)))),
            &|| {
                let ring: SmallVec<[DVec3; 3]> = b
                    .face_vertices(g as usize)
                    .take(3)
                    .map(|u| rel.point(b.vertex(u)))
                    .collect();
                touch::on_plane(&ring, w)
            },
        );
        if gap > best.distance {
            best = Separation {
                distance: gap,
                // From A to B: minus B's outward normal.
                axis: -n,
                source: AxisSource::FaceB(FeatureId::Face(g)),
            };
        }
    }
    let centroid_a = a.centroid();
    for &ea in &at_a.edges {
        let [a0, a1] = a.edge_vertices(ea as usize);
        let [fa0, fa1] = a.edge_faces(ea as usize);
        let (na, nb) = (a.face_normal(fa0 as usize), a.face_normal(fa1 as usize));
        let pa = at_a.on_edge(a, ea);
        let da = a.vertex(a1) - a.vertex(a0);
        for &eb in &at_b.edges {
            let [b0, b1] = b.edge_vertices(eb as usize);
            let [fb0, fb1] = b.edge_faces(eb as usize);
            let nc = -rel.vector(b.face_normal(fb0 as usize));
            let nd = -rel.vector(b.face_normal(fb1 as usize));
            if !arcs_cross(na, nb, nc, nd) {
                continue;
            }
            let pb = rel.point(at_b.on_edge(b, eb));
            let db = rel.vector(b.vertex(b1) - b.vertex(b0));
            let Some((axis, gap)) = edge_axis((pa, da), (pb, db), centroid_a) else {
                continue;
            };
            let gap = settle(gap, &|| {
                let (q0, q1) = (rel.point(b.vertex(b0)), rel.point(b.vertex(b1)));
                orient3d(a.vertex(a0), a.vertex(a1), q0, q1) == 0.0
            });
            if gap > best.distance {
                best = Separation {
                    distance: gap,
                    axis,
                    source: AxisSource::Edges(FeatureId::Edge(ea), FeatureId::Edge(eb)),
                };
            }
        }
    }
    best
}

/// The largest `dir·v` over `p`'s vertices and a vertex to climb from next: on a small
/// body (up to [`SCAN_VERTICES`]) by a scan with no branch on the values (the climb
/// through its adjacency, branching at each neighbour, cost more), `warm` handed on;
/// else by climbing from `warm`, with the vertex it ends at.
#[inline]
fn highest(p: &ConvexPolytope, dir: DVec3, warm: u32) -> (u32, f64) {
    if p.num_vertices() <= SCAN_VERTICES {
        let top = p
            .vertices()
            .iter()
            .fold(f64::NEG_INFINITY, |top, v| top.max(dir.dot(*v)));
        (warm, top)
    } else {
        p.support(dir, warm)
    }
}

/// How far B lies beyond A's face `f` (A's frame, `rel` placing B): the least `n·x` over
/// B less the face's offset, by a scan of a small B or a support query started at B's
/// vertex `warm` (see [`highest`]); with the vertex to start the next one from.
#[inline]
pub(crate) fn face_gap_a(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
    f: usize,
    warm: u32,
) -> (u32, f64) {
    let n = a.face_normal(f);
    let (v, h) = highest(b, rel.inverse_vector(-n), warm);
    (v, -h + n.dot(rel.translation) - a.face_offset(f))
}

/// How far A lies beyond B's face `f`, in B's frame (`a_in_b`: A's origin there,
/// `rel.inverse_translation()`), as [`face_gap_a`].
#[inline]
pub(crate) fn face_gap_b(
    a: &ConvexPolytope,
    b: &ConvexPolytope,
    rel: &Placement,
    a_in_b: DVec3,
    f: usize,
    warm: u32,
) -> (u32, f64) {
    let n = b.face_normal(f);
    let (v, h) = highest(a, rel.vector(-n), warm);
    (v, -h + n.dot(a_in_b) - b.face_offset(f))
}

/// [`arcs_cross_on_planes`] with every test made before the answer is read (no branch
/// on the first: see [`edge_pairs`]).
#[inline(always)]
fn arcs_cross_all_tests(
    (a, b, bxa): (DVec3, DVec3, DVec3),
    (c, d, dxc): (DVec3, DVec3, DVec3),
) -> bool {
    let cba = c.dot(bxa);
    let dba = d.dot(bxa);
    let adc = a.dot(dxc);
    let bdc = b.dot(dxc);
    (cba * dba < 0.0) & (adc * bdc < 0.0) & (cba * bdc > 0.0)
}

/// True when the great arcs (a, b) and (c, d) on the unit sphere cross (each arc being the
/// Gauss image of an edge: the normals of its two faces).
pub(crate) fn arcs_cross(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> bool {
    arcs_cross_on_planes((a, b, b.cross(a)), (c, d, d.cross(c)))
}

/// True when the great arcs (a, b) and (c, d) clearly do not cross: the tests of
/// [`arcs_cross_on_planes`], each decided only where an arc's end lies beyond 1e-9 (the sine
/// of an angle) of the other's plane; `false` where any is that close.
pub(crate) fn arcs_clearly_apart(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> bool {
    const MARGIN: f64 = 1e-9;
    let (bxa, dxc) = (b.cross(a), d.cross(c));
    let (ma, mc) = (MARGIN * bxa.length(), MARGIN * dxc.length());
    let (cba, dba) = (c.dot(bxa), d.dot(bxa));
    let (adc, bdc) = (a.dot(dxc), b.dot(dxc));
    let same = |x: f64, y: f64, m: f64| (x > m && y > m) || (x < -m && y < -m);
    if same(cba, dba, ma) || same(adc, bdc, mc) {
        // One arc wholly on a side of the other's great circle.
        return true;
    }
    // The great circles cross at two antipodal points; the arcs meet at neither when the
    // ends' sides say the crossing is the far one.
    let opposite = |x: f64, y: f64, mx: f64, my: f64| (x > mx && y < -my) || (x < -mx && y > my);
    opposite(cba, dba, ma, ma) && opposite(adc, bdc, mc, mc) && opposite(cba, bdc, ma, mc)
}

/// [`arcs_cross`] with each arc's plane normal (`b × a`, `d × c`) given: an arc met by many
/// others computes it once.
#[inline]
pub(crate) fn arcs_cross_on_planes(
    (a, b, bxa): (DVec3, DVec3, DVec3),
    (c, d, dxc): (DVec3, DVec3, DVec3),
) -> bool {
    let cba = c.dot(bxa);
    let dba = d.dot(bxa);
    if cba * dba >= 0.0 {
        return false;
    }
    let adc = a.dot(dxc);
    let bdc = b.dot(dxc);
    adc * bdc < 0.0 && cba * bdc > 0.0
}

/// True when the two bodies share at least one point (touching counts).
pub fn intersects(a: &ConvexPolytope, pose_a: &Pose, b: &ConvexPolytope, pose_b: &Pose) -> bool {
    max_separation(a, pose_a, b, pose_b).distance <= 0.0
}
