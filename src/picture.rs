//! A picture of a frame: a headless wgpu render of every body at its pose, bodies in
//! contact highlighted (orange where they touch or overlap another, yellow where they are
//! only within the speculative distance of one), contact normals drawn as lines, written
//! as a PNG.
//!
//! The bodies are drawn from the same body table the frame uploads (`GpuBody`: position,
//! rotation, shape), one instanced draw per shape with the vertices pulled from storage
//! buffers (`shaders/render/picture.wgsl`), so a renderer embedding proxima draws its
//! instances the same way. Meshes: a polytope's faces, a hull tree's pieces, a sphere or
//! capsule as the hull of points on its surface (an icosphere's directions about each end
//! of the core).
//!
//! The colour target is copied to a buffer whose rows are padded to wgpu's 256-byte
//! alignment; the padding is dropped row by row on the way out, so a width that is not a
//! multiple of 64 pixels gives an unsheared image (the test renders one such).

use std::path::Path;
use std::sync::{Arc, Mutex};

use glam::{DVec3, Vec3, Vec4};

use crate::geometry::ConvexPolytope;
use crate::geometry::generators::icosphere;
use crate::geometry::rounded::Rounded;
use crate::gpu::GpuContext;
use crate::gpu::engine::await_mapped;
use crate::gpu::progress::StageSubmissions;
use crate::gpu::sizes::check_buffer;
use crate::narrowphase::ExactShape;
use crate::shaders::{parse_and_validate, resolve_imports};
use crate::world::{FrameReport, World};
use crate::{Error, Result};

/// The render shader, with its imports resolved.
pub fn shader_source() -> Result<String> {
    resolve_imports(
        "render/picture.wgsl",
        include_str!("../shaders/render/picture.wgsl"),
    )
}

/// An RGBA image, rows top to bottom, no padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// `width · height · 4` bytes.
    pub rgba: Vec<u8>,
}

/// The background colour (RGBA).
pub const BACKGROUND: [u8; 4] = [20, 22, 28, 255];

impl Picture {
    /// The pixel at `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        ]
    }

    /// Writes the picture as a PNG file.
    pub fn write_png(&self, path: &Path) -> Result<()> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        writer
            .write_image_data(&self.rgba)
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
    }
}

/// Triangles of a shape in its body frame, three points each.
fn triangles(shape: &ExactShape) -> Result<Vec<Vec3>> {
    let faces = |p: &ConvexPolytope, out: &mut Vec<Vec3>| {
        for f in 0..p.num_faces() {
            let ring: Vec<Vec3> = p.face_vertices(f).map(|v| p.vertex(v).as_vec3()).collect();
            for k in 1..ring.len() - 1 {
                out.extend([ring[0], ring[k], ring[k + 1]]);
            }
        }
    };
    let mut out = Vec::new();
    match shape {
        ExactShape::Convex(p) => faces(p, &mut out),
        ExactShape::Tree(t) => t.pieces().for_each(|p| faces(p, &mut out)),
        ExactShape::Rounded(r) => faces(&rounded_hull(r)?, &mut out),
    }
    Ok(out)
}

/// A polytope close to a rounded body: an icosphere's directions times the radius about
/// every point of the core's hull.
fn rounded_hull(r: &Rounded) -> Result<ConvexPolytope> {
    let ball = icosphere(r.radius.max(1e-9), 2)?;
    let points: Vec<DVec3> = r
        .core_points()
        .iter()
        .flat_map(|&c| ball.vertices().iter().map(move |&d| c + d))
        .collect();
    ConvexPolytope::from_points(&points)
}

/// Whether `ctx` can draw a picture of `width` x `height` pixels (each side 1 to the
/// device's largest texture): asked before a run, so a size it cannot draw is named before
/// the frames rather than after them.
pub fn check_size(ctx: &GpuContext, width: u32, height: u32) -> Result<()> {
    let limits = ctx.limits();
    let limit = limits.max_texture_dimension_2d;
    if width == 0 || height == 0 || width > limit || height > limit {
        return Err(Error::Usage(format!(
            "a picture of {width}x{height} pixels: each side must be 1 to {limit}"
        )));
    }
    check_buffer(
        &limits,
        "picture readback",
        readback_bytes(width, height),
        READBACK_USAGE,
    )
}

/// The picture's readback buffer's usage.
const READBACK_USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::COPY_DST.union(wgpu::BufferUsages::MAP_READ);

/// The bytes of a picture's readback: its rows of RGBA8 pixels, each padded to wgpu's row
/// alignment ([`padded_row`]).
fn readback_bytes(width: u32, height: u32) -> u64 {
    u64::from(padded_row(width)) * u64::from(height)
}

/// A readback row of `width` RGBA8 pixels, padded to wgpu's row alignment.
fn padded_row(width: u32) -> u32 {
    (width * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
}

/// Renders the world's bodies at their poses, the bodies of `report`'s contacts highlighted
/// (touching or overlapping, or only near) and its contact normals drawn, looking at every
/// body from above one corner.
pub fn render(
    ctx: &GpuContext,
    world: &World,
    report: Option<&FrameReport>,
    width: u32,
    height: u32,
) -> Result<Picture> {
    check_size(ctx, width, height)?;
    let bodies = world.bodies();
    // Meshes, shape after shape; the bodies grouped by shape.
    let mut vertices: Vec<Vec4> = Vec::new();
    let mut ranges = Vec::new();
    for shape in world.shapes() {
        let start = vertices.len() as u32;
        vertices.extend(triangles(shape)?.into_iter().map(|p| p.extend(1.0)));
        ranges.push(start..vertices.len() as u32);
    }
    let mut order: Vec<u32> = (0..bodies.len() as u32).collect();
    order.sort_by_key(|&i| bodies[i as usize].shape);
    let mut touching = vec![0u32; bodies.len().max(1)];
    let mut lines: Vec<Vec4> = Vec::new();
    // The scene's size, for the camera and the normals' length.
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for b in bodies {
        let reach = world.shapes()[b.shape as usize].reach();
        lo = lo.min(b.pose.translation - DVec3::splat(reach));
        hi = hi.max(b.pose.translation + DVec3::splat(reach));
    }
    if bodies.is_empty() {
        (lo, hi) = (DVec3::splat(-1.0), DVec3::splat(1.0));
    }
    let centre = (lo + hi) / 2.0;
    let radius = ((hi - lo).length() / 2.0).max(1e-6);
    let typical = bodies
        .iter()
        .map(|b| world.shapes()[b.shape as usize].reach())
        .sum::<f64>()
        / bodies.len().max(1) as f64;
    if let Some(report) = report {
        for c in &report.contacts {
            // 2: touching or overlapping; 1: near (the crowd's bodies stop short of
            // touching, so its contacts are all near).
            let kind = if c.manifold.min_separation() <= 0.0 {
                2
            } else {
                1
            };
            for b in c.bodies {
                touching[b as usize] = touching[b as usize].max(kind);
            }
            for p in &c.manifold.points {
                let at = (p.point_a + p.point_b) / 2.0 - centre;
                lines.push(at.as_vec3().extend(1.0));
                lines.push((at + c.manifold.normal * typical).as_vec3().extend(1.0));
            }
        }
    }
    // Drawn about the scene's centre, in f64 until then: a scene 1e7 out, its positions
    // rounded to f32 there (1 apart), came out speckled and full of holes.
    let gpu_bodies: Vec<crate::bodies::GpuBody> = bodies
        .iter()
        .map(|b| {
            crate::bodies::GpuBody::new(
                (b.pose.translation - centre).as_vec3(),
                b.pose.rotation.as_quat(),
                b.shape,
            )
        })
        .collect();
    let eye = DVec3::new(1.0, -1.3, 0.9).normalize() * radius * 2.1;
    let view = glam::camera::rh::view::look_at_mat4(eye.as_vec3(), Vec3::ZERO, Vec3::Z);
    // WebGPU's clip space: depth in [0, 1], y up.
    let proj = glam::camera::rh::proj::directx::perspective(
        0.75,
        width as f32 / height as f32,
        (radius * 0.2) as f32,
        (radius * 6.0) as f32,
    );
    let camera: [Vec4; 5] = {
        let m = proj * view;
        [
            m.x_axis,
            m.y_axis,
            m.z_axis,
            m.w_axis,
            Vec3::new(0.4, -0.3, 1.0).extend(0.0),
        ]
    };
    draw(
        ctx,
        &Scene {
            camera: &camera,
            bodies: &gpu_bodies,
            order: &order,
            touching: &touching,
            vertices: &vertices,
            lines: &lines,
            ranges: &ranges,
            width,
            height,
        },
    )
}

/// What a draw needs, CPU side.
struct Scene<'a> {
    camera: &'a [Vec4; 5],
    bodies: &'a [crate::bodies::GpuBody],
    order: &'a [u32],
    touching: &'a [u32],
    vertices: &'a [Vec4],
    lines: &'a [Vec4],
    /// Each shape's vertex range.
    ranges: &'a [std::ops::Range<u32>],
    width: u32,
    height: u32,
}

fn draw(ctx: &GpuContext, s: &Scene<'_>) -> Result<Picture> {
    use wgpu::util::DeviceExt;
    let device = &ctx.device;
    let source = shader_source()?;
    parse_and_validate("render/picture.wgsl", &source)?;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("picture"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let storage = |label: &str, bytes: &[u8]| ctx.storage_buffer(label, bytes);
    let camera = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("camera"),
        contents: bytemuck::cast_slice(s.camera),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let bodies = storage("bodies", bytemuck::cast_slice(s.bodies))?;
    let order = storage("order", bytemuck::cast_slice(s.order))?;
    let touching = storage("touching", bytemuck::cast_slice(s.touching))?;
    let vertices = storage("vertices", bytemuck::cast_slice(s.vertices))?;
    let lines = storage("lines", bytemuck::cast_slice(s.lines))?;

    let format = wgpu::TextureFormat::Rgba8Unorm;
    let depth_format = wgpu::TextureFormat::Depth32Float;
    let target = |format, usage| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some("picture target"),
            size: wgpu::Extent3d {
                width: s.width,
                height: s.height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
    };
    let colour = target(
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let depth = target(depth_format, wgpu::TextureUsages::RENDER_ATTACHMENT);
    // Bodies test and write depth; the normals are drawn over them (they start inside the
    // overlap, where the bodies would hide them).
    let pipeline = |vs: &str, fs: &str, topology, depth_write: bool| {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(vs),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(vs),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState {
                topology,
                ..Default::default()
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: depth_format,
                depth_write_enabled: Some(depth_write),
                depth_compare: Some(if depth_write {
                    wgpu::CompareFunction::LessEqual
                } else {
                    wgpu::CompareFunction::Always
                }),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(fs),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        })
    };
    let body_pipeline = pipeline(
        "vs_body",
        "fs_body",
        wgpu::PrimitiveTopology::TriangleList,
        true,
    );
    let line_pipeline = pipeline(
        "vs_line",
        "fs_line",
        wgpu::PrimitiveTopology::LineList,
        false,
    );
    let bind = |p: &wgpu::RenderPipeline, entries: &[(u32, &wgpu::Buffer)]| {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
            .iter()
            .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("picture"),
            layout: &p.get_bind_group_layout(0),
            entries: &entries,
        })
    };
    let body_group = bind(
        &body_pipeline,
        &[
            (0, &camera),
            (1, &bodies),
            (2, &order),
            (3, &touching),
            (4, &vertices),
        ],
    );
    let line_group = bind(&line_pipeline, &[(0, &camera), (5, &lines)]);

    let padded = padded_row(s.width);
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("picture readback"),
        size: readback_bytes(s.width, s.height),
        usage: READBACK_USAGE,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let colour_view = colour.create_view(&Default::default());
        let depth_view = depth.create_view(&Default::default());
        let bg = BACKGROUND.map(|c| f64::from(c) / 255.0);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("picture"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &colour_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: bg[0],
                        g: bg[1],
                        b: bg[2],
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&body_pipeline);
        pass.set_bind_group(0, &body_group, &[]);
        // One draw per shape over its bodies' slice of `order`.
        let mut first = 0u32;
        for (shape, range) in s.ranges.iter().enumerate() {
            let count = s.order[first as usize..]
                .iter()
                .take_while(|&&b| s.bodies[b as usize].shape as usize == shape)
                .count() as u32;
            if count > 0 && !range.is_empty() {
                pass.draw(range.clone(), first..first + count);
            }
            first += count;
        }
        if !s.lines.is_empty() {
            pass.set_pipeline(&line_pipeline);
            pass.set_bind_group(0, &line_group, &[]);
            pass.draw(0..s.lines.len() as u32, 0..1);
        }
    }
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture: &colour,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(s.height),
            },
        },
        wgpu::Extent3d {
            width: s.width,
            height: s.height,
            depth_or_array_layers: 1,
        },
    );
    let mut submissions = StageSubmissions::default();
    submissions.submit(ctx, "picture", encoder.finish());
    let mapped = Arc::new(Mutex::new(None));
    let flag = Arc::clone(&mapped);
    readback.map_async(wgpu::MapMode::Read, .., move |r| {
        if let Ok(mut m) = flag.lock() {
            *m = Some(r.map_err(|e| e.to_string()));
        }
    });
    submissions.wait_all(ctx)?;
    // The map callback runs in a poll after the copy finished, maybe another thread's
    // (tests share a device): one poll of our own missed it now and then.
    await_mapped(ctx, &mapped).map_err(|e| Error::Readback(format!("picture: {e}")))?;
    let data = readback
        .slice(..)
        .get_mapped_range()
        .map_err(|e| Error::Readback(format!("picture: mapped range: {e:?}")))?;
    let row = (s.width * 4) as usize;
    let mut rgba = Vec::with_capacity(row * s.height as usize);
    for y in 0..s.height as usize {
        let start = y * padded as usize;
        rgba.extend_from_slice(&data[start..start + row]);
    }
    drop(data);
    readback.unmap();
    Ok(Picture {
        width: s.width,
        height: s.height,
        rgba,
    })
}
