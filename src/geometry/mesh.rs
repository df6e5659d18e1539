//! Triangle meshes and OBJ files (through tobj). A mesh that is closed, consistently
//! oriented, of genus 0 and convex at every edge becomes a [`ConvexPolytope`]; anything
//! else is kept as a [`TriMesh`] (non-convex bodies, later decomposed into a convex-hull
//! tree). A broken file is an error naming the file and, where it can be found, the line.

use std::collections::HashMap;
use std::path::Path;

use glam::DVec3;

use super::ConvexPolytope;
use super::polytope::CONVEXITY_TOL_REL;
use crate::bodies::MAX_COORDINATE;
use crate::{Error, Result};

/// A triangle mesh in f64.
#[derive(Clone, Debug)]
pub struct TriMesh {
    /// Vertex positions.
    pub vertices: Vec<DVec3>,
    /// Triangles as vertex indices (counter-clockwise seen from outside when closed).
    pub triangles: Vec<[u32; 3]>,
}

/// What an OBJ file holds.
#[derive(Clone, Debug)]
pub enum MeshShape {
    /// A convex closed mesh, as a polytope.
    Convex(Box<ConvexPolytope>),
    /// Anything else, kept as triangles, with the reason it is not convex.
    NonConvex {
        /// The mesh.
        mesh: TriMesh,
        /// Why it is not used as a polytope (open, non-manifold, concave edge, ...).
        reason: String,
    },
}

/// Closedness and orientation facts about a mesh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshTopology {
    /// Edges with a triangle on one side only.
    pub boundary_edges: usize,
    /// Directed edges used by more than one triangle (inconsistent orientation or
    /// more than two triangles on an edge).
    pub repeated_directed_edges: usize,
    /// Triangles with a repeated vertex index.
    pub degenerate_triangles: usize,
    /// V − E + F over the vertices that triangles use.
    pub euler_characteristic: i64,
}

impl TriMesh {
    /// A mesh; checks indices and finiteness.
    pub fn new(vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> Result<Self> {
        let mesh = Self {
            vertices,
            triangles,
        };
        mesh.check()?;
        Ok(mesh)
    }

    /// [`Self::new`]'s rules, for a mesh built from its fields (one whose triangle indexed
    /// past its vertices panicked in the decomposition): finite vertices, and triangles
    /// that index them.
    pub fn check(&self) -> Result<()> {
        let vertices = &self.vertices;
        if let Some(i) = vertices.iter().position(|v| !v.is_finite()) {
            return Err(Error::Geometry(format!(
                "mesh vertex {i} is not finite: {:?}",
                vertices[i]
            )));
        }
        if let Some((t, tri)) = self
            .triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&i| i as usize >= vertices.len()))
        {
            return Err(Error::Geometry(format!(
                "mesh triangle {t} {tri:?} indexes past the {} vertices",
                vertices.len()
            )));
        }
        Ok(())
    }

    /// This mesh with the vertices that repeat another's position welded into it, where the
    /// mesh is open as written and welding closes it (a mesh written as separate triangles,
    /// each with its own three corners, as many exporters write one: it read as 36
    /// boundary edges and was refused as open); otherwise the mesh as it is, so a mesh open
    /// either way keeps the boundary its file gives it.
    pub fn welded_if_it_closes(self) -> TriMesh {
        // Repeated positions first, one hash a vertex: most meshes have none, and then pay
        // for no pass over their edges (every load took one, three hashes a triangle).
        let mut first: HashMap<[u64; 3], u32> = HashMap::with_capacity(self.vertices.len());
        let mut vertices = Vec::new();
        let index: Vec<u32> = self
            .vertices
            .iter()
            .map(|v| {
                *first
                    .entry(v.to_array().map(f64::to_bits))
                    .or_insert_with(|| {
                        vertices.push(*v);
                        vertices.len() as u32 - 1
                    })
            })
            .collect();
        if vertices.len() == self.vertices.len() || self.topology().boundary_edges == 0 {
            return self;
        }
        let triangles: Vec<[u32; 3]> = self
            .triangles
            .iter()
            .map(|t| t.map(|i| index[i as usize]))
            .collect();
        let welded = TriMesh {
            vertices,
            triangles,
        };
        let t = welded.topology();
        if t.boundary_edges == 0 && t.degenerate_triangles == 0 {
            welded
        } else {
            self
        }
    }

    /// The largest |coordinate| of a vertex (0 for none): the mesh's size about its origin.
    pub fn largest_coordinate(&self) -> f64 {
        self.vertices
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs().max_element()))
    }

    /// The largest side of the vertices' box (0 for none).
    pub fn extent(&self) -> f64 {
        let Some(&first) = self.vertices.first() else {
            return 0.0;
        };
        let (lo, hi) = self
            .vertices
            .iter()
            .fold((first, first), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        (hi - lo).max_element()
    }

    /// The factor `s` when this mesh is `base` scaled about its origin (the same triangles,
    /// each vertex `s` times the base's to within 1e-12 of the mesh's size, as a scene's
    /// scale variants are); `None` otherwise.
    pub fn scale_from(&self, base: &TriMesh) -> Option<f64> {
        if self.triangles != base.triangles || self.vertices.len() != base.vertices.len() {
            return None;
        }
        let (here, there) = (self.largest_coordinate(), base.largest_coordinate());
        if !(here > 0.0 && there > 0.0) {
            return None;
        }
        let (s, tol) = (here / there, 1e-12 * here);
        let scaled = |(v, w): (&DVec3, &DVec3)| (*v - *w * s).abs().max_element() <= tol;
        self.vertices
            .iter()
            .zip(&base.vertices)
            .all(scaled)
            .then_some(s)
    }

    /// Boundary edges, repeated directed edges, degenerate triangles, Euler characteristic.
    pub fn topology(&self) -> MeshTopology {
        let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
        let mut degenerate = 0;
        for t in &self.triangles {
            if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
                degenerate += 1;
                continue;
            }
            for i in 0..3 {
                *directed.entry((t[i], t[(i + 1) % 3])).or_default() += 1;
            }
        }
        let repeated = directed.values().filter(|&&c| c > 1).count();
        // An edge with a triangle on one side only: used once, whichever way (a closed
        // mesh with a triangle wound the wrong way has no such edge, only repeats).
        let mut undirected: Vec<(u32, u32)> = directed
            .iter()
            .flat_map(|(&(a, b), &count)| std::iter::repeat_n((a.min(b), a.max(b)), count as usize))
            .collect();
        undirected.sort_unstable();
        let boundary = undirected
            .chunk_by(|x, y| x == y)
            .filter(|uses| uses.len() == 1)
            .count();
        undirected.dedup();
        let mut used: Vec<u32> = directed.keys().map(|&(a, _)| a).collect();
        used.sort_unstable();
        used.dedup();
        let faces = self.triangles.len() - degenerate;
        MeshTopology {
            boundary_edges: boundary,
            repeated_directed_edges: repeated,
            degenerate_triangles: degenerate,
            euler_characteristic: used.len() as i64 - undirected.len() as i64 + faces as i64,
        }
    }

    /// Winds every triangle of a closed mesh the same way, outward: across each edge the
    /// neighbour's winding is made to agree (a closed, orientable surface leaves one choice
    /// per connected piece), and a piece whose enclosed volume comes out negative is turned
    /// inside out. Returns how many triangles were turned. A mesh that is not a closed
    /// 2-manifold (an edge with other than two triangles) or not orientable is left as it
    /// is, for the decomposition's checks to name.
    pub fn orient(&mut self) -> usize {
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        let mut uses: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        for (t, tri) in self.triangles.iter().enumerate() {
            if tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0] {
                return 0;
            }
            for i in 0..3 {
                uses.entry(key(tri[i], tri[(i + 1) % 3]))
                    .or_default()
                    .push(t);
            }
        }
        if uses.values().any(|u| u.len() != 2) {
            return 0;
        }
        // Whether triangle t runs a -> b (as given).
        let runs =
            |tri: &[u32; 3], a: u32, b: u32| (0..3).any(|i| tri[i] == a && tri[(i + 1) % 3] == b);
        let mut flip: Vec<Option<bool>> = vec![None; self.triangles.len()];
        let mut pieces: Vec<Vec<usize>> = Vec::new();
        for seed in 0..self.triangles.len() {
            if flip[seed].is_some() {
                continue;
            }
            flip[seed] = Some(false);
            let mut piece = vec![seed];
            let mut k = 0;
            while k < piece.len() {
                let t = piece[k];
                k += 1;
                let tri = self.triangles[t];
                let turned = flip[t] == Some(true);
                for i in 0..3 {
                    // The edge as t runs it once turned.
                    let (a, b) = if turned {
                        (tri[(i + 1) % 3], tri[i])
                    } else {
                        (tri[i], tri[(i + 1) % 3])
                    };
                    let other = uses[&key(a, b)]
                        .iter()
                        .copied()
                        .find(|&u| u != t)
                        .unwrap_or(t);
                    // Agreeing neighbours run the shared edge the other way.
                    let want = runs(&self.triangles[other], a, b);
                    match flip[other] {
                        None => {
                            flip[other] = Some(want);
                            piece.push(other);
                        }
                        Some(f) if f != want => return 0,
                        Some(_) => {}
                    }
                }
            }
            pieces.push(piece);
        }
        let mut turned = 0;
        for piece in pieces {
            let volume: f64 = piece
                .iter()
                .map(|&t| {
                    let [a, b, c] = self.triangles[t].map(|v| self.vertices[v as usize]);
                    let v = a.dot(b.cross(c));
                    if flip[t] == Some(true) { -v } else { v }
                })
                .sum();
            let outward = volume >= 0.0;
            for t in piece {
                if (flip[t] == Some(true)) == outward {
                    self.triangles[t].swap(1, 2);
                    turned += 1;
                }
            }
        }
        turned
    }

    /// A cavity, as the triangles are wound: a connected component enclosed by another and
    /// wound the other way (a hollow body: the inner surface faces into the hollow). The
    /// message names both. Hull trees are solid, and a component is decomposed on its own,
    /// outward, so the hollow would be filled: a named error, never a silently solid body.
    /// A component inside another wound the same way (a solid in a solid) is not one.
    /// Enclosure is read from one vertex's winding number about the other component (the
    /// sum of its triangles' solid angles: 1 inside a closed surface, 0 outside), tried
    /// only where the boxes nest.
    pub fn cavity(&self) -> Option<String> {
        let parts = self.components();
        if parts.len() < 2 {
            return None;
        }
        let boxes: Vec<(DVec3, DVec3)> = parts
            .iter()
            .map(|m| {
                let lo = m.vertices.iter().fold(DVec3::INFINITY, |a, v| a.min(*v));
                let hi = m
                    .vertices
                    .iter()
                    .fold(DVec3::NEG_INFINITY, |a, v| a.max(*v));
                (lo, hi)
            })
            .collect();
        let volume = |m: &TriMesh| -> f64 {
            let c = m.vertices[0];
            m.triangles
                .iter()
                .map(|t| {
                    let [a, b, d] = t.map(|v| m.vertices[v as usize] - c);
                    a.dot(b.cross(d))
                })
                .sum()
        };
        let volumes: Vec<f64> = parts.iter().map(volume).collect();
        for (i, inner) in parts.iter().enumerate() {
            for (j, outer) in parts.iter().enumerate() {
                let nested =
                    boxes[j].0.cmple(boxes[i].0).all() && boxes[i].1.cmple(boxes[j].1).all();
                if i == j || !nested || volumes[i].signum() == volumes[j].signum() {
                    continue;
                }
                if winding_number(outer, inner.vertices[0]).abs() > 0.5 {
                    return Some(format!(
                        "a cavity: its connected piece {} ({} triangles) lies inside piece {} \
                         ({} triangles) and is wound the other way, a hollow body; hull trees \
                         are solid, so model the walls as closed pieces of their own",
                        i + 1,
                        inner.triangles.len(),
                        j + 1,
                        outer.triangles.len()
                    ));
                }
            }
        }
        None
    }

    /// The connected components (triangles sharing vertex indices), each as its own mesh
    /// with only the vertices it uses, in order of their first triangle.
    pub fn components(&self) -> Vec<TriMesh> {
        let mut parent: Vec<u32> = (0..self.vertices.len() as u32).collect();
        fn root(parent: &mut [u32], mut v: u32) -> u32 {
            while parent[v as usize] != v {
                parent[v as usize] = parent[parent[v as usize] as usize];
                v = parent[v as usize];
            }
            v
        }
        for t in &self.triangles {
            for k in 1..3 {
                let (a, b) = (root(&mut parent, t[0]), root(&mut parent, t[k]));
                parent[a.max(b) as usize] = a.min(b);
            }
        }
        let mut index_of_root: HashMap<u32, usize> = HashMap::new();
        let mut parts: Vec<(Vec<u32>, Vec<[u32; 3]>)> = Vec::new();
        for t in &self.triangles {
            let r = root(&mut parent, t[0]);
            let k = *index_of_root.entry(r).or_insert_with(|| {
                parts.push((Vec::new(), Vec::new()));
                parts.len() - 1
            });
            parts[k].1.push(*t);
        }
        let mut local = vec![u32::MAX; self.vertices.len()];
        parts
            .into_iter()
            .map(|(mut used, tris)| {
                let tris = tris
                    .iter()
                    .map(|t| {
                        t.map(|v| {
                            if local[v as usize] == u32::MAX {
                                local[v as usize] = used.len() as u32;
                                used.push(v);
                            }
                            local[v as usize]
                        })
                    })
                    .collect();
                TriMesh {
                    vertices: used.iter().map(|&v| self.vertices[v as usize]).collect(),
                    triangles: tris,
                }
            })
            .collect()
    }

    /// The holes of a consistently wound surface with a boundary: each a loop of vertices
    /// running the other way from the triangles along it (so that a triangle filling the
    /// hole is wound like its neighbours). Empty for a closed mesh; `None` where the
    /// boundary is not such loops (a directed edge used twice, a degenerate triangle).
    pub fn holes(&self) -> Option<Vec<Vec<u32>>> {
        let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
        for t in &self.triangles {
            if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
                return None;
            }
            for i in 0..3 {
                let uses = directed.entry((t[i], t[(i + 1) % 3])).or_default();
                *uses += 1;
                if *uses > 1 {
                    return None;
                }
            }
        }
        // A hole's edges: b → a for each edge a → b with no triangle the other way.
        let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut edges = 0usize;
        for &(a, b) in directed.keys() {
            if !directed.contains_key(&(b, a)) {
                out.entry(b).or_default().push(a);
                edges += 1;
            }
        }
        // In the order of their ends, not of the map's iteration, which differs from run
        // to run: where a boundary passes a vertex twice (a pinch), the walk takes the
        // same way round every time, so the same file reads as the same holes (an open
        // teapot read as 20 to 29 holes, and whether a mesh's holes were small enough to
        // fill could change between runs).
        for ends in out.values_mut() {
            ends.sort_unstable();
        }
        let mut starts: Vec<u32> = out.keys().copied().collect();
        starts.sort_unstable();
        let mut loops = Vec::new();
        let mut taken = 0usize;
        for start in starts {
            while out.get(&start).is_some_and(|next| !next.is_empty()) {
                let mut hole = vec![start];
                let mut at = start;
                loop {
                    // Every vertex of a consistently wound boundary has as many hole edges
                    // in as out: the walk ends back at its start.
                    let next = out.get_mut(&at)?.pop()?;
                    taken += 1;
                    if next == start {
                        break;
                    }
                    hole.push(next);
                    at = next;
                }
                loops.push(hole);
            }
        }
        (taken == edges).then_some(loops)
    }

    /// The mesh with `holes` (from [`Self::holes`]) filled: a hole of three vertices by
    /// one triangle, a larger one by a fan about its vertices' mean, each triangle wound
    /// like the ones beside it.
    pub fn with_holes_filled(&self, holes: &[Vec<u32>]) -> TriMesh {
        let mut filled = self.clone();
        for hole in holes {
            if let [a, b, c] = hole[..] {
                filled.triangles.push([a, b, c]);
                continue;
            }
            let sum = hole
                .iter()
                .fold(DVec3::ZERO, |s, &v| s + self.vertices[v as usize]);
            let middle = filled.vertices.len() as u32;
            filled.vertices.push(sum / hole.len() as f64);
            for (k, &v) in hole.iter().enumerate() {
                filled
                    .triangles
                    .push([v, hole[(k + 1) % hole.len()], middle]);
            }
        }
        filled
    }

    /// Why this mesh is not the boundary of a convex body, or `None` when it is.
    pub fn non_convex_reason(&self) -> Option<String> {
        let topo = self.topology();
        if topo.boundary_edges > 0 {
            return Some(format!("open: {} boundary edges", topo.boundary_edges));
        }
        if topo.repeated_directed_edges > 0 {
            return Some(format!(
                "not a consistently oriented 2-manifold: {} directed edges repeated",
                topo.repeated_directed_edges
            ));
        }
        if topo.euler_characteristic != 2 {
            return Some(format!(
                "closed but not a sphere: V - E + F = {} (genus > 0 or non-manifold)",
                topo.euler_characteristic
            ));
        }
        // Relative to the mesh's own size, and above the rounding of its coordinates: a
        // tolerance relative to the coordinates alone let an L 2 wide at 1e9 from the
        // file's origin pass as convex (its notch 1 deep against a tolerance of 10).
        let tol = (CONVEXITY_TOL_REL * self.extent())
            .max(64.0 * f64::EPSILON * self.largest_coordinate())
            .max(f64::MIN_POSITIVE);
        let mut opposite: HashMap<(u32, u32), u32> = HashMap::new();
        for t in &self.triangles {
            for i in 0..3 {
                opposite.insert((t[i], t[(i + 1) % 3]), t[(i + 2) % 3]);
            }
        }
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| self.vertices[i as usize]);
            let n = (b - a).cross(c - a);
            let len = n.length();
            if len == 0.0 {
                continue;
            }
            let n = n / len;
            for i in 0..3 {
                let far = opposite[&(t[(i + 1) % 3], t[i])];
                let h = n.dot(self.vertices[far as usize] - a);
                if h > tol {
                    return Some(format!(
                        "concave at edge ({}, {}): vertex {far} is {h:e} above triangle {t:?}",
                        t[i],
                        t[(i + 1) % 3]
                    ));
                }
            }
        }
        None
    }

    /// The polytope this mesh bounds, or why it does not bound one.
    pub fn classify(self) -> Result<MeshShape> {
        match self.non_convex_reason() {
            Some(reason) => Ok(MeshShape::NonConvex { mesh: self, reason }),
            None => Ok(MeshShape::Convex(Box::new(ConvexPolytope::from_points(
                &self.vertices,
            )?))),
        }
    }
}

/// How many times the closed surface `m` winds about `x` (Van Oosterom and Strackee's
/// solid angle of each triangle, summed over 4π): ±1 inside, 0 outside, the sign the
/// winding's.
fn winding_number(m: &TriMesh, x: DVec3) -> f64 {
    let total: f64 = m
        .triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| m.vertices[v as usize] - x);
            let (la, lb, lc) = (a.length(), b.length(), c.length());
            let det = a.dot(b.cross(c));
            let div = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
            2.0 * det.atan2(div)
        })
        .sum();
    total / (4.0 * std::f64::consts::PI)
}

/// Loads every object of an OBJ file into one mesh (faces triangulated), its triangles
/// wound outward ([`TriMesh::orient`]).
pub fn load_obj(path: &Path) -> Result<TriMesh> {
    let mut mesh = read_obj(path)?;
    // Files often wind a few triangles (or all of them) the other way.
    mesh.orient();
    Ok(mesh)
}

/// Every vertex an OBJ file lists (`v x y z`, with any weight or colour after them), in
/// order, whatever its faces use: the points of an `obj_hull` (a mesh's loader keeps only
/// the vertices its faces name, and a file of vertices alone has no mesh). The file must
/// still be a sound OBJ file: a bad vertex line, or a face line of fewer than three
/// corners or naming a vertex not defined before it, is named by its line.
pub fn load_obj_points(path: &Path) -> Result<Vec<DVec3>> {
    let mesh_error = |message: String| Error::Mesh {
        path: path.to_owned(),
        message,
    };
    let text = read_text(path)?;
    let points = vertex_lines(&text).map_err(mesh_error)?;
    // Faces are not used, but a broken one is a broken file (it was passed over).
    if let Some(problem) = locate_problem(&text) {
        return Err(mesh_error(problem));
    }
    if points.is_empty() {
        return Err(mesh_error("no vertices in the file".into()));
    }
    if let Some(message) = super::far_from_origin(&points) {
        return Err(mesh_error(message));
    }
    Ok(points)
}

/// The `v` lines' points, in order; a line that does not give three numbers, finite and
/// within [`MAX_COORDINATE`], is named by its line (a coordinate past it was named by its
/// place among the points, counted from 0 or 1 as the loader went).
fn vertex_lines(text: &str) -> std::result::Result<Vec<DVec3>, String> {
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        if words.next() != Some("v") {
            continue;
        }
        let parsed: Vec<f64> = words.take(3).map_while(|w| w.parse().ok()).collect();
        let (line_no, line) = (i + 1, line.trim());
        let &[x, y, z] = &parsed[..] else {
            return Err(format!(
                "line {line_no}: bad vertex `{line}`: it needs three finite numbers"
            ));
        };
        let p = DVec3::new(x, y, z);
        if !p.is_finite() {
            return Err(format!("line {line_no}: vertex `{line}` is not finite"));
        }
        if p.abs().max_element() > MAX_COORDINATE {
            return Err(format!(
                "line {line_no}: vertex `{line}` lies past ±{MAX_COORDINATE:e}, the largest \
                 coordinate a body may have"
            ));
        }
        points.push(p);
    }
    Ok(points)
}

/// An OBJ file's text, an I/O error naming the file. Its geometry lines (`v`, `vt`, `vn`,
/// `f`, `l`, `p`) must be UTF-8 (a line that is not is named); any other line (a comment,
/// an object's or a material's name, as exporters write them in Latin-1) is read with
/// its bytes that are not UTF-8 replaced.
fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut vertex_lines = 0;
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                let first = line
                    .split(|b| b.is_ascii_whitespace())
                    .find(|w| !w.is_empty());
                let geometry = matches!(first, Some(b"v" | b"vt" | b"vn" | b"f" | b"l" | b"p"));
                vertex_lines += usize::from(first == Some(b"v"));
                if geometry && std::str::from_utf8(line).is_err() {
                    return Err(Error::Mesh {
                        path: path.to_owned(),
                        message: format!("line {}: not UTF-8 text (is this an OBJ file?)", i + 1),
                    });
                }
            }
            if vertex_lines == 0 {
                return Err(Error::Mesh {
                    path: path.to_owned(),
                    message: "not UTF-8 text, and no vertex line: is this an OBJ file?".into(),
                });
            }
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }
}

/// Every object of an OBJ file as one mesh, its triangles wound as the file winds them.
fn read_obj(path: &Path) -> Result<TriMesh> {
    let mesh_error = |message: String| Error::Mesh {
        path: path.to_owned(),
        message,
    };
    let text = read_text(path)?;
    // Every vertex line, with its line number (tobj's own errors name none, and it drops
    // the vertices no face uses).
    vertex_lines(&text).map_err(mesh_error)?;
    let options = tobj::LoadOptions {
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // Materials are irrelevant to collision: a missing .mtl file is not an error.
    let (models, _materials) =
        tobj::load_obj_buf(&mut text.as_bytes(), &options, |_| Ok(Default::default()))
            .map_err(|e| mesh_error(locate_problem(&text).unwrap_or_else(|| format!("{e}"))))?;
    // tobj skips a face of fewer than three corners without a word.
    if let Some((i, l)) = text.lines().enumerate().find(|(_, l)| {
        let mut words = l.split_whitespace();
        words.next() == Some("f") && words.count() < 3
    }) {
        return Err(mesh_error(format!(
            "line {}: a face needs 3 vertices: `{}`",
            i + 1,
            l.trim()
        )));
    }
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for model in &models {
        let base = vertices.len() as u32;
        let p = &model.mesh.positions;
        vertices.extend(p.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2])));
        for t in model.mesh.indices.chunks_exact(3) {
            triangles.push([base + t[0], base + t[1], base + t[2]]);
        }
    }
    if vertices.is_empty() || triangles.is_empty() {
        // tobj drops the positions of a file without faces: ask the text which is missing.
        let has_vertices = text.lines().any(|l| l.trim_start().starts_with("v "));
        return Err(mesh_error(format!(
            "no {} in the file",
            if has_vertices { "faces" } else { "vertices" }
        )));
    }
    if let Some(message) = super::far_from_origin(&vertices) {
        return Err(mesh_error(message));
    }
    let mesh = TriMesh::new(vertices, triangles).map_err(|e| mesh_error(e.to_string()))?;
    Ok(mesh.welded_if_it_closes())
}

/// Loads an OBJ file and classifies it as convex or not. A hollow body (a piece inside
/// another, wound the other way) is a named error ([`TriMesh::cavity`]).
pub fn load_obj_shape(path: &Path) -> Result<MeshShape> {
    let mut mesh = read_obj(path)?;
    if let Some(message) = mesh.cavity() {
        return Err(Error::Mesh {
            path: path.to_owned(),
            message,
        });
    }
    mesh.orient();
    mesh.classify().map_err(|e| Error::Mesh {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Finds the first line tobj would reject, for a message that names it: a bad vertex, a
/// face of fewer than three corners, or a corner whose vertex, texture coordinate or
/// normal index is not one defined before it.
fn locate_problem(text: &str) -> Option<String> {
    // Vertices, texture coordinates and normals defined so far.
    let mut defined = [0usize; 3];
    let names = [
        ("vertex", "vertices"),
        ("texture coordinate", "texture coordinates"),
        ("normal", "normals"),
    ];
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                defined[0] += 1;
                let coords: Vec<&str> = words.collect();
                if coords.len() < 3 || coords.iter().take(3).any(|w| w.parse::<f64>().is_err()) {
                    return Some(format!("line {line_no}: bad vertex `{}`", line.trim()));
                }
            }
            Some("vt") => defined[1] += 1,
            Some("vn") => defined[2] += 1,
            Some("f") => {
                let refs: Vec<&str> = words.collect();
                if refs.len() < 3 {
                    return Some(format!(
                        "line {line_no}: a face needs 3 vertices: `{}`",
                        line.trim()
                    ));
                }
                for r in refs {
                    // `v`, `v/t`, `v//n` or `v/t/n`: an empty part is no index.
                    for (k, part) in r.split('/').take(3).enumerate() {
                        if k > 0 && part.is_empty() {
                            continue;
                        }
                        let n = defined[k];
                        let (one, many) = names[k];
                        match part.parse::<i64>() {
                            Ok(x) if x > 0 && x as usize <= n => {}
                            Ok(x) if x < 0 && x.unsigned_abs() as usize <= n => {}
                            Ok(0) => {
                                return Some(format!(
                                    "line {line_no}: face refers to {one} 0, but OBJ indices \
                                     start at 1 (or count back from -1)"
                                ));
                            }
                            Ok(_) => {
                                return Some(format!(
                                    "line {line_no}: face refers to {one} `{part}`, but {n} \
                                     {many} are defined so far"
                                ));
                            }
                            Err(_) if part == r => {
                                return Some(format!(
                                    "line {line_no}: face corner `{r}` is not a {one} index \
                                     (a whole number)"
                                ));
                            }
                            Err(_) => {
                                return Some(format!(
                                    "line {line_no}: face corner `{r}`: its {one} index \
                                     `{part}` is not a whole number"
                                ));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    None
}
