//! `map`, `zip_map`, `cast`, `filled`, `sequence` and copies on the GPU. A traced `Expr` graph
//! becomes a C++ functor (`MapFn`) inside the kernels of `kernels/map.cu`.

use super::jit::Instance;
use super::{Args, Buffer, Gpu, Ptr, tuning};
use crate::element::ScalarType;
use crate::error::Result;
use crate::expr::{Bin, Cmp, Graph, Kind, Un};
use std::fmt::Write;
use std::sync::Arc;

/// The C++ compute type of values of element type `ty`.
fn ctype(ty: ScalarType) -> &'static str {
    ty.compute_name()
}

/// The functor computing `g`, named `MapFn`, taking the inputs as compute values.
pub(crate) fn functor(g: &Graph) -> String {
    let mut s = String::new();
    let out = ctype(g.out_type());
    let params: Vec<String> = g
        .args
        .iter()
        .enumerate()
        .map(|(k, t)| format!("{} a{k}", ctype(*t)))
        .collect();
    let _ = writeln!(
        s,
        "struct MapFn {{\n  DS_DEV {out} operator()({}) const {{",
        params.join(", ")
    );
    for (i, n) in g.nodes.iter().enumerate() {
        let c = ctype(n.ty);
        let v = |k: &u32| format!("v{k}");
        let e = match &n.kind {
            Kind::Arg(k) => format!("a{k}"),
            Kind::Const(bits) => format!("ds::from_bits<{c}>({bits}ull)"),
            Kind::Unary(op, a) => {
                let f = match op {
                    Un::Neg => format!("ds::neg<{c}>"),
                    Un::Not => format!("ds::bit_not<{c}>"),
                    Un::Abs => "ds::fabs_".into(),
                    Un::Sqrt => "ds::sqrt_".into(),
                    Un::Exp => "ds::exp_".into(),
                    Un::Ln => "ds::ln_".into(),
                    Un::Sin => "ds::sin_".into(),
                    Un::Cos => "ds::cos_".into(),
                    Un::Tanh => "ds::tanh_".into(),
                    Un::Floor => "ds::floor_".into(),
                    Un::Ceil => "ds::ceil_".into(),
                    Un::Round => "ds::round_".into(),
                };
                format!("{f}({})", v(a))
            }
            Kind::Binary(op, a, b) => {
                let f = match op {
                    Bin::Add => format!("ds::add<{c}>"),
                    Bin::Sub => format!("ds::sub<{c}>"),
                    Bin::Mul => format!("ds::mul<{c}>"),
                    Bin::Div => format!("ds::div<{c}>"),
                    Bin::Rem => format!("ds::rem<{c}>"),
                    Bin::And => format!("ds::bit_and<{c}>"),
                    Bin::Or => format!("ds::bit_or<{c}>"),
                    Bin::Xor => format!("ds::bit_xor<{c}>"),
                    Bin::Shl => format!("ds::shl<{c}>"),
                    Bin::Shr => format!("ds::shr<{c}>"),
                    Bin::Min => format!("ds::min_<{c}>"),
                    Bin::Max => format!("ds::max_<{c}>"),
                    Bin::Pow => "ds::pow_".into(),
                };
                format!("{f}({}, {})", v(a), v(b))
            }
            Kind::Cmp(op, a, b) => {
                let o = match op {
                    Cmp::Eq => "==",
                    Cmp::Ne => "!=",
                    Cmp::Lt => "<",
                    Cmp::Le => "<=",
                    Cmp::Gt => ">",
                    Cmp::Ge => ">=",
                };
                format!("(u8)({} {o} {} ? 1 : 0)", v(a), v(b))
            }
            Kind::Select(cnd, a, b) => format!("({} != 0 ? {} : {})", v(cnd), v(a), v(b)),
            Kind::Cast(a) => {
                let from = ctype(g.nodes[*a as usize].ty);
                let x = format!("ds::cast<{c}, {from}>({})", v(a));
                match n.ty {
                    ScalarType::F16 => format!("ds::round_f16({x})"),
                    ScalarType::BF16 => format!("ds::round_bf16({x})"),
                    _ => x,
                }
            }
        };
        let _ = writeln!(s, "    const {c} v{i} = {e};");
    }
    let _ = writeln!(s, "    return v{};\n  }}\n}};", g.out);
    s
}

fn source_with(functor: &str) -> String {
    format!("#include \"map.cu\"\n{functor}")
}

/// Elements a thread takes per access for `g` (by its widest element type).
fn map_vec(g: &Graph) -> u32 {
    let widest = g
        .args
        .iter()
        .map(|t| t.size())
        .chain([g.out_type().size()])
        .max()
        .unwrap_or(1);
    tuning::vec(widest)
}

/// The kernel instance computing `g` (`aligned`: every pointer allows whole-vector access).
pub(crate) fn map_instance(g: &Graph, aligned: bool) -> Instance {
    let types: Vec<&str> = g.args.iter().map(|t| t.name()).collect();
    Instance {
        source: source_with(&functor(g)),
        expr: format!(
            "ds_map{}<MapFn, {}, {}, {}, {}, {}, {aligned}>",
            g.args.len(),
            g.out_type().name(),
            types.join(", "),
            tuning::map().block,
            map_vec(g),
            tuning::map().rounds
        ),
    }
}

/// The generator kernels (`ds_sequence`, `ds_fill`) for `ty`.
pub(crate) fn generator_instance(kernel: &str, ty: ScalarType) -> Instance {
    Instance {
        source: "#include \"map.cu\"\n".to_string(),
        expr: format!(
            "{kernel}<{}, {}, {}, {}>",
            ty.name(),
            tuning::map().block,
            tuning::vec(ty.size()),
            tuning::map().rounds
        ),
    }
}

/// Runs a kernel of the map family over `n` elements of `vec` per access, a block a tile.
fn launch_tiles(gpu: &Gpu, inst: &Instance, vec: u32, n: usize, args: Args) -> Result<()> {
    let kernel = gpu.jit.get(inst)?;
    let sh = tuning::map();
    let tiles = sh.tiles(n, vec);
    // A block a tile (the kernels stride only past the largest grid).
    let grid = tiles.clamp(1, i32::MAX as u64);
    gpu.launch(&kernel, grid, sh.block, args)
}

/// `out[i] = g(a[i])` or `g(a[i], b[i])` for the inputs given.
pub(crate) fn map(gpu: &Arc<Gpu>, g: &Graph, inputs: &[Ptr], n: usize) -> Result<Buffer> {
    let out_ty = g.out_type();
    let out = Buffer::new(gpu, n * out_ty.size())?;
    if n == 0 {
        return Ok(out);
    }
    if g.is_arg(0) && g.args[0] == out_ty {
        gpu.copy(out.ptr(), inputs[0], n * out_ty.size())?;
        return Ok(out);
    }
    let vec = map_vec(g) as usize;
    let aligned = inputs
        .iter()
        .zip(&g.args)
        .map(|(p, t)| (*p, t.size()))
        .chain([(out.ptr(), out_ty.size())])
        .all(|(p, size)| p.aligned((vec * size).min(16)));
    let mut args = Args::new();
    for p in inputs {
        args = args.ptr(*p);
    }
    launch_tiles(
        gpu,
        &map_instance(g, aligned),
        vec as u32,
        n,
        args.ptr(out.ptr()).u64(n as u64),
    )?;
    Ok(out)
}

/// `0, 1, …, n-1` as `ty`.
pub(crate) fn sequence(gpu: &Arc<Gpu>, ty: ScalarType, n: usize) -> Result<Buffer> {
    let out = Buffer::new(gpu, n * ty.size())?;
    if n > 0 {
        launch_tiles(
            gpu,
            &generator_instance("ds_sequence", ty),
            tuning::vec(ty.size()),
            n,
            Args::new().ptr(out.ptr()).u64(n as u64),
        )?;
    }
    Ok(out)
}

/// `n` copies of the element whose stored bits are `bits`.
pub(crate) fn filled(gpu: &Arc<Gpu>, ty: ScalarType, bits: u64, n: usize) -> Result<Buffer> {
    let out = Buffer::new(gpu, n * ty.size())?;
    match ty.size() {
        1 => gpu.memset_u8(out.ptr(), bits as u8, n)?,
        2 => gpu.memset_u16(out.ptr(), bits as u16, n)?,
        4 => gpu.memset_u32(out.ptr(), bits as u32, n)?,
        _ if n == 0 => {}
        _ => launch_tiles(
            gpu,
            &generator_instance("ds_fill", ty),
            tuning::vec(ty.size()),
            n,
            Args::new().ptr(out.ptr()).u64(n as u64).u64(bits),
        )?,
    }
    Ok(out)
}

/// A new buffer with a copy of `bytes` bytes at `src`.
pub(crate) fn copy(gpu: &Arc<Gpu>, src: Ptr, bytes: usize) -> Result<Buffer> {
    let out = Buffer::new(gpu, bytes)?;
    gpu.copy(out.ptr(), src, bytes)?;
    Ok(out)
}
