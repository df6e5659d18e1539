//! Convex hull of a point set: quickhull (Barber, Dobkin, Huhdanpaa 1996) on exact
//! orientation predicates, then coplanar triangles merged into polygon faces.
//!
//! Visibility ("is p outside face abc?") is decided by Shewchuk's adaptive exact
//! `orient3d`, never by a floating-point plane distance, so nearly coplanar points cannot
//! make the hull non-convex or the horizon non-simple: the triangulated hull is exactly
//! the convex hull of the input. Floating-point distances only choose which outside point
//! to add next. Duplicates and points on the hull's faces or edges are never outside
//! anything and are dropped. Tried first: an epsilon-plane quickhull; it needs face merging
//! during construction to stay convex (Lloyd's quickhull3d does this) and still misjudged
//! 1e9-scale inputs.
//!
//! The triangles are then grouped into faces: a face grows from its largest triangle over
//! neighbours whose far vertex lies within `MERGE_TOL_REL · extent` of the seed's plane
//! (exactly coplanar ones always merge). Vertices left on fewer than three faces (points
//! in the middle of a face or of an edge) are removed.

use std::collections::HashMap as StdHashMap;

/// A hash map with foldhash's fixed-seed hasher: the keys are the builder's own indices and
/// cells, and a fixed seed keeps every run's maps alike.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::FixedState>;

use glam::DVec3;

use crate::bodies::MAX_COORDINATE;
use crate::{Error, Result};

/// The smallest extent (largest coordinate difference) a shape's points may span: the same
/// fourth powers of its coordinate differences then stay above 1e-280, clear of the
/// subnormal range, where a 1e-80 box's normals came out 2e-6 off unit length and its
/// depth as far off, with no error.
pub const MIN_EXTENT: f64 = 1e-70;

/// Relative distance under which a triangle joins a neighbouring face's plane.
pub const MERGE_TOL_REL: f64 = 1e-10;
/// Relative height under which a triangle is a sliver whose float normal means nothing
/// (a few hundred ulps of the extent).
const SLIVER_REL: f64 = 1e-13;

/// A hull as polygon faces over its own vertex list (CCW seen from outside).
#[derive(Clone, Debug)]
pub struct HullFaces {
    /// Hull vertices (a subset of the input points).
    pub vertices: Vec<DVec3>,
    /// Index of each hull vertex in the input.
    pub input_index: Vec<u32>,
    /// Faces as vertex loops, counter-clockwise seen from outside.
    pub faces: Vec<Vec<u32>>,
}

/// Exact sign of the volume of the tetrahedron `abcd` (Shewchuk's adaptive `orient3d`;
/// 0: coplanar).
pub fn orient3d(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> f64 {
    let c3 = |p: DVec3| robust::Coord3D {
        x: p.x,
        y: p.y,
        z: p.z,
    };
    robust::orient3d(c3(a), c3(b), c3(c), c3(d))
}

/// True when `p` is strictly outside the face `abc` (CCW seen from outside).
fn outside(points: &[DVec3], f: &[u32; 3], p: DVec3) -> bool {
    orient3d(
        points[f[0] as usize],
        points[f[1] as usize],
        points[f[2] as usize],
        p,
    ) < 0.0
}

struct Tri {
    v: [u32; 3],
    /// Neighbour across edge i = (v[i], v[i+1]).
    adj: [u32; 3],
    normal: DVec3,
    /// Float distances beyond ±slop have a certain sign (see `Tri::new`).
    slop: f64,
    outside: Vec<u32>,
    /// The farthest outside point and its distance.
    far: (u32, f64),
    alive: bool,
}

impl Tri {
    /// `reach` bounds |p| over all points. The float normal's direction is off by at most
    /// ~4ε·|e1||e2|/|e1×e2| (cancellation in the cross product), so a float distance
    /// n̂·(p − a) is within slop = 256ε·2·reach·(|e1||e2|/|e1×e2| + 1) of the exact one, a
    /// 16-fold margin; inside that band the exact predicate decides.
    fn new(points: &[DVec3], v: [u32; 3], reach: f64) -> Self {
        let [a, b, c] = v.map(|i| points[i as usize]);
        let (e1, e2) = (b - a, c - a);
        let n = e1.cross(e2);
        let len = n.length();
        let slop = if len > 0.0 {
            256.0 * f64::EPSILON * 2.0 * reach * (e1.length() * e2.length() / len + 1.0)
        } else {
            f64::INFINITY
        };
        Tri {
            v,
            adj: [u32::MAX; 3],
            normal: if len > 0.0 { n / len } else { DVec3::ZERO },
            slop,
            outside: Vec::new(),
            far: (u32::MAX, f64::NEG_INFINITY),
            alive: true,
        }
    }

    /// `Some(distance)` when `p` is strictly outside (decided exactly), else `None`.
    fn outside_distance(&self, points: &[DVec3], p: DVec3) -> Option<f64> {
        let d = self.normal.dot(p - points[self.v[0] as usize]);
        if d > self.slop {
            Some(d)
        } else if d < -self.slop {
            None
        } else {
            outside(points, &self.v, p).then_some(d.max(0.0))
        }
    }

    fn push_outside(&mut self, i: u32, d: f64) {
        self.outside.push(i);
        if d > self.far.1 || self.far.0 == u32::MAX {
            self.far = (i, d);
        }
    }

    fn edge_index(&self, a: u32, b: u32) -> Option<usize> {
        (0..3).find(|&i| self.v[i] == a && self.v[(i + 1) % 3] == b)
    }
}

/// The smallest height of a triangle (twice its area over its longest side).
fn tri_height(points: &[DVec3], v: [u32; 3]) -> f64 {
    let [a, b, c] = v.map(|i| points[i as usize]);
    let longest = (b - a).length().max((c - b).length()).max((a - c).length());
    if longest == 0.0 {
        return 0.0;
    }
    (b - a).cross(c - a).length() / longest
}

/// Unit normal of a triangle (zero for a degenerate one).
fn tri_normal(points: &[DVec3], v: [u32; 3]) -> DVec3 {
    let [a, b, c] = v.map(|i| points[i as usize]);
    (b - a).cross(c - a).normalize_or_zero()
}

/// The named error for input that is flat within the merge tolerance.
fn flat_error() -> Error {
    Error::Geometry(format!(
        "the points are flat: every hull face lies within {MERGE_TOL_REL:e} of their extent of one plane, so the body has no volume"
    ))
}

/// Checks the input: at least four points, all finite.
fn check_points(points: &[DVec3]) -> Result<()> {
    if let Some(i) = points.iter().position(|p| !p.is_finite()) {
        return Err(Error::Geometry(format!(
            "hull input point {i} is not finite: {:?}",
            points[i]
        )));
    }
    if points.len() < 4 {
        return Err(Error::Geometry(format!(
            "a convex hull needs at least 4 non-coplanar points, got {} points",
            points.len()
        )));
    }
    check_range(points, "hull input points")
}

/// Coordinates within [`MAX_COORDINATE`] and a span of at least [`MIN_EXTENT`] (points
/// that all coincide are the hull's own error), or the error naming what is wrong with the
/// `what`.
pub fn check_range(points: &[DVec3], what: &str) -> Result<()> {
    if let Some(i) = points
        .iter()
        .position(|p| p.abs().max_element() > MAX_COORDINATE)
    {
        return Err(Error::Geometry(format!(
            "{what}: point {i} is {:?}: coordinates must lie within ±{MAX_COORDINATE:e}",
            points[i]
        )));
    }
    let Some(&first) = points.first() else {
        return Ok(());
    };
    let (lo, hi) = points
        .iter()
        .fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    let extent = (hi - lo).max_element();
    if extent > 0.0 && extent < MIN_EXTENT {
        return Err(Error::Geometry(format!(
            "{what}: they span {extent:e}, below {MIN_EXTENT:e}: products of their \
             coordinates would underflow; use larger units"
        )));
    }
    Ok(())
}

/// Four points spanning a tetrahedron of non-zero volume, or a named error.
fn initial_simplex(points: &[DVec3]) -> Result<[u32; 4]> {
    let mut extremes = [0u32; 6];
    for (i, p) in points.iter().enumerate() {
        for axis in 0..3 {
            if p[axis] < points[extremes[2 * axis] as usize][axis] {
                extremes[2 * axis] = i as u32;
            }
            if p[axis] > points[extremes[2 * axis + 1] as usize][axis] {
                extremes[2 * axis + 1] = i as u32;
            }
        }
    }
    let (mut i0, mut i1, mut best) = (0, 0, -1.0);
    for &a in &extremes {
        for &b in &extremes {
            let d = points[a as usize].distance_squared(points[b as usize]);
            if d > best {
                (i0, i1, best) = (a, b, d);
            }
        }
    }
    if best <= 0.0 {
        return Err(Error::Geometry(
            "all hull input points coincide: a convex hull needs 4 non-coplanar points".into(),
        ));
    }
    let (p0, p1) = (points[i0 as usize], points[i1 as usize]);
    let dir = p1 - p0;
    let (mut i2, mut best) = (0u32, 0.0);
    for (i, p) in points.iter().enumerate() {
        let d = (*p - p0).cross(dir).length_squared();
        if d > best {
            (i2, best) = (i as u32, d);
        }
    }
    if best <= 0.0 {
        return Err(Error::Geometry(
            "all hull input points are collinear: a convex hull needs 4 non-coplanar points".into(),
        ));
    }
    let p2 = points[i2 as usize];
    let (mut i3, mut best) = (0u32, 0.0);
    for (i, p) in points.iter().enumerate() {
        let d = orient3d(p0, p1, p2, *p).abs();
        if d > best {
            (i3, best) = (i as u32, d);
        }
    }
    if best == 0.0 {
        return Err(Error::Geometry(
            "all hull input points are coplanar: a convex hull needs 4 non-coplanar points".into(),
        ));
    }
    Ok([i0, i1, i2, i3])
}

/// The triangulated hull: triangles over input indices, CCW seen from outside.
pub fn hull_triangles(points: &[DVec3]) -> Result<Vec<[u32; 3]>> {
    Ok(quickhull(points)?.0)
}

/// Triangles (vertex indices) and, for each, its neighbours across its three edges.
type Triangulation = (Vec<[u32; 3]>, Vec<[u32; 3]>);

/// Quickhull proper: the hull's triangles and their adjacency.
fn quickhull(points: &[DVec3]) -> Result<Triangulation> {
    check_points(points)?;
    let s = initial_simplex(points)?;
    let reach = points.iter().fold(0.0f64, |m, p| m.max(p.length()));
    let mut tris: Vec<Tri> = Vec::new();
    // Orient the tetrahedron's faces so the opposite vertex is inside (orient3d > 0).
    let faces = [[0, 1, 2, 3], [0, 3, 1, 2], [1, 3, 2, 0], [2, 3, 0, 1]];
    for f in faces {
        let (a, b, c, d) = (s[f[0]], s[f[1]], s[f[2]], s[f[3]]);
        let p = |i: u32| points[i as usize];
        let v = if orient3d(p(a), p(b), p(c), p(d)) > 0.0 {
            [a, b, c]
        } else {
            [a, c, b]
        };
        tris.push(Tri::new(points, v, reach));
    }
    link_all(&mut tris);

    for (i, p) in points.iter().enumerate() {
        let i = i as u32;
        if s.contains(&i) {
            continue;
        }
        if let Some((t, d)) =
            (0..4).find_map(|t| tris[t].outside_distance(points, *p).map(|d| (t, d)))
        {
            tris[t].push_outside(i, d);
        }
    }

    // Faces with points outside, first in first out: taken last in first out, a cylinder's
    // two rings of points were joined by fans from one point of a ring to many of the
    // other, each point's horizon as long as a fan (4.9M triangles made for 32,768 points,
    // quadratic time and memory); taken in turn the rings are refined evenly.
    let mut pending: std::collections::VecDeque<u32> = (0..4)
        .filter(|&t| !tris[t].outside.is_empty())
        .map(|t| t as u32)
        .collect();
    let mut visible = Vec::new();
    let mut mark: Vec<u32> = vec![0; 4];
    let mut stamp = 0u32;
    while let Some(t) = pending.pop_front() {
        let t = t as usize;
        if !tris[t].alive || tris[t].outside.is_empty() {
            continue;
        }
        // The farthest outside point of this face goes in next.
        let apex = tris[t].far.0;
        let ap = points[apex as usize];

        // Faces visible from the apex: a connected patch around t.
        stamp += 1;
        mark.resize(tris.len(), 0);
        visible.clear();
        visible.push(t as u32);
        mark[t] = stamp;
        let mut k = 0;
        while k < visible.len() {
            let f = visible[k] as usize;
            k += 1;
            for n in tris[f].adj {
                let n = n as usize;
                if mark[n] != stamp && tris[n].outside_distance(points, ap).is_some() {
                    mark[n] = stamp;
                    visible.push(n as u32);
                }
            }
        }

        // Horizon: edges of visible faces whose neighbour is not visible, chained by vertex.
        let mut horizon: HashMap<u32, (u32, u32)> = HashMap::default();
        for &f in &visible {
            let tri = &tris[f as usize];
            for i in 0..3 {
                let n = tri.adj[i];
                if mark[n as usize] != stamp {
                    horizon.insert(tri.v[i], (tri.v[(i + 1) % 3], n));
                }
            }
        }
        // The smallest key, not the first in HashMap order: the hull (and so every feature
        // number) must not depend on a per-process hash seed.
        let start = *horizon.keys().min().expect("a visible patch has a horizon");
        let mut loop_edges = Vec::with_capacity(horizon.len());
        let mut a = start;
        loop {
            let &(b, n) = horizon.get(&a).ok_or_else(|| {
                Error::Geometry("convex hull: horizon is not a closed loop (internal error)".into())
            })?;
            loop_edges.push((a, b, n));
            a = b;
            if a == start {
                break;
            }
            if loop_edges.len() > horizon.len() {
                return Err(Error::Geometry(
                    "convex hull: horizon is not a simple loop (internal error)".into(),
                ));
            }
        }

        // New faces from each horizon edge to the apex.
        let first_new = tris.len() as u32;
        let m = loop_edges.len() as u32;
        for (j, &(a, b, n)) in loop_edges.iter().enumerate() {
            let j = j as u32;
            let mut tri = Tri::new(points, [a, b, apex], reach);
            tri.adj = [n, first_new + (j + 1) % m, first_new + (j + m - 1) % m];
            let nb = &mut tris[n as usize];
            let e = nb.edge_index(b, a).ok_or_else(|| {
                Error::Geometry("convex hull: broken adjacency (internal error)".into())
            })?;
            nb.adj[e] = first_new + j;
            tris.push(tri);
        }

        // Hand the outside points of the removed faces to the new ones.
        let mut orphans = Vec::new();
        for &f in &visible {
            let f = f as usize;
            tris[f].alive = false;
            // Taken with its allocation: a dead face kept an emptied list's capacity.
            orphans.extend(std::mem::take(&mut tris[f].outside));
        }
        for q in orphans {
            if q == apex {
                continue;
            }
            let qp = points[q as usize];
            if let Some((f, d)) = (first_new..first_new + m).find_map(|f| {
                tris[f as usize]
                    .outside_distance(points, qp)
                    .map(|d| (f, d))
            }) {
                tris[f as usize].push_outside(q, d);
            }
        }
        for f in first_new..first_new + m {
            if !tris[f as usize].outside.is_empty() {
                pending.push_back(f);
            }
        }
    }
    // Compact the live triangles, renumbering their adjacency.
    let mut new_index = vec![u32::MAX; tris.len()];
    let mut k = 0;
    for (t, tri) in tris.iter().enumerate() {
        if tri.alive {
            new_index[t] = k;
            k += 1;
        }
    }
    let live = tris.iter().filter(|t| t.alive);
    let triangles = live.clone().map(|t| t.v).collect();
    let adjacency = live.map(|t| t.adj.map(|n| new_index[n as usize])).collect();
    Ok((triangles, adjacency))
}

fn link_all(tris: &mut [Tri]) {
    let mut by_edge = HashMap::default();
    for (t, tri) in tris.iter().enumerate() {
        for i in 0..3 {
            by_edge.insert((tri.v[i], tri.v[(i + 1) % 3]), t as u32);
        }
    }
    for tri in tris.iter_mut() {
        for i in 0..3 {
            tri.adj[i] = by_edge[&(tri.v[(i + 1) % 3], tri.v[i])];
        }
    }
}

/// The convex hull of `points` as polygon faces (coplanar triangles merged), after
/// welding points closer than [`WELD_REL`] times the extent.
pub fn convex_hull(points: &[DVec3]) -> Result<HullFaces> {
    check_points(points)?;
    let (unique, original) = weld(points);
    if unique.len() < 4 {
        // Fewer than four points apart: the simplex search names the degeneracy.
        initial_simplex(&unique)?;
    }
    let (tris, adj) = quickhull(&unique)?;
    let mut hull = merge_with_adjacency(&unique, &tris, &adj)?;
    for i in &mut hull.input_index {
        *i = original[*i as usize];
    }
    Ok(hull)
}

/// Relative distance under which two input points are taken as one. Points a few ulps
/// apart (the same corner computed twice, as where a mesh was cut into pieces) are
/// exactly distinct, so without this the hull keeps both and an edge of length 1e-16
/// between them, whose Voronoi planes point wherever rounding sends them and can send
/// the closest-feature walk round a cycle. Between the walk's tolerance (1e-13) and the
/// face merge's (1e-10).
pub const WELD_REL: f64 = 1e-12;

/// The points with near-duplicates dropped (the first of a cluster kept), and each kept
/// point's index in the input.
fn weld(points: &[DVec3]) -> (Vec<DVec3>, Vec<u32>) {
    let extent = points
        .iter()
        .fold(0.0f64, |m, p| m.max(p.abs().max_element()));
    let eps = WELD_REL * extent;
    if eps == 0.0 {
        return (points.to_vec(), (0..points.len() as u32).collect());
    }
    let cell = |p: DVec3| {
        let c = (p / eps).floor();
        (c.x as i64, c.y as i64, c.z as i64)
    };
    let mut grid: HashMap<(i64, i64, i64), Vec<u32>> = HashMap::default();
    let (mut unique, mut original): (Vec<DVec3>, Vec<u32>) = (Vec::new(), Vec::new());
    for (i, &p) in points.iter().enumerate() {
        let (x, y, z) = cell(p);
        let near = (-1..=1).any(|dx| {
            (-1..=1).any(|dy| {
                (-1..=1).any(|dz| {
                    grid.get(&(x + dx, y + dy, z + dz)).is_some_and(|kept| {
                        kept.iter().any(|&k| unique[k as usize].distance(p) <= eps)
                    })
                })
            })
        });
        if near {
            continue;
        }
        grid.entry((x, y, z)).or_default().push(unique.len() as u32);
        unique.push(p);
        original.push(i as u32);
    }
    (unique, original)
}

/// Neighbour of each triangle across each edge (`adj[t][i]` across `(v[i], v[i+1])`), by
/// sorting the directed edges; errors if the triangles are not a closed oriented manifold.
pub fn triangle_adjacency(tris: &[[u32; 3]]) -> Result<Vec<[u32; 3]>> {
    let mut edges: Vec<(u32, u32, u32)> = Vec::with_capacity(tris.len() * 3);
    for (t, v) in tris.iter().enumerate() {
        for i in 0..3 {
            edges.push((v[i], v[(i + 1) % 3], (3 * t + i) as u32));
        }
    }
    edges.sort_unstable();
    if edges
        .windows(2)
        .any(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
    {
        return Err(Error::Geometry(
            "convex hull: an edge is used twice in one direction".into(),
        ));
    }
    let mut adj = vec![[u32::MAX; 3]; tris.len()];
    for &(a, b, slot) in &edges {
        let twin = edges
            .binary_search_by(|e| (e.0, e.1).cmp(&(b, a)))
            .map_err(|_| Error::Geometry("convex hull: open triangle mesh".into()))?;
        adj[(slot / 3) as usize][(slot % 3) as usize] = edges[twin].2 / 3;
    }
    Ok(adj)
}

/// Groups a closed triangulated hull into planar polygon faces; see the module comment.
pub fn merge_coplanar(points: &[DVec3], tris: &[[u32; 3]]) -> Result<HullFaces> {
    let adj = triangle_adjacency(tris)?;
    merge_with_adjacency(points, tris, &adj)
}

fn merge_with_adjacency(
    points: &[DVec3],
    tris: &[[u32; 3]],
    adj: &[[u32; 3]],
) -> Result<HullFaces> {
    let extent = points
        .iter()
        .fold(0.0f64, |m, p| m.max(p.abs().max_element()));
    let tol = MERGE_TOL_REL * extent.max(f64::MIN_POSITIVE);
    let p = |i: u32| points[i as usize];

    // Seeds in order of decreasing area, so a face's plane comes from its best triangle.
    let area: Vec<f64> = tris
        .iter()
        .map(|v| (p(v[1]) - p(v[0])).cross(p(v[2]) - p(v[0])).length())
        .collect();
    let mut order: Vec<usize> = (0..tris.len()).collect();
    order.sort_unstable_by(|&a, &b| area[b].total_cmp(&area[a]));
    let mut group = vec![u32::MAX; tris.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &seed in &order {
        if group[seed] != u32::MAX {
            continue;
        }
        let g = groups.len() as u32;
        let sv = tris[seed];
        let seed_tri = Tri::new(points, sv, extent * 3f64.sqrt());
        let (normal, slop) = (seed_tri.normal, seed_tri.slop);
        let offset = normal.dot(p(sv[0]));
        // Exactly coplanar points always merge; the exact predicate is only consulted
        // where the float distance cannot tell (a sliver seed's normal is imprecise).
        let exactly_on_plane = |q: u32| orient3d(p(sv[0]), p(sv[1]), p(sv[2]), p(q)) == 0.0;
        let on_plane = |q: u32| {
            let d = (normal.dot(p(q)) - offset).abs();
            d <= tol || (d <= slop && exactly_on_plane(q))
        };
        // A neighbour within the tolerance joins only if it faces the same way: across a
        // sheet thinner than the tolerance (a box 1e-11 thick) the far side and the rims
        // are within it too, and merging them would fold the body into one face. A sliver
        // (thinner than SLIVER_REL of the extent) has no trustworthy normal and joins on
        // distance alone, as does an exactly coplanar neighbour.
        let joins = |n: usize| {
            let v = tris[n];
            v.iter().all(|&q| on_plane(q))
                && (tri_normal(points, v).dot(normal) > 0.5
                    || tri_height(points, v) <= SLIVER_REL * extent
                    || v.iter().all(|&q| exactly_on_plane(q)))
        };
        let mut members = vec![seed];
        group[seed] = g;
        let mut k = 0;
        while k < members.len() {
            let t = members[k];
            k += 1;
            for &n in &adj[t] {
                let n = n as usize;
                if group[n] == u32::MAX && joins(n) {
                    group[n] = g;
                    members.push(n);
                }
            }
        }
        groups.push(members);
    }

    // Each group's boundary, chained into one loop.
    let mut loops: Vec<Vec<u32>> = Vec::with_capacity(groups.len());
    let mut boundary: Vec<(u32, u32)> = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        if let [t] = members[..] {
            loops.push(tris[t].to_vec());
            continue;
        }
        boundary.clear();
        for &t in members {
            for i in 0..3 {
                if group[adj[t][i] as usize] != g as u32 {
                    let v = tris[t];
                    boundary.push((v[i], v[(i + 1) % 3]));
                }
            }
        }
        boundary.sort_unstable();
        if boundary.is_empty() {
            return Err(flat_error());
        }
        if boundary.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(Error::Geometry(
                "convex hull: a merged face touches itself at a vertex (internal error)".into(),
            ));
        }
        let next = |a: u32| -> Result<u32> {
            boundary
                .binary_search_by(|e| e.0.cmp(&a))
                .map(|k| boundary[k].1)
                .map_err(|_| {
                    Error::Geometry(
                        "convex hull: merged face boundary is open (internal error)".into(),
                    )
                })
        };
        let start = boundary[0].0;
        let mut lp = vec![start];
        let mut a = next(start)?;
        while a != start {
            lp.push(a);
            a = next(a)?;
            if lp.len() > boundary.len() {
                break;
            }
        }
        if lp.len() != boundary.len() {
            return Err(Error::Geometry(
                "convex hull: merged face has more than one boundary (internal error)".into(),
            ));
        }
        loops.push(lp);
    }

    // Vertices on fewer than three faces lie inside a face or an edge: drop them.
    let mut faces_of = vec![0u32; points.len()];
    for lp in &loops {
        for &v in lp {
            faces_of[v as usize] += 1;
        }
    }
    for lp in &mut loops {
        lp.retain(|&v| faces_of[v as usize] >= 3);
        if lp.len() < 3 {
            return Err(flat_error());
        }
    }
    if loops.len() < 4 {
        return Err(flat_error());
    }
    let mut remap = vec![u32::MAX; points.len()];
    let mut input_index = Vec::new();
    for lp in &mut loops {
        for v in lp.iter_mut() {
            if remap[*v as usize] == u32::MAX {
                remap[*v as usize] = input_index.len() as u32;
                input_index.push(*v);
            }
            *v = remap[*v as usize];
        }
    }
    Ok(HullFaces {
        vertices: input_index.iter().map(|&i| p(i)).collect(),
        input_index,
        faces: loops,
    })
}
