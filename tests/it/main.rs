//! Integration tests: every primitive against a sequential oracle written here, for every
//! element type, on the device `Device::auto()` picks (the host backend in CI, the GPU with
//! `DEVSEQ_DEVICE=cuda`).

// Oracles index plainly and compare floats as written in the API docs.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

mod common;

mod assoc;
mod bad_inputs;
mod booleans;
mod combine;
mod determinism;
mod device;
mod errors;
mod gather;
mod histogram;
mod interop;
mod items;
mod large;
mod lazy;
mod limits;
mod loops;
mod map;
mod neighbours;
mod props;
mod random;
mod ranks;
mod read_paths;
mod reduce;
mod render;
mod runs;
mod sanitize;
mod scan;
mod search;
mod segment;
mod sharded;
mod sort;
mod threads;
mod tuple_keys;
mod views;
mod writes;
