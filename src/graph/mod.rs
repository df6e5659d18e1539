//! The frame graph's data side: recordings of buffers and commands. The engine that runs
//! them lives in [`crate::gpu::engine`].

mod recording;

pub use recording::{BufferId, BufferOrigin, BufferProxy, Command, Counted, ReadbackId, Recording};
