// Package metrics writes a history's fair share as Prometheus metrics:
// one snapshot per cluster in the text exposition format that
// node_exporter's textfile collector reads (WriteText, no timestamps),
// and the whole history as OpenMetrics with timestamps for `promtool tsdb
// create-blocks-from openmetrics` (OpenMetrics). docs/metrics.md lists
// every metric with its meaning and the Slurm exporter it matches.
//
// Place in the pipeline: a reader of the history, beside report. It
// takes each snapshot's fair-share rows (and the pending jobs of the
// priority table) from the caller, who reads them through
// export/history's View; it reads no history file itself and links
// neither DuckDB nor cgo. OpenMetrics spills the samples to a temporary
// file in a directory the caller names, so that a long history is
// written in bounded memory; WriteText and the rest touch no file.
package metrics
