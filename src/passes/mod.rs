//! GPU passes, each with its recording function and its CPU twin side by side.

pub mod bounds;
pub mod broadphase;
pub mod depth;
pub mod dispatch_args;
pub mod pose_gather;
pub mod radix;
pub mod round_contacts;
pub mod scan;
pub mod status;
