//! A small renderer embedding proxima as its collision backend. The renderer owns the wgpu
//! device (created with `Limits::default()`, not the adapter's) and an instance buffer of
//! its own layout (position, scale, rotation, colour: 48 bytes), which it fills each frame
//! as it animates. It hands proxima the device and the buffer; proxima gathers the poses
//! on the GPU from that buffer (nothing is uploaded twice) and returns contacts, which the
//! renderer turns into colours. At the end it writes a picture of the last frame.
//!
//! `cargo run --release --example embed_renderer` (needs a GPU adapter; lavapipe will do).

use bytemuck::{Pod, Zeroable};
use glam::{DQuat, DVec3, Quat, Vec3};
use proxima::bodies::Pose;
use proxima::geometry::generators::cuboid;
use proxima::gpu::GpuContext;
use proxima::passes::pose_gather::{PoseLayout, RotationForm};
use proxima::world::World;

/// The renderer's instance: what its vertex shader reads.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Instance {
    position: [f32; 3],
    scale: f32,
    rotation: [f32; 4],
    colour: [f32; 4],
}

const LAYOUT: PoseLayout = PoseLayout {
    stride: size_of::<Instance>() as u32,
    position: 0,
    rotation: 16,
    form: RotationForm::Quaternion,
};

/// Two rows of crates sliding into each other, turning as they go.
fn animate(frame: u32, n: usize) -> Vec<Instance> {
    let t = frame as f32 / 60.0;
    (0..n)
        .map(|i| {
            let row = (i % 2) as f32;
            let x = (i / 2) as f32 * 1.5;
            let y = if row == 0.0 {
                -2.0 + t * 2.0
            } else {
                2.0 - t * 2.0
            };
            let rotation = Quat::from_rotation_z(t * (1.0 + i as f32 * 0.1));
            Instance {
                position: Vec3::new(x, y, 0.0).to_array(),
                scale: 1.0,
                rotation: rotation.to_array(),
                colour: [0.6, 0.6, 0.7, 1.0],
            }
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The renderer's device: default limits, no extra features.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("renderer"),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))?;
    let n = 16;
    let instances = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("renderer instances"),
        size: (n * size_of::<Instance>()) as u64,
        usage: wgpu::BufferUsages::VERTEX
            | wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    // proxima on the renderer's device, reading the renderer's buffer.
    let mut world = World::on_context(GpuContext::from_device(device, queue.clone()));
    let crate_ = world.add_convex(cuboid(DVec3::splat(0.5))?)?;
    for _ in 0..n {
        world.add_body(crate_, Pose::new(DVec3::ZERO, DQuat::IDENTITY))?;
    }
    world.bind_pose_buffer(&instances, LAYOUT)?;

    let mut last = None;
    for frame in 0..60 {
        let mut frame_instances = animate(frame, n);
        queue.write_buffer(&instances, 0, bytemuck::cast_slice(&frame_instances));
        let report = world.step(0.0)?;
        // The renderer colours touching crates; its draw would read `instances` as usual.
        for c in &report.contacts {
            for b in c.bodies {
                frame_instances[b as usize].colour = [0.95, 0.45, 0.15, 1.0];
            }
        }
        queue.write_buffer(&instances, 0, bytemuck::cast_slice(&frame_instances));
        if frame % 10 == 0 || !report.contacts.is_empty() && last.is_none() {
            println!(
                "frame {frame:2}: {} pairs, {} contacts{}",
                report.pairs.len(),
                report.contacts.len(),
                report
                    .contacts
                    .first()
                    .map(|c| format!(
                        " (first: bodies {:?}, {} points, depth {:.3})",
                        c.bodies,
                        c.manifold.points.len(),
                        -c.manifold.min_separation()
                    ))
                    .unwrap_or_default()
            );
        }
        if !report.contacts.is_empty() {
            last = Some(report);
        }
    }
    let ctx = world
        .gpu_context()
        .expect("the world runs on the renderer's device");
    let report = last.as_ref();
    let picture = proxima::picture::render(ctx, &world, report, 640, 400)?;
    picture.write_png(std::path::Path::new("embed_renderer.png"))?;
    println!("picture of the last frame: embed_renderer.png");
    Ok(())
}
