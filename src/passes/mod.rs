//! GPU passes, each with its recording function and its CPU twin side by side.

pub mod bounds;
pub mod status;
