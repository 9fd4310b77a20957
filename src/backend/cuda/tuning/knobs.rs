//! `DEVSEQ_TUNE`: overrides of launch-shape values for tuning experiments, a comma-separated
//! list of `name=value` (`scan_rounds=8,sort_items=12`), parsed once a process. An unknown name
//! or a value that is not a number is an error of the first `Device::cuda`; `DEVSEQ_TUNE=help`
//! prints every knob with its default. Not for production use: shapes outside the tested ones
//! may not compile. docs/tuning.md has what each default rests on.

use crate::error::{Error, Result};
use std::sync::OnceLock;

macro_rules! knobs {
    ($($name:ident: $default:literal, $what:literal;)*) => {
        /// The knobs `DEVSEQ_TUNE` sets: `None` keeps the default.
        #[derive(Debug, Default, Clone, PartialEq, Eq)]
        pub(crate) struct Knobs {
            $(pub $name: Option<u32>,)*
        }

        /// Every knob: its name, its default, and what it sets.
        const ALL: &[(&str, &str, &str)] = &[$((stringify!($name), $default, $what),)*];

        impl Knobs {
            /// Every knob at its default.
            const NONE: Knobs = Knobs { $($name: None,)* };

            fn set(&mut self, name: &str, value: u32) -> bool {
                match name {
                    $(stringify!($name) => self.$name = Some(value),)*
                    _ => return false,
                }
                true
            }
        }
    };
}

knobs! {
    map_block: "256", "threads a block of map";
    map_rounds: "2", "16-byte accesses a thread of map";
    map_rounds_random: "4", "the same, for random sources of over 16 MB of 4- or 8-byte elements";
    copy_kernel: "1", "stored copies by devseq's kernel (0: the driver's copy)";
    copy_kernel_mib: "128", "the largest copy the kernel takes, in MiB";
    scan_rounds: "by size", "rounds a tile of the scans (2 up to 512 KB, 8 up to 8 MB, then 16)";
    scan_rounds_half: "by size", "the same for f16 and bf16 (2 up to 512 KB, then 8)";
    scan_minb: "by type", "blocks a multiprocessor of the scans (2 or 3)";
    assoc_rounds: "by size", "rounds a tile of the one-pass custom-operator scan";
    assoc_minb: "2", "blocks a multiprocessor of the one-pass custom-operator scan";
    assoc_single: "1", "the one-pass custom-operator scan (0: reduce, then scan)";
    assoc_grouped: "1", "its look-back over groups of 32 tiles (0: tile by tile)";
    assoc_reduce_rounds: "8", "rounds a tile of commutative custom-operator reductions";
    assoc_reduce_minb: "4", "blocks a multiprocessor of those reductions";
    seg_rounds: "by size", "rounds a tile of the segmented scans and reductions";
    seg_minb: "3", "blocks a multiprocessor of kernels with tiles in registers";
    segscan_minb4: "2", "blocks a multiprocessor of segmented scans of 4-byte values";
    segscan_minb8: "4", "the same for stored 8-byte floats and exact 8-byte integer sums";
    segreduce_minb: "by type", "blocks a multiprocessor of the segmented reduction (2 or 3)";
    compact_block: "256", "threads a block of compaction";
    compact_own_block: "512", "the same, for flags computed from the staged values";
    compact_rounds: "by type", "rounds a tile of compaction";
    compact_minb: "4", "blocks a multiprocessor of compaction (blocks of 256)";
    compact_own: "1", "flags computed from the staged values (0: read again)";
    combine_rounds: "by type", "rounds a tile of scatter_combine's runs";
    combine_minb: "by type", "blocks a multiprocessor of scatter_combine's runs (2 or 3)";
    gather_rounds: "2", "rounds of indices a thread of gather and scatter";
    gather_tiles: "1", "a block a tile (0: one wave striding over the tiles)";
    scatter_base_bytes: "1048576", "the largest target scattered with its base in one launch";
    scatter_partition_bytes: "L2 bytes", "targets past this may be scattered in partitions";
    histogram_tiles: "4", "tiles a block of histogram";
    merge_block: "256", "threads a block of merge";
    merge_items: "27", "outputs a thread of merge, keys of up to 4 bytes";
    merge_items8: "7", "the same, wider keys";
    sort_block: "384", "threads a block of the sort's passes";
    sort_items: "23", "keys a thread, 4-byte keys alone";
    sort_minb: "3", "blocks a multiprocessor, 4-byte keys alone";
    sort_items_pairs: "28", "keys a thread, keys and values of up to 4 bytes";
    sort_minb_pairs: "2", "blocks a multiprocessor, the same";
    sort_items8: "20", "keys a thread, 8-byte keys alone";
    sort_minb8: "2", "blocks a multiprocessor, the same";
    sort_items_pairs8: "18", "keys a thread, 12-byte items";
    sort_minb_pairs8: "2", "blocks a multiprocessor, the same";
    sort_items_pairs16: "20", "keys a thread, 16-byte items";
    sort_minb_pairs16: "1", "blocks a multiprocessor, the same";
    sort_items_small: "12", "keys a thread where large tiles would leave multiprocessors idle";
    sort_hist_blocks: "6", "blocks a multiprocessor of the sort's digit counts";
    sort_one_block: "1", "keys that fit one tile sorted in one launch (0: the passes)";
    tile_counter: "0", "tile numbers from an atomic counter (1) or the block index (0)";
    ptx_arch: "none", "PTX for this older compute capability (e.g. 80), compiled by the driver, instead of machine code";
}

/// The knobs of `spec` (the value of `DEVSEQ_TUNE`), or the error naming what is wrong.
fn parse(spec: &str) -> std::result::Result<Knobs, String> {
    let mut k = Knobs::default();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((name, value)) = item.split_once('=') else {
            return Err(format!("`{item}` is not name=value"));
        };
        let (name, value) = (name.trim(), value.trim());
        let Ok(v) = value.parse::<u32>() else {
            return Err(format!("`{name}={value}`: the value is not a number"));
        };
        if !k.set(name, v) {
            return Err(format!("unknown knob `{name}`"));
        }
    }
    Ok(k)
}

/// The knobs and their defaults, one a line (what `DEVSEQ_TUNE=help` prints).
pub(crate) fn help() -> String {
    let mut s = String::from("DEVSEQ_TUNE knobs (name=value, comma-separated; docs/tuning.md):\n");
    for (name, default, what) in ALL {
        s.push_str(&format!("  {name:<24} {default:>9}  {what}\n"));
    }
    s
}

/// The knobs of this process's `DEVSEQ_TUNE`, parsed once (none where it is unset, `help`, or
/// in error; `check` reports the error).
pub(crate) fn knobs() -> &'static Knobs {
    parsed().as_ref().unwrap_or(&Knobs::NONE)
}

fn parsed() -> &'static std::result::Result<Knobs, String> {
    static P: OnceLock<std::result::Result<Knobs, String>> = OnceLock::new();
    P.get_or_init(|| match std::env::var("DEVSEQ_TUNE") {
        Ok(v) if v.trim() == "help" => {
            use std::io::Write;
            // Asked for by the user: the list goes where they are looking.
            let _ = std::io::stderr().lock().write_all(help().as_bytes());
            Ok(Knobs::default())
        }
        Ok(v) => parse(&v),
        Err(_) => Ok(Knobs::default()),
    })
}

/// `Err(InvalidArgument)` where `DEVSEQ_TUNE` has an unknown knob or a bad value.
pub(crate) fn check() -> Result<()> {
    parsed().as_ref().map(|_| ()).map_err(|why| {
        Error::InvalidArgument(format!(
            "DEVSEQ_TUNE: {why} (DEVSEQ_TUNE=help lists the knobs)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_parse_and_refuse() {
        let k = parse("scan_rounds=8, sort_items=12,").unwrap();
        assert_eq!(
            (k.scan_rounds, k.sort_items, k.map_block),
            (Some(8), Some(12), None)
        );
        assert_eq!(parse("").unwrap(), Knobs::default());
        assert!(
            parse("scan_round=8")
                .unwrap_err()
                .contains("unknown knob `scan_round`")
        );
        assert!(
            parse("scan_rounds=eight")
                .unwrap_err()
                .contains("not a number")
        );
        assert!(parse("scan_rounds").unwrap_err().contains("name=value"));
        let h = help();
        assert_eq!(h.lines().count(), ALL.len() + 1);
        assert!(h.contains("sort_items") && h.contains("23"));
    }
}
