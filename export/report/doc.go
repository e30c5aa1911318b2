// Package report turns a fairledger history into the fair-share report a lab
// head reads: why the lab's priority is what it is, how much the lab used
// against its share, who in the lab used it, and when it will recover.
//
// Place in the pipeline: after the history. report reads a history directory
// through DuckDB (query.OpenDuckDB and the views of schemas/views.sql),
// computes every figure of the reports of one lab (Load) or of all labs,
// a batch of labs at a time (LoadShared, Reports), in a few aggregate
// queries, and writes each report as one self-contained
// HTML page, Markdown (for e-mail) or CSV (for spreadsheets). It reads the
// history and writes only to the io.Writer it is given; the command
// (cmd/fairledger report) opens files.
//
// # What a report holds
//
// For an account A ("the lab") and a period [From, To):
//
//   - the fair-share factor over time: under Fair Tree the lab's LevelFS and
//     each user's FairShare; under the classic and depth-oblivious
//     algorithms the FairShare factor of the lab and of each user;
//   - usage against share over time: the lab's EffectvUsage (the usage the
//     algorithm compares with the share) against its NormShares, and
//     NormUsage (share of the whole cluster's usage) where it differs;
//   - TRES-hours per UTC month (CPU, GPU, memory GiB, billing) from the
//     usage table, undecayed;
//   - top users (usage table), top partitions and the biggest jobs (jobs
//     table, each job counted for the seconds it ran inside the period);
//   - a plain-language explanation of the current factor: the ratio of the
//     lab's decayed usage to its share, under Fair Tree the account with
//     the lowest LevelFS on the lab's path to the top (an account above
//     the lab below its share holds down all the lab's users), and how
//     long the lab would take to get back to its share at zero use (under
//     Fair Tree: until every level of that path is), computed with package
//     decay's arithmetic and package fairshare's algorithms (see Recovery);
//   - "Why did our jobs wait", from the priority table (histories written
//     with run --priority): per UTC month of the period, by start time, the
//     jobs of the lab that started, their median and 90th-percentile wait
//     (start − eligible) and the share that started first in line (rank 1),
//     against the same figures for the rest of the cluster; the mean of
//     each weighted priority factor of the lab's waiting jobs against the
//     other jobs waiting at the same snapshots (the snapshots of the period
//     at which the lab had a job waiting), and the factor with the largest
//     shortfall in one sentence (ties go to the factor listed first: age,
//     association, fair share, job size, partition, QOS, TRES, site, nice);
//     the lab's longest waits (Options.LongestWaits, default 5), each set
//     against the median of the other jobs waiting in its partition at the
//     last snapshot before its start; and what the records cannot tell
//     (backfill, reservations, holds, nice changes, limits). Percentiles
//     and medians are nearest-rank: with the n values sorted, the
//     ⌈p·n⌉-th (DuckDB's quantile_disc), so the median of an even number is
//     the lower middle one. Without priorities in the period the section
//     is one sentence saying so;
//   - the site settings of the run that produced the history (runs.config).
//
// The lab's usage includes its whole subtree (sub-accounts too), as Slurm's
// does. With --all-accounts a report is written for every account that has
// at least one user association directly under it: those are the accounts
// a person leads; pure grouping accounts (a department above its labs) and
// root are skipped. FileNames gives each lab's report a file name of its
// own (stable, visible, bounded), and WriteIndex the page linking them.
//
// # Names
//
// Account, user, partition and cluster names come from the site's
// databases and can be planted. Every writer prints them through
// internal/safetext: control characters spelled out and bidi overrides
// isolated in all three formats (esc, mdText, csvCell), Markdown markup
// escaped (no link from a name), and a CSV cell that would start a
// spreadsheet formula given a leading quote. FileNames never starts a
// file name with '-' or '.'. docs/bad-input.md ("Hostile names") lists
// each case.
//
// # Why hand-written SVG
//
// The charts are a few hundred lines of Go that emit SVG directly rather
// than a plotting library:
//
//   - no dependency: the module stays as it is, and nothing can change the
//     output under us when a library is upgraded;
//   - deterministic bytes: every coordinate is printed with a fixed number of
//     decimals from values in a fixed order, so the same history gives the
//     same file (plotting libraries embed fonts, ids or timestamps);
//   - small output: a chart is a few polylines and rects, a few KB, no
//     embedded fonts or raster images, so a year of daily points for a lab
//     and its users stays well under a megabyte;
//   - full control of accessibility and print: every chart is an
//     <svg role="img"> with a <title> and a <desc>, its numbers are also in
//     a table, colours come from the Okabe–Ito palette (safe for colour
//     blindness) with dash patterns for print in grey, and the page prints
//     without backgrounds or JavaScript.
//
// # Numbers
//
// All three formats print each number with the same function: factors and
// usage fractions with 6 decimals (as sshare), ratios with 2, hours with 1,
// days with 1, percentages with 1. DuckDB sums the doubles of many rows in
// integer thousandths, which is exact and so independent of the order its
// threads add them in; Go sums in sorted key order. The same history gives
// the same bytes.
//
// # Speed and memory
//
// Load reads what every report shares (snapshots, tree, settings, and
// from the priority table every start's wait per month and the sums of
// the pending rows per snapshot), then the rows of the lab's accounts in a
// few queries (series, usage per month, jobs per partition and the
// biggest jobs, and from the priority table the lab's starts, pending
// sums, longest waits and the jobs waiting before them), each read a page
// at a time (query.DB.Stream). For all labs, Reports reads those rows for
// a batch of labs at a time (consecutive labs of up to 512 associations
// together) and drops them after the batch's reports: the memory is a
// batch's, whatever the number of labs, and the reports are byte for byte
// those of one dataset holding every lab (TestReportsInBatches). A
// batch's queries cost a fraction of the same queries over all labs, as
// jobs and usage are stored sorted by account and DuckDB skips the row
// groups of other accounts, but each batch reads the fair-share snapshots
// and the priority table again (BenchmarkReportAllAccounts).
package report
