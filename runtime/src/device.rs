//! Devices: the named targets a program can be compiled for. A [`Device`] is a row of the
//! executor registry (`crate::registry`) as users see it: its name (`cpu`, `interp`, later
//! `cuda`, `mlx`), its kind, a one-line description and whether this build can run it.
use std::fmt;

/// What kind of machine a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The host CPU (JIT-compiled native code).
    Cpu,
    /// A GPU, or an engine that may run on one (CUDA; MLX, whose Linux wheel runs on the CPU).
    Gpu,
    /// The reference interpreter: an oracle for checking, not a performance target.
    Reference,
}

impl DeviceKind {
    /// The kind's name (`cpu`, `gpu`, `reference`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
            DeviceKind::Reference => "reference",
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device of the executor registry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// The registry name (`cpu`, `interp`, ...), as given to `runtime::executor`.
    pub name: &'static str,
    /// What kind of machine it is.
    pub kind: DeviceKind,
    /// One line for listings.
    pub description: &'static str,
    /// Whether this build has its executor (an unavailable device is listed, and asking for
    /// its executor is `RuntimeError::UnavailableDevice`).
    pub available: bool,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let avail = if self.available { "" } else { ", not available in this build" };
        write!(f, "{} ({}{avail}): {}", self.name, self.kind, self.description)
    }
}
