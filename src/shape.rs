//! The one vocabulary of shapes: what a scene file's `shape = {...}` and a query's `"a":
//! {...}` name (`ShapeSpec`, read by serde from TOML or JSON alike) and the geometry built
//! from it (`ShapeGeometry`).

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use glam::DVec3;
use serde::Deserialize;

use crate::Result;
use crate::bodies::GpuShapeBounds;
use crate::geometry::decompose;
use crate::geometry::generators;
use crate::geometry::mesh::{self, MeshShape};
use crate::geometry::polytope::round_up;
use crate::geometry::rounded::{Core, Rounded};
use crate::geometry::{ConvexPolytope, TriMesh};
use crate::rng::Rng;

/// The shapes' keys, for error messages: a shape is a table (an object) with one of them
/// as its only key.
pub const SHAPE_KEYS: &str = "points, box, sphere, capsule, icosphere, cylinder, cone, \
     random_hull, obj, obj_hull, torus, bumpy_sphere";

/// How each shape's key takes its value, for error messages (`{ … }`: a table in a scene,
/// an object in a query, its fields by name).
pub fn shape_form(key: &str) -> Option<&'static str> {
    Some(match key {
        "box" => "[hx, hy, hz] (half extents)",
        "points" => "[[x, y, z], …] (the hull's points)",
        "sphere" => "{ radius }",
        "capsule" => "{ half_height, radius }",
        "icosphere" => "{ radius, subdivisions (default 2) }",
        "cylinder" | "cone" => "{ radius, half_height, sides (default 16) }",
        "random_hull" => "{ points, radius }",
        "obj" | "obj_hull" => "a file's path",
        "torus" => "{ major, minor }",
        "bumpy_sphere" => "{ radius, amplitude }",
        _ => return None,
    })
}

/// The error for a shape written with a known key and a value that is not of its form:
/// the key, its form, and the reader's complaint in words a user knows (serde names Rust
/// types, and writes a large number out digit by digit).
pub fn shape_value_error(key: &str, complaint: &str) -> String {
    let form = shape_form(key).unwrap_or("its own fields");
    let mut words = Vec::new();
    for word in complaint.trim_end().split(' ') {
        let number = word.trim_matches(|c| c == '`' || c == ',' || c == ';');
        words.push(match number.parse::<f64>() {
            Ok(x) if number.len() > 12 => word.replace(number, &format!("{x:e}")),
            _ => word.to_owned(),
        });
    }
    let complaint = words.join(" ");
    // What serde expected, said as the form (or as a number a user would write).
    let complaint = match complaint.find(", expected ") {
        Some(at) => {
            let (said, expected) = complaint.split_at(at);
            match expected.trim_start_matches(", expected ") {
                "usize" | "u32" | "u64" => format!("{said}, expected a whole number"),
                "f64" => format!("{said}, expected a number"),
                e if e.starts_with("struct variant") || e == "path string" => said.to_owned(),
                _ => complaint.clone(),
            }
        }
        None => complaint,
    };
    format!("`{key}` takes {form}: {complaint}")
}

/// A shape as a scene or a query names it.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A box with these half extents.
    Box([f64; 3]),
    /// An exact sphere (a point swept by the radius).
    Sphere {
        /// Radius (0: a point).
        radius: f64,
    },
    /// A capsule along z: the segment from `−half_height` to `half_height` swept by the
    /// radius.
    Capsule {
        /// Half the length of the core segment.
        half_height: f64,
        /// Radius.
        radius: f64,
    },
    /// An icosphere polytope.
    Icosphere {
        /// Radius.
        radius: f64,
        /// Subdivisions of the icosahedron.
        #[serde(default = "two")]
        subdivisions: u32,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Half height.
        half_height: f64,
        /// Number of sides.
        #[serde(default = "sixteen")]
        sides: u32,
    },
    /// A cone along z, apex up.
    Cone {
        /// Base radius.
        radius: f64,
        /// Half height.
        half_height: f64,
        /// Number of sides.
        #[serde(default = "sixteen")]
        sides: u32,
    },
    /// The convex hull of these points.
    Points(Vec<[f64; 3]>),
    /// The hull of random points (deterministic per scene seed; a query's are drawn from
    /// seed 0).
    RandomHull {
        /// Number of points.
        points: usize,
        /// Radius of the ball they are drawn from.
        radius: f64,
    },
    /// A mesh file, relative to the scene file.
    Obj(PathBuf),
    /// The convex hull of a mesh file's vertices, whatever its faces (open, wound either
    /// way): where a mesh cannot be decomposed, or a convex stand-in is enough.
    ObjHull(PathBuf),
    /// A torus around z (non-convex).
    Torus {
        /// Major radius.
        major: f64,
        /// Tube radius.
        minor: f64,
    },
    /// A bumpy sphere (non-convex).
    BumpySphere {
        /// Radius.
        radius: f64,
        /// Relative bump height in [0, 1).
        amplitude: f64,
    },
}

/// A file path as given, or relative to `base` (the scene file's folder).
fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

fn two() -> u32 {
    2
}
fn sixteen() -> u32 {
    16
}

/// The geometry behind a shape-table entry.
#[derive(Clone, Debug)]
pub enum ShapeGeometry {
    /// A convex polytope.
    Convex(Arc<ConvexPolytope>),
    /// A non-convex triangle mesh (bounds only until the hull-tree stage exists).
    Mesh(Arc<TriMesh>),
    /// A sphere or a capsule (a core swept by a ball).
    Rounded(Arc<Rounded>),
}

impl ShapeGeometry {
    /// A convex polytope rounded by `radius` (a scene's or a query's `radius` beside the
    /// shape's key): a polytope swept by a ball. Other shapes are refused, in words.
    pub fn rounded(self, radius: f64) -> std::result::Result<ShapeGeometry, String> {
        match self {
            ShapeGeometry::Convex(p) => Rounded::polytope(p, radius)
                .map(|r| ShapeGeometry::Rounded(Arc::new(r)))
                .map_err(|e| e.to_string()),
            ShapeGeometry::Rounded(_) => {
                Err("a sphere or capsule has its own radius; `radius` rounds a polytope".into())
            }
            ShapeGeometry::Mesh(_) => {
                Err("`radius` rounds a convex shape; this one is not convex".into())
            }
        }
    }

    /// The geometry scaled uniformly about its body origin.
    pub fn scaled(&self, s: f64) -> Result<ShapeGeometry> {
        Ok(match self {
            ShapeGeometry::Convex(p) => ShapeGeometry::Convex(Arc::new(p.scaled(s)?)),
            ShapeGeometry::Mesh(m) => ShapeGeometry::Mesh(Arc::new(TriMesh::new(
                m.vertices.iter().map(|v| *v * s).collect(),
                m.triangles.clone(),
            )?)),
            ShapeGeometry::Rounded(r) => ShapeGeometry::Rounded(Arc::new(Rounded {
                core: match &r.core {
                    Core::Point => Core::Point,
                    Core::Segment { half_height } => Core::Segment {
                        half_height: half_height * s,
                    },
                    Core::Polytope(p) => Core::Polytope(Arc::new(p.scaled(s)?)),
                },
                radius: r.radius * s,
            })),
        })
    }

    /// Local bounds for the GPU, rounded outward to f32.
    pub fn gpu_bounds(&self) -> Result<GpuShapeBounds> {
        match self {
            ShapeGeometry::Convex(p) => Ok(p.gpu_bounds()),
            // The hull of the mesh has the mesh's bounds (a World bounds a decomposed mesh
            // by its pieces, which may reach past it).
            // A flat mesh has no hull: an open one (a flat figure's surface) says so first,
            // as its decomposition would, where its points' flatness named no cause.
            ShapeGeometry::Mesh(m) => match ConvexPolytope::from_points(&m.vertices) {
                Ok(hull) => Ok(hull.gpu_bounds()),
                Err(flat) => {
                    let (closed, _) = decompose::fill_small_holes(m);
                    decompose::check_mesh(&closed)?;
                    Err(flat)
                }
            },
            // The core's box grown by the radius; a sphere's box is exact.
            ShapeGeometry::Rounded(r) => {
                let (center, half) = match &r.core {
                    Core::Point => (DVec3::ZERO, DVec3::ZERO),
                    Core::Segment { half_height } => {
                        (DVec3::ZERO, DVec3::new(0.0, 0.0, *half_height))
                    }
                    Core::Polytope(p) => {
                        let (lo, hi) = p.local_aabb();
                        (0.5 * (lo + hi), 0.5 * (hi - lo))
                    }
                };
                let half = round_up(half + DVec3::splat(r.radius));
                let radius = round_up(DVec3::splat(r.reach())).x;
                Ok(GpuShapeBounds::new(center.as_vec3(), half, radius))
            }
        }
    }
}

impl ShapeSpec {
    /// The shape's key, as a file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            ShapeSpec::Box(_) => "box",
            ShapeSpec::Sphere { .. } => "sphere",
            ShapeSpec::Capsule { .. } => "capsule",
            ShapeSpec::Points(_) => "points",
            ShapeSpec::Icosphere { .. } => "icosphere",
            ShapeSpec::Cylinder { .. } => "cylinder",
            ShapeSpec::Cone { .. } => "cone",
            ShapeSpec::RandomHull { .. } => "random_hull",
            ShapeSpec::Obj(_) => "obj",
            ShapeSpec::ObjHull(_) => "obj_hull",
            ShapeSpec::Torus { .. } => "torus",
            ShapeSpec::BumpySphere { .. } => "bumpy_sphere",
        }
    }

    /// Builds the shape; `base` resolves relative OBJ paths, `rng` drives random hulls.
    pub fn build(&self, base: &Path, rng: &mut Rng) -> Result<ShapeGeometry> {
        let convex = |p: ConvexPolytope| ShapeGeometry::Convex(Arc::new(p));
        Ok(match self {
            ShapeSpec::Box(h) => convex(generators::cuboid(DVec3::from_array(*h))?),
            ShapeSpec::Sphere { radius } => {
                ShapeGeometry::Rounded(Arc::new(Rounded::sphere(*radius)?))
            }
            ShapeSpec::Capsule {
                half_height,
                radius,
            } => ShapeGeometry::Rounded(Arc::new(Rounded::capsule(*half_height, *radius)?)),
            ShapeSpec::Points(points) => {
                let points: Vec<DVec3> = points.iter().map(|p| DVec3::from_array(*p)).collect();
                if let Some(message) = crate::geometry::far_from_origin(&points) {
                    return Err(crate::Error::Geometry(format!("`points`: {message}")));
                }
                convex(ConvexPolytope::from_points(&points)?)
            }
            ShapeSpec::Icosphere {
                radius,
                subdivisions,
            } => convex(generators::icosphere(*radius, *subdivisions)?),
            ShapeSpec::Cylinder {
                radius,
                half_height,
                sides,
            } => convex(generators::cylinder(*sides, *radius, *half_height)?),
            ShapeSpec::Cone {
                radius,
                half_height,
                sides,
            } => convex(generators::cone(*sides, *radius, *half_height)?),
            ShapeSpec::RandomHull { points, radius } => {
                convex(generators::random_hull(rng, *points, *radius)?)
            }
            ShapeSpec::Obj(path) => match mesh::load_obj_shape(&resolve(base, path))? {
                MeshShape::Convex(p) => ShapeGeometry::Convex(Arc::new(*p)),
                MeshShape::NonConvex { mesh, .. } => ShapeGeometry::Mesh(Arc::new(mesh)),
            },
            ShapeSpec::ObjHull(path) => {
                let path = resolve(base, path);
                let points = mesh::load_obj_points(&path)?;
                convex(
                    ConvexPolytope::from_points(&points).map_err(|e| crate::Error::Mesh {
                        path,
                        message: format!("its vertices have no convex hull: {e}"),
                    })?,
                )
            }
            ShapeSpec::Torus { major, minor } => {
                ShapeGeometry::Mesh(Arc::new(generators::torus(*major, *minor, 32, 16)?))
            }
            ShapeSpec::BumpySphere { radius, amplitude } => ShapeGeometry::Mesh(Arc::new(
                generators::bumpy_sphere(*radius, 3, *amplitude, 5.0)?,
            )),
        })
    }
}
