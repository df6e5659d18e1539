//! proxima: a collision-detection pipeline. The GPU (wgpu compute shaders) does the wide
//! work: bounding volumes, broadphase, a penetration-depth estimate per pair. The CPU does
//! the exact work on the pairs that survive. Every GPU pass has a CPU twin with the same
//! inputs and outputs, used as test oracle, as fallback without an adapter, and as
//! benchmark baseline. See ARCHITECTURE.md for the stage diagram and module map.

pub mod bench;
pub mod bodies;
pub mod broadphase;
pub mod crowd;
pub mod error;
pub mod estimate;
pub mod exact;
pub mod frame;
pub mod geometry;
pub mod gpu;
pub mod graph;
pub mod impacts;
pub mod kinematic;
pub mod memory;
pub mod motion;
pub mod narrowphase;
pub mod parallel;
pub mod particles;
pub mod passes;
pub mod peer;
pub mod penetration_bench;
pub mod picture;
pub mod pipeline;
pub mod plot;
pub mod profile;
pub mod query;
pub mod rng;
pub mod scene;
pub mod shaders;
pub mod shape;
pub mod slabs;
pub mod toi_bench;
pub mod world;

pub use error::{Error, Result};
pub use pipeline::{DeviceChoice, Pipeline};
