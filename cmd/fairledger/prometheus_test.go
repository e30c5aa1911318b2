package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// prometheusTools returns the directory of Debian's prometheus package
// unpacked (FAIRLEDGER_PROMETHEUS, holding usr/bin/promtool and
// usr/bin/prometheus; .ci/run unpacks it): the test skips without it, or
// fails when FAIRLEDGER_REQUIRE_PROMETHEUS=1 (CI).
func prometheusTools(t *testing.T) (promtool, prometheus string) {
	t.Helper()
	dir := os.Getenv("FAIRLEDGER_PROMETHEUS")
	missing := ""
	if dir == "" {
		missing = "FAIRLEDGER_PROMETHEUS is not set"
	} else {
		promtool, prometheus = filepath.Join(dir, "usr/bin/promtool"), filepath.Join(dir, "usr/bin/prometheus")
		for _, f := range []string{promtool, prometheus} {
			if _, err := os.Stat(f); err != nil {
				missing = fmt.Sprintf("no %s under FAIRLEDGER_PROMETHEUS=%s", filepath.Base(f), dir)
			}
		}
	}
	if missing != "" {
		msg := missing + ": `apt-get download prometheus` and `dpkg-deb -x` it into a directory, as .ci/run does"
		if os.Getenv("FAIRLEDGER_REQUIRE_PROMETHEUS") == "1" {
			t.Fatal(msg + " (FAIRLEDGER_REQUIRE_PROMETHEUS=1)")
		}
		t.Skip(msg)
	}
	return promtool, prometheus
}

// TestPrometheusRoundTrip: the demo history as OpenMetrics, made into
// TSDB blocks by promtool, served by Prometheus on a loopback port; the
// values PromQL returns at several snapshots are those `fairledger sshare
// --at` prints for the same moments. The textfile output passes `promtool
// check metrics`, and every query of the Grafana dashboard returns data
// from that Prometheus.
func TestPrometheusRoundTrip(t *testing.T) {
	promtool, prometheus := prometheusTools(t)
	hist := demoHistory(t)
	dir := t.TempDir()

	t.Run("textfile", func(t *testing.T) {
		prom := filepath.Join(dir, "fairledger.prom")
		if code, _, stderr := runCLI(t, "metrics", "--history", hist, "--out", prom); code != 0 {
			t.Fatalf("metrics: exit %d\n%s", code, stderr)
		}
		f, err := os.Open(prom)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
		data, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			// No timestamps: the last field of a sample is its value.
			if l != "" && !strings.HasPrefix(l, "#") && strings.Count(l[strings.LastIndexByte(l, '}')+1:], " ") != 1 {
				t.Errorf("sample with a timestamp or malformed: %q", l)
			}
		}
	})

	t.Run("node_exporter", func(t *testing.T) {
		checkNodeExporter(t, filepath.Join(filepath.Dir(filepath.Dir(promtool)), "bin", "prometheus-node-exporter"), hist)
	})

	om := filepath.Join(dir, "history.om")
	if code, _, stderr := runCLI(t, "metrics", "--history", hist, "--format", "openmetrics", "--out", om); code != 0 {
		t.Fatalf("metrics --format openmetrics: exit %d\n%s", code, stderr)
	}
	data := filepath.Join(dir, "tsdb")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	base := startPrometheus(t, prometheus, data)

	snaps := snapshotTimes(t, om)
	if len(snaps) < 3 {
		t.Fatalf("the demo history has %d snapshots, want several", len(snaps))
	}
	t.Run("sshare", func(t *testing.T) {
		for _, at := range []int64{snaps[0], snaps[len(snaps)/2], snaps[len(snaps)-1]} {
			compareSshare(t, base, hist, at)
		}
	})
	t.Run("dashboard", func(t *testing.T) {
		checkDashboard(t, base, hist, snaps[len(snaps)-1])
	})
}

// checkNodeExporter serves the textfile of the demo history's latest
// snapshot through node_exporter's textfile collector and checks that it
// read it without error and serves its samples.
func checkNodeExporter(t *testing.T, exporter, hist string) {
	if _, err := os.Stat(exporter); err != nil {
		msg := "no prometheus-node-exporter beside promtool: `apt-get download prometheus-node-exporter` and `dpkg-deb -x` it there, as .ci/run does"
		if os.Getenv("FAIRLEDGER_REQUIRE_PROMETHEUS") == "1" {
			t.Fatal(msg + " (FAIRLEDGER_REQUIRE_PROMETHEUS=1)")
		}
		t.Skip(msg)
	}
	textDir := t.TempDir()
	if code, _, stderr := runCLI(t, "metrics", "--history", hist, "--out", filepath.Join(textDir, "fairledger.prom")); code != 0 {
		t.Fatalf("metrics: exit %d\n%s", code, stderr)
	}
	addr, logf := freeAddr(t), filepath.Join(t.TempDir(), "node_exporter.log")
	startProcess(t, logf, exporter, "--collector.disable-defaults", "--collector.textfile",
		"--collector.textfile.directory="+textDir, "--web.listen-address="+addr)
	body := waitHTTP(t, "http://"+addr+"/metrics", logf)
	// The demo's last snapshot is 2025-04-01T00:00:00Z (1743465600), where
	// sshare prints ahoffman's FairShare 0.461538: Fair Tree's rank/N,
	// 24/52 among the 52 users. node_exporter sorts the labels.
	for _, want := range []string{
		`node_textfile_scrape_error 0`,
		`fairledger_snapshot_timestamp_seconds{cluster="demo"} 1.7434656e+09`,
		`slurm_user_fairshare{account="farouk_lab",cluster="demo",user="ahoffman"} 0.46153846153846156`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("node_exporter's /metrics lacks the line %s", want)
		}
	}
}

// freeAddr is a free TCP address on 127.0.0.1.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startProcess starts a server with its output in logf, stopped (by its
// PID) when the test ends.
func startProcess(t *testing.T, logf, name string, args ...string) {
	t.Helper()
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
}

// waitHTTP waits up to 60 s for url to answer 200 and returns its body.
func waitHTTP(t *testing.T, url, logf string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && rerr == nil {
				return string(body)
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf)
			t.Fatalf("%s not ready after 60 s:\n%s", url, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startPrometheus serves the TSDB blocks in data on a free loopback port
// until the test ends, and returns its URL.
func startPrometheus(t *testing.T, prometheus, data string) string {
	t.Helper()
	addr := freeAddr(t)
	cfg := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A long retention: the blocks are months old, and Prometheus deletes
	// the ones beyond its retention at once.
	logf := filepath.Join(t.TempDir(), "prometheus.log")
	startProcess(t, logf, prometheus, "--config.file="+cfg, "--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr)
	base := "http://" + addr
	waitHTTP(t, base+"/-/ready", logf)
	return base
}

// promSample is one element of an instant query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery runs an instant PromQL query at the Unix time at.
func promQuery(t *testing.T, base, query string, at int64) []promSample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := base + "/api/v1/query?" + url.Values{"query": {query}, "time": {strconv.FormatInt(at, 10)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	if body.Status != "success" || body.Data.ResultType != "vector" {
		t.Fatalf("query %s: status %s, %s, result type %s", query, body.Status, body.Error, body.Data.ResultType)
	}
	return body.Data.Result
}

// value is a sample's value.
func (s promSample) value(t *testing.T) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", s, err)
	}
	return v
}

// snapshotTimes are the times of fairledger_snapshot_timestamp_seconds
// in an OpenMetrics file, in order.
func snapshotTimes(t *testing.T, om string) []int64 {
	t.Helper()
	f, err := os.Open(om)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "fairledger_snapshot_timestamp_seconds{") {
			continue
		}
		fields := strings.Fields(l)
		ts, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, ts)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sshareRow is one line of `sshare -a -l -m -P`.
type sshareRow map[string]string

// sshareAt runs `fairledger sshare -a -l -m -P --at @at`.
func sshareAt(t *testing.T, hist string, at int64) []sshareRow {
	t.Helper()
	code, out, stderr := runCLI(t, "sshare", "--history", hist, "--at", "@"+strconv.FormatInt(at, 10), "-a", "-l", "-m", "-P")
	if code != 0 {
		t.Fatalf("sshare --at @%d: exit %d\n%s", at, code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	head := strings.Split(lines[0], "|")
	var rows []sshareRow
	for _, l := range lines[1:] {
		cells := strings.Split(l, "|")
		r := sshareRow{}
		for i, h := range head {
			r[h] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, r)
	}
	return rows
}

// compareSshare checks the compatible families at the snapshot at
// against sshare's columns at the same second: NormShares, NormUsage and
// FairShare as sshare prints them (six decimals), RawUsage as its
// truncated integer; a blank cell has no sample.
func compareSshare(t *testing.T, base, hist string, at int64) {
	t.Helper()
	rows := sshareAt(t, hist, at)
	type key struct{ family, account, user string }
	got := map[key]float64{}
	for _, fam := range []string{"slurm_account_fairshare", "slurm_account_fairshare_norm_shares", "slurm_account_fairshare_norm_usage",
		"slurm_account_fairshare_raw_usage_cpu_seconds", "slurm_user_fairshare", "slurm_user_fairshare_norm_shares",
		"slurm_user_fairshare_norm_usage", "slurm_user_fairshare_raw_usage_cpu_seconds"} {
		for _, s := range promQuery(t, base, fam+`{cluster="demo"}`, at) {
			got[key{fam, s.Metric["account"], s.Metric["user"]}] = s.value(t)
		}
	}
	checked := 0
	for _, r := range rows {
		if r["Partition"] != "" {
			continue // partition associations: fairledger's own family only
		}
		prefix := "slurm_account_fairshare"
		if r["User"] != "" {
			prefix = "slurm_user_fairshare"
		}
		for _, c := range []struct{ col, fam string }{{"FairShare", prefix}, {"NormShares", prefix + "_norm_shares"},
			{"NormUsage", prefix + "_norm_usage"}, {"RawUsage", prefix + "_raw_usage_cpu_seconds"}} {
			k := key{c.fam, r["Account"], r["User"]}
			v, ok := got[k]
			delete(got, k)
			cell := r[c.col]
			if cell == "" {
				if ok {
					t.Errorf("@%d %s{account=%q,user=%q} = %v, but sshare prints %s blank", at, c.fam, k.account, k.user, v, c.col)
				}
				continue
			}
			want, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("sshare @%d %s %s: %v", at, r["Account"], c.col, err)
			}
			switch {
			case !ok:
				t.Errorf("@%d %s{account=%q,user=%q}: no sample, sshare prints %s %s", at, c.fam, k.account, k.user, c.col, cell)
			case c.col == "RawUsage" && math.Trunc(v) != want:
				t.Errorf("@%d %s{account=%q,user=%q} = %v, sshare prints %s %s (its integer part)", at, c.fam, k.account, k.user, v, c.col, cell)
			case c.col != "RawUsage" && math.Abs(v-want) > 5e-7:
				t.Errorf("@%d %s{account=%q,user=%q} = %v, sshare prints %s %s", at, c.fam, k.account, k.user, v, c.col, cell)
			default:
				checked++
			}
		}
	}
	for k, v := range got {
		t.Errorf("@%d %s{account=%q,user=%q} = %v: no such sshare line", at, k.family, k.account, k.user, v)
	}
	if checked < 100 {
		t.Errorf("@%d: only %d values compared", at, checked)
	}
}

// dashboard is the part of a Grafana dashboard's JSON the test reads.
type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// checkDashboard loads dist/grafana/fairledger.json, checks its
// structure, and runs every panel's query (the template variables
// substituted: cluster demo, every lab, a lookback of a day) at the
// snapshot at against base: each returns data, and the values of each
// kind are those sshare, sprio, the lab report or a DuckDB query over the
// priority table give for at.
func checkDashboard(t *testing.T, base, hist string, at int64) {
	raw, err := os.ReadFile("../../dist/grafana/fairledger.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dist/grafana/fairledger.json: %v", err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if d.Title == "" || d.UID == "" || vars["datasource"] != "datasource" || vars["cluster"] != "query" || len(d.Panels) == 0 {
		t.Fatalf("dashboard: title %q, uid %q, variables %v, %d panels: want a title, a uid, a datasource variable, a cluster query variable and panels", d.Title, d.UID, vars, len(d.Panels))
	}
	subst := strings.NewReplacer("$cluster", "demo", "$account", ".*", "$lookback", "1d")
	results := map[string][]promSample{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.Type != "timeseries" || p.Datasource.UID != "${datasource}" || p.GridPos.W == 0 || p.GridPos.H == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: duplicate id, type %q, datasource %q, size %dx%d, %d targets", p.ID, p.Title, p.Type, p.Datasource.UID, p.GridPos.W, p.GridPos.H, len(p.Targets))
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			if tg.RefID == "" || tg.Expr == "" {
				t.Errorf("panel %q: a target without refId or expr", p.Title)
				continue
			}
			expr := subst.Replace(tg.Expr)
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q: %s: a variable the test does not know", p.Title, expr)
				continue
			}
			res := promQuery(t, base, expr, at)
			if len(res) == 0 {
				t.Errorf("panel %q, target %s: no data at %d: %s", p.Title, tg.RefID, at, expr)
			}
			results[p.Title+"/"+tg.RefID] = res
		}
	}

	// One value of each kind against sshare and sprio at the same second.
	const lab = "farouk_lab"
	var labRow sshareRow
	var userFS []float64
	for _, r := range sshareAt(t, hist, at) {
		switch {
		case r["Account"] == lab && r["User"] == "":
			labRow = r
		case r["Account"] == lab && r["Partition"] == "":
			f, err := strconv.ParseFloat(r["FairShare"], 64)
			if err != nil {
				t.Fatal(err)
			}
			userFS = append(userFS, f)
		}
	}
	if labRow == nil || len(userFS) == 0 {
		t.Fatalf("sshare at %d has no %s lines", at, lab)
	}
	mean := 0.0
	for _, f := range userFS {
		mean += f / float64(len(userFS))
	}
	cell := func(col string) float64 {
		f, err := strconv.ParseFloat(labRow[col], 64)
		if err != nil {
			t.Fatalf("sshare %s %s: %v", lab, col, err)
		}
		return f
	}
	for _, c := range []struct {
		key   string
		want  float64
		label string
	}{
		{"Fair-share factor of the users, mean per lab/A", mean, "sshare's user FairShare, averaged"},
		{"LevelFS per lab/A", cell("LevelFS"), "sshare's LevelFS"},
		{"Usage against shares per lab/A", cell("EffectvUsage"), "sshare's EffectvUsage"},
		{"Usage against shares per lab/B", cell("NormShares"), "sshare's NormShares"},
	} {
		found := false
		for _, s := range results[c.key] {
			if s.Metric["account"] != lab {
				continue
			}
			found = true
			// sshare prints six decimals; the mean of six-decimal values is
			// within 5e-7 too.
			if v := s.value(t); math.Abs(v-c.want) > 5e-7 {
				t.Errorf("%s for %s = %v, want %v (%s)", c.key, lab, v, c.want, c.label)
			}
		}
		if !found {
			t.Errorf("%s: no series of %s", c.key, lab)
		}
	}
	// The time to recover: the lab report's days (at the latest snapshot,
	// which at is), one decimal.
	code, out, stderr := runCLI(t, "report", "--history", hist, "--account", lab, "--format", "md")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	m := regexp.MustCompile(`\| Days to recover at zero use \| ([0-9.]+) \|`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the report of %s has no days to recover:\n%s", lab, out)
	}
	days, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range results["Time to recover at zero use, per lab/A"] {
		if s.Metric["account"] == lab {
			found = true
			if v := s.value(t) / 86400; math.Abs(v-days) > 0.05 {
				t.Errorf("time to recover of %s = %v days, the report says %s", lab, v, m[1])
			}
		}
	}
	if !found {
		t.Errorf("time to recover: no series of %s", lab)
	}

	// The longest and the mean wait per partition: DuckDB over the
	// priority table's pending rows of that second.
	for _, c := range []struct{ panel, agg string }{{"Longest wait per partition/A", "max"}, {"Mean wait per partition/A", "avg"}} {
		want := map[string]float64{}
		q := fmt.Sprintf("SELECT partition, %s(greatest(epoch(event_time) - epoch(coalesce(eligible, submit)), 0)) FROM priority "+
			"WHERE event = 'pending' AND event_time = to_timestamp(%d) GROUP BY partition", c.agg, at)
		for _, rec := range sqlCSV(t, hist, q) {
			f, err := strconv.ParseFloat(rec[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			want[rec[0]] = f
		}
		got := results[c.panel]
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("%s: %d partitions, the priority table has %d", c.panel, len(got), len(want))
		}
		for _, s := range got {
			if w, ok := want[s.Metric["partition"]]; !ok || math.Abs(s.value(t)-w) > 1e-6*max(1, w) {
				t.Errorf("%s %s = %v, SQL's %s %v", c.panel, s.Metric["partition"], s.value(t), c.agg, w)
			}
		}
	}

	// The jobs waiting per partition: sprio's lines at that second.
	code, out, stderr = runCLI(t, "sprio", "--history", hist, "--at", "@"+strconv.FormatInt(at, 10), "--noheader", "-o", "%r")
	if code != 0 {
		t.Fatalf("sprio: exit %d\n%s", code, stderr)
	}
	perPart := map[string]float64{}
	for _, l := range strings.Fields(out) {
		perPart[l]++
	}
	got := map[string]float64{}
	for _, s := range results["Jobs waiting per partition/A"] {
		got[s.Metric["partition"]] = s.value(t)
	}
	if fmt.Sprint(got) != fmt.Sprint(perPart) || len(perPart) == 0 {
		t.Errorf("jobs waiting per partition = %v, sprio's lines per partition %v", got, perPart)
	}
}
