-- fairledger history views: one view per table over the hive-partitioned
-- Parquet files of the committed generation,
-- <history>/current/<table>/cluster=<c>/month=<YYYY-MM>/*.parquet
-- (current is a symlink a run switches in one step when it commits).
-- `fairledger sql` runs this file itself, with each glob replaced by the
-- list of the table's files in the committed generation's manifest (an
-- empty file of the table's schema when it has none). From the DuckDB CLI
-- (keep the history under a path without glob characters * ? [ and
-- without a key=value directory, which DuckDB reads as a partition):
--
--   SET VARIABLE history = '/var/lib/fairledger/history';
--   .read schemas/views.sql
--
-- Every timestamp is UTC; set the session zone to print them as such:
SET TimeZone = 'UTC';

CREATE OR REPLACE VIEW jobs AS
SELECT * FROM read_parquet(getvariable('history') || '/current/jobs/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW usage AS
SELECT * FROM read_parquet(getvariable('history') || '/current/usage/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW fairshare AS
SELECT * FROM read_parquet(getvariable('history') || '/current/fairshare/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW associations AS
SELECT * FROM read_parquet(getvariable('history') || '/current/associations/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW runs AS
SELECT * FROM read_parquet(getvariable('history') || '/current/runs/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW priority AS
SELECT * FROM read_parquet(getvariable('history') || '/current/priority/cluster=*/month=*/*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);
