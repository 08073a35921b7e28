//! Latency summaries and memory readings for the CLI's measurements.
//!
//! The summaries ([`Summary`], [`SummaryUs`], [`nearest_rank`]) are `munch_vocab::stats`'s,
//! shared with the benchmarks and the lower crates' examples; the memory reading is here.

pub use munch_vocab::stats::{checked_nearest_rank, nearest_rank, us, Summary, SummaryUs};

/// The process's peak resident set size in bytes (`VmHWM` in `/proc/self/status`), where the
/// system reports it (Linux); `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

/// The `VmHWM:` line of a `/proc/PID/status` text, in bytes.
fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut fields = line["VmHWM:".len()..].split_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    // The kernel always reports this field in kibibytes.
    match fields.next() {
        Some("kB") => value.checked_mul(1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_hwm_is_read_in_kibibytes() {
        let status = "Name:\tmunch\nVmPeak:\t  20000 kB\nVmHWM:\t    1500 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(1500 * 1024));
        assert_eq!(parse_vm_hwm("Name:\tmunch\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM:\tlots kB\n"), None);
        #[cfg(target_os = "linux")]
        assert!(peak_rss_bytes().unwrap() > 0);
    }
}
