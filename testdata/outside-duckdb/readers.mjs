// readers.mjs: an outside DuckDB (the npm package @duckdb/node-api, no
// fairledger code) reading a history while fairledger runs commit nights.
// Run by cmd/fairledger's TestOutsideDuckDB (see README.md here):
//
//   FAIRLEDGER_NODE_DUCKDB=<npm prefix holding node_modules/@duckdb/node-api> \
//     node readers.mjs <history> <schemas/views.sql> <priority columns>
//
// Until its standard input closes, it loops: load views.sql the documented
// way (SET VARIABLE history, then the file's text, as the DuckDB CLI's .read
// runs it), alternately <history>/current/views.sql and the repository's
// schemas/views.sql, then run several queries through the views and check
// that they all saw one generation G, the one views.sql pinned:
//   - runs has G rows (every run commits one generation and one runs row);
//   - the newest fairshare snapshot is 2025-01-01 + G days (night k runs
//     --to 2025-01-01 + k days and takes a snapshot at --to);
//   - jobs has the same count every time G is seen, never fewer than an
//     older generation's;
//   - priority (never written here) is empty with its columns.
// Every other loop waits, between its first queries and the rest, for a
// night to commit (current to move past G): the rest must still see G.
// At the start it pins the generation committed then the way docs/sql.md
// tells a long session to, a shared flock(1) on its manifest.json, and at
// the end it loads that generation's views.sql with the variable
// generation set and checks it is still whole, many commits later.
// It also runs, without asserting, the query an engine globbing current/
// would run, and counts its failures. It prints "iter <n> gen <G>" per loop
// and, at the end, one line "summary <JSON>".
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const prefix = process.env.FAIRLEDGER_NODE_DUCKDB;
if (!prefix) {
  console.error('readers.mjs: set FAIRLEDGER_NODE_DUCKDB to the npm prefix where @duckdb/node-api is installed');
  process.exit(2);
}
const { DuckDBInstance } = createRequire(path.join(path.resolve(prefix), 'package.json'))('@duckdb/node-api');
const [history, repoViews, priorityColsArg] = process.argv.slice(2);
const priorityCols = Number(priorityColsArg);

let stop = false;
process.stdin.on('data', () => {});
process.stdin.on('end', () => { stop = true; });
process.stdin.on('close', () => { stop = true; });

const sqlString = (s) => "'" + s.replaceAll("'", "''") + "'";
const num = (v) => (typeof v === 'bigint' ? Number(v) : v);
const day = 24 * 3600 * 1000;
const epoch = Date.UTC(2025, 0, 1);

const summary = {
  iterations: 0, queries: 0, failures: [], failed: 0, generations: [],
  globQueries: 0, globFailures: 0, globFailureSample: '',
};
const jobsAt = new Map(); // generation -> jobs count

function fail(what) {
  summary.failed++;
  if (summary.failures.length < 10) summary.failures.push(what);
}

async function one(conn, rows) {
  summary.queries++;
  const r = await conn.runAndReadAll(rows);
  return r.getRows().map((row) => row.map(num));
}

const current = () => fs.readlinkSync(path.join(history, 'current')); // gen/<N>

// The long session's pin: flock --shared <history>/gen/<N>/manifest.json.
const pinned = current();
const locker = spawn('flock', ['--shared', path.join(history, pinned, 'manifest.json'), '-c', 'echo locked; exec cat >/dev/null'],
  { stdio: ['pipe', 'pipe', 'inherit'] });
await new Promise((resolve, reject) => {
  locker.stdout.once('data', resolve);
  locker.once('error', reject);
  locker.once('exit', (code) => reject(new Error(`flock exited ${code}`)));
});

const instance = await DuckDBInstance.create(':memory:');
let lastGen = 0;
while (!stop || summary.iterations < 1) {
  const n = summary.iterations++;
  const file = n % 2 === 0 ? path.join(history, 'current', 'views.sql') : repoViews;
  const conn = await instance.connect();
  try {
    await conn.run('SET VARIABLE history = ' + sqlString(history));
    await conn.run(fs.readFileSync(file, 'utf8'));
    summary.queries++;
    const [[genText]] = await one(conn, "SELECT regexp_extract(getvariable('fairledger_files')['runs'][1], '/gen/([0-9]+)/', 1)");
    const gen = Number(genText);
    const [[runs]] = await one(conn, 'SELECT count(*) FROM runs');
    if (n % 2 === 1) {
      for (const end = Date.now() + 2000; !stop && current() === `gen/${genText}` && Date.now() < end;) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    const [[snap]] = await one(conn, 'SELECT epoch_ms(max(snapshot)) FROM fairshare');
    const [[jobs, months]] = await one(conn, 'SELECT count(*), count(DISTINCT month) FROM jobs');
    const [[prio, prioCols]] = await one(conn, 'SELECT count(*), (SELECT count(*) FROM (DESCRIBE priority)) FROM priority');
    const [[runs2]] = await one(conn, 'SELECT count(*) FROM runs');
    const where = `${path.basename(path.dirname(file))}/views.sql, iteration ${n}, generation ${gen}`;
    if (!(gen >= 1) || gen < lastGen) fail(`${where}: generation after ${lastGen}`);
    if (runs !== gen || runs2 !== gen) fail(`${where}: runs ${runs} then ${runs2}, want ${gen}`);
    if (snap !== epoch + gen * day) fail(`${where}: newest snapshot ${new Date(snap).toISOString()}, want ${new Date(epoch + gen * day).toISOString()}`);
    if (!(jobs > 0) || months < 1) fail(`${where}: ${jobs} jobs in ${months} months`);
    if (jobsAt.has(gen) && jobsAt.get(gen) !== jobs) fail(`${where}: ${jobs} jobs, ${jobsAt.get(gen)} before in the same generation`);
    for (const [g, j] of jobsAt) if (g < gen && j > jobs) fail(`${where}: ${jobs} jobs, fewer than generation ${g}'s ${j}`);
    if (prio !== 0 || prioCols !== priorityCols) fail(`${where}: priority ${prio} rows, ${prioCols} columns; want 0 and ${priorityCols}`);
    jobsAt.set(gen, jobs);
    if (!summary.generations.includes(gen)) summary.generations.push(gen);
    lastGen = gen;
    console.log(`iter ${n} gen ${gen}`);
  } catch (e) {
    fail(`${path.basename(path.dirname(file))}/views.sql, iteration ${n}: ${e.message.split('\n')[0]}`);
    console.log(`iter ${n} error`);
  } finally {
    conn.closeSync();
  }
  // The way views.sql replaces: a glob under current/ at query time.
  const raw = await instance.connect();
  try {
    summary.globQueries++;
    await raw.runAndReadAll('SELECT count(*) FROM read_parquet(' +
      sqlString(path.join(history, 'current', 'jobs', 'cluster=*', 'month=*', '*.parquet')) + ', union_by_name = true)');
  } catch (e) {
    summary.globFailures++;
    summary.globFailureSample ||= e.message.split('\n')[0];
  } finally {
    raw.closeSync();
  }
}
// The pinned generation, long after: still there, still itself.
{
  const gen = Number(pinned.slice('gen/'.length));
  const conn = await instance.connect();
  try {
    await conn.run('SET VARIABLE history = ' + sqlString(history));
    await conn.run('SET VARIABLE generation = ' + gen);
    await conn.run(fs.readFileSync(path.join(history, pinned, 'views.sql'), 'utf8'));
    const [[runs]] = await one(conn, 'SELECT count(*) FROM runs');
    const [[snap]] = await one(conn, 'SELECT epoch_ms(max(snapshot)) FROM fairshare');
    if (runs !== gen || snap !== epoch + gen * day) fail(`${pinned} under flock, at the end: runs ${runs}, newest snapshot ${new Date(snap).toISOString()}`);
    summary.flockGeneration = gen;
    summary.flockFinalGeneration = Number(current().slice('gen/'.length));
  } catch (e) {
    fail(`${pinned} under flock, at the end: ${e.message.split('\n')[0]}`);
  } finally {
    conn.closeSync();
    locker.stdin.end();
  }
}
console.log('summary ' + JSON.stringify(summary));
