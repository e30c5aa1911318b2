-- fairledger history views: one view per table over the hive-partitioned
-- Parquet files <history>/<table>/cluster=<c>/month=<YYYY-MM>/*.parquet.
-- `fairledger sql` runs this file itself. From the DuckDB CLI:
--
--   SET VARIABLE history = '/var/lib/fairledger/history';
--   .read schemas/views.sql
--
-- Every timestamp is UTC; set the session zone to print them as such:
SET TimeZone = 'UTC';

CREATE OR REPLACE VIEW jobs AS
SELECT * FROM read_parquet(getvariable('history') || '/jobs/cluster=*/month=*/data.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW usage AS
SELECT * FROM read_parquet(getvariable('history') || '/usage/cluster=*/month=*/data.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW fairshare AS
SELECT * FROM read_parquet(getvariable('history') || '/fairshare/cluster=*/month=*/data.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW associations AS
SELECT * FROM read_parquet(getvariable('history') || '/associations/cluster=*/month=*/data.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);

CREATE OR REPLACE VIEW runs AS
SELECT * FROM read_parquet(getvariable('history') || '/runs/cluster=*/month=*/run-*.parquet',
    hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}, union_by_name = true);
