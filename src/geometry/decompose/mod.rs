//! Convex decomposition of a closed triangle mesh into convex pieces, the leaves of a
//! hull tree (`geometry::hull_tree`).
//!
//! A mesh made of several connected components (an OBJ file of several objects, the way
//! collision proxies are often modelled) is decomposed component by component, and a
//! component that is itself convex (closed, genus 0, convex at every edge) is one piece,
//! exactly, whatever its vertex count: a body modelled from convex parts decomposes
//! exactly. The other components go to VHACD.
//!
//! The engine is parry3d-f64's VHACD (voxelize at `resolution`, split the voxels into parts
//! until each part's concavity is under `concavity`), and each part's hull is taken, by
//! our own hull, over the mesh's own triangles clipped to the part's voxels
//! (`compute_primitive_intersections`) and the corners of its surface voxels that lie in
//! the solid (the triangles alone hold only the surface: a part along a flat face was flat
//! and dropped, and the solid under it lay in no piece), so every point of the solid, the
//! mesh's vertices among them, lies in some piece. (The engine's own hulls of those points,
//! `compute_exact_convex_hulls`, drop a point within its tolerance of a face: a part of a
//! plate 1e-3 of its size thick lost two of its top corners as lying on its bottom face,
//! and half the plate's thickness at places was in no piece.) Each
//! piece is then cut to `max_piece_vertices` by [`simplify()`] (a hull of a subset of its
//! vertices; the largest shortfall is reported), so the walk at a leaf stays cheap.
//! VHACD's concavity is a measure of volume: a part may bridge a narrow pit or the gap
//! between two limbs by several percent of the mesh's size. So each piece's surface is then
//! measured against the mesh, and a piece that strays outside the solid by more than the
//! length tolerance `max_deviation` (relative to the mesh's box diagonal) is split
//! ([`refine`]) until none does.
//!
//! Input rules: the mesh must be closed and consistently oriented (an open mesh lets the
//! voxelization's flood fill leak inside, and the pieces would wrap only the surface): an
//! open or non-manifold mesh is a named error, never a silent shell. A self-intersecting
//! closed mesh is taken as the union of what it encloses (voxelization fills every voxel
//! inside any part of it). A piece whose points are coplanar (a part that only grazes a
//! flat stretch of the surface) has no volume and is dropped; its points lie on the
//! neighbouring pieces' faces, and the count is reported.
//!
//! Decomposition takes tenths of a second to seconds, so results are cached on disk
//! ([`cache`]); a second load of the same mesh with the same parameters reads the pieces
//! back and only rebuilds their hulls (milliseconds).

pub mod cache;
pub mod refine;
pub mod simplify;
mod surface;

use std::borrow::Cow;
use std::time::Instant;

use glam::DVec3;
use parry3d_f64::transformation::vhacd::{VHACD, VHACDParameters};
use parry3d_f64::transformation::voxelization::VoxelSet;

pub use cache::Cache;
pub use simplify::{Simplified, simplify};
use surface::Surface;

use crate::geometry::{ConvexPolytope, TriMesh};
use crate::{Error, Result, parallel};

/// The decomposition's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecomposeParams {
    /// Voxels along the mesh's longest side (8 to 512).
    pub resolution: u32,
    /// The concavity a part may keep, relative to the mesh's size (0 to 1).
    pub concavity: f64,
    /// Vertex budget of a piece's hull (at least 8).
    pub max_piece_vertices: usize,
    /// How far a piece's surface may stray outside the mesh's solid, relative to the
    /// mesh's box diagonal (0 to 1): pieces that stray further are split ([`refine`]).
    pub max_deviation: f64,
}

impl Default for DecomposeParams {
    fn default() -> Self {
        DecomposeParams {
            resolution: 64,
            concavity: 0.01,
            max_piece_vertices: 64,
            max_deviation: 0.02,
        }
    }
}

/// The most triangles a decomposition takes (voxelization's time and memory grow with the
/// triangle count).
pub const MAX_TRIANGLES: usize = 1 << 22;

impl DecomposeParams {
    /// Checks the ranges.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Geometry(format!("decomposition parameters: {m}")));
        if !(8..=512).contains(&self.resolution) {
            return bad(format!("resolution {} is outside 8..=512", self.resolution));
        }
        if !(self.concavity.is_finite() && self.concavity > 0.0 && self.concavity <= 1.0) {
            return bad(format!("concavity {} is outside (0, 1]", self.concavity));
        }
        if !(self.max_deviation.is_finite()
            && self.max_deviation > 0.0
            && self.max_deviation <= 1.0)
        {
            return bad(format!(
                "max_deviation {} is outside (0, 1]",
                self.max_deviation
            ));
        }
        if self.max_piece_vertices < 8 {
            return bad(format!(
                "max_piece_vertices {} is below 8",
                self.max_piece_vertices
            ));
        }
        Ok(())
    }
}

/// A decomposition: the pieces and where they came from.
#[derive(Clone, Debug)]
pub struct Decomposition {
    /// The convex pieces, in the mesh's frame.
    pub pieces: Vec<ConvexPolytope>,
    /// How they were obtained.
    pub origin: Origin,
}

/// Where a decomposition came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// Computed now.
    Computed {
        /// Wall time of the decomposition, seconds.
        seconds: f64,
        /// The largest shortfall of a simplified piece (see [`simplify()`]).
        simplify_deviation: f64,
        /// The largest distance of a piece's surface from the mesh where it strays
        /// outside the solid, as refinement measured it (at most `max_deviation` of the
        /// mesh's box diagonal unless its split budget ran out; see [`refine`]).
        deviation: f64,
        /// Coplanar pieces dropped.
        flat_dropped: usize,
    },
    /// Read from this cache file.
    Cached(std::path::PathBuf),
}

/// Holes up to this size (the box of a hole's vertices against the mesh's box, by their
/// diagonals) are filled before a decomposition: a scan's gaps (the Stanford bunny's five,
/// the largest 0.18 of its size), not an open box's missing side or a bowl's mouth.
pub const FILLED_HOLE_SIZE: f64 = 0.25;

/// `mesh` with its holes filled where each is at most [`FILLED_HOLE_SIZE`] of its size,
/// wound outward, and a line saying so; the mesh as it is otherwise (closed, or left for
/// [`check_mesh`] to name).
pub fn fill_small_holes(mesh: &TriMesh) -> (Cow<'_, TriMesh>, Option<String>) {
    let Some(holes) = mesh.holes().filter(|h| !h.is_empty()) else {
        return (Cow::Borrowed(mesh), None);
    };
    let largest = largest_hole(mesh, &holes);
    if largest > FILLED_HOLE_SIZE {
        return (Cow::Borrowed(mesh), None);
    }
    let edges: usize = holes.iter().map(Vec::len).sum();
    let mut filled = mesh.with_holes_filled(&holes);
    filled.orient();
    let line = format!(
        "filled {} hole{} ({edges} boundary edges, the largest {largest:.3} of the mesh's size)",
        holes.len(),
        if holes.len() == 1 { "" } else { "s" },
    );
    (Cow::Owned(filled), Some(line))
}

/// The largest of `holes` against `mesh`: the diagonals of their vertices' boxes over the
/// mesh's.
fn largest_hole(mesh: &TriMesh, holes: &[Vec<u32>]) -> f64 {
    let size = box_diagonal(&mesh.vertices);
    holes
        .iter()
        .map(|h| {
            box_diagonal(
                &h.iter()
                    .map(|&v| mesh.vertices[v as usize])
                    .collect::<Vec<_>>(),
            )
        })
        .fold(0.0, f64::max)
        / size
}

/// Checks that `mesh` can be decomposed: closed, consistently oriented, within the size
/// limit and the coordinates' range.
pub fn check_mesh(mesh: &TriMesh) -> Result<()> {
    // Named as such: an empty mesh was "no piece with volume (is the mesh flat?)".
    if mesh.triangles.is_empty() {
        return Err(Error::Geometry(format!(
            "the mesh has no triangles ({} vertices): a non-convex body needs a closed mesh",
            mesh.vertices.len()
        )));
    }
    crate::geometry::hull::check_range(&mesh.vertices, "the mesh's vertices")?;
    if mesh.triangles.len() > MAX_TRIANGLES {
        return Err(Error::Geometry(format!(
            "the mesh has {} triangles, more than the decomposition's limit of {MAX_TRIANGLES}",
            mesh.triangles.len()
        )));
    }
    let topo = mesh.topology();
    if topo.boundary_edges > 0 {
        let why = match mesh.holes() {
            Some(holes) => format!(
                "{} hole{}, the largest {:.3} of its size, where up to {FILLED_HOLE_SIZE} are \
                 filled",
                holes.len(),
                if holes.len() == 1 { "" } else { "s" },
                largest_hole(mesh, &holes)
            ),
            None => "not loops a filled hole could follow: an edge wound the same way twice, \
                     or a degenerate triangle"
                .into(),
        };
        return Err(Error::Geometry(format!(
            "the mesh is open ({} boundary edges, {why}): a convex decomposition needs a \
             closed mesh (close its holes, or use its convex hull)",
            topo.boundary_edges
        )));
    }
    if topo.repeated_directed_edges > 0 {
        return Err(Error::Geometry(format!(
            "the mesh is not a consistently oriented 2-manifold ({} directed edges repeated: \
             a triangle wound the wrong way, or more than two triangles on an edge): a \
             convex decomposition needs one",
            topo.repeated_directed_edges
        )));
    }
    Ok(())
}

/// A decomposition's pieces (vertex lists) and figures.
#[derive(Clone, Debug)]
pub struct Computed {
    /// The pieces' vertices.
    pub pieces: Vec<Vec<DVec3>>,
    /// The largest shortfall of a simplified piece (see [`simplify()`]).
    pub simplify_deviation: f64,
    /// The largest deviation of a piece from the mesh, as refinement measured it.
    pub deviation: f64,
    /// Coplanar pieces dropped.
    pub flat_dropped: usize,
}

/// Decomposes `mesh` (no cache).
pub fn decompose(mesh: &TriMesh, params: &DecomposeParams) -> Result<Computed> {
    params.check()?;
    let (mesh, _) = fill_small_holes(mesh);
    let mesh = mesh.as_ref();
    check_mesh(mesh)?;
    decompose_checked(mesh, params)
}

/// [`decompose`] of a mesh whose holes are filled and that `check_mesh` and the
/// parameters' check have passed.
fn decompose_checked(mesh: &TriMesh, params: &DecomposeParams) -> Result<Computed> {
    let tolerance = params.max_deviation * box_diagonal(&mesh.vertices);
    let mut out = Computed {
        pieces: Vec::new(),
        simplify_deviation: 0.0,
        deviation: 0.0,
        flat_dropped: 0,
    };
    // The components on the pool (a model of many closed parts), joined in their order;
    // the first one's error, in that order, is the answer's.
    let parts = parallel::on_threads(mesh.components(), |component| {
        if component.non_convex_reason().is_none()
            && let Ok(hull) = ConvexPolytope::from_points(&component.vertices)
        {
            return Ok(Computed {
                pieces: vec![hull.vertices().to_vec()],
                simplify_deviation: 0.0,
                deviation: 0.0,
                flat_dropped: 0,
            });
        }
        vhacd(&component, params, tolerance)
    });
    for part in parts {
        let part = part?;
        out.pieces.extend(part.pieces);
        out.simplify_deviation = out.simplify_deviation.max(part.simplify_deviation);
        out.deviation = out.deviation.max(part.deviation);
        out.flat_dropped += part.flat_dropped;
    }
    if out.pieces.is_empty() {
        return Err(Error::Geometry(
            "the convex decomposition found no piece with volume (is the mesh flat?)".into(),
        ));
    }
    Ok(out)
}

/// One closed component through VHACD, each part's hull simplified, then refined until
/// every piece is within `tolerance` of the mesh.
fn vhacd(mesh: &TriMesh, params: &DecomposeParams, tolerance: f64) -> Result<Computed> {
    let triangles: Vec<[u32; 3]> = mesh
        .triangles
        .iter()
        .copied()
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[2] != t[0])
        .collect();
    let vhacd = VHACDParameters {
        resolution: params.resolution,
        concavity: params.concavity,
        ..VHACDParameters::default()
    };
    // The engine's own tolerances are absolute: it sees the mesh scaled by the power of
    // two that brings its box's diagonal nearest 1 (exact, as is scaling its points
    // back), so a mesh decomposes alike at every scale.
    let scale = unit_scale(box_diagonal(&mesh.vertices));
    let vertices: Vec<DVec3> = mesh.vertices.iter().map(|v| *v * scale).collect();
    // A panic inside the engine becomes a named error, never a crash of the caller.
    let parts = std::panic::catch_unwind(|| {
        let v = VHACD::decompose(&vhacd, &vertices, &triangles, true);
        v.voxel_parts()
            .iter()
            .map(|part| {
                let clipped = part.compute_primitive_intersections(&vertices, &triangles);
                (distinct(clipped), surface_corners(part))
            })
            .collect::<Vec<_>>()
    })
    .map_err(|_| Error::Geometry("the convex decomposition (VHACD) failed on this mesh".into()))?;
    let solid = Surface::new(mesh);
    // Each part on the pool, the pieces in the parts' order.
    let simplified = parallel::on_threads(parts, |(clipped, corners)| {
        let clipped: Vec<DVec3> = clipped.iter().map(|p| *p / scale).collect();
        // The clipped triangles' hull (an empty or flat one holds no volume: the part's
        // corners in the solid may still make one).
        let hull = ConvexPolytope::from_points(&clipped).ok();
        let mut points = match &hull {
            Some(h) => h.vertices().to_vec(),
            None => clipped,
        };
        points.extend(corners_in_solid(hull.as_ref(), &corners, scale, &solid));
        simplify(&points, params.max_piece_vertices).ok()
    });
    let mut pieces = Vec::with_capacity(simplified.len());
    let (mut deviation, mut flat) = (0.0f64, 0);
    for s in simplified {
        match s {
            Some(s) => {
                deviation = deviation.max(s.deviation);
                pieces.push(s.hull.vertices().to_vec());
            }
            None => flat += 1,
        }
    }
    let (pieces, left, shortfall) =
        refine::refine_on(&solid, pieces, tolerance, params.max_piece_vertices);
    Ok(Computed {
        pieces,
        simplify_deviation: deviation.max(shortfall),
        deviation: left,
        flat_dropped: flat,
    })
}

/// `points` each once (by their bits), in their first order.
fn distinct(points: Vec<DVec3>) -> Vec<DVec3> {
    let mut seen = std::collections::HashSet::with_capacity(points.len());
    points
        .into_iter()
        .filter(|p| seen.insert(p.to_array().map(f64::to_bits)))
        .collect()
}

/// The corners of a VHACD part's surface voxels (its voxels on the mesh or on a cut
/// between parts), each once, in the engine's coordinates.
fn surface_corners(part: &VoxelSet) -> Vec<DVec3> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for voxel in part.voxels().iter().filter(|v| v.is_on_surface) {
        for k in 0..8 {
            let shift = glam::I64Vec3::new(k & 1, (k >> 1) & 1, (k >> 2) & 1) * 2 - 1;
            let key = voxel.coords * 2 + shift;
            if seen.insert(key) {
                out.push(part.origin + key.as_dvec3() * (part.scale / 2.0));
            }
        }
    }
    out
}

/// The part's surface-voxel corners (`corners`, in the engine's coordinates, which are the
/// mesh's times `scale`) that lie in the closed solid and outside the hull of `points`
/// (the part's hull over the mesh's triangles clipped to its voxels), in the mesh's
/// coordinates. That hull holds only the surface's points: a part whose voxels meet the
/// mesh on one side alone (a layer of voxels along a flat face) had a flat hull, dropped,
/// and the solid under its voxels was in no piece. With the corners in the solid its hull
/// holds what its voxels hold of the solid.
fn corners_in_solid(
    hull: Option<&ConvexPolytope>,
    corners: &[DVec3],
    scale: f64,
    solid: &Surface<'_>,
) -> Vec<DVec3> {
    let held = |x: DVec3| {
        hull.is_some_and(|h| {
            (0..h.num_faces()).all(|f| h.face_normal(f).dot(x) <= h.face_offset(f))
        })
    };
    corners
        .iter()
        .map(|c| *c / scale)
        .filter(|&c| !held(c) && solid.in_solid(c))
        .collect()
}

/// The diagonal of the points' box (infinite for no points).
fn box_diagonal(points: &[DVec3]) -> f64 {
    let (lo, hi) = points
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    (hi - lo).length()
}

/// The power of two that brings `diagonal` nearest 1 (1 for no extent).
fn unit_scale(diagonal: f64) -> f64 {
    if !(diagonal.is_finite() && diagonal > 0.0) {
        return 1.0;
    }
    2f64.powi(-(diagonal.log2().round() as i32))
}

/// The decomposition of `mesh`, from `cache` when it holds one, else computed (and
/// stored). `progress` hears one line before a computation and one after it (and one
/// first when it filled small holes).
pub fn load(
    mesh: &TriMesh,
    params: &DecomposeParams,
    cache: &Cache,
    progress: &mut dyn FnMut(&str),
) -> Result<Decomposition> {
    params.check()?;
    let (mesh, filled) = fill_small_holes(mesh);
    let mesh = mesh.as_ref();
    check_mesh(mesh)?;
    if let Some(line) = filled {
        progress(&line);
    }
    let key = cache::key(mesh, params);
    if let Some(points) = cache.load(key)
        && let Ok(pieces) = points
            .iter()
            .map(|p| ConvexPolytope::from_points(p))
            .collect::<Result<Vec<_>>>()
        && !pieces.is_empty()
    {
        return Ok(Decomposition {
            pieces,
            origin: Origin::Cached(cache.file(key).unwrap_or_default()),
        });
    }
    progress(&format!(
        "decomposing a {}-triangle mesh into convex pieces (resolution {}, concavity {})",
        mesh.triangles.len(),
        params.resolution,
        params.concavity
    ));
    let start = Instant::now();
    let Computed {
        pieces: points,
        simplify_deviation,
        deviation,
        flat_dropped,
    } = decompose_checked(mesh, params)?;
    let pieces = points
        .iter()
        .map(|p| ConvexPolytope::from_points(p))
        .collect::<Result<Vec<_>>>()?;
    let seconds = start.elapsed().as_secs_f64();
    let stored = match cache.store(key, &points) {
        Ok(Some(path)) => format!(", cached in {}", path.display()),
        Ok(None) => String::new(),
        Err(e) => format!(", not cached ({e})"),
    };
    // The deviation is refinement's bound, proved over every piece's whole surface (it
    // reads as the tolerance itself: cells are cut only until their bound is within it).
    let within = if deviation <= params.max_deviation * box_diagonal(&mesh.vertices) {
        format!(
            "proved within {deviation:.3e} of the mesh (max_deviation {} of its size)",
            params.max_deviation
        )
    } else {
        format!(
            "within {deviation:.3e} of the mesh at worst found, past max_deviation {} of its \
             size: the split budget ran out",
            params.max_deviation
        )
    };
    progress(&format!(
        "decomposed into {} pieces in {seconds:.2} s, their surfaces {within}{stored}",
        pieces.len()
    ));
    Ok(Decomposition {
        pieces,
        origin: Origin::Computed {
            seconds,
            simplify_deviation,
            deviation,
            flat_dropped,
        },
    })
}

/// Pieces as their coordinates' bits, for tests that hold two ways of making them equal.
#[cfg(test)]
pub(crate) fn piece_bits(pieces: &[Vec<DVec3>]) -> Vec<Vec<[u64; 3]>> {
    pieces
        .iter()
        .map(|q| q.iter().map(|v| v.to_array().map(f64::to_bits)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::generators::{bumpy_sphere, icosphere_mesh, torus};

    /// A model of several closed parts (a torus, a bumpy sphere and a ball, apart) has its
    /// parts decomposed on the pool, and its pieces are, bit for bit and in order, those of
    /// its components decomposed one after another at the model's tolerance.
    #[test]
    fn components_decomposed_on_the_pool_are_those_one_by_one() {
        let parts = [
            (torus(1.0, 0.3, 32, 16).unwrap(), DVec3::ZERO),
            (
                bumpy_sphere(1.0, 2, 0.3, 5.0).unwrap(),
                DVec3::new(4.0, 0.0, 0.0),
            ),
            (icosphere_mesh(0.5, 1).unwrap(), DVec3::new(-4.0, 0.0, 0.0)),
        ];
        let (mut vertices, mut triangles) = (Vec::new(), Vec::new());
        for (mesh, at) in &parts {
            let base = vertices.len() as u32;
            vertices.extend(mesh.vertices.iter().map(|v| *v + *at));
            triangles.extend(mesh.triangles.iter().map(|t| t.map(|i| i + base)));
        }
        let model = TriMesh::new(vertices, triangles).unwrap();
        let params = DecomposeParams::default();
        let pooled = decompose(&model, &params).unwrap();
        let tolerance = params.max_deviation * box_diagonal(&model.vertices);
        let (mut pieces, mut deviation) = (Vec::new(), 0.0f64);
        let components = model.components();
        assert_eq!(components.len(), 3);
        for c in &components {
            match ConvexPolytope::from_points(&c.vertices) {
                Ok(hull) if c.non_convex_reason().is_none() => {
                    pieces.push(hull.vertices().to_vec());
                }
                _ => {
                    let part = vhacd(c, &params, tolerance).unwrap();
                    deviation = deviation.max(part.deviation);
                    pieces.extend(part.pieces);
                }
            }
        }
        assert!(pieces.len() > 3, "{} pieces", pieces.len());
        assert_eq!(piece_bits(&pooled.pieces), piece_bits(&pieces));
        assert_eq!(pooled.deviation.to_bits(), deviation.to_bits());
    }
}
