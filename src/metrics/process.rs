//! The process collector: what the system says of this process, read at
//! each scrape through `metrics-process` (unprefixed, `process_*`, as every
//! Prometheus client names them).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The process's resident memory, CPU seconds, descriptors, threads and
/// start, read from the system at each scrape.
#[derive(Debug)]
pub(super) struct Process;

impl Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let now = metrics_process::collector::collect();
        if let Some(seconds) = now.cpu_seconds_total {
            let counter = ConstCounter::new(seconds);
            let metric = encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                counter.metric_type(),
            )?;
            counter.encode(metric)?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                now.resident_memory_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                now.virtual_memory_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                now.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                now.max_fds,
            ),
            ("process_threads", "Number of OS threads in the process.", now.threads),
            (
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch in seconds.",
                now.start_time_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            let Some(value) = value.and_then(|v| i64::try_from(v).ok()) else {
                continue;
            };
            let gauge = ConstGauge::new(value);
            let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
            gauge.encode(metric)?;
        }
        Ok(())
    }
}
