//! The memory a model may take ([`daec_model::MemoryBudget`]): what the
//! system and the process limits leave, and what each scalar unknown costs
//! through each subcommand.

use daec_model::MemoryBudget;

/// Peak memory per scalar unknown (with its equation) of each subcommand,
/// measured on `models/scale/pendulum_chain.dae` (7 unknowns per link, a
/// few operations per equation) and rounded up: `flatten` 0.23 kB at
/// 200 000 unknowns (the transmission line 0.29 kB; the bound keeps a
/// margin for models with longer equations), `analyze` 3.1 kB at
/// 200 000 and 2.9 kB at 700 000 (the chains 1.3–1.4 kB), `regularize`
/// 7.7 kB at 7 000, `simulate` 10 kB at 70 000 (preparation and
/// integration grow linearly with the model since the structural
/// equation selection, `daec_solve::select_equations_ordered`; the spring
/// chain needs 4.3 kB at 51 000).
pub(crate) const FLATTEN: u64 = 1_200;
/// See [`FLATTEN`].
pub(crate) const ANALYZE: u64 = 4_000;
/// See [`FLATTEN`].
pub(crate) const REGULARIZE: u64 = 8_000;
/// See [`FLATTEN`].
pub(crate) const SIMULATE: u64 = 16_000;

/// The budget of a command whose scalar unknowns cost `bytes_per_unknown`,
/// `None` where the available memory cannot be read (not Linux).
pub(crate) fn budget(bytes_per_unknown: u64) -> Option<MemoryBudget> {
    available().map(|available| MemoryBudget {
        available,
        bytes_per_unknown,
    })
}

/// The bytes the process can still allocate: the least of the system's
/// available memory (`MemAvailable`), what the address-space limit
/// (`ulimit -v`, `RLIMIT_AS`) leaves beyond the current size, and what the
/// cgroup's `memory.max` leaves beyond its `memory.current`.
fn available() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut least: Option<u64> = None;
    let mut take = |v: Option<u64>| {
        if let Some(v) = v {
            least = Some(least.map_or(v, |l| l.min(v)));
        }
    };
    take(read("/proc/meminfo").and_then(|t| kib_field(&t, "MemAvailable:")));
    if let Some(limit) = read("/proc/self/limits").and_then(|t| address_space_limit(&t)) {
        let used = read("/proc/self/status")
            .and_then(|t| kib_field(&t, "VmSize:"))
            .unwrap_or(0);
        take(Some(limit.saturating_sub(used)));
    }
    let cgroup = read("/proc/self/cgroup")
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        })
        .unwrap_or_default();
    let dir = format!("/sys/fs/cgroup{}", cgroup.trim_end_matches('/'));
    if let Some(max) = read(&format!("{dir}/memory.max")).and_then(|t| t.trim().parse::<u64>().ok())
    {
        let current = read(&format!("{dir}/memory.current"))
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        take(Some(max.saturating_sub(current)));
    }
    least
}

/// The value in bytes of a `Name:   123 kB` line of `/proc/meminfo` or
/// `/proc/self/status`.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The soft `Max address space` limit of `/proc/self/limits` in bytes
/// (`None` when unlimited).
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   2000000 kB\n";
        assert_eq!(kib_field(meminfo, "MemAvailable:"), Some(2_048_000_000));
        assert_eq!(kib_field(meminfo, "VmSize:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \nMax address space         4096000000           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), Some(4_096_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes     \n";
        assert_eq!(address_space_limit(unlimited), None);
    }
}
