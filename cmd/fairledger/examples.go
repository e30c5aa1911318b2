package main

// exampleQuery is one of the documented SQL examples: docs/sql.md shows each
// verbatim (a test checks it), `fairledger demo` runs the first two, and a
// test runs them all on the demo history with asserted results.
type exampleQuery struct {
	Title string
	SQL   string
}

func exampleQueries() []exampleQuery {
	return []exampleQuery{
		{
			Title: "GPU-hours per lab per month",
			SQL: `SELECT account, month, round(sum(gpu_sec) / 3600, 1) AS gpu_hours
FROM usage
GROUP BY account, month
HAVING sum(gpu_sec) > 0
ORDER BY month, gpu_hours DESC, account`,
		},
		{
			Title: "Accounts (labs and schools) over their share in the last week",
			SQL: `SELECT account,
       round(avg(effectv_usage / norm_shares), 2) AS usage_over_share,
       round(min(level_fs), 3) AS lowest_level_fs
FROM fairshare
WHERE NOT is_user AND depth >= 1 AND norm_shares > 0
  AND snapshot > (SELECT max(snapshot) FROM fairshare) - INTERVAL 7 DAY
GROUP BY account
HAVING avg(effectv_usage / norm_shares) > 1
ORDER BY usage_over_share DESC, account`,
		},
		{
			Title: "Fair-share factor history of one user",
			SQL: `SELECT strftime(snapshot, '%Y-%m-%d') AS day, account, fair_share, rank, level_fs
FROM fairshare
WHERE "user" = (SELECT min("user") FROM fairshare WHERE is_user)
  AND snapshot >= TIMESTAMPTZ '2025-03-25 00:00:00+00'
ORDER BY snapshot, account`,
		},
	}
}
