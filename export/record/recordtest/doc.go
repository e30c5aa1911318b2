// Package recordtest holds sample rows of every history table, and the
// helpers to compare them, for the tests and benchmarks of the export
// packages (record, encode, history, query), which share them; and Tree,
// which builds a fair-share tree of golden.Spec associations for the
// tests outside fairshare that turn trees into rows (export/record,
// cmd/fairledger). Its expected values are worked out by hand
// (WantJobOrder); production code does not import it. It touches no file.
package recordtest
