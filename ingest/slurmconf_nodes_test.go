package ingest

import (
	"reflect"
	"strings"
	"testing"
)

// nodeConf parses text and fails the test on any error.
func nodeConf(t *testing.T, text string) *Config {
	t.Helper()
	c, err := ParseSlurmConf("nodes.conf", strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("ParseSlurmConf(%q) error = %v", text, err)
	}
	return c
}

// TestNodeGroupCPUs works each line's CPUs, sockets and effective CPUs
// out by read_config.c's rules (_parse_nodename) and node_conf.c's
// cpus_efctv = CPUs − specialised cores × (ThreadsPerCore when CPUs counts
// threads, else 1).
func TestNodeGroupCPUs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line                           string
		cpus, eff, boards, sockets, coreSpec int64
		warning                              string // a substring of the one warning, "" for none
	}{
		{"all defaults", "NodeName=a", 1, 1, 1, 1, 0, ""},
		{"CPUs from sockets, cores and threads", "NodeName=b Sockets=2 CoresPerSocket=8 ThreadsPerCore=2", 32, 32, 1, 2, 0, ""},
		{"sockets from CPUs", "NodeName=c CPUs=16 CoresPerSocket=4 ThreadsPerCore=2", 16, 16, 1, 2, 0, ""},
		{"sockets from boards", "NodeName=d Boards=2 SocketsPerBoard=2 CoresPerSocket=4", 16, 16, 2, 4, 0, ""},
		{"Procs is CPUs", "NodeName=p Procs=4", 4, 4, 1, 4, 0, ""},
		{"CPUs = sockets x cores", "NodeName=f CPUs=8 Sockets=2 CoresPerSocket=4", 8, 8, 1, 2, 0, ""},
		{"CPUs = sockets", "NodeName=f2 CPUs=2 Sockets=2 CoresPerSocket=4", 2, 2, 1, 2, 0, ""},
		{"CPUs matching nothing", "NodeName=e CPUs=10 Sockets=2 CoresPerSocket=4", 8, 8, 1, 2, 0, "CPUs=10 matches no Sockets"},
		{"sockets below boards", "NodeName=sb Boards=2 Sockets=1", 1, 1, 1, 1, 0, "Sockets=1 < Boards=2"},
		{"both Sockets and SocketsPerBoard", "NodeName=ss Sockets=3 SocketsPerBoard=2", 2, 2, 1, 2, 0, "SocketsPerBoard"},
		{"zero cores", "NodeName=z CoresPerSocket=0 Sockets=2", 2, 2, 1, 2, 0, "CoresPerSocket=0 is invalid"},
		// 16 cores hold 32 CPUs: a core is 2 CPUs, 2 specialised cores 4.
		{"CoreSpecCount, CPUs are threads", "NodeName=g Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 CoreSpecCount=2", 32, 28, 1, 2, 2, ""},
		// CPUs=16 counts cores: a core is 1 CPU.
		{"CoreSpecCount, CPUs are cores", "NodeName=h CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 CoreSpecCount=2", 16, 14, 1, 2, 2, ""},
		// CPUs 0, 1 are core 0, CPU 6 core 3: 2 cores of 2 CPUs.
		{"CPUSpecList, CPUs are threads", "NodeName=i Sockets=1 CoresPerSocket=4 ThreadsPerCore=2 CPUSpecList=0,1,6", 8, 4, 1, 1, 2, ""},
		{"CPUSpecList, CPUs are cores", "NodeName=j CPUs=4 CPUSpecList=0-1", 4, 2, 1, 4, 2, ""},
		{"CoreSpecCount as large as the cores", "NodeName=k CPUs=4 CoreSpecCount=4", 4, 3, 1, 4, 1, "CoreSpecCount=4 is not below"},
		{"CPUSpecList beyond the CPUs", "NodeName=l CPUs=2 CPUSpecList=5", 2, 2, 1, 2, 0, "CPUSpecList=5"},
		{"CPUSpecList wins over CoreSpecCount", "NodeName=m CPUs=4 CoreSpecCount=1 CPUSpecList=0-2", 4, 1, 1, 4, 3, "with CPUSpecList"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := nodeConf(t, tt.line)
			if len(c.NodeGroups) != 1 {
				t.Fatalf("%d node groups, want 1", len(c.NodeGroups))
			}
			g := c.NodeGroups[0]
			if g.CPUs != tt.cpus || g.EffectiveCPUs != tt.eff || g.Boards != tt.boards || g.Sockets != tt.sockets || g.CoreSpecCount != tt.coreSpec {
				t.Errorf("CPUs %d, effective %d, boards %d, sockets %d, core spec %d; want %d, %d, %d, %d, %d",
					g.CPUs, g.EffectiveCPUs, g.Boards, g.Sockets, g.CoreSpecCount, tt.cpus, tt.eff, tt.boards, tt.sockets, tt.coreSpec)
			}
			var nodeWarnings []string
			for _, w := range c.Warnings {
				if strings.Contains(w, "NodeName=") {
					nodeWarnings = append(nodeWarnings, w)
				}
			}
			switch {
			case tt.warning == "" && len(nodeWarnings) > 0:
				t.Errorf("warnings %q, want none", nodeWarnings)
			case tt.warning != "" && (len(nodeWarnings) != 1 || !strings.Contains(nodeWarnings[0], tt.warning)):
				t.Errorf("warnings %q, want one holding %q", nodeWarnings, tt.warning)
			}
		})
	}
}

func TestNodeGroupDefaults(t *testing.T) {
	t.Parallel()
	c := nodeConf(t, "NodeName=DEFAULT CPUs=8 RealMemory=1000 State=UNKNOWN\n"+
		"NodeName=m[1-2] Feature=a,b\n"+
		"NodeName=DEFAULT RealMemory=2000\n"+
		"NodeName=n1 CPUs=4 Features=c\n")
	want := []NodeGroup{
		{Expr: "m[1-2]", Names: []string{"m1", "m2"}, CPUs: 8, EffectiveCPUs: 8, Boards: 1, Sockets: 8, CoresPerSocket: 1, ThreadsPerCore: 1,
			RealMemoryMB: 1000, Features: []string{"a", "b"}, State: "UNKNOWN", File: "nodes.conf", Line: 2},
		{Expr: "n1", Names: []string{"n1"}, CPUs: 4, EffectiveCPUs: 4, Boards: 1, Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1,
			RealMemoryMB: 2000, Features: []string{"c"}, State: "UNKNOWN", File: "nodes.conf", Line: 4},
	}
	if !reflect.DeepEqual(c.NodeGroups, want) {
		t.Errorf("NodeGroups =\n%+v\nwant\n%+v", c.NodeGroups, want)
	}
	if want := (Totals{Nodes: 3, CPUs: 8 + 8 + 4, MemMB: 1000 + 1000 + 2000}); !reflect.DeepEqual(c.Totals, want) {
		t.Errorf("Totals = %+v, want %+v", c.Totals, want)
	}
}

// TestParseNodeGres counts Gres= as gres.c's _get_gres_cnt does.
func TestParseNodeGres(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gres string
		want []TRESCount
	}{
		{"gpu:4", []TRESCount{{"gres/gpu", 4}}},
		{"gpu:a100:2", []TRESCount{{"gres/gpu", 2}, {"gres/gpu:a100", 2}}},
		{"gpu:a100:2,gpu:v100:2", []TRESCount{{"gres/gpu", 4}, {"gres/gpu:a100", 2}, {"gres/gpu:v100", 2}}},
		{"gpu:a100:1(S:0),gpu:a100:1(S:1)", []TRESCount{{"gres/gpu", 2}, {"gres/gpu:a100", 2}}},
		{"gpu:tesla", []TRESCount{{"gres/gpu", 1}, {"gres/gpu:tesla", 1}}},
		{"gpu", []TRESCount{{"gres/gpu", 1}}},
		// A bare name counts 1 and ends that name's count; the type read
		// before it stays.
		{"gpu:a100:2,gpu,gpu:v100:4", []TRESCount{{"gres/gpu", 1}, {"gres/gpu:a100", 2}}},
		{"mps:400,gpu:2", []TRESCount{{"gres/gpu", 2}, {"gres/mps", 400}}},
		{"bandwidth:10G", []TRESCount{{"gres/bandwidth", 10 << 30}}},
		{"gpu:A100:no_consume:2", []TRESCount{{"gres/gpu", 2}, {"gres/gpu:a100", 2}}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.gres, func(t *testing.T) {
			got, err := parseNodeGres(tt.gres)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseNodeGres(%q) = %v, %v; want %v", tt.gres, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"gpu:2x", ":4", "gpu:99999999999999999999"} {
		if got, err := parseNodeGres(bad); err == nil {
			t.Errorf("parseNodeGres(%q) = %v, want an error", bad, got)
		}
	}
}

// TestPartitionTotals resolves partitions' Nodes= (ALL, hostlists, NodeSets
// by feature and by nodes, repeats) and sums their nodes by hand.
func TestPartitionTotals(t *testing.T) {
	t.Parallel()
	c, err := ParseSlurmConf("nodes.conf", strings.NewReader(
		"NodeName=c[1-4] CPUs=8 RealMemory=1000\n"+
			"NodeName=g[1-2] CPUs=16 RealMemory=4000 Gres=gpu:a100:4 Feature=gpu\n"+
			"NodeSet=gpus Feature=gpu\n"+
			"NodeSet=two Nodes=c[1-2]\n"+
			"PartitionName=all Nodes=ALL\n"+
			"PartitionName=gpu Nodes=gpus PriorityTier=5 PriorityJobFactor=3 MaxTime=2-00:00:00\n"+
			"PartitionName=mix Nodes=two,c2,g1 MaxTime=UNLIMITED\n"+
			"PartitionName=none\n"+
			"PartitionName=ghost Nodes=c1,x[1-2]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a100 := func(n uint64) []TRESCount { return []TRESCount{{"gres/gpu", n}, {"gres/gpu:a100", n}} }
	cluster := Totals{Nodes: 6, CPUs: 4*8 + 2*16, MemMB: 4*1000 + 2*4000, GRES: a100(8)}
	if !reflect.DeepEqual(c.Totals, cluster) {
		t.Errorf("Totals = %+v, want %+v", c.Totals, cluster)
	}
	want := []Partition{
		{Name: "all", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "ALL", Totals: cluster, File: "nodes.conf", Line: 5},
		{Name: "gpu", PriorityJobFactor: 3, PriorityTier: 5, MaxTimeMin: 2 * 1440, Nodes: "gpus",
			Totals: Totals{Nodes: 2, CPUs: 32, MemMB: 8000, GRES: a100(8)}, File: "nodes.conf", Line: 6},
		{Name: "mix", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "two,c2,g1",
			Totals: Totals{Nodes: 3, CPUs: 8 + 8 + 16, MemMB: 1000 + 1000 + 4000, GRES: a100(4)}, File: "nodes.conf", Line: 7},
		{Name: "none", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, File: "nodes.conf", Line: 8},
		{Name: "ghost", PriorityJobFactor: 1, PriorityTier: 1, MaxTimeMin: -1, Nodes: "c1,x[1-2]",
			Totals: Totals{Nodes: 1, CPUs: 8, MemMB: 1000}, File: "nodes.conf", Line: 9},
	}
	if !reflect.DeepEqual(c.Partitions, want) {
		t.Errorf("Partitions =\n%+v\nwant\n%+v", c.Partitions, want)
	}
	wantWarn := "nodes.conf:9: PartitionName=ghost: Nodes=c1,x[1-2] names 2 node(s) no NodeName line defines (x1, x2): the partition's totals leave them out"
	found := false
	for _, w := range c.Warnings {
		found = found || w == wantWarn
	}
	if !found {
		t.Errorf("Warnings = %q, want one %q", c.Warnings, wantWarn)
	}
	gpu, _ := c.Partition("gpu")
	if got, want := gpu.Totals.TRES(), []TRESCount{{"cpu", 32}, {"mem", 8000}, {"node", 2}, {"gres/gpu", 8}, {"gres/gpu:a100", 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("gpu Totals.TRES() = %v, want %v", got, want)
	}
}

// TestPartitionsWithoutNodeLines: a slurm.conf whose partitions name nodes
// and that has no NodeName line (its node lines in a file not given) is
// still good for fair share, with one warning.
func TestPartitionsWithoutNodeLines(t *testing.T) {
	t.Parallel()
	c := nodeConf(t, "PartitionName=cpu Nodes=n[1-4]\nPartitionName=gpu Nodes=g1\n")
	var got []string
	for _, w := range c.Warnings {
		if strings.Contains(w, "NodeName") {
			got = append(got, w)
		}
	}
	want := []string{"nodes.conf: partitions name nodes, and no NodeName line defines any: the cluster's and the partitions' totals (the job size and TRES factors of job priority) are unknown"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

func TestNodeConfErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"duplicate node", "NodeName=n[1-2]\nNodeName=n2", []string{`ingest nodes.conf:2: NodeName="n2": node n2 already defined at nodes.conf:1`}},
		{"node listed twice on its line", "NodeName=n[1,1]", []string{`ingest nodes.conf:1: NodeName="n[1,1]": node n1 already defined at nodes.conf:1`}},
		{"reserved ALL", "NodeName=ALL CPUs=2", []string{`ingest nodes.conf:1: NodeName="ALL": ALL is a reserved word, not a node name`}},
		{"bad hostlist", "NodeName=n[1-", []string{`ingest nodes.conf:1: NodeName="n[1-": "n[1-": '[' without ']'`}},
		{"bad count", "NodeName=n1 CPUs=many", []string{`ingest nodes.conf:1: CPUs="many": not an integer`}},
		{"bad memory", "NodeName=n1 RealMemory=-5", []string{`ingest nodes.conf:1: RealMemory="-5": negative value, want an integer >= 0`}},
		{"bad gres", "NodeName=n1 Gres=gpu:4x", []string{`ingest nodes.conf:1: Gres="gpu:4x": item "gpu:4x": bad count "4x" (want a number with an optional K, M, G, T or P)`}},
		{"bad partition nodes", "NodeName=n1\nPartitionName=p Nodes=n[2", []string{`ingest nodes.conf:2: Nodes="n[2": "n[2": '[' without ']'`}},
		{"bad MaxTime", "PartitionName=p MaxTime=soon", []string{`ingest nodes.conf:1: MaxTime="soon": not a Slurm time string (want min, min:sec, hr:min:sec, days-hr, days-hr:min or days-hr:min:sec)`}},
		{"bad PriorityTier", "PartitionName=p PriorityTier=70000", []string{`ingest nodes.conf:1: PriorityTier="70000": out of range (max 65535)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSlurmConf("nodes.conf", strings.NewReader(tt.text), nil)
			var got []string
			for _, e := range confParseErrors(t, err) {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
