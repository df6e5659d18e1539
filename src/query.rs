//! `proxima query`: JSON Lines in, one JSON answer per line out, in input order. A bad line
//! gets `{"id": ..., "error": "..."}` and the batch goes on. The schema is fixed (other
//! tools depend on it); README.md documents it. Numbers are written by serde_json's
//! shortest round-trip formatting, so every f64 reads back exactly.
//!
//! Implemented: `collide` and `distance` (the closest-feature walk; a walk that gives up is
//! settled by the exact separating-axis test, and the distance by enumeration over feature
//! pairs; a non-convex shape is decomposed into a hull tree, cached on disk, and walked
//! pair tree against pair tree, `exact::tree`), `penetration` (the Gauss-map walk,
//! `exact::depth`; for a non-convex shape the deepest of its touching piece pairs) and
//! `toi` (conservative advancement under the screw motion from the start to the end poses,
//! `exact::advance`).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::bodies::Pose;
use crate::exact::advance::{self, ToiInput, ToiOutput, ToiState};
use crate::exact::depth::{self, DepthInput};
use crate::exact::rounded::{self, Contact, RoundedPenetration};
use crate::exact::rounded_toi;
use crate::exact::sat;
use crate::exact::tree::{self, TreeCache, TreeState};
use crate::exact::tree_toi;
use crate::exact::walk::{self, WalkInput, WalkState};
use crate::geometry::decompose::{Cache, DecomposeParams};
use crate::geometry::rounded::Rounded;
use crate::geometry::{ConvexPolytope, FeatureId, HullTree, brute};
use crate::motion::ScrewMotion;
use crate::narrowphase::ExactShape as Shape;
use crate::rng::Rng;
use crate::shape::{SHAPE_KEYS, ShapeGeometry, ShapeSpec, shape_form, shape_value_error};
use crate::{Error, Result};

/// Counts of a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Lines answered.
    pub answered: usize,
    /// Lines answered with an error.
    pub errors: usize,
}

/// Shapes kept between lines at most: past it the kept ones are let go.
const MAX_KEPT: usize = 4096;
/// Bytes of kept shapes at most, their spellings (a `points` shape spells all its points)
/// and their tables: 4,096 icospheres of 5 subdivisions would have held 40 GB.
const MAX_KEPT_BYTES: usize = 256 << 20;

/// Answers queries; keeps the shapes it has built, so that a stream of queries about the
/// same shapes builds each once (an icosphere's hull and tables take 0.5 ms, its distance
/// query a microsecond).
#[derive(Debug)]
pub struct QueryEngine {
    /// Built shapes (or why they could not be) by their spelling.
    built: HashMap<String, std::result::Result<Shape, String>>,
    /// The spellings' bytes.
    built_bytes: usize,
    /// Where decompositions of non-convex shapes are kept.
    cache: Cache,
    /// Write a line to stderr when a decomposition has to run.
    progress: bool,
}

impl Default for QueryEngine {
    fn default() -> Self {
        QueryEngine {
            built: HashMap::new(),
            built_bytes: 0,
            cache: Cache::from_env(),
            progress: false,
        }
    }
}

/// What a built shape's tables take, in bytes (a polytope's, a rounded body's core's, every
/// node of a hull tree).
fn table_bytes(shape: &Shape) -> usize {
    match shape {
        Shape::Convex(p) => p.table_bytes(),
        Shape::Rounded(r) => match &r.core {
            crate::geometry::rounded::Core::Polytope(p) => p.table_bytes(),
            _ => 0,
        },
        Shape::Tree(t) => (0..t.num_nodes() as u32)
            .map(|i| t.node(i).hull.table_bytes())
            .sum(),
    }
}

/// A pair a rounded or tree answer cannot take (never reached: every pair has one).
const TREE_AND_ROUNDED: &str = "this pair of shapes has no answer for this query";

/// A shape as the answers need it: a hull tree, or an error naming the pair.
fn tree_of(s: &Shape) -> Result<Arc<HullTree>> {
    s.tree()
        .ok_or_else(|| Error::Query(TREE_AND_ROUNDED.into()))
}

/// A shape as a rounded body, or an error naming the pair.
fn rounded_of(s: &Shape) -> Result<Arc<Rounded>> {
    s.rounded()
        .ok_or_else(|| Error::Query(TREE_AND_ROUNDED.into()))
}

/// The longest line a batch reads; a longer one is answered with an error and skipped.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// How a line read ended.
enum LineRead {
    Line,
    TooLong,
    End,
}

/// Reads one line (without its newline) into `line`, keeping at most [`MAX_LINE_BYTES`];
/// the rest of a longer line is read and dropped.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<LineRead> {
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(k) => (k, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if line.len() + take > MAX_LINE_BYTES {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take + usize::from(newline));
        if newline {
            break;
        }
    }
    Ok(if !any {
        LineRead::End
    } else if too_long {
        LineRead::TooLong
    } else {
        LineRead::Line
    })
}

impl QueryEngine {
    /// A new engine; decompositions are cached where [`Cache::from_env`] says.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps decompositions in `cache` instead.
    pub fn with_cache(mut self, cache: Cache) -> Self {
        self.cache = cache;
        self
    }

    /// Says on stderr when a non-convex shape has to be decomposed (it takes a while).
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Reads JSON Lines from `input` and writes one answer per non-blank line to `out`.
    /// A line that is not UTF-8 or is longer than [`MAX_LINE_BYTES`] is answered with an
    /// error naming it, and the batch goes on (an over-long line is skipped without being
    /// held in memory).
    pub fn run(&mut self, mut input: impl BufRead, mut out: impl Write) -> Result<BatchStats> {
        let mut stats = BatchStats::default();
        let io = |source| Error::Io {
            path: "<query output>".into(),
            source,
        };
        let mut line = Vec::new();
        for number in 1usize.. {
            line.clear();
            let read = read_line(&mut input, &mut line).map_err(|source| Error::Io {
                path: "<query input>".into(),
                source,
            })?;
            let answer = match read {
                LineRead::End => break,
                LineRead::TooLong => json!({
                    "id": Value::Null,
                    "error": format!("line {number} is longer than {MAX_LINE_BYTES} bytes")
                }),
                LineRead::Line => match std::str::from_utf8(&line) {
                    // A byte-order mark before the first line is not part of it (and a
                    // line blank after it is blank).
                    Ok(text) if number == 1 && text.starts_with('\u{feff}') => {
                        let rest = &text['\u{feff}'.len_utf8()..];
                        if rest.trim().is_empty() {
                            continue;
                        }
                        self.answer_numbered(rest, number)
                    }
                    Ok(text) if text.trim().is_empty() => continue,
                    Ok(text) => self.answer_numbered(text, number),
                    Err(e) => json!({
                        "id": Value::Null,
                        "error": format!("line {number} is not UTF-8 ({e})")
                    }),
                },
            };
            stats.answered += 1;
            if answer.get("error").is_some() {
                stats.errors += 1;
            }
            serde_json::to_writer(&mut out, &answer).map_err(|e| io(e.into()))?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.flush().map_err(io)?;
        Ok(stats)
    }

    /// The answer to one line: the query's result, or `{"id", "error"}`.
    pub fn answer_line(&mut self, line: &str) -> Value {
        self.answer_numbered(line, 1)
    }

    /// [`Self::answer_line`] for line `number` of a batch: JSON that does not parse has no
    /// id to be told by, so its error names the line and the column.
    fn answer_numbered(&mut self, line: &str, number: usize) -> Value {
        let request: Value = match serde_json::from_str(line) {
            Ok(Strict(v)) => v,
            Err(e) => {
                // serde_json's message ends "at line 1 column c": one line is parsed.
                let message = e.to_string();
                let message = message.split(" at line ").next().unwrap_or(&message);
                let error = format!(
                    "invalid JSON at line {number}, column {}: {message}",
                    e.column()
                );
                return json!({ "id": Value::Null, "error": error });
            }
        };
        let Some(obj) = request.as_object() else {
            return json!({
                "id": Value::Null,
                "error": format!("line {number} is not a JSON object: a query is {{\"id\", \"query\", \"a\", \"b\", ...}}")
            });
        };
        let id = obj.get("id").cloned().unwrap_or(Value::Null);
        match self.answer(obj) {
            Ok(mut fields) => {
                let mut answer = Map::new();
                answer.insert("id".into(), id);
                answer.append(&mut fields);
                Value::Object(answer)
            }
            Err(e) => json!({ "id": id, "error": e.to_string() }),
        }
    }

    fn answer(&mut self, obj: &Map<String, Value>) -> Result<Map<String, Value>> {
        let kind = obj.get("query").and_then(Value::as_str).ok_or_else(|| {
            Error::Query("missing `query` (collide, distance, penetration, toi)".into())
        })?;
        match kind {
            "collide" | "distance" | "penetration" | "toi" => {}
            other => {
                return Err(Error::Query(format!(
                    "unknown query `{other}` (collide, distance, penetration, toi)"
                )));
            }
        }
        // A field the query does not read is an error, never silently dropped: a typo in
        // `pose_b_end` would otherwise answer a motionless body.
        for key in obj.keys() {
            let known = match key.as_str() {
                "id" | "query" | "a" | "b" | "pose_a" | "pose_b" => true,
                "pose_a_end" | "pose_b_end" => kind == "toi",
                _ => false,
            };
            if !known {
                return Err(Error::Query(format!(
                    "unknown field `{key}` for `{kind}` (a query has id, query, a, b, \
                     pose_a, pose_b, and a toi pose_a_end and pose_b_end)"
                )));
            }
        }
        let a = self.shape(obj.get("a"), "a")?;
        let b = self.shape(obj.get("b"), "b")?;
        let pose_a = pose(obj.get("pose_a"), "pose_a")?;
        let pose_b = pose(obj.get("pose_b"), "pose_b")?;
        let motions = if kind == "toi" {
            // An end pose left out is the start pose: that body stands still.
            let motion = |start, field| {
                let end = match obj.get(field) {
                    None | Some(Value::Null) => start,
                    given => pose(given, field)?,
                };
                ScrewMotion::between(start, end)
                    .map_err(|e| Error::Query(format!("`{field}`: {e}")))
            };
            Some((motion(pose_a, "pose_a_end")?, motion(pose_b, "pose_b_end")?))
        } else {
            None
        };
        let mut out = Map::new();
        let (a, b) = match (a, b) {
            (Shape::Convex(a), Shape::Convex(b)) => (a, b),
            (a @ Shape::Rounded(_), b) | (a, b @ Shape::Rounded(_)) => {
                rounded_answer(&mut out, kind, (&a, pose_a), (&b, pose_b), motions)?;
                return Ok(out);
            }
            (a, b) => {
                trees(&mut out, kind, (&a, pose_a), (&b, pose_b), motions)?;
                return Ok(out);
            }
        };
        match kind {
            "collide" => {
                out.insert(
                    "intersecting".into(),
                    Value::Bool(walk::collide(&a, &pose_a, &b, &pose_b)),
                );
            }
            "distance" => {
                let w = walk::walk(&WalkInput::new(&a, pose_a, &b, pose_b));
                match w.state {
                    WalkState::Penetrating => {
                        out.insert("distance".into(), json!(0.0));
                        out.insert("intersecting".into(), Value::Bool(true));
                    }
                    WalkState::Touching | WalkState::Separated => {
                        out.insert("distance".into(), json!(w.distance));
                        if w.state == WalkState::Touching {
                            out.insert("intersecting".into(), Value::Bool(true));
                        }
                        insert_closest(&mut out, w.point_a, w.point_b, w.features);
                    }
                    // A walk that gave up: the exact separating-axis test says whether
                    // they overlap, and enumeration over feature pairs gives the distance.
                    WalkState::Failed(_) => {
                        if sat::intersects(&a, &pose_a, &b, &pose_b) {
                            out.insert("distance".into(), json!(0.0));
                            out.insert("intersecting".into(), Value::Bool(true));
                        } else {
                            let c = brute::polytope_closest_pair(&a, &pose_a, &b, &pose_b);
                            out.insert("distance".into(), json!(c.distance));
                            insert_closest(&mut out, c.point_a, c.point_b, c.features);
                        }
                    }
                }
            }
            "toi" => {
                let (motion_a, motion_b) = motions.expect("parsed for toi");
                toi(
                    &mut out,
                    &advance::time_of_impact(&ToiInput::new(&a, motion_a, &b, motion_b)),
                );
            }
            _ => penetration(&mut out, &a, &pose_a, &b, &pose_b),
        }
        Ok(out)
    }

    /// A shape: the same vocabulary as a scene's `shape` (see [`ShapeSpec`]); a non-convex
    /// one is decomposed into a hull tree.
    fn shape(&mut self, value: Option<&Value>, field: &str) -> Result<Shape> {
        let bad = |m: String| Error::Query(format!("`{field}`: {m}"));
        let value = value.ok_or_else(|| bad("missing shape".into()))?;
        // `"radius"` beside a shape's key rounds it (a polytope swept by a ball), as a
        // scene's does: refused for a mesh before it is decomposed.
        let unrounded;
        let (value, rounding) = match value.as_object() {
            Some(obj) if obj.len() == 2 && obj.contains_key("radius") => {
                let r = &obj["radius"];
                let r = r
                    .as_f64()
                    .ok_or_else(|| bad(format!("`radius` must be a number, got {r}")))?;
                let mut rest = obj.clone();
                rest.remove("radius");
                unrounded = Value::Object(rest);
                (&unrounded, Some(r))
            }
            _ => (value, None),
        };
        let spec = ShapeSpec::deserialize(value).map_err(|e| {
            let known = value
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.keys().next())
                .filter(|k| shape_form(k).is_some());
            bad(match known {
                Some(key) => shape_value_error(key, &e.to_string()),
                None => format!(
                    "not a shape ({e}); a shape is an object with one key: {SHAPE_KEYS} (and \
                     `radius` beside a convex one's key)"
                ),
            })
        })?;
        let (cache, progress) = (&self.cache, self.progress);
        let build = |spec: &ShapeSpec| -> std::result::Result<Shape, String> {
            let name = match spec {
                ShapeSpec::Obj(path) | ShapeSpec::ObjHull(path) => path.display().to_string(),
                _ => format!("`{}`", spec.name()),
            };
            // What a mesh that cannot be decomposed can be taken as instead.
            let instead = match spec {
                ShapeSpec::Obj(_) => "; `obj_hull` takes the convex hull of its vertices",
                _ => "",
            };
            let geometry = spec
                .build(Path::new(""), &mut Rng::new(0))
                .map_err(|e| e.to_string())?;
            let geometry = match rounding {
                Some(r) => geometry.rounded(r)?,
                None => geometry,
            };
            match geometry {
                ShapeGeometry::Convex(p) => Ok(Shape::Convex(p)),
                ShapeGeometry::Rounded(r) => Ok(Shape::Rounded(r)),
                ShapeGeometry::Mesh(mesh) => {
                    let mut say = |line: &str| {
                        if progress {
                            eprintln!("proxima: {name}: {line}");
                        }
                    };
                    HullTree::decompose(&mesh, &DecomposeParams::default(), cache, &mut say)
                        .map(|t| Shape::Tree(Arc::new(t)))
                        .map_err(|e| {
                            format!("{name} is not convex and cannot be decomposed: {e}{instead}")
                        })
                }
            }
        };
        // Every shape is built once per batch (a file is read once, however its path is
        // spelt), within bounds.
        let key = match &spec {
            ShapeSpec::Obj(path) | ShapeSpec::ObjHull(path) => format!(
                "{} {:?} {rounding:?}",
                spec.name(),
                std::fs::canonicalize(path).unwrap_or_else(|_| path.clone())
            ),
            _ => format!("{spec:?} {rounding:?}"),
        };
        if let Some(kept) = self.built.get(&key) {
            return kept.clone().map_err(bad);
        }
        let found = build(&spec);
        let bytes = key.len() + found.as_ref().map_or(0, table_bytes);
        if self.built.len() >= MAX_KEPT || self.built_bytes + bytes > MAX_KEPT_BYTES {
            self.built.clear();
            self.built_bytes = 0;
        }
        if bytes <= MAX_KEPT_BYTES {
            self.built_bytes += bytes;
            self.built.insert(key, found.clone());
        }
        found.map_err(bad)
    }

    /// What the kept shapes take, in bytes (their spellings and tables).
    pub fn kept_bytes(&self) -> usize {
        self.built_bytes
    }

    /// How many built shapes are kept for the lines to come.
    pub fn kept_shapes(&self) -> usize {
        self.built.len()
    }
}

/// `collide`, `distance`, `penetration` and `toi` where a shape is rounded
/// (`exact::rounded`, `exact::rounded_toi`): the cores' answers with the radii added; a
/// penetration whose normal any direction perpendicular to the cores would serve says
/// `"arbitrary_normal": true`.
fn rounded_answer(
    out: &mut Map<String, Value>,
    kind: &str,
    (a, pose_a): (&Shape, Pose),
    (b, pose_b): (&Shape, Pose),
    motions: Option<(ScrewMotion, ScrewMotion)>,
) -> Result<()> {
    // A hull tree against a rounded body: the tree's descent with the body's distance.
    match (a, b, kind) {
        (Shape::Tree(t), Shape::Rounded(r), "collide" | "distance") => {
            tree_and_rounded(out, kind, t, pose_a, r, pose_b, false);
            return Ok(());
        }
        (Shape::Rounded(r), Shape::Tree(t), "collide" | "distance") => {
            tree_and_rounded(out, kind, t, pose_b, r, pose_a, true);
            return Ok(());
        }
        (Shape::Tree(t), Shape::Rounded(r), "penetration") => {
            let found = tree_rounded_penetration(t, pose_a, r, pose_b);
            insert_penetration(out, found.as_ref().map(|(_, p)| p));
            if let Some((piece, _)) = found {
                out.insert("piece_a".into(), json!(piece));
            }
            return Ok(());
        }
        (Shape::Rounded(r), Shape::Tree(t), "penetration") => {
            let found = tree_rounded_penetration(t, pose_b, r, pose_a);
            // Back to the query's sides: a is the rounded body.
            let swapped = found.as_ref().map(|(_, p)| RoundedPenetration {
                normal: -p.normal,
                point_a: p.point_b,
                point_b: p.point_a,
                features: (p.features.1, p.features.0),
                ..*p
            });
            insert_penetration(out, swapped.as_ref());
            if let Some((piece, _)) = found {
                out.insert("piece_b".into(), json!(piece));
            }
            return Ok(());
        }
        (Shape::Tree(t), Shape::Rounded(r), "toi") => {
            let (ma, mb) = motions.expect("parsed for toi");
            let hit = tree_toi::time_of_impact_rounded(t, ma, r, mb);
            toi(out, &hit.output);
            if hit.output.state != ToiState::Miss {
                out.insert("piece_a".into(), json!(hit.pieces.0));
            }
            return Ok(());
        }
        (Shape::Rounded(r), Shape::Tree(t), "toi") => {
            let (ma, mb) = motions.expect("parsed for toi");
            let mut hit = tree_toi::time_of_impact_rounded(t, mb, r, ma);
            // Back to the query's sides: a is the rounded body.
            hit.output = crate::narrowphase::swapped_toi(hit.output);
            toi(out, &hit.output);
            if hit.output.state != ToiState::Miss {
                out.insert("piece_b".into(), json!(hit.pieces.0));
            }
            return Ok(());
        }
        _ => {}
    }
    let (ra, rb) = (rounded_of(a)?, rounded_of(b)?);
    match kind {
        "collide" => {
            out.insert(
                "intersecting".into(),
                Value::Bool(rounded::collide(&ra, &pose_a, &rb, &pose_b)),
            );
        }
        "distance" => {
            let d = rounded::distance(&ra, &pose_a, &rb, &pose_b);
            out.insert("distance".into(), json!(d.distance));
            if d.contact != Contact::Separated {
                out.insert("intersecting".into(), Value::Bool(true));
            }
            if d.contact != Contact::Penetrating {
                insert_closest(out, d.point_a, d.point_b, d.features);
            }
        }
        "penetration" => {
            insert_penetration(
                out,
                rounded::penetration(&ra, &pose_a, &rb, &pose_b).as_ref(),
            );
        }
        _ => {
            let (motion_a, motion_b) = motions.expect("parsed for toi");
            let hit = rounded_toi::time_of_impact(&ra, motion_a, &rb, motion_b, None, None);
            toi(out, &hit);
            // Overlapping at the start with cores that meet (concentric balls, a ball on a
            // capsule's axis): any normal square to the cores serves, as penetration says.
            if hit.state == ToiState::Overlapping
                && rounded::penetration(&ra, &pose_a, &rb, &pose_b)
                    .is_some_and(|p| p.arbitrary_normal)
            {
                out.insert("arbitrary_normal".into(), Value::Bool(true));
            }
        }
    }
    Ok(())
}

/// `collide`, `distance` and `toi` where a shape is non-convex: the pair tree of the two
/// hull trees (`exact::tree`), and for `toi` the OBB-tree filter and advancement per piece
/// pair (`exact::tree_toi`). The answers keep the convex schema and add `piece_a` /
/// `piece_b` (the piece of a non-convex shape the point lies on; features are numbered
/// within that piece).
fn trees(
    out: &mut Map<String, Value>,
    kind: &str,
    (a, pose_a): (&Shape, Pose),
    (b, pose_b): (&Shape, Pose),
    motions: Option<(ScrewMotion, ScrewMotion)>,
) -> Result<()> {
    let (ta, tb) = (tree_of(a)?, tree_of(b)?);
    let mut cache = TreeCache::new();
    match kind {
        "collide" => {
            let hit = tree::collide(&ta, pose_a, &tb, pose_b, &mut cache);
            out.insert("intersecting".into(), Value::Bool(hit.is_some()));
        }
        "distance" => {
            let d = tree::distance(&ta, pose_a, &tb, pose_b, &mut cache);
            out.insert("distance".into(), json!(d.distance));
            if d.state != TreeState::Separated {
                out.insert("intersecting".into(), Value::Bool(true));
            }
            if d.state != TreeState::Penetrating {
                insert_closest(out, d.point_a, d.point_b, d.features);
                insert_pieces(out, a, b, d.pieces);
            }
        }
        "toi" => {
            let (motion_a, motion_b) = motions.expect("parsed for toi");
            let r = tree_toi::time_of_impact(&ta, motion_a, &tb, motion_b);
            toi(out, &r.output);
            if r.output.state != ToiState::Miss {
                insert_pieces(out, a, b, r.pieces);
            }
        }
        _ => {
            // The deepest of the piece pairs that touch or overlap.
            let pairs = tree::pieces_within(&ta, pose_a, &tb, pose_b, 0.0, &mut cache);
            let found = deepest(pairs, |&(pa, pb)| {
                convex_penetration(ta.piece(pa), &pose_a, tb.piece(pb), &pose_b)
            });
            insert_penetration(out, found.as_ref().map(|(_, p)| p));
            if let Some((pieces, _)) = found {
                insert_pieces(out, a, b, pieces);
            }
        }
    }
    Ok(())
}

/// The deepest penetration of a hull tree's pieces into a rounded body, with its piece.
fn tree_rounded_penetration(
    tree: &HullTree,
    pose_t: Pose,
    body: &Rounded,
    pose_r: Pose,
) -> Option<(u32, RoundedPenetration)> {
    let pieces = tree::pieces_within_rounded(tree, pose_t, body, pose_r, 0.0);
    deepest(pieces, |&piece| {
        let hull = rounded::plain(tree.piece(piece).clone());
        rounded::penetration(&hull, &pose_t, body, &pose_r)
    })
}

/// `collide` or `distance` between a hull tree and a rounded body; `swapped` when the
/// query named the rounded body first (the answer's sides follow the query's).
fn tree_and_rounded(
    out: &mut Map<String, Value>,
    kind: &str,
    tree: &HullTree,
    pose_t: Pose,
    body: &Rounded,
    pose_r: Pose,
    swapped: bool,
) {
    if kind == "collide" {
        let hit = tree::collide_with_rounded(tree, pose_t, body, pose_r);
        out.insert("intersecting".into(), Value::Bool(hit));
        return;
    }
    let d = tree::distance_to_rounded(tree, pose_t, body, pose_r);
    out.insert("distance".into(), json!(d.distance));
    if d.state != TreeState::Separated {
        out.insert("intersecting".into(), Value::Bool(true));
    }
    if d.state == TreeState::Penetrating {
        return;
    }
    let piece = d.pieces.0;
    if swapped {
        insert_closest(out, d.point_b, d.point_a, (d.features.1, d.features.0));
        out.insert("piece_b".into(), json!(piece));
    } else {
        insert_closest(out, d.point_a, d.point_b, d.features);
        out.insert("piece_a".into(), json!(piece));
    }
}

/// `piece_a` / `piece_b` for the sides that are hull trees.
fn insert_pieces(out: &mut Map<String, Value>, a: &Shape, b: &Shape, (pa, pb): (u32, u32)) {
    if let Shape::Tree(_) = a {
        out.insert("piece_a".into(), json!(pa));
    }
    if let Shape::Tree(_) = b {
        out.insert("piece_b".into(), json!(pb));
    }
}

/// A `penetration` answer for two convex shapes (see [`convex_penetration`]).
fn penetration(
    out: &mut Map<String, Value>,
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) {
    insert_penetration(out, convex_penetration(a, pose_a, b, pose_b).as_ref());
}

/// Two convex shapes' penetration: the closest-feature walk (or, where it gave up, the
/// exact separating-axis test) decides overlap, the Gauss-map walk the depth; `None` when
/// they are apart.
fn convex_penetration(
    a: &ConvexPolytope,
    pose_a: &Pose,
    b: &ConvexPolytope,
    pose_b: &Pose,
) -> Option<RoundedPenetration> {
    let w = walk::walk(&WalkInput::new(a, *pose_a, b, *pose_b));
    let overlapping = match w.state {
        WalkState::Penetrating | WalkState::Touching => true,
        WalkState::Separated => false,
        WalkState::Failed(_) => sat::intersects(a, pose_a, b, pose_b),
    };
    if !overlapping {
        return None;
    }
    let depth = depth::walk(&DepthInput::new(a, *pose_a, b, *pose_b))
        .or_else(|| depth::enumerate(a, pose_a, b, pose_b));
    let mut p = match depth {
        Some(p) => p,
        // Touching, where the depth walk and the separating-axis test find an axis apart
        // by the rounding of the planes (a decomposed block model's piece under a box
        // resting on it at 1e3: distance and collide said touching, penetration apart).
        None if w.state == WalkState::Touching => depth::Penetration {
            depth: 0.0,
            normal: walk::touch_normal(
                a,
                pose_a,
                b,
                pose_b,
                w.features,
                (w.point_a, w.point_b),
                0.0,
                walk::points_rounding(a, pose_a, b, pose_b),
            ),
            point_a: w.point_a,
            point_b: w.point_b,
            features: w.features,
            steps: 0,
        },
        None => return None,
    };
    if w.state == WalkState::Touching {
        // Exactly touching: depth 0 where they touch.
        (p.depth, p.point_a, p.point_b) = (0.0, w.point_a, w.point_b);
    }
    Some(p.into())
}

/// Writes a penetration, or the answer for shapes apart.
fn insert_penetration(out: &mut Map<String, Value>, p: Option<&RoundedPenetration>) {
    let Some(p) = p else {
        out.insert("intersecting".into(), Value::Bool(false));
        out.insert("depth".into(), json!(0.0));
        return;
    };
    out.insert("intersecting".into(), Value::Bool(true));
    out.insert("depth".into(), json!(p.depth));
    out.insert("normal".into(), json!(p.normal.to_array()));
    insert_closest(out, p.point_a, p.point_b, p.features);
    if p.arbitrary_normal {
        out.insert("arbitrary_normal".into(), Value::Bool(true));
    }
}

/// The deepest of `candidates`' penetrations, with its candidate.
fn deepest<T>(
    candidates: impl IntoIterator<Item = T>,
    mut depth_of: impl FnMut(&T) -> Option<RoundedPenetration>,
) -> Option<(T, RoundedPenetration)> {
    candidates
        .into_iter()
        .filter_map(|c| depth_of(&c).map(|p| (c, p)))
        .max_by(|x, y| x.1.depth.total_cmp(&y.1.depth))
}

/// The points and features of a `distance` or `penetration` answer.
fn insert_closest(
    out: &mut Map<String, Value>,
    point_a: DVec3,
    point_b: DVec3,
    (feature_a, feature_b): (FeatureId, FeatureId),
) {
    out.insert("point_a".into(), json!(point_a.to_array()));
    out.insert("point_b".into(), json!(point_b.to_array()));
    out.insert("feature_a".into(), json!(feature_a.to_string()));
    out.insert("feature_b".into(), json!(feature_b.to_string()));
}

/// A `toi` answer: a hit with its time, point (midway between the closest points),
/// normal (A to B) and features; a miss as `"hit": false`. Overlap at the start is a hit
/// at 0 with `"overlapping": true`; a capped run answers the last time it proved safe,
/// with `"capped": true` (a conservative hit, never a later time).
fn toi(out: &mut Map<String, Value>, r: &ToiOutput) {
    if r.state == ToiState::Miss {
        out.insert("hit".into(), Value::Bool(false));
        return;
    }
    out.insert("hit".into(), Value::Bool(true));
    out.insert("toi".into(), json!(r.toi));
    out.insert(
        "point".into(),
        json!((0.5 * (r.point_a + r.point_b)).to_array()),
    );
    out.insert("normal".into(), json!(r.normal.to_array()));
    out.insert("feature_a".into(), json!(r.features.0.to_string()));
    out.insert("feature_b".into(), json!(r.features.1.to_string()));
    match r.state {
        ToiState::Overlapping => {
            out.insert("overlapping".into(), Value::Bool(true));
        }
        ToiState::Capped => {
            out.insert("capped".into(), Value::Bool(true));
        }
        ToiState::Hit | ToiState::Miss => {}
    }
}

fn numbers<const N: usize>(v: &Value) -> Option<[f64; N]> {
    let a = v.as_array()?;
    if a.len() != N {
        return None;
    }
    let mut out = [0.0; N];
    for (o, x) in out.iter_mut().zip(a) {
        *o = x.as_f64().filter(|f| f.is_finite())?;
    }
    Some(out)
}

fn vec3(v: &Value) -> Option<DVec3> {
    numbers::<3>(v).map(DVec3::from_array)
}

/// A pose: `{"translation": [x,y,z], "rotation": [x,y,z,w]}`, either part optional.
fn pose(value: Option<&Value>, field: &str) -> Result<Pose> {
    let bad = |m: String| Error::Query(format!("`{field}`: {m}"));
    let Some(value) = value else {
        return Ok(Pose::default());
    };
    if value.is_null() {
        return Ok(Pose::default());
    }
    let obj = value
        .as_object()
        .ok_or_else(|| bad("a pose is an object".into()))?;
    if let Some(k) = obj.keys().find(|k| *k != "translation" && *k != "rotation") {
        return Err(bad(format!("unknown key `{k}` (translation, rotation)")));
    }
    // null is absent, as for the pose itself (a serializer's None).
    let part = |key: &str| obj.get(key).filter(|v| !v.is_null());
    let translation = match part("translation") {
        Some(t) => vec3(t)
            .ok_or_else(|| bad("`translation` must be [x, y, z] of finite numbers".into()))?,
        None => DVec3::ZERO,
    };
    let rotation = match part("rotation") {
        Some(r) => numbers::<4>(r)
            .map(DQuat::from_array)
            .ok_or_else(|| bad("`rotation` must be [x, y, z, w] of finite numbers".into()))?,
        None => DQuat::IDENTITY,
    };
    Pose::new(translation, rotation)
        .checked()
        .map_err(|fault| bad(fault.to_string()))
}

/// A JSON value whose objects repeat no key: `{"query": "collide", "query": "distance"}`
/// was answered as the last, the first dropped without a word. A repeat is an error at
/// the key's place, as the line's other syntax errors are.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` is given twice"
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}
