//! Scene files: TOML (hand-written, comments allowed, and serde gives every error a byte
//! span, hence a line). A scene is groups of bodies, each with a shape (a generator or an
//! OBJ file), a count, a scale range, a region to scatter them in, speed and spin ranges,
//! and a seed. `scenes/crowd.toml` is the default scene, embedded in the binary.
//!
//! ```toml
//! seed = 1
//! wrap = { min = [-25, -25, -25], max = [25, 25, 25] }   # optional: walls the bodies stay inside (every region and hand-placed body within it)
//!
//! [[group]]
//! shape = { box = [0.5, 0.5, 0.5] }    # or sphere, capsule, icosphere, cylinder, cone, random_hull, obj, torus, bumpy_sphere
//! # shape = { box = [0.5, 0.5, 0.5], radius = 0.1 }   # a convex shape rounded: swept by a ball
//! count = 1000
//! scale = [0.5, 2.0]                   # uniform scale, log-uniform in the range
//! scale_variants = 4                   # distinct scales (each one shape-table entry)
//! region = { min = [-25, -25, -25], max = [25, 25, 25] }
//! speed = [0.0, 2.0]                   # units per second, random direction
//! spin = [0.0, 3.0]                    # radians per second, random axis (under 188.5)
//! seed = 7                             # optional; defaults to the scene seed + group index
//!
//! [[body]]                             # bodies placed by hand (any number of entries)
//! shape = { box = [0.5, 0.5, 0.5] }
//! position = [0.0, 0.0, 0.5]
//! rotation = [0.0, 0.0, 0.0, 1.0]      # optional unit quaternion [x, y, z, w]
//! velocity = [0.0, 0.0, 0.0]           # optional
//! spin = [0.0, 0.0, 0.0]               # optional, axis × radians per second
//! grid = { count = [3, 3, 4], step = [1.0, 1.0, 1.0] }   # optional: a block of them
//! fixed = true                         # optional: contacts leave its velocity alone
//! ```
//!
//! Every body keeps its pose in f64 ([`Scene::poses`]: a group's as drawn, a body placed
//! by hand as written); a shape written alike
//! in several entries is one shape-table entry; resizing (`--bodies`) scales the groups
//! and keeps these.
//!
//! Errors name the file, the line and the field.

use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3, Vec3};
use serde::Deserialize;
use toml::Spanned;

use crate::bodies::{GpuBody, MAX_BODIES, Pose, short, short32};
use crate::crowd::{Crowd, Motion};
use crate::rng::Rng;
use crate::shape::{SHAPE_KEYS, ShapeGeometry, ShapeSpec, shape_form, shape_value_error};
use crate::{Error, Result};

/// The length of the main job's frames, seconds: a scene's spins must turn less than
/// half a turn in one ([`MAX_SPIN`]).
pub const FRAME_SECONDS: f64 = 1.0 / 60.0;

/// The fastest spin a scene may give, radians per second: less than half a turn a frame
/// (about 188.5), where the screw motion's shorter arc is ambiguous. Spins are held in
/// f32, so the bound keeps a millionth of itself for their rounding.
pub const MAX_SPIN: f64 =
    (std::f64::consts::PI - crate::motion::HALF_TURN_MARGIN) / FRAME_SECONDS * (1.0 - 1e-6);

/// The default scene's file name and text.
pub const DEFAULT_SCENE: (&str, &str) = ("scenes/crowd.toml", include_str!("../scenes/crowd.toml"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    #[serde(default)]
    seed: u64,
    wrap: Option<Spanned<RegionSpec>>,
    #[serde(default)]
    group: Vec<Spanned<GroupSpec>>,
    #[serde(default)]
    body: Vec<Spanned<BodySpec>>,
}

/// An array of exactly `N` items: serde reads a longer array into `[T; N]` and drops the
/// rest without a word (`position = [0.0, 0.5, 1.0, 2.0]` ran as `[0.0, 0.5, 1.0]`).
#[derive(Clone, Copy, Debug)]
struct Exactly<T, const N: usize>([T; N]);

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Exactly<T, N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(d)?;
        let len = items.len();
        let want = format!("an array of {N} numbers");
        items
            .try_into()
            .map(Exactly)
            .map_err(|_| serde::de::Error::invalid_length(len, &want.as_str()))
    }
}

/// Bodies placed by hand: one, or a grid of them (a stack, a wall, a row of planks).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BodySpec {
    shape: Spanned<toml::Value>,
    position: Spanned<Exactly<f64, 3>>,
    /// A unit quaternion `[x, y, z, w]`.
    rotation: Option<Spanned<Exactly<f64, 4>>>,
    velocity: Option<Spanned<Exactly<f64, 3>>>,
    spin: Option<Spanned<Exactly<f64, 3>>>,
    grid: Option<Spanned<GridSpec>>,
    /// Contacts leave its velocity as it is (a floor, a wall): see [`Scene::fixed`].
    #[serde(default)]
    fixed: bool,
}

/// `count[0] × count[1] × count[2]` bodies at `position + (i, j, k) * step`.
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct GridSpec {
    count: Exactly<u64, 3>,
    step: Exactly<f64, 3>,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RegionSpec {
    min: Exactly<f64, 3>,
    max: Exactly<f64, 3>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupSpec {
    /// Read as a value first, so a table that is not a shape gets the shapes' names.
    shape: Spanned<toml::Value>,
    count: Spanned<u64>,
    #[serde(default = "unit_range")]
    scale: Spanned<Exactly<f64, 2>>,
    #[serde(default = "one")]
    scale_variants: Spanned<u32>,
    region: Spanned<RegionSpec>,
    #[serde(default = "zero_range")]
    speed: Spanned<Exactly<f64, 2>>,
    #[serde(default = "zero_range")]
    spin: Spanned<Exactly<f64, 2>>,
    seed: Option<u64>,
}

fn unit_range() -> Spanned<Exactly<f64, 2>> {
    Spanned::new(0..0, Exactly([1.0, 1.0]))
}
fn zero_range() -> Spanned<Exactly<f64, 2>> {
    Spanned::new(0..0, Exactly([0.0, 0.0]))
}
fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

/// A loaded scene: the bodies the pipeline runs, and the geometry of every shape-table
/// entry (same indices as `crowd.shapes`).
#[derive(Clone, Debug)]
pub struct Scene {
    /// File the scene came from.
    pub path: PathBuf,
    /// Bodies, shape bounds, motions.
    pub crowd: Crowd,
    /// Geometry per shape-table entry.
    pub geometry: Vec<ShapeGeometry>,
    /// Where each shape-table entry is written ("line 3, field `group[0].shape`"): a shape
    /// that fails later (a mesh that cannot be decomposed) is named by it.
    pub shape_at: Vec<String>,
    /// Each body's pose in f64, beside the crowd's f32 one: a group's bodies as drawn
    /// (drawn in f32, a group 1e6 from the origin stood on f32's grid there, 0.0625
    /// apart: 2,000 boxes 1e-3 across in a 0.25 cube overlapped in 21,589 pairs), a body
    /// placed by hand as the file gives it (planks written 0.15 and 0.05 high in f32 are
    /// 5e-9 off touching).
    pub poses: Vec<Pose>,
    /// The bodies written `fixed = true`: the main job's contacts and impacts leave their
    /// velocities as they are, and what meets one bounces off it
    /// ([`crate::kinematic::KinematicCrowd::fix`]).
    pub fixed: Vec<u32>,
}

/// A scene's shape: a table with one shape's key, and `radius` beside a convex one's
/// (a polytope swept by a ball, as in a query). A shape whose fields are named is written
/// with them: an array in their place would be read in the fields' order, which the file
/// does not show (`capsule = [1, 2]`: which is the radius?), so it is refused.
fn read_shape(
    value: &toml::Value,
    base: &Path,
    rng: &mut Rng,
) -> std::result::Result<ShapeGeometry, String> {
    let not_a_shape = |what: String| {
        format!(
            "not a shape ({what}); a shape is a table with one key: {SHAPE_KEYS} (and \
             `radius` beside a convex one's key)"
        )
    };
    let toml::Value::Table(table) = value else {
        return Err(not_a_shape(a_type(value)));
    };
    let radius = table.get("radius").filter(|_| table.len() == 2);
    let keys: Vec<&str> = table
        .keys()
        .map(String::as_str)
        .filter(|k| radius.is_none() || *k != "radius")
        .collect();
    let [key] = keys[..] else {
        let all: Vec<&str> = table.keys().map(String::as_str).collect();
        return Err(not_a_shape(format!(
            "a table with {} keys: {}",
            all.len(),
            all.join(", ")
        )));
    };
    let Some(form) = shape_form(key) else {
        return Err(not_a_shape(format!("`{key}` is not a shape's key")));
    };
    let inner = &table[key];
    if form.starts_with('{') && !inner.is_table() {
        return Err(shape_value_error(
            key,
            &format!("its fields by name, not {}", a_type(inner)),
        ));
    }
    let one = toml::Table::from_iter([(key.to_owned(), inner.clone())]);
    let spec = ShapeSpec::deserialize(toml::Value::Table(one))
        .map_err(|e| shape_value_error(key, e.message()))?;
    // Named before the shape is built: a box of 1e39 by 0.5 was "collinear" (its 0.5 is
    // below the hull's tolerance at 1e39), where its size is what the GPU cannot hold.
    if let Some(x) = past_f32(value) {
        return Err(format!(
            "{x:e} is not finite in f32 (±3.4e38), in which the GPU passes hold the shapes' \
             bounds: scale the scene down"
        ));
    }
    let geometry = spec.build(base, rng).map_err(|e| e.to_string())?;
    match radius {
        None => Ok(geometry),
        Some(r) => {
            let r = r
                .as_float()
                .or_else(|| r.as_integer().map(|i| i as f64))
                .ok_or_else(|| format!("`radius` must be a number, got {}", a_type(r)))?;
            geometry.rounded(r)
        }
    }
}

/// The first number in `value` (any depth) whose magnitude f32 cannot hold.
fn past_f32(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::Float(x) => (x.abs() > f64::from(f32::MAX)).then_some(*x),
        toml::Value::Integer(i) => ((*i as f64).abs() > f64::from(f32::MAX)).then_some(*i as f64),
        toml::Value::Array(items) => items.iter().find_map(past_f32),
        toml::Value::Table(table) => table.values().find_map(past_f32),
        _ => None,
    }
}

/// Whether a point is finite in f64 and in f32, where the GPU holds positions.
fn fits(v: DVec3) -> bool {
    v.is_finite() && v.as_vec3().is_finite()
}

/// A TOML value's type with its article: "an array", "a string".
fn a_type(value: &toml::Value) -> String {
    let t = value.type_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line holding byte `offset` of `text`, trimmed, as an error quotes it: a long line
/// (a million digits) is quoted by the 80 characters about the offset.
fn line_excerpt(text: &str, offset: usize) -> String {
    const HALF: usize = 40;
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[start..end];
    if line.chars().count() <= 2 * HALF {
        return line.trim().to_owned();
    }
    let at = line[..offset - start].chars().count();
    let from = at.saturating_sub(HALF);
    let chars: String = line.chars().skip(from).take(2 * HALF).collect();
    let before = if from > 0 { "…" } else { "" };
    let after = if from + 2 * HALF < line.chars().count() {
        "…"
    } else {
        ""
    };
    format!("{before}{}{after}", chars.trim())
}

impl Scene {
    /// Loads a scene file.
    pub fn load(path: &Path) -> Result<Scene> {
        Self::load_resized(path, None)
    }

    /// Loads a scene file resized to about `bodies` (see [`Scene::parse_resized`]).
    pub fn load_resized(path: &Path, bodies: Option<u64>) -> Result<Scene> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let bytes = e.as_bytes();
            let message = if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
                "the file is UTF-16 text; a scene is UTF-8 (TOML): save it as UTF-8".to_owned()
            } else {
                let at = e.utf8_error().valid_up_to();
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                format!("line {line}: not UTF-8 text (a scene is UTF-8, as TOML is)")
            };
            Error::Scene {
                path: path.to_owned(),
                message,
            }
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse_resized(path, base, &text, bodies)
    }

    /// The built-in default scene (`scenes/crowd.toml`), optionally resized to `bodies`.
    pub fn default_scene(bodies: Option<u64>) -> Result<Scene> {
        let (name, text) = DEFAULT_SCENE;
        Self::parse_resized(Path::new(name), Path::new("scenes"), text, bodies)
    }

    /// Parses scene text; `path` names it in errors, `base` resolves OBJ paths.
    pub fn parse(path: &Path, base: &Path, text: &str) -> Result<Scene> {
        Self::parse_resized(path, base, text, None)
    }

    /// Parses scene text with the total body count changed to about `bodies`: every
    /// group's count is scaled by the same factor and its region (and the wrap box) by the
    /// cube root of it about the center, so the density stays the same.
    pub fn parse_resized(
        path: &Path,
        base: &Path,
        text: &str,
        bodies: Option<u64>,
    ) -> Result<Scene> {
        let at = Spans {
            path,
            text,
            resized: bodies,
        };
        let scene_error = |span, field: &str, message| at.error(span, field, message);
        let file: SceneFile = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let line = line_of(text, span.start);
            Error::Scene {
                path: path.to_owned(),
                message: format!(
                    "line {line} (`{}`): {}",
                    line_excerpt(text, span.start),
                    e.message().trim_end()
                ),
            }
        })?;
        if file.group.is_empty() && file.body.is_empty() {
            return Err(Error::Scene {
                path: path.to_owned(),
                message: "no [[group]] or [[body]] of bodies".into(),
            });
        }
        // The bodies placed by hand, every grid's counts multiplied out checked.
        let mut placed = Some(0u64);
        for (b, body) in file.body.iter().enumerate() {
            let n = match &body.get_ref().grid {
                Some(g) => {
                    let [x, y, z] = g.get_ref().count.0;
                    if x == 0 || y == 0 || z == 0 {
                        return Err(scene_error(
                            g.span(),
                            &format!("body[{b}].grid"),
                            format!("count [{x}, {y}, {z}]: each must be at least 1"),
                        ));
                    }
                    grid_count(g.get_ref())
                }
                None => Some(1),
            };
            placed = placed.zip(n).and_then(|(p, n)| p.checked_add(n));
        }
        // Checked: three counts near 2^63 must not wrap past the limit check.
        let sum = file
            .group
            .iter()
            .try_fold(0u64, |sum, g| sum.checked_add(*g.get_ref().count.get_ref()));
        let total = sum.unwrap_or(u64::MAX);
        // Resizing scales the groups; the bodies placed by hand stay as they are.
        let placed_or_max = placed.unwrap_or(u64::MAX);
        let bodies = match bodies {
            Some(b) if b < placed_or_max || (file.group.is_empty() && b != placed_or_max) => {
                return Err(Error::Scene {
                    path: path.to_owned(),
                    message: format!(
                        "field `body`: the [[body]] entries place {placed_or_max} and only the \
                         groups' counts resize: {b} bodies cannot be made"
                    ),
                });
            }
            Some(b) => Some(b - placed_or_max),
            None => None,
        };
        let factor = match bodies {
            Some(b) if total > 0 => b as f64 / total as f64,
            _ => 1.0,
        };
        let total = bodies.unwrap_or(total);
        let all = placed.and_then(|p| total.checked_add(p));
        if all.is_none_or(|all| all > MAX_BODIES as u64) {
            let message = format!(
                "{} bodies in all; at most {MAX_BODIES} are supported",
                match all {
                    Some(all) if sum.is_some() || bodies.is_some() => all.to_string(),
                    _ => "more than 2^64 - 1".to_owned(),
                }
            );
            // The largest group, by its line; else the bodies placed by hand.
            let largest = file
                .group
                .iter()
                .enumerate()
                .max_by_key(|(_, g)| *g.get_ref().count.get_ref());
            return Err(match largest {
                Some((g, group)) if placed.is_some_and(|p| p <= MAX_BODIES as u64) => {
                    let field = format!("group[{g}].count");
                    let count = &group.get_ref().count;
                    scene_error(count.span(), &field, message)
                }
                // The largest grid (one past u64 largest of all; the first of equals), by
                // its line.
                _ => match file
                    .body
                    .iter()
                    .enumerate()
                    .filter_map(|(b, body)| Some((b, body.get_ref().grid.as_ref()?)))
                    .rev()
                    .max_by_key(|(_, g)| grid_count(g.get_ref()).unwrap_or(u64::MAX))
                {
                    Some((b, g)) => scene_error(g.span(), &format!("body[{b}].grid"), message),
                    None => Error::Scene {
                        path: path.to_owned(),
                        message: format!("field `body`: {message}"),
                    },
                },
            });
        }
        // A scene of that many bodies is checked against the machine's memory before any
        // is made (a quarter of a billion took all 24 GB before the world's check).
        if let Some(all) = all {
            crate::memory::check(
                || format!("the scene's {all} bodies"),
                crate::memory::estimate(all as usize, 0),
            )?;
        }
        // Groups resized to no bodies leave the regions and the wrap box as they are (the
        // wrap box shrank to a point about the bodies placed by hand).
        let grow = if factor > 0.0 { factor.cbrt() } else { 1.0 };
        let check_region = |r: &Spanned<RegionSpec>, field: &str| -> Result<(DVec3, DVec3)> {
            let (lo, hi) = (
                DVec3::from_array(r.get_ref().min.0),
                DVec3::from_array(r.get_ref().max.0),
            );
            // Positions live in f32 on the GPU: a region must fit there, resized too.
            let (c, h) = ((lo + hi) * 0.5, (hi - lo) * 0.5 * grow);
            if !fits(lo) || !fits(hi) || lo.cmpgt(hi).any() || !fits(c - h) || !fits(c + h) {
                return Err(scene_error(
                    r.span(),
                    field,
                    format!(
                        "min {} must be ≤ max {}, both finite in f32 (±3.4e38)",
                        short(lo),
                        short(hi)
                    ),
                ));
            }
            Ok((c - h, c + h))
        };
        let check_range =
            |r: &Spanned<Exactly<f64, 2>>, field: &str, positive: bool| -> Result<(f64, f64)> {
                let [a, b] = r.get_ref().0;
                // Speeds and spins live in f32 on the GPU, and a scale beyond f32 makes
                // a shape no GPU bound can hold.
                let ok = a.is_finite()
                    && (b as f32).is_finite()
                    && a <= b
                    && (if positive { a > 0.0 } else { a >= 0.0 });
                if !ok {
                    return Err(scene_error(
                        r.span(),
                        field,
                        format!(
                            "[{a:?}, {b:?}] must be finite in f32 (±3.4e38), ordered and {}",
                            if positive { "positive" } else { "non-negative" }
                        ),
                    ));
                }
                Ok((a, b))
            };
        let wrap = match &file.wrap {
            Some(w) => {
                let (lo, hi) = check_region(w, "wrap")?;
                Some((lo.as_vec3(), hi.as_vec3()))
            }
            None => None,
        };
        let mut world = Crowd {
            wrap,
            ..Default::default()
        };
        let mut geometry = Vec::new();
        let mut shape_at = Vec::new();
        // A group's bodies in f64 as drawn (the crowd's f32 copy is the GPU's).
        let mut poses: Vec<Pose> = Vec::new();
        for (g, group) in file.group.iter().enumerate() {
            let spec = group.get_ref();
            let field = |name: &str| format!("group[{g}].{name}");
            // As a grid's counts: a group of none was run as no bodies, or resized by
            // `--bodies` into the whole scene.
            if *spec.count.get_ref() == 0 {
                return Err(scene_error(
                    spec.count.span(),
                    &field("count"),
                    "must be at least 1 (leave out a group of no bodies)".to_owned(),
                ));
            }
            let mut rng = Rng::new(spec.seed.unwrap_or(file.seed.wrapping_add(g as u64)));
            let (lo, hi) = check_region(&spec.region, &field("region"))?;
            if let Some((w_lo, w_hi)) = wrap
                && (outside_wrap(lo, (w_lo, w_hi)) || outside_wrap(hi, (w_lo, w_hi)))
            {
                return Err(scene_error(
                    spec.region.span(),
                    &field("region"),
                    format!(
                        "min {} and max {} reach outside the wrap box ({} to {}): the walls keep \
                         the bodies inside it",
                        short(lo),
                        short(hi),
                        short32(w_lo),
                        short32(w_hi)
                    ),
                ));
            }
            let (s_lo, s_hi) = check_range(&spec.scale, &field("scale"), true)?;
            let (v_lo, v_hi) = check_range(&spec.speed, &field("speed"), false)?;
            let (w_lo, w_hi) = check_range(&spec.spin, &field("spin"), false)?;
            if w_hi >= MAX_SPIN {
                return Err(scene_error(
                    spec.spin.span(),
                    &field("spin"),
                    spin_too_fast(w_hi),
                ));
            }
            let variants = *spec.scale_variants.get_ref();
            if variants == 0 || variants > 1024 {
                return Err(scene_error(
                    spec.scale_variants.span(),
                    &field("scale_variants"),
                    format!("{variants} must be in 1..=1024"),
                ));
            }
            let shape_error =
                |message: String| scene_error(spec.shape.span(), &field("shape"), message);
            let base_shape =
                read_shape(spec.shape.get_ref(), base, &mut rng).map_err(shape_error)?;
            // Scale variants, log-uniformly spaced over the range.
            let first = world.shapes.len() as u32;
            for k in 0..variants {
                let t = if variants == 1 {
                    0.5
                } else {
                    f64::from(k) / f64::from(variants - 1)
                };
                let s = if s_lo == s_hi {
                    s_lo
                } else {
                    (s_lo.ln() + t * (s_hi.ln() - s_lo.ln())).exp()
                };
                let shape = if s == 1.0 {
                    base_shape.clone()
                } else {
                    base_shape.scaled(s).map_err(|e| {
                        scene_error(spec.scale.span(), &field("scale"), e.to_string())
                    })?
                };
                let index = world.shapes.len() as u32;
                let bounds = shape
                    .gpu_bounds()
                    .and_then(|b| b.validate(index).map(|()| b));
                let bounds = bounds.map_err(|e| {
                    scene_error(
                        spec.shape.span(),
                        &field("shape"),
                        format!("at scale {s}: {e}"),
                    )
                })?;
                world.shapes.push(bounds);
                geometry.push(shape);
                shape_at.push(at.place(spec.shape.span(), &field("shape")));
            }
            let count = if bodies.is_some() {
                // The last group takes the rounding, so the total is exact.
                if g + 1 == file.group.len() {
                    total.saturating_sub(world.bodies.len() as u64)
                } else {
                    (*spec.count.get_ref() as f64 * factor).round() as u64
                }
            } else {
                *spec.count.get_ref()
            };
            for _ in 0..count {
                let shape = first + rng.below(u64::from(variants)) as u32;
                let position = rng.point_in(lo, hi);
                let rotation = rng.rotation();
                world
                    .bodies
                    .push(GpuBody::new(position.as_vec3(), rotation.as_quat(), shape));
                poses.push(Pose::new(position, rotation));
                world.motions.push(Motion {
                    linear: (rng.unit_vector() * rng.range(v_lo, v_hi)).as_vec3(),
                    angular: (rng.unit_vector() * rng.range(w_lo, w_hi)).as_vec3(),
                });
            }
        }
        let seed = file.seed.wrapping_add(file.group.len() as u64);
        let fixed = place_by_hand(
            &file.body,
            seed,
            base,
            &at,
            &mut world,
            (&mut geometry, &mut shape_at),
            &mut poses,
        )?;
        world.validate()?;
        Ok(Scene {
            path: path.to_owned(),
            crowd: world,
            geometry,
            shape_at,
            poses,
            fixed,
        })
    }
}

/// The bodies a grid places, `None` past u64.
fn grid_count(grid: &GridSpec) -> Option<u64> {
    let [x, y, z] = grid.count.0;
    x.checked_mul(y).and_then(|xy| xy.checked_mul(z))
}

/// Whether `p` lies outside the wrap box, as the GPU holds both (in f32).
fn outside_wrap(p: DVec3, (lo, hi): (Vec3, Vec3)) -> bool {
    let p = p.as_vec3();
    p.cmplt(lo).any() || p.cmpgt(hi).any()
}

/// Where a scene's text says what: its errors name the file, the line and the field.
struct Spans<'a> {
    path: &'a Path,
    text: &'a str,
    /// The body count the scene is resized to, if it is: the wrap box and the groups'
    /// regions are resized, the bodies placed by hand are not.
    resized: Option<u64>,
}

impl Spans<'_> {
    fn error(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl std::fmt::Display,
    ) -> Error {
        Error::Scene {
            path: self.path.to_owned(),
            message: format!("{}: {message}", self.place(span, field)),
        }
    }

    /// "line N, field `F`" for the span's line.
    fn place(&self, span: std::ops::Range<usize>, field: &str) -> String {
        format!("line {}, field `{field}`", line_of(self.text, span.start))
    }
}

/// The bodies placed by hand (`[[body]]`), after the groups': their shapes (a shape
/// written alike twice is one shape-table entry; a random one drawn from `seed` plus the
/// entry's index), poses in f64 as written, and motions. Returns the fixed ones.
fn place_by_hand(
    bodies: &[Spanned<BodySpec>],
    seed: u64,
    base: &Path,
    at: &Spans<'_>,
    world: &mut Crowd,
    (geometry, shape_at): (&mut Vec<ShapeGeometry>, &mut Vec<String>),
    poses: &mut Vec<Pose>,
) -> Result<Vec<u32>> {
    let mut fixed = Vec::new();
    let mut written: Vec<(String, u32)> = Vec::new();
    for (b, body) in bodies.iter().enumerate() {
        let spec = body.get_ref();
        let field = |name: &str| format!("body[{b}].{name}");
        let text = spec.shape.get_ref().to_string();
        let shape = match written.iter().find(|(t, _)| *t == text) {
            Some(&(_, index)) => index,
            None => {
                let shape_error =
                    |message: String| at.error(spec.shape.span(), &field("shape"), message);
                let seed = seed.wrapping_add(b as u64);
                let built = read_shape(spec.shape.get_ref(), base, &mut Rng::new(seed))
                    .map_err(shape_error)?;
                let index = world.shapes.len() as u32;
                let bounds = built
                    .gpu_bounds()
                    .and_then(|bounds| bounds.validate(index).map(|()| bounds))
                    .map_err(|e| shape_error(e.to_string()))?;
                world.shapes.push(bounds);
                geometry.push(built);
                shape_at.push(at.place(spec.shape.span(), &field("shape")));
                written.push((text, index));
                index
            }
        };
        // Positions, velocities and spins live in f32 on the GPU.
        let vector = |v: Option<&Spanned<Exactly<f64, 3>>>, name: &str| -> Result<DVec3> {
            let Some(v) = v else {
                return Ok(DVec3::ZERO);
            };
            let x = DVec3::from_array(v.get_ref().0);
            if !fits(x) {
                return Err(at.error(
                    v.span(),
                    &field(name),
                    format!("{} must be finite in f32 (±3.4e38)", short(x)),
                ));
            }
            Ok(x)
        };
        let position = vector(Some(&spec.position), "position")?;
        let velocity = vector(spec.velocity.as_ref(), "velocity")?;
        let spin = vector(spec.spin.as_ref(), "spin")?;
        if let Some(written) = &spec.spin
            && spin.length() >= MAX_SPIN
        {
            return Err(at.error(written.span(), &field("spin"), spin_too_fast(spin.length())));
        }
        let rotation = match &spec.rotation {
            Some(r) => {
                Pose::new(DVec3::ZERO, DQuat::from_array(r.get_ref().0))
                    .checked()
                    .map_err(|fault| at.error(r.span(), &field("rotation"), fault.to_string()))?
                    .rotation
            }
            None => DQuat::IDENTITY,
        };
        let (count, step) = match &spec.grid {
            Some(g) => (g.get_ref().count.0, DVec3::from_array(g.get_ref().step.0)),
            None => ([1; 3], DVec3::ZERO),
        };
        let last = position + step * (DVec3::from_array(count.map(|n| n as f64)) - 1.0);
        if !(step.is_finite() && fits(last)) {
            let span = spec
                .grid
                .as_ref()
                .map_or(spec.position.span(), Spanned::span);
            return Err(at.error(
                span,
                &field("grid"),
                format!(
                    "its far corner {} must be finite in f32 (±3.4e38)",
                    short(last)
                ),
            ));
        }
        if let Some((w_lo, w_hi)) = world.wrap
            && let Some(out) = [position, last]
                .into_iter()
                .find(|&p| outside_wrap(p, (w_lo, w_hi)))
        {
            let (span, name) = if out == position {
                (spec.position.span(), "position")
            } else {
                (
                    spec.grid
                        .as_ref()
                        .map_or(spec.position.span(), Spanned::span),
                    "grid",
                )
            };
            return Err(at.error(
                span,
                &field(name),
                format!(
                    "{} lies outside the wrap box ({} to {}{}): the walls keep the bodies inside it",
                    short(out),
                    short32(w_lo),
                    short32(w_hi),
                    match at.resized {
                        Some(n) => format!(
                            ", resized with the groups' regions to about {n} bodies, where the \
                             bodies placed by hand stay as the file places them"
                        ),
                        None => String::new(),
                    }
                ),
            ));
        }
        for i in 0..count[0] {
            for j in 0..count[1] {
                for k in 0..count[2] {
                    let at = position + step * DVec3::new(i as f64, j as f64, k as f64);
                    world
                        .bodies
                        .push(GpuBody::new(at.as_vec3(), rotation.as_quat(), shape));
                    if spec.fixed {
                        fixed.push(world.bodies.len() as u32 - 1);
                    }
                    poses.push(Pose::new(at, rotation));
                    world.motions.push(Motion {
                        linear: velocity.as_vec3(),
                        angular: spin.as_vec3(),
                    });
                }
            }
        }
    }
    Ok(fixed)
}

/// The error for a spin of `rate` rad/s at or past [`MAX_SPIN`].
fn spin_too_fast(rate: f64) -> String {
    format!(
        "{rate} rad/s turns half a turn or more in one of the main job's frames (1/60 s), \
         where the shorter arc is ambiguous: spins must stay under {MAX_SPIN:.1} rad/s"
    )
}
