-- fairledger history views: one view per table (jobs, usage, fairshare,
-- associations, runs, priority) over the Parquet files of one committed
-- generation of the history, <history>/gen/<N>/<table>/cluster=<c>/month=<YYYY-MM>/*.parquet.
-- Every commit writes a copy of this file into its generation, so from the
-- DuckDB CLI, or any DuckDB client that runs this file's text:
--
--   SET VARIABLE history = '/var/lib/fairledger/history';
--   .read /var/lib/fairledger/history/current/views.sql
--
-- Reading this file pins a generation: it reads <history>/current/manifest.json
-- once (current is the symlink a run switches when it commits) and defines
-- the views over the files that manifest lists, so every query sees that one
-- generation, whatever runs commit meanwhile. Read the file again to see
-- later nights. The generation stays on disk until two later runs have
-- committed, or for as long as a process holds a shared flock on its
-- manifest.json (docs/sql.md); to read one you hold, set its number first:
--
--   SET VARIABLE generation = 42;   -- reads <history>/gen/00000042/manifest.json
--
-- A table with no file yet (priority without run --priority, a new history)
-- has an empty view with the table's columns. Keep the history under a path
-- without the glob characters * ? [ and without a key=value directory,
-- which DuckDB reads as a partition. `fairledger sql` runs this file too,
-- less the pin (the SET VARIABLE statements): it sets fairledger_files
-- itself, from the generation it holds.
--
-- Every timestamp is UTC; set the session zone to print them as such:
SET TimeZone = 'UTC';

-- The pin: the manifest of the committed generation (or of the generation
-- set above), then the map table -> its files, in path order, as
-- <history>/gen/<N>/<path> with DuckDB's glob characters escaped.
SET VARIABLE fairledger_manifest = CASE
    WHEN getvariable('history') IS NULL THEN
        error('views.sql: set the history directory first, as in SET VARIABLE history = ''/var/lib/fairledger/history''')
    ELSE getvariable('history') || coalesce('/gen/' || lpad(CAST(getvariable('generation') AS VARCHAR), 8, '0'), '/current')
        || '/manifest.json' END;

SET VARIABLE fairledger_manifest = (
    SELECT CASE WHEN count(*) = 0 THEN
        error('views.sql: ' || getvariable('fairledger_manifest') || ' does not exist: set the variable history to the directory '
            || 'that holds current and gen/ (and the variable generation, if set, to a generation still in gen/), '
            || 'and run fairledger run once if it has no commit yet')
    ELSE min(file) END
    FROM glob(getvariable('fairledger_manifest')));

SET VARIABLE fairledger_files = (
    SELECT coalesce(map_from_entries(list((tbl, files))), CAST(MAP {} AS MAP(VARCHAR, VARCHAR[])))
    FROM (SELECT f."table" AS tbl,
                 list(getvariable('history') || '/gen/' || lpad(CAST(generation AS VARCHAR), 8, '0') || '/'
                      || regexp_replace(f.path, '([*?\[])', '[\1]', 'g') ORDER BY f.path) AS files
          FROM (SELECT generation, unnest(files) AS f
                FROM read_json(getvariable('fairledger_manifest'),
                               columns = {generation: 'BIGINT', files: 'STRUCT(path VARCHAR, "table" VARCHAR)[]'}))
          GROUP BY f."table"));

-- fairledger_segments(files): the rows of a table's segment files, with the
-- cluster and month of their paths.
CREATE OR REPLACE MACRO fairledger_segments(files) AS TABLE
SELECT * FROM read_parquet(files, hive_partitioning = true,
    hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

-- fairledger_empty_<table>(): no rows, with the columns and types the
-- table's files give (schemas/<table>.md; checked by a test).
CREATE OR REPLACE MACRO fairledger_empty_jobs() AS TABLE
SELECT
    CAST(NULL AS VARCHAR) AS "job_id",
    CAST(NULL AS BIGINT) AS "job_id_raw",
    CAST(NULL AS BIGINT) AS "array_job_id",
    CAST(NULL AS BIGINT) AS "array_task_id",
    CAST(NULL AS BIGINT) AS "het_job_id",
    CAST(NULL AS BIGINT) AS "het_job_offset",
    CAST(NULL AS VARCHAR) AS "user",
    CAST(NULL AS VARCHAR) AS "account",
    CAST(NULL AS VARCHAR) AS "partition",
    CAST(NULL AS VARCHAR) AS "qos",
    CAST(NULL AS VARCHAR) AS "state",
    CAST(NULL AS VARCHAR) AS "cancelled_by",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "submit",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "eligible",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "start",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "end",
    CAST(NULL AS BIGINT) AS "elapsed_sec",
    CAST(NULL AS BIGINT) AS "charged_sec",
    CAST(NULL AS BIGINT) AS "suspended_sec",
    CAST(NULL AS BIGINT) AS "timelimit_min",
    CAST(NULL AS BIGINT) AS "nnodes",
    CAST(NULL AS BIGINT) AS "alloc_cpus",
    CAST(NULL AS DOUBLE) AS "mem_mb",
    CAST(NULL AS DOUBLE) AS "node_count",
    CAST(NULL AS DOUBLE) AS "gpu",
    CAST(NULL AS MAP(VARCHAR, DOUBLE)) AS "tres",
    CAST(NULL AS DOUBLE) AS "billing",
    CAST(NULL AS BIGINT) AS "billing_slurm",
    CAST(NULL AS DOUBLE) AS "usage_factor",
    CAST(NULL AS VARCHAR) AS "source_file",
    CAST(NULL AS BIGINT) AS "source_line",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

CREATE OR REPLACE MACRO fairledger_empty_usage() AS TABLE
SELECT
    CAST(NULL AS VARCHAR) AS "account",
    CAST(NULL AS VARCHAR) AS "user",
    CAST(NULL AS VARCHAR) AS "partition",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "period_start",
    CAST(NULL AS DOUBLE) AS "billing_sec",
    CAST(NULL AS DOUBLE) AS "cpu_sec",
    CAST(NULL AS DOUBLE) AS "mem_mb_sec",
    CAST(NULL AS DOUBLE) AS "gpu_sec",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

CREATE OR REPLACE MACRO fairledger_empty_fairshare() AS TABLE
SELECT
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "snapshot",
    CAST(NULL AS VARCHAR) AS "algorithm",
    CAST(NULL AS VARCHAR) AS "account",
    CAST(NULL AS VARCHAR) AS "user",
    CAST(NULL AS VARCHAR) AS "partition",
    CAST(NULL AS VARCHAR) AS "parent",
    CAST(NULL AS INTEGER) AS "depth",
    CAST(NULL AS BOOLEAN) AS "is_user",
    CAST(NULL AS BIGINT) AS "raw_shares",
    CAST(NULL AS BOOLEAN) AS "shares_parent",
    CAST(NULL AS DOUBLE) AS "norm_shares",
    CAST(NULL AS DOUBLE) AS "raw_usage",
    CAST(NULL AS DOUBLE) AS "norm_usage",
    CAST(NULL AS DOUBLE) AS "effectv_usage",
    CAST(NULL AS DOUBLE) AS "fair_share",
    CAST(NULL AS DOUBLE) AS "level_fs",
    CAST(NULL AS INTEGER) AS "rank",
    CAST(NULL AS VARCHAR) AS "grp_tres_mins",
    CAST(NULL AS VARCHAR) AS "tres_run_mins",
    CAST(NULL AS INTEGER) AS "assoc_line",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

CREATE OR REPLACE MACRO fairledger_empty_associations() AS TABLE
SELECT
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "snapshot",
    CAST(NULL AS VARCHAR) AS "account",
    CAST(NULL AS VARCHAR) AS "user",
    CAST(NULL AS VARCHAR) AS "partition",
    CAST(NULL AS VARCHAR) AS "parent",
    CAST(NULL AS BIGINT) AS "shares",
    CAST(NULL AS BOOLEAN) AS "shares_parent",
    CAST(NULL AS VARCHAR) AS "lineage",
    CAST(NULL AS VARCHAR) AS "source_file",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

CREATE OR REPLACE MACRO fairledger_empty_runs() AS TABLE
SELECT
    CAST(NULL AS VARCHAR) AS "run_id",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "started",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "finished",
    CAST(NULL AS VARCHAR) AS "version",
    CAST(NULL AS STRUCT(path VARCHAR, size_bytes BIGINT, sha256 VARCHAR)[]) AS "inputs",
    CAST(NULL AS VARCHAR) AS "config",
    CAST(NULL AS BIGINT) AS "read",
    CAST(NULL AS BIGINT) AS "ingested",
    CAST(NULL AS BIGINT) AS "rejected",
    CAST(NULL AS MAP(VARCHAR, BIGINT)) AS "skipped",
    CAST(NULL AS BIGINT) AS "jobs_charged",
    CAST(NULL AS BIGINT) AS "snapshots",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

CREATE OR REPLACE MACRO fairledger_empty_priority() AS TABLE
SELECT
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "event_time",
    CAST(NULL AS VARCHAR) AS "event",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "snapshot",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "computed_at",
    CAST(NULL AS BIGINT) AS "job_id",
    CAST(NULL AS BIGINT) AS "array_job_id",
    CAST(NULL AS VARCHAR) AS "user",
    CAST(NULL AS VARCHAR) AS "account",
    CAST(NULL AS VARCHAR) AS "partition",
    CAST(NULL AS VARCHAR) AS "qos",
    CAST(NULL AS BIGINT) AS "priority",
    CAST(NULL AS DOUBLE) AS "age_w",
    CAST(NULL AS DOUBLE) AS "assoc_w",
    CAST(NULL AS DOUBLE) AS "fairshare_w",
    CAST(NULL AS DOUBLE) AS "jobsize_w",
    CAST(NULL AS DOUBLE) AS "partition_w",
    CAST(NULL AS DOUBLE) AS "qos_w",
    CAST(NULL AS MAP(VARCHAR, DOUBLE)) AS "tres_w",
    CAST(NULL AS BIGINT) AS "site",
    CAST(NULL AS BIGINT) AS "nice",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "submit",
    CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS "eligible",
    CAST(NULL AS BIGINT) AS "wait_sec",
    CAST(NULL AS BIGINT) AS "rank",
    CAST(NULL AS BIGINT) AS "waiting",
    CAST(NULL AS VARCHAR) AS "cluster",
    CAST(NULL AS VARCHAR) AS "month"
WHERE false;

-- fairledger_table(name): the table's files in fairledger_files, or no rows
-- when it has none. Variables last as long as the session: views kept in a
-- database file and used in a later session have no files to read.
CREATE OR REPLACE MACRO fairledger_table(name) AS TABLE
FROM query(CASE
    WHEN getvariable('fairledger_files') IS NULL THEN
        error('views.sql: the view ' || name || ' has no files in this session: run views.sql again (SET VARIABLE history, then the file)')
    WHEN getvariable('fairledger_files')[name] IS NULL THEN 'FROM fairledger_empty_' || name || '()'
    ELSE 'FROM fairledger_segments(getvariable(''fairledger_files'')[''' || name || '''])' END);

CREATE OR REPLACE VIEW jobs AS FROM fairledger_table('jobs');

CREATE OR REPLACE VIEW usage AS FROM fairledger_table('usage');

CREATE OR REPLACE VIEW fairshare AS FROM fairledger_table('fairshare');

CREATE OR REPLACE VIEW associations AS FROM fairledger_table('associations');

CREATE OR REPLACE VIEW runs AS FROM fairledger_table('runs');

CREATE OR REPLACE VIEW priority AS FROM fairledger_table('priority');
