//! The op table machinery. Each op family file writes its ops once, in one `op_family!`
//! table: variant, op name, operand count, region count, how it is spelled in MLIR (an IRDL
//! op of the `quabla` dialect, or an upstream op: `func.call`, `scf.if`), and its typed
//! fields under their MLIR attribute names (which are also the Python keywords). From the
//! table the macro generates the family's sub-enum of [`OpKind`](super::OpKind) and
//! everything that used to be spelled by hand per op: the name, the operand and region
//! counts, attribute printing, parsing (from MLIR attributes or Python keywords, through
//! [`AttrSource`]), the IRDL signatures behind `dialect/quabla.irdl.mlir`, and the keyword
//! list behind the generated Python stubs.
//!
//! Field markers: `attr` (an MLIR attribute and a Python keyword), `name` (the sub-enum that
//! names the op, e.g. `reduce_sum`; not an attribute), `shape` / `dtype` / `ty` (carried by the
//! result type in MLIR, a Python keyword), `types` (the result types themselves: calls and
//! control flow, built by the tracer, not from Python), `symbol` (a function symbol).
use crate::error::{DialectError, Result};
use crate::ops::{CmpDir, DotDims, Literal};
use crate::types::{DType, TensorType};

/// Where an op's attributes come from: MLIR (attribute text, with the result types) or Python
/// keywords.
pub trait AttrSource {
    /// The result types when the op is read from MLIR (result-carried fields come from them);
    /// `None` for Python keywords.
    fn results(&self) -> Option<&[TensorType]>;
    /// The keys present (to reject unknown ones).
    fn keys(&self) -> Vec<String>;
    fn int(&self, op: &str, key: &str) -> Result<i64>;
    fn ints(&self, op: &str, key: &str) -> Result<Vec<i64>>;
    fn string(&self, op: &str, key: &str) -> Result<String>;
    fn dtype(&self, op: &str, key: &str) -> Result<DType>;
    fn tensor_type(&self, op: &str, key: &str) -> Result<TensorType>;
}

/// An attribute error naming the op and the attribute.
pub fn attr_err(op: &str, attr: &str, msg: impl Into<String>) -> DialectError {
    DialectError::Attribute { op: op.to_string(), attr: attr.to_string(), message: msg.into() }
}

/// A typed attribute: how it prints in MLIR, reads from an [`AttrSource`], is constrained in
/// IRDL and typed in the Python stubs. Most types are one attribute under the field's name;
/// [`DotDims`] is four, under StableHLO's names.
pub trait AttrType: Sized {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>);
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self>;
    /// (attribute name, IRDL base constraint) pairs.
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>);
    /// (keyword, Python type) pairs.
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>);
}

const ARR: &str = "#builtin.dense_array";
const INT: &str = "#builtin.integer";
const STR: &str = "#builtin.string";

/// `array<i64: 1, 2>` / `array<i64>`.
pub fn print_i64_array(v: &[i64]) -> String {
    if v.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
    }
}

impl AttrType for i64 {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, format!("{self} : i64")));
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        src.int(op, key)
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, INT));
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "int"));
    }
}

impl AttrType for Vec<i64> {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, print_i64_array(self)));
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        src.ints(op, key)
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, ARR));
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "Sequence[int]"));
    }
}

impl AttrType for CmpDir {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, format!("\"{}\"", self.name())));
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        let s = src.string(op, key)?;
        CmpDir::parse(&s).ok_or_else(|| attr_err(op, key, format!("expected one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\", got \"{s}\"")))
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, STR));
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "Literal['eq', 'ne', 'lt', 'le', 'gt', 'ge']"));
    }
}

impl AttrType for DotDims {
    fn print(&self, _key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push(("lhs_batching_dimensions", print_i64_array(&self.lhs_batching_dimensions)));
        out.push(("rhs_batching_dimensions", print_i64_array(&self.rhs_batching_dimensions)));
        out.push(("lhs_contracting_dimensions", print_i64_array(&self.lhs_contracting_dimensions)));
        out.push(("rhs_contracting_dimensions", print_i64_array(&self.rhs_contracting_dimensions)));
    }
    fn read(src: &dyn AttrSource, op: &str, _key: &str) -> Result<Self> {
        Ok(DotDims {
            lhs_batching_dimensions: src.ints(op, "lhs_batching_dimensions")?,
            rhs_batching_dimensions: src.ints(op, "rhs_batching_dimensions")?,
            lhs_contracting_dimensions: src.ints(op, "lhs_contracting_dimensions")?,
            rhs_contracting_dimensions: src.ints(op, "rhs_contracting_dimensions")?,
        })
    }
    fn irdl(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in ["lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions"] {
            out.push((k, ARR));
        }
    }
    fn py(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in ["lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions"] {
            out.push((k, "Sequence[int]"));
        }
    }
}

impl AttrType for Literal {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, self.to_mlir()));
    }
    fn read(_src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        Err(attr_err(op, key, "constants are imported from their dense attribute (and built by the tracer from Python)"))
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "#builtin.dense_int_or_fp_elements"));
    }
    fn py(_key: &'static str, _out: &mut Vec<(&'static str, &'static str)>) {}
}

/// Markers of the fields carried by the first result type (`shape`, `dtype`, `ty`): from MLIR
/// they are read off the result; from Python they are keywords ([`FromResult`]).
/// The result's shape.
pub struct Shape;
/// The result's element type.
pub struct Elem;
/// The result's whole type.
pub struct Whole;

/// How a result-carried field of type `T` is read for marker `M`.
pub trait FromResult<M>: Sized {
    fn from_result(t: &TensorType) -> Self;
    fn read_py(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self>;
    const PY: &'static str;
}

impl FromResult<Shape> for Vec<i64> {
    fn from_result(t: &TensorType) -> Self {
        t.shape.clone()
    }
    fn read_py(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        src.ints(op, key)
    }
    const PY: &'static str = "Sequence[int]";
}

impl FromResult<Elem> for DType {
    fn from_result(t: &TensorType) -> Self {
        t.dtype
    }
    fn read_py(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        src.dtype(op, key)
    }
    const PY: &'static str = "int";
}

impl FromResult<Whole> for TensorType {
    fn from_result(t: &TensorType) -> Self {
        t.clone()
    }
    fn read_py(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        src.tensor_type(op, key)
    }
    const PY: &'static str = "tuple[Sequence[int], int]";
}

/// Reads a result-carried field.
pub fn result_field<M, T: FromResult<M>>(src: &dyn AttrSource, op: &str, key: &str) -> Result<T> {
    match src.results() {
        Some(rs) => match rs {
            [r] => Ok(T::from_result(r)),
            _ => Err(DialectError::Structure(format!("'quabla.{op}' op: expects one result, got {}", rs.len()))),
        },
        None => T::read_py(src, op, key),
    }
}

/// Reads the result types of an op that carries them (calls, control flow).
pub fn result_types(src: &dyn AttrSource, op: &str) -> Result<Vec<TensorType>> {
    src.results().map(<[TensorType]>::to_vec).ok_or_else(|| attr_err(op, "results", format!("'quabla.{op}' ops are built by the tracer, not from keywords")))
}

/// Reads a function symbol (`@f`).
pub fn symbol(src: &dyn AttrSource, op: &str, key: &str) -> Result<String> {
    let v = src.string(op, key)?;
    match (src.results(), v.strip_prefix('@')) {
        (Some(_), Some(s)) => Ok(s.trim_matches('"').to_string()),
        (Some(_), None) => Err(attr_err(op, key, format!("expected a flat symbol reference, got `{v}`"))),
        (None, _) => Ok(v.trim_start_matches('@').to_string()),
    }
}

/// Checks that every key of `src` is one of `allowed`.
pub fn check_keys(src: &dyn AttrSource, op: &str, allowed: &[&str]) -> Result<()> {
    for k in src.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(attr_err(op, &k, "unknown attribute for this op"));
        }
    }
    Ok(())
}

/// Signature of an IRDL op: name, operand count (`None`: `leading` operands and a variadic
/// group), result count and attributes with their IRDL base constraints.
pub struct OpSig {
    pub name: &'static str,
    pub operands: Option<usize>,
    /// Operands before the variadic group when `operands` is `None` (`dynamic_slice`: 1,
    /// `dynamic_update_slice`: 2).
    pub leading: usize,
    pub results: Option<usize>,
    /// Number of regions (each declared `irdl.region`, one block).
    pub regions: usize,
    pub attrs: Vec<(&'static str, &'static str)>,
}

/// Generates a family's sub-enum and its table-driven methods. See the file header.
macro_rules! op_family {
    (@name $lit:literal; $($rest:tt)*) => { $lit };
    (@name _; $f:ident [name] $(, $($rest:tt)*)?) => { $f.name() };
    (@name _; $f:ident [$m:ident] $(, $($rest:tt)*)?) => { op_family!(@name _; $($($rest)*)?) };
    (@names $lit:literal; $($rest:tt)*) => { vec![$lit] };
    (@names _; $f:ident : $t:ty [name] $(, $($rest:tt)*)?) => { <$t>::ALL.iter().map(|x| x.name()).collect::<Vec<&'static str>>() };
    (@names _; $f:ident : $t:ty [$m:ident] $(, $($rest:tt)*)?) => { op_family!(@names _; $($($rest)*)?) };
    // The sub-enum value named `$n` (`Some(())` for a fixed name).
    (@matches $lit:literal, $n:expr; $($rest:tt)*) => { if $n == $lit { Some(()) } else { None } };
    (@matches _, $n:expr; $f:ident : $t:ty [name] $(, $($rest:tt)*)?) => { <$t>::from_name($n) };
    (@matches _, $n:expr; $f:ident : $t:ty [$m:ident] $(, $($rest:tt)*)?) => { op_family!(@matches _, $n; $($($rest)*)?) };
    (@arity var) => { None };
    (@arity var2) => { None };
    (@arity $n:literal) => { Some($n) };
    (@leading var) => { 1 };
    (@leading var2) => { 2 };
    (@leading $n:literal) => { 0 };
    (@irdl irdl) => { true };
    (@irdl upstream) => { false };
    (@print $f:ident : $t:ty [attr], $out:ident) => { <$t as $crate::ops::table::AttrType>::print($f, stringify!($f), &mut $out) };
    (@print $f:ident : $t:ty [symbol], $out:ident) => { $out.push((stringify!($f), format!("@{}", $f))) };
    (@print $f:ident : $t:ty [$m:ident], $out:ident) => { let _ = $f; };
    (@sig $f:ident : $t:ty [attr], $out:ident) => { <$t as $crate::ops::table::AttrType>::irdl(stringify!($f), &mut $out) };
    (@sig $f:ident : $t:ty [$m:ident], $out:ident) => {};
    (@py $f:ident : $t:ty [attr], $out:ident) => { <$t as $crate::ops::table::AttrType>::py(stringify!($f), &mut $out) };
    (@py $f:ident : $t:ty [shape], $out:ident) => { $out.push((stringify!($f), <$t as $crate::ops::table::FromResult<$crate::ops::table::Shape>>::PY)) };
    (@py $f:ident : $t:ty [dtype], $out:ident) => { $out.push((stringify!($f), <$t as $crate::ops::table::FromResult<$crate::ops::table::Elem>>::PY)) };
    (@py $f:ident : $t:ty [ty], $out:ident) => { $out.push((stringify!($f), <$t as $crate::ops::table::FromResult<$crate::ops::table::Whole>>::PY)) };
    (@py $f:ident : $t:ty [symbol], $out:ident) => { $out.push((stringify!($f), "str")) };
    (@py $f:ident : $t:ty [$m:ident], $out:ident) => {};
    (@read $f:ident : $t:ty [attr], $src:ident, $op:ident, $sub:ident) => { <$t as $crate::ops::table::AttrType>::read($src, $op, stringify!($f))? };
    (@read $f:ident : $t:ty [name], $src:ident, $op:ident, $sub:ident) => { $sub };
    (@read $f:ident : $t:ty [shape], $src:ident, $op:ident, $sub:ident) => { $crate::ops::table::result_field::<$crate::ops::table::Shape, $t>($src, $op, stringify!($f))? };
    (@read $f:ident : $t:ty [dtype], $src:ident, $op:ident, $sub:ident) => { $crate::ops::table::result_field::<$crate::ops::table::Elem, $t>($src, $op, stringify!($f))? };
    (@read $f:ident : $t:ty [ty], $src:ident, $op:ident, $sub:ident) => { $crate::ops::table::result_field::<$crate::ops::table::Whole, $t>($src, $op, stringify!($f))? };
    (@read $f:ident : $t:ty [types], $src:ident, $op:ident, $sub:ident) => { $crate::ops::table::result_types($src, $op)? };
    (@read $f:ident : $t:ty [symbol], $src:ident, $op:ident, $sub:ident) => { $crate::ops::table::symbol($src, $op, stringify!($f))? };
    (
        $(#[$meta:meta])*
        pub enum $E:ident : $fam:ident {
            $(
                $(#[$vmeta:meta])*
                $V:ident = $name:tt, operands $arity:tt, regions $regions:literal, $irdl:ident { $($f:ident : $t:ty [$m:ident]),* $(,)? }
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $E {
            $( $(#[$vmeta])* $V { $($f: $t),* } ),*
        }

        #[allow(unused_variables, unused_mut, clippy::vec_init_then_push)]
        impl $E {
            /// The op name without the dialect prefix.
            pub fn name(&self) -> &'static str {
                match self { $( Self::$V { $($f),* } => op_family!(@name $name; $($f [$m]),*), )* }
            }

            /// Every op name of the family.
            pub fn names() -> Vec<&'static str> {
                let mut v = Vec::new();
                $( v.extend(op_family!(@names $name; $($f : $t [$m]),*)); )*
                v
            }

            /// Expected operand count (`None`: variadic).
            pub fn arity(&self) -> Option<usize> {
                match self { $( Self::$V { .. } => op_family!(@arity $arity), )* }
            }

            /// Number of regions.
            pub fn region_count(&self) -> usize {
                match self { $( Self::$V { .. } => $regions, )* }
            }

            /// The attributes printed in MLIR (result-carried fields are not printed).
            pub fn mlir_attrs(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                match self { $( Self::$V { $($f),* } => { $( op_family!(@print $f : $t [$m], out); )* } )* }
                out
            }

            /// IRDL signatures of the family's ops spelled as `quabla.*` ops.
            pub fn sigs() -> Vec<$crate::ops::table::OpSig> {
                let mut v = Vec::new();
                $(
                    if op_family!(@irdl $irdl) {
                        for name in op_family!(@names $name; $($f : $t [$m]),*) {
                            let mut attrs: Vec<(&'static str, &'static str)> = Vec::new();
                            $( op_family!(@sig $f : $t [$m], attrs); )*
                            v.push($crate::ops::table::OpSig { name, operands: op_family!(@arity $arity), leading: op_family!(@leading $arity), results: Some(1), regions: $regions, attrs });
                        }
                    }
                )*
                v
            }

            /// The Python keywords of op `name` with their types (`None`: not in this family).
            pub fn keywords(name: &str) -> Option<Vec<(&'static str, &'static str)>> {
                $(
                    if op_family!(@names $name; $($f : $t [$m]),*).contains(&name) {
                        let mut out: Vec<(&'static str, &'static str)> = Vec::new();
                        $( op_family!(@py $f : $t [$m], out); )*
                        return Some(out);
                    }
                )*
                None
            }

            /// Builds op `op` of this family from its attributes (`None`: not in this family).
            pub fn build(op: &str, src: &dyn $crate::ops::table::AttrSource) -> Option<$crate::error::Result<Self>> {
                $(
                    if let Some(sub) = op_family!(@matches $name, op; $($f : $t [$m]),*) {
                        let build = || -> $crate::error::Result<Self> {
                            let mut allowed: Vec<(&'static str, &'static str)> = Vec::new();
                            if src.results().is_some() {
                                $( op_family!(@sig $f : $t [$m], allowed); )*
                                $( if stringify!($m) == "symbol" { allowed.push((stringify!($f), "")); } )*
                            } else {
                                $( op_family!(@py $f : $t [$m], allowed); )*
                            }
                            let names: Vec<&str> = allowed.iter().map(|(k, _)| *k).collect();
                            $crate::ops::table::check_keys(src, op, &names)?;
                            Ok(Self::$V { $($f: op_family!(@read $f : $t [$m], src, op, sub)),* })
                        };
                        return Some(build());
                    }
                )*
                None
            }
        }

        impl From<$E> for $crate::ops::OpKind {
            fn from(x: $E) -> Self {
                $crate::ops::OpKind::$fam(x)
            }
        }
    };
}
pub(crate) use op_family;
