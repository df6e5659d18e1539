//! Everything that talks to wgpu: the context (adapter, device, faults), the engine that
//! runs frame recordings, Pod layouts and dispatch sizes. The shader sources it compiles
//! live one layer down, in [`crate::shaders`].

pub mod context;
pub mod engine;
pub mod layout;
pub mod progress;
pub mod sizes;

pub use context::{
    ContextOptions, GpuContext, NO_ADAPTER_HINT, fallback_line, software_adapter_notice,
};
pub use engine::{Engine, FrameOutput, PendingFrame, TimingMode};
