//! `ConvexPolytope`: a closed convex polyhedron in f64 with half-edge adjacency, unit
//! outward face normals, polygon faces (coplanar triangles merged) and the Voronoi region
//! of every feature precomputed (Lin 1993, ch. 3; DESIGN.md "Lin–Canny closest features").
//!
//! Half-edges `2e` and `2e + 1` are the two sides of edge `e`; a face's half-edges run
//! counter-clockwise seen from outside, so the face lies to the left of each of them.
//!
//! Voronoi regions, each a set of planes `{x : n·x ≥ d}` with the feature behind it:
//! - vertex v: for each edge (v, w), the plane through v perpendicular to the edge,
//!   facing away from w; behind it lies the edge;
//! - edge (a, b) between faces f1 (left of a→b) and f2: the planes through a and b
//!   perpendicular to the edge (behind: the vertex), and for each adjacent face the plane
//!   containing the edge and that face's normal (behind: the face);
//! - face f: for each boundary edge the plane containing the edge and the face normal,
//!   facing into the face (behind: the edge). The face's own plane (`n·x ≥ offset`) closes
//!   the region; it is not stored with the side planes: the walk treats it on its own,
//!   since what lies behind it is the inside of the body (penetration).
//!
//! Every plane bounds two regions, an edge's and one of its vertices' or faces', facing
//! the other way in the second: it is stored once, with its edge, and a vertex's or a
//! face's planes are read from its edges' (`VoronoiPlanes`).

use glam::{DVec3, Vec3};

use super::feature::FeatureId;
use super::hull;
use crate::bodies::GpuShapeBounds;
use crate::{Error, Result};

/// Up to this many vertices [`ConvexPolytope::extreme`] scans them all.
pub const SCAN_VERTICES: usize = 24;

/// Relative tolerance of the convexity and planarity checks (face merging uses 1e-10).
pub const CONVEXITY_TOL_REL: f64 = 1e-8;

/// Up to this many vertices [`ConvexPolytope::prefetch`] brings a body's walk tables
/// toward the cache.
pub const PREFETCH_VERTICES: usize = 64;

/// Up to this many edges (42 cache lines of Voronoi planes: a box has 12 edges, a hull of
/// 8 points about 18) [`ConvexPolytope::prefetch`] brings their planes as well.
pub const PREFETCH_EDGES: usize = 24;

/// The parts [`ConvexPolytope::prefetch_part`] splits [`ConvexPolytope::prefetch`] into:
/// the tables every walk starts with, then the Voronoi planes in equal pieces.
pub const PREFETCH_PARTS: usize = 6;

/// One bounding plane of a Voronoi region: the region is on the side `normal·x ≥ offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoronoiPlane {
    /// Unit normal pointing into the region.
    pub normal: DVec3,
    /// Plane offset.
    pub offset: f64,
    /// The feature whose region lies behind the plane.
    pub neighbor: FeatureId,
}

impl VoronoiPlane {
    /// Signed distance of `x` from the plane, positive on the region's side.
    pub fn signed_distance(&self, x: DVec3) -> f64 {
        self.normal.dot(x) - self.offset
    }

    /// The feature behind the plane among `planes` (a region's) that `x` violates most,
    /// beyond `tol`, if any: where a closest-feature walk moves next.
    #[inline]
    pub fn most_violated(
        planes: impl IntoIterator<Item = VoronoiPlane>,
        x: DVec3,
        tol: f64,
    ) -> Option<FeatureId> {
        let mut best: Option<(f64, FeatureId)> = None;
        for p in planes {
            let s = p.signed_distance(x);
            if s < -tol && best.is_none_or(|(b, _)| s < b) {
                best = Some((s, p.neighbor));
            }
        }
        best.map(|(_, n)| n)
    }
}

/// Edge `e`'s Voronoi planes, each once: the walk reads every region's planes from them
/// (a vertex's and a face's are its edges' planes facing the other way, computed the same
/// way to the last bit), in a third of the bytes of a table of every region's planes:
/// fewer cache lines for a query to wait on.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EdgePlanes {
    /// Unit direction from the tail `a` to the head `b`.
    direction: DVec3,
    /// The planes toward the first face (`u × n_f1`) and the second (`n_f2 × u`).
    sides: [DVec3; 2],
    /// `u·a` and `−u·b`: the end planes' offsets.
    end_offsets: [f64; 2],
    /// `sides[0]·a`, `sides[1]·a` (the edge's planes), `sides[1]·b` (the second face's
    /// plane, through its half-edge's origin `b`).
    side_offsets: [f64; 3],
}

/// The side planes of a region, in order: see [`ConvexPolytope::voronoi_planes`].
#[derive(Clone, Debug)]
pub struct VoronoiPlanes<'a> {
    poly: &'a ConvexPolytope,
    /// A vertex's or a face's half-edges still to come (none for an edge).
    half_edges: std::slice::Iter<'a, u32>,
    region: Region,
}

#[derive(Clone, Copy, Debug)]
enum Region {
    /// By the vertex's outgoing half-edges.
    Vertex,
    /// By the face's half-edges.
    Face,
    /// Edge `e`'s planes from the `next`th (of 4: see [`ConvexPolytope::voronoi_planes`]).
    Edge { e: u32, next: u8 },
}

impl Iterator for VoronoiPlanes<'_> {
    type Item = VoronoiPlane;

    #[inline(always)]
    fn next(&mut self) -> Option<VoronoiPlane> {
        let face = match &mut self.region {
            Region::Edge { e, next } => {
                if *next >= 4 {
                    return None;
                }
                *next += 1;
                return Some(self.poly.edge_plane(*e, *next as usize - 1));
            }
            Region::Vertex => false,
            Region::Face => true,
        };
        let h = *self.half_edges.next()?;
        let planes = &self.poly.edge_planes[(h / 2) as usize];
        // The edge's planes facing the other way (negation is exact), picked by the
        // half-edge's side: 0 the tail's and the first face's, 1 the head's and the second
        // face's (through the half-edge's origin, the head).
        let side = (h % 2) as usize;
        let (normal, offset) = if face {
            (-planes.sides[side], -planes.side_offsets[2 * side])
        } else {
            (
                planes.direction * [-1.0, 1.0][side],
                -planes.end_offsets[side],
            )
        };
        Some(VoronoiPlane {
            normal,
            offset,
            neighbor: FeatureId::Edge(h / 2),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self.region {
            Region::Edge { next, .. } => 4 - next.min(4) as usize,
            _ => self.half_edges.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for VoronoiPlanes<'_> {}

/// A closed convex polyhedron; see the module comment.
#[derive(Clone, Debug)]
pub struct ConvexPolytope {
    vertices: Vec<DVec3>,
    he_origin: Vec<u32>,
    he_next: Vec<u32>,
    he_face: Vec<u32>,
    face_he_start: Vec<u32>,
    face_he: Vec<u32>,
    face_normal: Vec<DVec3>,
    face_offset: Vec<f64>,
    vertex_he_start: Vec<u32>,
    vertex_he: Vec<u32>,
    /// Each vertex's neighbours, the ends of its outgoing half-edges in their order
    /// (`vertex_he_start` bounds both): a support query's climb reads a neighbour with
    /// one load where the half-edge and its origin took two.
    vertex_neighbours: Vec<u32>,
    /// Each edge's Voronoi planes, from which every region's are read: a vertex's and a
    /// face's planes are those of their edges, turned to face the other way.
    edge_planes: Vec<EdgePlanes>,
    aabb_min: DVec3,
    aabb_max: DVec3,
    centroid: DVec3,
    radius: f64,
    /// Every face once, each after a neighbour (breadth-first over shared edges).
    face_order: Vec<u32>,
    /// Each edge's arc on the Gauss map.
    edge_arcs: Vec<GaussArc>,
}

/// An edge's arc on the Gauss map: the minor great arc between its two faces' normals,
/// with what bounding a linear function over it needs (precomputed: the depth
/// certificate bounds thousands of arcs a query).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussArc {
    /// The ends: the normals of the edge's first and second face.
    pub ends: [DVec3; 2],
    /// Unit normal of the arc's plane (n0 × n1), or zero when the ends are (anti)parallel.
    pub plane: DVec3,
    /// `plane × n0` and `n1 × plane`: a point of the plane lies between the ends when both
    /// dot products with it are non-negative.
    pub tangents: [DVec3; 2],
}

impl GaussArc {
    /// The arc from `n0` to `n1`.
    pub fn new(n0: DVec3, n1: DVec3) -> Self {
        let w = n0.cross(n1);
        let len = w.length();
        let plane = if len > 1e-12 { w / len } else { DVec3::ZERO };
        GaussArc {
            ends: [n0, n1],
            plane,
            tangents: [plane.cross(n0), n1.cross(plane)],
        }
    }

    /// The least of `u·v` over unit `u` on the arc: at an end, or where the arc passes
    /// nearest `−v`.
    #[inline]
    pub fn min(&self, v: DVec3) -> f64 {
        let ends = self.ends[0].dot(v).min(self.ends[1].dot(v));
        if self.plane == DVec3::ZERO {
            return ends;
        }
        // −v projected on the arc's plane, and whether it lies between the ends.
        let m = self.plane * self.plane.dot(v) - v;
        if m.dot(self.tangents[0]) >= 0.0 && m.dot(self.tangents[1]) >= 0.0 {
            ends.min(-m.length())
        } else {
            ends
        }
    }
}

impl ConvexPolytope {
    /// The convex hull of `points`. Errors for fewer than 4 non-coplanar points or
    /// non-finite coordinates.
    pub fn from_points(points: &[DVec3]) -> Result<Self> {
        let hull = hull::convex_hull(points)?;
        Self::from_faces(hull.vertices, &hull.faces)
    }

    /// A polytope from vertices and CCW (seen from outside) face loops. Checks that the
    /// surface is closed, manifold, of genus 0, with planar faces and convex edges.
    pub fn from_faces(vertices: Vec<DVec3>, faces: &[Vec<u32>]) -> Result<Self> {
        if let Some(i) = vertices.iter().position(|v| !v.is_finite()) {
            return Err(Error::Geometry(format!("vertex {i} is not finite")));
        }
        let nv = vertices.len();
        // Half-edges: every directed edge of every loop, sorted so each finds its reverse.
        let mut directed: Vec<(u32, u32, u32)> = Vec::new(); // (from, to, loop slot)
        for (f, lp) in faces.iter().enumerate() {
            if lp.len() < 3 {
                return Err(Error::Geometry(format!(
                    "face {f} has {} vertices",
                    lp.len()
                )));
            }
            for (k, &a) in lp.iter().enumerate() {
                let b = lp[(k + 1) % lp.len()];
                if a as usize >= nv || b as usize >= nv || a == b {
                    return Err(Error::Geometry(format!(
                        "face {f} has a bad vertex index or a repeated vertex ({a}, {b})"
                    )));
                }
                directed.push((a, b, directed.len() as u32));
            }
        }
        let mut sorted = directed.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted
            .windows(2)
            .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        {
            return Err(Error::Geometry(format!(
                "edge ({}, {}) is used twice in the same direction (not a manifold)",
                w[0].0, w[0].1
            )));
        }
        // Half-edge ids: the pair of an edge is allocated when its first side is met.
        let mut he_of_slot = vec![u32::MAX; directed.len()];
        let mut pairs = 0u32;
        for &(a, b, slot) in &directed {
            if he_of_slot[slot as usize] != u32::MAX {
                continue;
            }
            let twin = sorted
                .binary_search_by(|e| (e.0, e.1).cmp(&(b, a)))
                .map_err(|_| {
                    Error::Geometry(format!(
                        "the surface is open: edge ({a}, {b}) has a face on one side only"
                    ))
                })?;
            he_of_slot[slot as usize] = 2 * pairs;
            he_of_slot[sorted[twin].2 as usize] = 2 * pairs + 1;
            pairs += 1;
        }
        let nh = 2 * pairs as usize;
        let mut he_origin = vec![u32::MAX; nh];
        let mut he_face = vec![u32::MAX; nh];
        let mut he_next = vec![u32::MAX; nh];
        let mut face_he_start = vec![0u32];
        let mut face_he = Vec::with_capacity(nh);
        let mut slot = 0usize;
        for (f, lp) in faces.iter().enumerate() {
            let first = face_he.len();
            for &a in lp {
                let h = he_of_slot[slot];
                slot += 1;
                he_origin[h as usize] = a;
                he_face[h as usize] = f as u32;
                face_he.push(h);
            }
            let n = face_he.len() - first;
            for k in 0..n {
                he_next[face_he[first + k] as usize] = face_he[first + (k + 1) % n];
            }
            face_he_start.push(face_he.len() as u32);
        }
        let mut used = vec![false; nv];
        for &o in &he_origin {
            used[o as usize] = true;
        }
        let unused = used.iter().filter(|u| !**u).count();
        if unused > 0 {
            return Err(Error::Geometry(format!(
                "{unused} of {nv} vertices belong to no face"
            )));
        }
        let (v, e, f) = (nv as i64, (he_origin.len() / 2) as i64, faces.len() as i64);
        if v - e + f != 2 {
            return Err(Error::Geometry(format!(
                "V - E + F = {v} - {e} + {f} = {}, not 2: the surface is not a sphere",
                v - e + f
            )));
        }

        // Outgoing half-edges of each vertex, in rotation order (next of twin).
        let mut any_out = vec![u32::MAX; nv];
        for (h, &o) in he_origin.iter().enumerate() {
            any_out[o as usize] = h as u32;
        }
        let mut vertex_he_start = vec![0u32];
        let mut vertex_he = Vec::with_capacity(he_origin.len());
        for (vtx, &start) in any_out.iter().enumerate() {
            let mut h = start;
            loop {
                vertex_he.push(h);
                h = he_next[(h ^ 1) as usize];
                if h == start {
                    break;
                }
                if vertex_he.len() - vertex_he_start[vtx] as usize > he_origin.len() {
                    return Err(Error::Geometry(format!("vertex {vtx} has a broken fan")));
                }
            }
            vertex_he_start.push(vertex_he.len() as u32);
        }
        let counted = vertex_he.len();
        if counted != he_origin.len() {
            return Err(Error::Geometry(
                "a vertex is shared by two separate fans (not a manifold)".into(),
            ));
        }

        let vertex_neighbours = vertex_he
            .iter()
            .map(|&h| he_origin[(h ^ 1) as usize])
            .collect();
        let mut poly = ConvexPolytope {
            aabb_min: vertices.iter().fold(DVec3::INFINITY, |m, v| m.min(*v)),
            aabb_max: vertices.iter().fold(DVec3::NEG_INFINITY, |m, v| m.max(*v)),
            centroid: vertices.iter().sum::<DVec3>() / vertices.len() as f64,
            // Rounded up past the few ulps a length is off by: it bounds the body.
            radius: vertices.iter().map(|v| v.length()).fold(0.0, f64::max)
                * (1.0 + 4.0 * f64::EPSILON),
            vertices,
            he_origin,
            he_next,
            he_face,
            face_he_start,
            face_he,
            face_normal: Vec::new(),
            face_offset: Vec::new(),
            vertex_he_start,
            vertex_he,
            vertex_neighbours,
            edge_planes: Vec::new(),
            face_order: Vec::new(),
            edge_arcs: Vec::new(),
        };
        poly.compute_face_order();
        poly.compute_planes()?;
        poly.edge_arcs = (0..poly.num_edges())
            .map(|e| {
                let [f0, f1] = poly.edge_faces(e);
                GaussArc::new(poly.face_normal[f0 as usize], poly.face_normal[f1 as usize])
            })
            .collect();
        poly.check_convex()?;
        poly.compute_voronoi();
        Ok(poly)
    }

    /// The largest |coordinate| of any vertex (at least the smallest positive f64): the
    /// size that relative tolerances scale with.
    pub fn reach(&self) -> f64 {
        self.aabb_min
            .abs()
            .max(self.aabb_max.abs())
            .max_element()
            .max(f64::MIN_POSITIVE)
    }

    /// Every face once, each (but the first of each connected part) after a face it shares
    /// an edge with, and mostly right after one: a loop in this order moves between
    /// neighbours, so whatever it carries from one face (a support vertex to start the
    /// next query from) stays close. Depth first: on a 2,048-point hull 92% of the faces
    /// follow a neighbour and a support climb carried along the order takes 1.9 steps a
    /// face; breadth first (each face after its parent, but its parent's other children
    /// and their cousins between them) 12% and 3.6 steps.
    pub fn face_order(&self) -> &[u32] {
        &self.face_order
    }

    fn compute_face_order(&mut self) {
        let n = self.num_faces();
        let mut seen = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut path: Vec<usize> = Vec::new();
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            order.push(root as u32);
            path.push(root);
            while let Some(&f) = path.last() {
                let next = self
                    .face_half_edges(f)
                    .iter()
                    .map(|&h| self.he_face[(h ^ 1) as usize] as usize)
                    .find(|&g| !seen[g]);
                match next {
                    Some(g) => {
                        seen[g] = true;
                        order.push(g as u32);
                        path.push(g);
                    }
                    None => {
                        path.pop();
                    }
                }
            }
        }
        self.face_order = order;
    }

    /// Newell normals; the offset makes the plane support the face's vertices.
    fn compute_planes(&mut self) -> Result<()> {
        for f in 0..self.num_faces() {
            let mut n = DVec3::ZERO;
            let ring: Vec<DVec3> = self
                .face_vertices(f)
                .map(|v| self.vertices[v as usize])
                .collect();
            for k in 0..ring.len() {
                let (a, b) = (ring[k], ring[(k + 1) % ring.len()]);
                n += DVec3::new(
                    (a.y - b.y) * (a.z + b.z),
                    (a.z - b.z) * (a.x + b.x),
                    (a.x - b.x) * (a.y + b.y),
                );
            }
            let mut n =
                unit(n).ok_or_else(|| Error::Geometry(format!("face {f} has zero area")))?;
            // A sliver triangle (two of its points 1e-9 apart, kept as a face of its own
            // since its normal is not its neighbours') loses its normal to the cancellation
            // in Newell's sums: 1e-7 off, its far corner 1.4e-8 off its plane, and the
            // hull was refused as not planar. There the cross product of the two sides
            // from an end of its shortest side, that side's difference exact, serves.
            if let [a, b, c] = ring[..] {
                let spread = |n: DVec3| {
                    let h = [a, b, c].map(|v| n.dot(v));
                    h[0].max(h[1]).max(h[2]) - h[0].min(h[1]).min(h[2])
                };
                if spread(n) > 64.0 * f64::EPSILON * self.reach() {
                    let sides = [(b - a).length(), (c - b).length(), (a - c).length()];
                    let k = (0..3)
                        .min_by(|&i, &j| sides[i].total_cmp(&sides[j]))
                        .unwrap_or(0);
                    let [p, q, r] = [ring[k], ring[(k + 1) % 3], ring[(k + 2) % 3]];
                    if let Some(m) = unit((q - p).cross(r - p))
                        && spread(m) < spread(n)
                    {
                        n = m;
                    }
                }
            }
            let offset = ring
                .iter()
                .map(|v| n.dot(*v))
                .fold(f64::NEG_INFINITY, f64::max);
            self.face_normal.push(n);
            self.face_offset.push(offset);
        }
        Ok(())
    }

    /// Planar faces and convex edges (local convexity of a closed genus-0 surface implies
    /// a convex body).
    fn check_convex(&self) -> Result<()> {
        let tol = CONVEXITY_TOL_REL * self.reach();
        for f in 0..self.num_faces() {
            let (n, d) = (self.face_normal[f], self.face_offset[f]);
            for v in self.face_vertices(f) {
                let off = d - n.dot(self.vertices[v as usize]);
                if off > tol {
                    return Err(Error::Geometry(format!(
                        "face {f} is not planar: vertex {v} is {off:e} off its plane"
                    )));
                }
            }
        }
        for e in 0..self.num_edges() {
            let h = 2 * e as u32;
            let f1 = self.he_face[h as usize] as usize;
            let f2 = self.he_face[(h ^ 1) as usize] as usize;
            for v in self.face_vertices(f2) {
                let above =
                    self.face_normal[f1].dot(self.vertices[v as usize]) - self.face_offset[f1];
                if above > tol {
                    return Err(Error::Geometry(format!(
                        "not convex: at edge {e}, vertex {v} of face {f2} is {above:e} above face {f1}"
                    )));
                }
            }
        }
        Ok(())
    }

    fn compute_voronoi(&mut self) {
        self.edge_planes = (0..self.num_edges())
            .map(|e| {
                let [a, b] = self.edge_vertices(e);
                let (pa, pb) = (self.vertices[a as usize], self.vertices[b as usize]);
                let [f1, f2] = self.edge_faces(e);
                let u = unit_or_zero(pb - pa);
                let n1 = unit_or_zero(u.cross(self.face_normal[f1 as usize]));
                let n2 = unit_or_zero(self.face_normal[f2 as usize].cross(u));
                EdgePlanes {
                    direction: u,
                    sides: [n1, n2],
                    end_offsets: [u.dot(pa), -u.dot(pb)],
                    side_offsets: [n1.dot(pa), n2.dot(pa), n2.dot(pb)],
                }
            })
            .collect();
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// Number of edges.
    pub fn num_edges(&self) -> usize {
        self.he_origin.len() / 2
    }

    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.face_he_start.len() - 1
    }

    /// All vertices.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// One vertex.
    pub fn vertex(&self, v: u32) -> DVec3 {
        self.vertices[v as usize]
    }

    /// Endpoints of edge `e`: `[a, b]` with face `edge_faces(e)[0]` to the left of a→b.
    pub fn edge_vertices(&self, e: usize) -> [u32; 2] {
        [self.he_origin[2 * e], self.he_origin[2 * e + 1]]
    }

    /// The two faces of edge `e`: left of a→b, then left of b→a.
    pub fn edge_faces(&self, e: usize) -> [u32; 2] {
        [self.he_face[2 * e], self.he_face[2 * e + 1]]
    }

    /// Half-edges of face `f` in counter-clockwise order.
    pub fn face_half_edges(&self, f: usize) -> &[u32] {
        &self.face_he[self.face_he_start[f] as usize..self.face_he_start[f + 1] as usize]
    }

    /// Vertices of face `f` in counter-clockwise order.
    pub fn face_vertices(&self, f: usize) -> impl Iterator<Item = u32> + '_ {
        self.face_half_edges(f)
            .iter()
            .map(|&h| self.he_origin[h as usize])
    }

    /// Edges of face `f` in counter-clockwise order.
    pub fn face_edges(&self, f: usize) -> impl Iterator<Item = u32> + '_ {
        self.face_half_edges(f).iter().map(|&h| h / 2)
    }

    /// Edge `e`'s arc on the Gauss map, from its first face's normal to its second's.
    pub fn edge_arc(&self, e: usize) -> &GaussArc {
        &self.edge_arcs[e]
    }

    /// Unit outward normal of face `f`.
    pub fn face_normal(&self, f: usize) -> DVec3 {
        self.face_normal[f]
    }

    /// Plane offset of face `f`: the face lies in `normal·x = offset`, the body below it.
    pub fn face_offset(&self, f: usize) -> f64 {
        self.face_offset[f]
    }

    /// The support vertex along face `f`'s own normal and the support value there, the
    /// face's offset: the face's plane supports the body, so its vertex highest along the
    /// normal (the one the offset was taken at, and the same value to the last bit) is a
    /// support vertex, found among the face's few vertices with no climb.
    #[inline]
    pub fn face_support(&self, f: usize) -> (u32, f64) {
        let n = self.face_normal[f];
        let mut best = (0, f64::NEG_INFINITY);
        for v in self.face_vertices(f) {
            let h = n.dot(self.vertices[v as usize]);
            if h > best.1 {
                best = (v, h);
            }
        }
        best
    }

    /// Outgoing half-edges of vertex `v` (half-edge `h` belongs to edge `h / 2`).
    pub fn vertex_out(&self, v: usize) -> &[u32] {
        &self.vertex_he[self.vertex_he_start[v] as usize..self.vertex_he_start[v + 1] as usize]
    }

    /// The vertices joined to vertex `v` by an edge, in the order of [`Self::vertex_out`].
    #[inline]
    pub fn neighbours(&self, v: usize) -> &[u32] {
        &self.vertex_neighbours
            [self.vertex_he_start[v] as usize..self.vertex_he_start[v + 1] as usize]
    }

    /// The half-edge after `h` around its face.
    pub fn next_half_edge(&self, h: u32) -> u32 {
        self.he_next[h as usize]
    }

    /// The face to the left of half-edge `h`.
    pub fn half_edge_face(&self, h: u32) -> u32 {
        self.he_face[h as usize]
    }

    /// The vertex at the far end of half-edge `h`.
    pub fn half_edge_target(&self, h: u32) -> u32 {
        self.he_origin[(h ^ 1) as usize]
    }

    /// The side planes of a feature's Voronoi region (see the module comment), in a fixed
    /// order: a vertex's by its outgoing half-edges, an edge's toward its tail, its head,
    /// its first face and its second (as [`Self::edge_end_planes`] and
    /// [`Self::edge_side_planes`] give them), a face's by its half-edges.
    #[inline(always)]
    pub fn voronoi_planes(&self, feature: FeatureId) -> VoronoiPlanes<'_> {
        let (half_edges, region): (&[u32], _) = match feature {
            FeatureId::Vertex(v) => (self.vertex_out(v as usize), Region::Vertex),
            FeatureId::Edge(e) => (&[], Region::Edge { e, next: 0 }),
            FeatureId::Face(f) => (self.face_half_edges(f as usize), Region::Face),
        };
        VoronoiPlanes {
            poly: self,
            half_edges: half_edges.iter(),
            region,
        }
    }

    /// The first two planes of edge `e`'s region: toward its tail, toward its head.
    #[inline(always)]
    pub fn edge_end_planes(&self, e: u32) -> [VoronoiPlane; 2] {
        [self.edge_plane(e, 0), self.edge_plane(e, 1)]
    }

    /// The last two planes of edge `e`'s region: toward its first face, toward its second.
    #[inline(always)]
    pub fn edge_side_planes(&self, e: u32) -> [VoronoiPlane; 2] {
        [self.edge_plane(e, 2), self.edge_plane(e, 3)]
    }

    /// The `k`th plane of edge `e`'s region (tail, head, first face, second face).
    #[inline(always)]
    fn edge_plane(&self, e: u32, k: usize) -> VoronoiPlane {
        let planes = &self.edge_planes[e as usize];
        let h = 2 * e as usize + k % 2;
        match k {
            0 | 1 => VoronoiPlane {
                normal: planes.direction * [1.0, -1.0][k],
                offset: planes.end_offsets[k],
                neighbor: FeatureId::Vertex(self.he_origin[h]),
            },
            _ => VoronoiPlane {
                normal: planes.sides[k - 2],
                offset: planes.side_offsets[k - 2],
                neighbor: FeatureId::Face(self.he_face[h]),
            },
        }
    }

    /// Asks the processor to bring toward the cache the tables every walk starts with:
    /// the vertices, the vertices' and the faces' half-edges and their ends.
    /// A hint, with no effect on any answer: a batch of pairs whose bodies are out of
    /// cache calls it for the next pair while it works on this one, and the loads
    /// overlap the work instead of stalling it. Bodies of more than
    /// [`PREFETCH_VERTICES`] vertices are left alone: their tables are larger than what a
    /// query reads of them. The Voronoi planes, where a walk goes from region to region
    /// (each step's planes named by the last: loads that wait on each other), come too
    /// for bodies of at most [`PREFETCH_EDGES`] edges; on larger ones they made
    /// 32-vertex batches slower.
    #[inline]
    pub fn prefetch(&self) {
        for part in 0..PREFETCH_PARTS {
            self.prefetch_part(part);
        }
    }

    /// Asks for the lines of the body's own fields (where its tables are and how long):
    /// what [`Self::prefetch_part`] reads before it can ask for the tables, so a batch asks
    /// for them a pair earlier.
    #[inline]
    pub fn prefetch_fields(&self) {
        prefetch_lines(std::slice::from_ref(self));
    }

    /// Part `part` of [`Self::prefetch`], of [`PREFETCH_PARTS`] (any other does nothing):
    /// 0 the vertices and the half-edge tables, then the edges' Voronoi planes in
    /// equal pieces. A batch of pairs whose steps give it room spreads the next pair's
    /// parts over this pair's steps: asked for at once, the hundred-odd lines of two
    /// small bodies wait on the processor's few outstanding misses and stall the work
    /// they were to overlap (`proxima bench toi` at 8 vertices out of cache: the
    /// prefetch alone took 0.5 µs of a pair's 3.4).
    #[inline]
    pub fn prefetch_part(&self, part: usize) {
        if self.vertices.len() > PREFETCH_VERTICES || part >= PREFETCH_PARTS {
            return;
        }
        if part == 0 {
            prefetch_lines(&self.vertices);
            prefetch_lines(&self.vertex_he_start);
            prefetch_lines(&self.vertex_he);
            prefetch_lines(&self.face_he_start);
            prefetch_lines(&self.face_he);
            prefetch_lines(&self.he_origin);
        } else if self.edge_planes.len() <= PREFETCH_EDGES {
            let (n, pieces) = (self.edge_planes.len(), PREFETCH_PARTS - 1);
            prefetch_lines(&self.edge_planes[(part - 1) * n / pieces..part * n / pieces]);
        }
    }

    /// What the body's tables take, in bytes (its own fields aside).
    pub fn table_bytes(&self) -> usize {
        size_of_val(&self.vertices[..])
            + size_of_val(&self.he_origin[..])
            + size_of_val(&self.he_next[..])
            + size_of_val(&self.he_face[..])
            + size_of_val(&self.face_he_start[..])
            + size_of_val(&self.face_he[..])
            + size_of_val(&self.face_normal[..])
            + size_of_val(&self.face_offset[..])
            + size_of_val(&self.vertex_he_start[..])
            + size_of_val(&self.vertex_he[..])
            + size_of_val(&self.vertex_neighbours[..])
            + size_of_val(&self.edge_planes[..])
            + size_of_val(&self.face_order[..])
            + size_of_val(&self.edge_arcs[..])
    }

    /// Every feature: vertices, then edges, then faces.
    pub fn features(&self) -> impl Iterator<Item = FeatureId> + '_ {
        (0..self.num_vertices() as u32)
            .map(FeatureId::Vertex)
            .chain((0..self.num_edges() as u32).map(FeatureId::Edge))
            .chain((0..self.num_faces() as u32).map(FeatureId::Face))
    }

    /// The vertex maximising `dir·v`, found by hill climbing over vertex adjacency from
    /// `start` (a previous answer warm-starts it). On a convex polytope a vertex no
    /// neighbour improves on is a global maximum. Returns the vertex and `dir·v`.
    pub fn support(&self, dir: DVec3, start: u32) -> (u32, f64) {
        let mut best = start.min(self.vertices.len() as u32 - 1);
        let mut value = dir.dot(self.vertices[best as usize]);
        loop {
            let mut improved = false;
            for &w in self.neighbours(best as usize) {
                let d = dir.dot(self.vertices[w as usize]);
                if d > value {
                    (best, value, improved) = (w, d, true);
                }
            }
            if !improved {
                return (best, value);
            }
        }
    }

    /// The vertex maximising `dir·v` and `dir·v`, as [`Self::support`] finds it: by a scan
    /// on small bodies (up to [`SCAN_VERTICES`]), cheaper there than climbing the vertex
    /// graph through its adjacency tables (which a scan does not touch), else by climbing
    /// from `warm`.
    #[inline]
    pub fn extreme(&self, dir: DVec3, warm: u32) -> (u32, f64) {
        self.extreme_scanning(dir, warm, SCAN_VERTICES)
    }

    /// [`Self::extreme`] with the largest body to scan given: a query whose directions jump
    /// about (the depth walk's) gains from scanning larger bodies than one that follows a
    /// smooth motion.
    #[inline]
    pub fn extreme_scanning(&self, dir: DVec3, warm: u32, scan_up_to: usize) -> (u32, f64) {
        if self.vertices.len() <= scan_up_to {
            self.support_brute(dir)
        } else {
            self.support(dir, warm)
        }
    }

    /// Support by scanning every vertex (the reference for [`Self::support`]).
    pub fn support_brute(&self, dir: DVec3) -> (u32, f64) {
        let mut best = (0, f64::NEG_INFINITY);
        for (i, v) in self.vertices.iter().enumerate() {
            let d = dir.dot(*v);
            if d > best.1 {
                best = (i as u32, d);
            }
        }
        best
    }

    /// The mean of the vertices: a point inside the body.
    pub fn centroid(&self) -> DVec3 {
        self.centroid
    }

    /// The largest distance of a vertex from the body origin, rounded up: the body stays
    /// within this of its origin however it turns.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Local axis-aligned bounds.
    pub fn local_aabb(&self) -> (DVec3, DVec3) {
        (self.aabb_min, self.aabb_max)
    }

    /// The polytope scaled uniformly about its body origin.
    pub fn scaled(&self, s: f64) -> Result<Self> {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::Geometry(format!(
                "scale {s} must be finite and positive"
            )));
        }
        let faces: Vec<Vec<u32>> = (0..self.num_faces())
            .map(|f| self.face_vertices(f).collect())
            .collect();
        let vertices: Vec<DVec3> = self.vertices.iter().map(|v| *v * s).collect();
        // The hull's range, named as such: scaled by 1e300 or 1e-300 a box read "face 0 has
        // zero area".
        hull::check_range(&vertices, &format!("the polytope scaled by {s:e}"))?;
        Self::from_faces(vertices, &faces)
    }

    /// Bounds for the GPU bounds pass, rounded outward to f32: the local box and the
    /// smallest sphere about its center holding every vertex.
    pub fn gpu_bounds(&self) -> GpuShapeBounds {
        let (lo, hi) = self.local_aabb();
        let (lo, hi) = (round_down(lo).as_dvec3(), round_up(hi).as_dvec3());
        let center = ((lo + hi) * 0.5).as_vec3();
        let c = center.as_dvec3();
        let half = round_up((hi - c).max(c - lo));
        let r = self
            .vertices
            .iter()
            .map(|v| v.distance(c))
            .fold(0.0, f64::max);
        GpuShapeBounds::new(center, half, round_up(DVec3::splat(r)).x)
    }
}

/// `v / |v|`, or `None` for a zero or non-finite length. A division, not a multiplication
/// by the reciprocal (glam's `normalize`): an axis-aligned vector then comes out exactly a
/// unit axis, so boxes have exact face normals and exact planes (touching boxes touch
/// exactly).
fn unit(v: DVec3) -> Option<DVec3> {
    let len = v.length();
    (len > 0.0 && len.is_finite()).then(|| v / len)
}

fn unit_or_zero(v: DVec3) -> DVec3 {
    unit(v).unwrap_or(DVec3::ZERO)
}

/// `v` in f32, each component rounded down (never above the f64 value).
pub fn round_down(v: DVec3) -> Vec3 {
    let f = v.as_vec3();
    Vec3::from_array(std::array::from_fn(|i| {
        if f64::from(f[i]) > v[i] {
            f[i].next_down()
        } else {
            f[i]
        }
    }))
}

/// `v` in f32, each component rounded up (never below the f64 value).
pub fn round_up(v: DVec3) -> Vec3 {
    let f = v.as_vec3();
    Vec3::from_array(std::array::from_fn(|i| {
        if f64::from(f[i]) < v[i] {
            f[i].next_up()
        } else {
            f[i]
        }
    }))
}

/// Asks for every cache line `s` touches, the first and last in part included (a hint: a
/// prefetch reads nothing into the program and never faults).
#[inline]
fn prefetch_lines<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = s.as_ptr().cast::<i8>();
        for offset in line_offsets(start as usize, size_of_val(s)) {
            // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 processor has; the
            // address is in a line `s` touches, and a prefetch neither reads into the program nor
            // faults, whatever the address.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_offset(offset));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

/// Offsets from `address` into each 64-byte cache line that `bytes` bytes from it touch
/// (none when `bytes` is 0): the first from the start of its line.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn line_offsets(address: usize, bytes: usize) -> impl Iterator<Item = isize> {
    let lead = (address % 64) as isize;
    let end = if bytes == 0 { -lead } else { bytes as isize };
    (-lead..end).step_by(64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Each region's planes as Lin defines them, computed from the region's own feature
    /// (the oracle for the planes read from the edges'): a vertex's from its edges'
    /// directions away from it, an edge's from its ends and faces, a face's from its
    /// normal and its half-edges.
    fn region_planes(p: &ConvexPolytope, feature: FeatureId) -> Vec<VoronoiPlane> {
        let unit = |v: DVec3| unit_or_zero(v);
        let vertex = |v: u32| p.vertex(v);
        match feature {
            FeatureId::Vertex(v) => p
                .vertex_out(v as usize)
                .iter()
                .map(|&h| {
                    let n = unit(vertex(v) - vertex(p.half_edge_target(h)));
                    VoronoiPlane {
                        normal: n,
                        offset: n.dot(vertex(v)),
                        neighbor: FeatureId::Edge(h / 2),
                    }
                })
                .collect(),
            FeatureId::Edge(e) => {
                let [a, b] = p.edge_vertices(e as usize);
                let [f1, f2] = p.edge_faces(e as usize);
                let (pa, pb) = (vertex(a), vertex(b));
                let u = unit(pb - pa);
                let n1 = unit(u.cross(p.face_normal(f1 as usize)));
                let n2 = unit(p.face_normal(f2 as usize).cross(u));
                [
                    (u, pa, FeatureId::Vertex(a)),
                    (-u, pb, FeatureId::Vertex(b)),
                    (n1, pa, FeatureId::Face(f1)),
                    (n2, pa, FeatureId::Face(f2)),
                ]
                .map(|(normal, at, neighbor)| VoronoiPlane {
                    normal,
                    offset: normal.dot(at),
                    neighbor,
                })
                .to_vec()
            }
            FeatureId::Face(f) => p
                .face_half_edges(f as usize)
                .iter()
                .map(|&h| {
                    let (a, b) = (
                        vertex(p.he_origin[h as usize]),
                        vertex(p.half_edge_target(h)),
                    );
                    let n = unit(p.face_normal(f as usize).cross(unit(b - a)));
                    VoronoiPlane {
                        normal: n,
                        offset: n.dot(a),
                        neighbor: FeatureId::Edge(h / 2),
                    }
                })
                .collect(),
        }
    }

    /// Every region's planes, read from its edges' planes, are the planes computed from
    /// the region's own feature to the last bit (a zero's sign aside), in order (the walk's ties and answers
    /// depend on both), on random hulls at sizes from 1e-6 to 1e6 and on boxes and
    /// cylinders (faces of more than three sides).
    #[test]
    fn region_planes_read_from_edges_are_the_regions_own() {
        let mut rng = Rng::new(0x7e91);
        let mut bodies = vec![
            super::super::generators::cuboid(DVec3::new(1.0, 2.0, 3.0)).unwrap(),
            super::super::generators::cylinder(9, 1.5, 0.25).unwrap(),
        ];
        for k in 0..60 {
            let scale = 10f64.powi(k % 13 - 6);
            let offset = rng.unit_vector() * scale * rng.range(0.0, 4.0);
            let points: Vec<DVec3> = (0..4 + k as usize % 40)
                .map(|_| offset + rng.unit_vector() * scale * rng.range(0.5, 1.5))
                .collect();
            bodies.extend(ConvexPolytope::from_points(&points));
        }
        assert!(bodies.len() > 50, "too few hulls: {}", bodies.len());
        // Bits, the sign of a zero aside (`x + 0.0` is `x`, but +0 for −0): a negated
        // plane has −0 where the direct one has +0, which no sum, product or comparison
        // of the walk's tells apart.
        let bits = |planes: Vec<VoronoiPlane>| -> Vec<([u64; 3], u64, FeatureId)> {
            let bits = |x: f64| (x + 0.0).to_bits();
            planes
                .iter()
                .map(|q| (q.normal.to_array().map(bits), bits(q.offset), q.neighbor))
                .collect()
        };
        for p in &bodies {
            for feature in p.features() {
                let read: Vec<VoronoiPlane> = p.voronoi_planes(feature).collect();
                assert_eq!(read.len(), p.voronoi_planes(feature).len());
                assert_eq!(bits(read), bits(region_planes(p, feature)), "{feature:?}");
            }
        }
    }

    /// The prefetch asks for every line a table touches, once each, the partial first and
    /// last lines included.
    #[test]
    fn prefetch_offsets_name_every_line_once() {
        for address in 1000..1000 + 130 {
            for bytes in 0..300 {
                let lines: Vec<usize> = line_offsets(address, bytes)
                    .map(|o| (address as isize + o) as usize / 64)
                    .collect();
                let want: Vec<usize> = if bytes == 0 {
                    vec![]
                } else {
                    (address / 64..=(address + bytes - 1) / 64).collect()
                };
                assert_eq!(lines, want, "{bytes} bytes at {address}");
            }
        }
    }

    /// `a·b` exactly, as a sum of two f64.
    fn two_product(a: f64, b: f64) -> (f64, f64) {
        let p = a * b;
        (p, a.mul_add(b, -p))
    }

    /// `a + b` exactly, as a sum of two f64 (Knuth's two-sum).
    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let bb = s - a;
        (s, (a - (s - bb)) + (b - bb))
    }

    /// The sign of `|v|² − r²` in exact arithmetic: each square split into its rounded
    /// value and its error, the parts grown into a nonoverlapping expansion (Shewchuk's
    /// grow-expansion), whose largest nonzero component carries the sign.
    fn excess(v: DVec3, r: f64) -> f64 {
        let mut parts = vec![];
        for x in [v.x, v.y, v.z] {
            let (p, e) = two_product(x, x);
            parts.extend([p, e]);
        }
        let (p, e) = two_product(r, r);
        parts.extend([-p, -e]);
        let mut expansion: Vec<f64> = Vec::new();
        for b in parts {
            let mut q = b;
            let mut grown = Vec::with_capacity(expansion.len() + 1);
            for &c in &expansion {
                let (sum, err) = two_sum(q, c);
                grown.push(err);
                q = sum;
            }
            grown.push(q);
            expansion = grown;
        }
        expansion
            .iter()
            .rev()
            .copied()
            .find(|&c| c != 0.0)
            .unwrap_or(0.0)
    }

    /// The radius bounds every vertex in exact arithmetic, where the largest rounded
    /// length alone falls short for some vertices.
    #[test]
    fn the_radius_bounds_every_vertex_exactly() {
        let mut rng = Rng::new(0x4ad);
        let mut short = 0;
        for _ in 0..300 {
            let points: Vec<DVec3> = (0..12)
                .map(|_| rng.unit_vector() * rng.range(0.5, 3.0))
                .collect();
            let Ok(p) = ConvexPolytope::from_points(&points) else {
                continue;
            };
            let plain = p.vertices().iter().map(|v| v.length()).fold(0.0, f64::max);
            for v in p.vertices() {
                assert!(excess(*v, p.radius()) <= 0.0, "{v} beyond {}", p.radius());
                if excess(*v, plain) > 0.0 {
                    short += 1;
                }
            }
        }
        assert!(
            short > 0,
            "no rounded length fell short: the test shows nothing"
        );
    }
}
