// Package record holds the rows the pipeline hands to the history, in
// memory: the last step before encoding.
//
// Place in the pipeline: after billing, decay and fairshare, before
// encode and history. The pipeline turns each billed Arrow jobs batch
// into a JobTable (JobTable.AppendBatch): JobRecs without pointers, their
// names and TRES sets interned in a JobDict, nullable columns marked by
// the Valid bits, so that a month of a large centre's jobs costs the
// garbage collector nothing to scan. JobTable.Sort puts them in the jobs
// table's order. The other tables are Go rows: UsageRow, FairshareRow
// (FairshareRows and AppendFairshareRows from a fairshare.Tree and
// Result, FairshareFromRows back), AssociationRow (AssociationRows),
// RunRow with its RunConfig. The rows' parquet tags name the columns of
// schemas.Tables; the Compare functions give each table's sort order.
//
// record reads and writes no file and links neither Parquet nor DuckDB:
// package encode writes these rows as Parquet, package history stores
// and reads them.
package record
