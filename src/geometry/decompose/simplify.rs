//! A piece's hull cut down to a vertex budget, so that the walks over a hull tree's leaves
//! stay cheap: greedy insertion (start from the extreme points along 13 directions, then
//! add the hull vertex farthest outside the current hull until the budget is spent), then
//! the kept hull scaled about its centroid just enough to hold every dropped vertex again,
//! so the piece still covers every point it covered. [`Simplified::deviation`] says how
//! far the greedy hull fell short before the scaling (the largest height of a dropped
//! vertex above its face planes), which bounds how far the scaled hull reaches past the
//! piece's own.

use glam::DVec3;

use crate::Result;
use crate::geometry::ConvexPolytope;

/// A simplified piece.
#[derive(Clone, Debug)]
pub struct Simplified {
    /// The hull of the kept vertices.
    pub hull: ConvexPolytope,
    /// The largest height of a dropped vertex above the kept hull's face planes (0 when
    /// nothing was dropped).
    pub deviation: f64,
}

/// The hull of `points`, with at most `max_vertices` vertices (at least 4).
pub fn simplify(points: &[DVec3], max_vertices: usize) -> Result<Simplified> {
    let full = ConvexPolytope::from_points(points)?;
    let max_vertices = max_vertices.max(4);
    if full.num_vertices() <= max_vertices {
        return Ok(Simplified {
            hull: full,
            deviation: 0.0,
        });
    }
    let candidates = full.vertices();
    let mut kept: Vec<usize> = Vec::new();
    let keep = |kept: &mut Vec<usize>, i: usize| {
        if !kept.contains(&i) {
            kept.push(i);
        }
    };
    // Extremes along the axes and the cube's diagonals and edge midpoints' directions.
    let mut directions = vec![DVec3::X, DVec3::Y, DVec3::Z];
    for sy in [-1.0, 1.0] {
        for sz in [-1.0, 1.0] {
            directions.push(DVec3::new(1.0, sy, sz));
        }
    }
    for (a, b) in [
        (DVec3::X, DVec3::Y),
        (DVec3::Y, DVec3::Z),
        (DVec3::Z, DVec3::X),
    ] {
        directions.push(a + b);
        directions.push(a - b);
    }
    for d in directions {
        for s in [d, -d] {
            let (i, _) = full.support_brute(s);
            if kept.len() < max_vertices {
                keep(&mut kept, i as usize);
            }
        }
    }
    let mut hull = hull_of(candidates, &kept);
    loop {
        let (far, height) = match &hull {
            Some(h) => farthest_outside(h, candidates, &kept),
            // The extremes are coplanar (a flat piece would have failed above, so some
            // vertex is off their plane): add the vertex farthest from their plane.
            None => off_plane(candidates, &kept),
        };
        if let Some(h) = &hull
            && (kept.len() >= max_vertices || height <= 0.0)
        {
            return Ok(Simplified {
                hull: covering(h, candidates)?,
                deviation: height.max(0.0),
            });
        }
        kept.push(far);
        hull = hull_of(candidates, &kept);
    }
}

/// `hull` scaled about its centroid by the least factor that puts every point inside:
/// for face `f` (normal `n`, offset `d`, centroid `c` at height `h_f = d − n·c > 0` below
/// it) a point `p` is inside the scaled hull when `n·(p − c) ≤ s h_f`, so
/// `s = max(1, max n·(p − c) / h_f)`, grown by a few ulps against rounding.
fn covering(hull: &ConvexPolytope, points: &[DVec3]) -> Result<ConvexPolytope> {
    let c = hull.centroid();
    let (mut s, mut min_h) = (1.0f64, f64::INFINITY);
    for f in 0..hull.num_faces() {
        let n = hull.face_normal(f);
        let h = hull.face_offset(f) - n.dot(c);
        min_h = min_h.min(h);
        for p in points {
            s = s.max(n.dot(*p - c) / h);
        }
    }
    if s == 1.0 {
        return Ok(hull.clone());
    }
    // Rounding of c + (v − c) s is a few ulps of the coordinates: grow s past it.
    let s = s * (1.0 + 16.0 * f64::EPSILON) + 16.0 * f64::EPSILON * c.abs().max_element() / min_h;
    let scaled: Vec<DVec3> = hull.vertices().iter().map(|v| c + (*v - c) * s).collect();
    ConvexPolytope::from_points(&scaled)
}

fn hull_of(candidates: &[DVec3], kept: &[usize]) -> Option<ConvexPolytope> {
    let points: Vec<DVec3> = kept.iter().map(|&i| candidates[i]).collect();
    ConvexPolytope::from_points(&points).ok()
}

/// The candidate highest above `hull`'s face planes, and its height.
fn farthest_outside(hull: &ConvexPolytope, candidates: &[DVec3], kept: &[usize]) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, &p) in candidates.iter().enumerate() {
        if kept.contains(&i) {
            continue;
        }
        let h = (0..hull.num_faces())
            .map(|f| hull.face_normal(f).dot(p) - hull.face_offset(f))
            .fold(f64::NEG_INFINITY, f64::max);
        if h > best.1 {
            best = (i, h);
        }
    }
    best
}

/// The candidate farthest from the plane (or line) of the kept points.
fn off_plane(candidates: &[DVec3], kept: &[usize]) -> (usize, f64) {
    let p0 = candidates[kept[0]];
    let normal = kept
        .iter()
        .flat_map(|&i| kept.iter().map(move |&j| (i, j)))
        .map(|(i, j)| (candidates[i] - p0).cross(candidates[j] - p0))
        .max_by(|a, b| a.length_squared().total_cmp(&b.length_squared()))
        .unwrap_or(DVec3::ZERO);
    let mut best = (0, f64::NEG_INFINITY);
    for (i, &p) in candidates.iter().enumerate() {
        if kept.contains(&i) {
            continue;
        }
        let h = if normal == DVec3::ZERO {
            (p - p0).length()
        } else {
            (p - p0).dot(normal).abs() / normal.length()
        };
        if h > best.1 {
            best = (i, h);
        }
    }
    // Coplanar extremes are never the final answer: report a positive height.
    (best.0, best.1.max(f64::MIN_POSITIVE))
}
