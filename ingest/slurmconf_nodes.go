package ingest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fairledger/fairledger/schemas"
)

// NodeGroup is one NodeName line of slurm.conf: nodes configured alike,
// with the NodeName=DEFAULT values before it applied and Slurm's defaults
// and corrections filled in as slurmctld makes them (_parse_nodename in
// src/common/read_config.c; each correction is noted in Config.Warnings).
type NodeGroup struct {
	// Expr is the NodeName value as written ("node[01-10,12]").
	Expr string
	// Names are the node names Expr expands to (ExpandHostlist), but for
	// those an earlier NodeName line already defined (an error).
	Names []string
	// CPUs is CPUs= (or the older Procs=); without it Sockets ×
	// CoresPerSocket × ThreadsPerCore. A value matching none of Sockets,
	// Sockets × CoresPerSocket and that × ThreadsPerCore is replaced by
	// the last, as slurmctld does.
	CPUs int64
	// EffectiveCPUs are the CPUs slurmctld schedules and counts in the
	// cluster's and the partitions' cpu TRES (node_record_t.cpus_efctv,
	// src/common/node_conf.c): CPUs less the CPUs of the specialised cores
	// (CoreSpecCount cores, or the cores holding the CPUs of CPUSpecList),
	// each core counting ThreadsPerCore CPUs when CPUs counts threads, else
	// one.
	EffectiveCPUs int64
	// Boards (default 1), Sockets (the total over all boards: Sockets=, or
	// Boards × SocketsPerBoard, or CPUs / (CoresPerSocket × ThreadsPerCore)
	// when that divides, else Boards), CoresPerSocket and ThreadsPerCore
	// (default 1).
	Boards, Sockets, CoresPerSocket, ThreadsPerCore int64
	// CoreSpecCount is the number of specialised cores (CoreSpecCount=, or
	// the cores CPUSpecList covers).
	CoreSpecCount int64
	// RealMemoryMB is RealMemory= in MB (default 1): the node's mem TRES.
	RealMemoryMB int64
	// Gres is the Gres= value as written ("gpu:a100:4(S:0-1)"), "" for none.
	Gres string
	// GRES are the node's generic resources as TRES counts, sorted by
	// name: gres/NAME for every GRES name (all types together) and
	// gres/NAME:TYPE for each type, counted as slurmctld counts Gres=
	// (_get_gres_cnt in src/common/gres.c): NAME:COUNT, NAME:TYPE:COUNT,
	// NAME:TYPE (1), a count with a K/M/G/T/P suffix (×1024 each), socket
	// bindings "(S:...)" ignored, and a bare NAME counting 1 and ending
	// that name's count.
	GRES []TRESCount
	// Features are the Feature= (or Features=) items.
	Features []string
	// State is the State= value as written ("" when not set); FUTURE and
	// CLOUD nodes are node records all the same, and counted in Totals.
	State string
	// File and Line locate the NodeName line.
	File string
	Line int
}

// Totals are the resources of a set of nodes as slurmctld counts them for
// job priority: the whole cluster's (cluster_cpus, node_record_count and
// the mem TRES count in src/slurmctld/controller.c, used for the job-size
// factor) or one partition's (part_record_t.tres_cnt,
// src/slurmctld/partition_mgr.c, used for the TRES factors).
type Totals struct {
	// Nodes is the number of nodes.
	Nodes int64
	// CPUs is the sum of the nodes' EffectiveCPUs.
	CPUs int64
	// MemMB is the sum of the nodes' RealMemory, in MB.
	MemMB int64
	// GRES are the sums of the nodes' GRES counts, sorted by name. slurmctld
	// counts a GRES in a partition's TRES only when AccountingStorageTRES
	// tracks it (it iterates the tracked TRES); GRES lists them all.
	GRES []TRESCount
}

// TRES returns t as TRES counts in Slurm's TRES order (schemas.CompareTRES):
// cpu, mem (MiB), node, then the GRES.
func (t Totals) TRES() []TRESCount {
	out := []TRESCount{{"cpu", uint64(t.CPUs)}, {"mem", uint64(t.MemMB)}, {"node", uint64(t.Nodes)}}
	return append(out, t.GRES...)
}

// add adds one node of group g to t; gres accumulates the GRES counts by
// name.
func (t *Totals) add(g *NodeGroup, gres map[string]uint64) {
	t.Nodes++
	t.CPUs += g.EffectiveCPUs
	t.MemMB += g.RealMemoryMB
	for _, c := range g.GRES {
		gres[c.TRES] += c.Count
	}
}

// sortedCounts returns the counts of m sorted by name.
func sortedCounts(m map[string]uint64) []TRESCount {
	if len(m) == 0 {
		return nil
	}
	out := make([]TRESCount, 0, len(m))
	for k, v := range m {
		out = append(out, TRESCount{TRES: k, Count: v})
	}
	slices.SortFunc(out, func(a, b TRESCount) int { return schemas.CompareTRES(a.TRES, b.TRES) })
	return out
}

// confNodeSet is a NodeSet line: its nodes are those of Nodes= and those
// with the Feature.
type confNodeSet struct {
	nodes, feature string
	file           string
	line, seq      int
}

// confPartNodes is what a partition's Nodes= needs to be resolved.
type confPartNodes struct {
	nodes     string
	key       string // the key as written, for errors
	file      string
	line, seq int
}

// nodeLine handles a NodeName line (pairs[0] is NodeName=...).
func (p *confParser) nodeLine(file string, line, seq int, pairs []confPair) {
	name := pairs[0].value
	vals := make(map[string]confValue, len(pairs))
	for _, pr := range pairs[1:] {
		vals[strings.ToLower(pr.key)] = confValue{key: pr.key, value: pr.value, file: file, line: line, seq: seq}
	}
	switch {
	case strings.EqualFold(name, "DEFAULT"):
		for k, v := range vals {
			p.nodeDefaults[k] = v
		}
		return
	case strings.EqualFold(name, "ALL"):
		p.addErr(seq, file, line, pairs[0].key, name, errors.New("ALL is a reserved word, not a node name"))
		return
	}
	get := func(key string) (confValue, bool) {
		if v, ok := vals[key]; ok {
			return v, true
		}
		v, ok := p.nodeDefaults[key]
		return v, ok
	}
	// uint16 reads a count; ok is false when the key is not set (or its
	// value is bad, which is reported).
	uint16Of := func(key string) (int64, bool) {
		v, ok := get(key)
		if !ok {
			return 0, false
		}
		n, err := confUint(v.value, 0xffff)
		if err != nil {
			p.addErr(seq, v.file, v.line, v.key, v.value, err)
			return 0, false
		}
		return n, true
	}
	warn := func(format string, args ...any) {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s:%d: NodeName=%s: ", file, line, name)+fmt.Sprintf(format, args...))
	}
	g := NodeGroup{Expr: name, Boards: 1, Sockets: 1, CoresPerSocket: 1, ThreadsPerCore: 1, CPUs: 1, RealMemoryMB: 1, File: file, Line: line}
	if n, ok := uint16Of("boards"); ok {
		g.Boards = n
	}
	if n, ok := uint16Of("corespersocket"); ok {
		g.CoresPerSocket = n
	}
	if n, ok := uint16Of("threadspercore"); ok {
		g.ThreadsPerCore = n
	}
	cpus, haveCPUs := uint16Of("cpus")
	if !haveCPUs {
		cpus, haveCPUs = uint16Of("procs")
	}
	if haveCPUs {
		g.CPUs = cpus
	}
	sockets, haveSockets := uint16Of("sockets")
	if haveSockets {
		g.Sockets = sockets
	}
	perBoard, havePerBoard := uint16Of("socketsperboard")
	if !havePerBoard {
		perBoard = 1
	}
	coreSpec, _ := uint16Of("corespeccount")
	if v, ok := get("realmemory"); ok {
		if n, err := confUint(v.value, math.MaxInt64); err != nil {
			p.addErr(seq, v.file, v.line, v.key, v.value, err)
		} else {
			g.RealMemoryMB = n
		}
	}
	if v, ok := get("gres"); ok {
		g.Gres = v.value
		gres, err := parseNodeGres(v.value)
		if err != nil {
			p.addErr(seq, v.file, v.line, v.key, v.value, err)
		}
		g.GRES = gres
	}
	if v, ok := get("feature"); ok {
		g.Features = confList(v.value, nil)
	} else if v, ok := get("features"); ok {
		g.Features = confList(v.value, nil)
	}
	if v, ok := get("state"); ok {
		g.State = v.value
	}
	// Slurm's checks and inferences, in its order.
	for _, z := range []struct {
		v    *int64
		what string
	}{{&g.CoresPerSocket, "CoresPerSocket"}, {&g.CPUs, "CPUs"}, {&g.ThreadsPerCore, "ThreadsPerCore"}, {&perBoard, "SocketsPerBoard"}, {&g.Sockets, "Sockets"}, {&g.Boards, "Boards"}} {
		if *z.v == 0 {
			warn("%s=0 is invalid: slurmctld uses 1", z.what)
			*z.v = 1
		}
	}
	if havePerBoard && haveSockets {
		warn("Sockets and SocketsPerBoard both given: slurmctld uses SocketsPerBoard")
		haveSockets = false
	}
	if !haveSockets {
		perCore := g.CoresPerSocket * g.ThreadsPerCore
		switch {
		case havePerBoard:
			g.Sockets = g.Boards * perBoard
		case haveCPUs && g.CPUs/perCore > 0 && g.CPUs%perCore == 0:
			g.Sockets = g.CPUs / perCore
		default:
			g.Sockets = g.Boards
		}
	}
	if !haveCPUs {
		g.CPUs = g.Sockets * g.CoresPerSocket * g.ThreadsPerCore
	}
	if g.Sockets < g.Boards {
		warn("Sockets=%d < Boards=%d: slurmctld uses Boards=1", g.Sockets, g.Boards)
		g.Boards = 1
	}
	if all := g.Sockets * g.CoresPerSocket * g.ThreadsPerCore; g.CPUs != g.Sockets && g.CPUs != g.Sockets*g.CoresPerSocket && g.CPUs != all {
		warn("CPUs=%d matches no Sockets, Sockets*CoresPerSocket or Sockets*CoresPerSocket*ThreadsPerCore: slurmctld uses %d", g.CPUs, all)
		g.CPUs = all
	}
	cores := g.Sockets * g.CoresPerSocket
	if coreSpec >= cores {
		warn("CoreSpecCount=%d is not below the node's %d cores: slurmctld uses 1", coreSpec, cores)
		coreSpec = 1
	}
	// tpc: the CPUs of a core, when CPUs counts threads (node_conf.c).
	tpc := int64(1)
	if cores < g.CPUs {
		tpc = g.ThreadsPerCore
	}
	if v, ok := get("cpuspeclist"); ok {
		ids, err := parseCPUList(v.value, g.CPUs)
		if err != nil {
			warn("CPUSpecList=%s: %v: slurmctld ignores it", v.value, err)
		} else {
			if coreSpec > 0 {
				warn("CoreSpecCount=%d with CPUSpecList: slurmctld uses CPUSpecList", coreSpec)
			}
			spec := make(map[int64]bool)
			for _, id := range ids {
				spec[id/tpc] = true
			}
			coreSpec = int64(len(spec))
		}
	}
	g.CoreSpecCount = coreSpec
	g.EffectiveCPUs = g.CPUs - coreSpec*tpc

	names, err := ExpandHostlist(name)
	if err != nil {
		p.addErr(seq, file, line, pairs[0].key, name, err)
		return
	}
	for _, n := range names {
		if first, dup := p.nodeIndex[n]; dup {
			prevFile, prevLine := file, line // listed twice on this line
			if first < len(p.cfg.NodeGroups) {
				prevFile, prevLine = p.cfg.NodeGroups[first].File, p.cfg.NodeGroups[first].Line
			}
			p.addErr(seq, file, line, pairs[0].key, name, fmt.Errorf("node %s already defined at %s:%d", n, prevFile, prevLine))
			continue
		}
		p.nodeIndex[n] = len(p.cfg.NodeGroups)
		g.Names = append(g.Names, n)
	}
	p.cfg.NodeGroups = append(p.cfg.NodeGroups, g)
}

// parseCPUList reads a CPUSpecList (bit_unfmt's syntax: comma-separated
// CPU ids and lo-hi ranges) of a node with cpus CPUs.
func parseCPUList(s string, cpus int64) ([]int64, error) {
	var out []int64
	for _, item := range strings.Split(s, ",") {
		loS, hiS, isRange := strings.Cut(item, "-")
		if !isRange {
			hiS = loS
		}
		lo, err1 := strconv.ParseInt(loS, 10, 64)
		hi, err2 := strconv.ParseInt(hiS, 10, 64)
		if !allDigits(loS) || !allDigits(hiS) || err1 != nil || err2 != nil || lo > hi {
			return nil, fmt.Errorf("bad item %q", item)
		}
		if hi >= cpus {
			return nil, fmt.Errorf("CPU %d beyond the node's %d CPUs", hi, cpus)
		}
		for id := lo; id <= hi; id++ {
			out = append(out, id)
		}
	}
	return out, nil
}

// parseNodeGres counts a NodeName's Gres= value (see NodeGroup.GRES).
func parseNodeGres(s string) ([]TRESCount, error) {
	counts := make(map[string]uint64)
	bare := make(map[string]bool) // names whose count a bare NAME ended
	for _, tok := range strings.Split(s, ",") {
		if tok == "" {
			continue
		}
		name, rest, typed := strings.Cut(tok, ":")
		if name == "" {
			return nil, fmt.Errorf("item %q: no GRES name", tok)
		}
		key := "gres/" + schemas.CanonicalTRES(name)
		if bare[key] {
			continue
		}
		if !typed {
			// A bare name counts 1 and ends the count (_get_gres_cnt's
			// break): the types of earlier items stay.
			counts[key] = 1
			bare[key] = true
			continue
		}
		if i := strings.LastIndexByte(rest, '('); i >= 0 {
			rest = rest[:i] // socket binding: (S:0-1)
		}
		parts := strings.Split(rest, ":")
		n := uint64(1) // NAME:TYPE without a count
		last := parts[len(parts)-1]
		if last != "" && last[0] >= '0' && last[0] <= '9' {
			var err error
			if n, err = gresCount(last); err != nil {
				return nil, fmt.Errorf("item %q: %w", tok, err)
			}
			parts = parts[:len(parts)-1]
		}
		counts[key] += n
		for _, typ := range parts {
			if typ == "" || strings.EqualFold(typ, "no_consume") {
				continue
			}
			counts[key+":"+schemas.CanonicalTRES(typ)] += n
		}
	}
	return sortedCounts(counts), nil
}

// gresCount reads a GRES count: digits and an optional suffix_mult unit
// (k, m, g, t, p and their KiB forms ×1024 each; kb, mb, ... ×1000 each).
func gresCount(s string) (uint64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("count %q out of range", s)
	}
	var mult uint64
	switch strings.ToLower(s[i:]) {
	case "":
		mult = 1
	case "k", "kib":
		mult = 1 << 10
	case "kb":
		mult = 1e3
	case "m", "mib":
		mult = 1 << 20
	case "mb":
		mult = 1e6
	case "g", "gib":
		mult = 1 << 30
	case "gb":
		mult = 1e9
	case "t", "tib":
		mult = 1 << 40
	case "tb":
		mult = 1e12
	case "p", "pib":
		mult = 1 << 50
	case "pb":
		mult = 1e15
	default:
		return 0, fmt.Errorf("bad count %q (want a number with an optional K, M, G, T or P)", s)
	}
	if n > math.MaxUint64/mult {
		return 0, fmt.Errorf("count %q out of range", s)
	}
	return n * mult, nil
}

// nodeSet handles a NodeSet line (pairs[0] is NodeSet=name).
func (p *confParser) nodeSet(file string, line, seq int, pairs []confPair) {
	ns := confNodeSet{file: file, line: line, seq: seq}
	for _, pr := range pairs[1:] {
		switch strings.ToLower(pr.key) {
		case "nodes":
			ns.nodes = pr.value
		case "feature":
			ns.feature = pr.value
		}
	}
	p.nodeSets[pairs[0].value] = ns
}

// resolveNodes computes the cluster's totals and each partition's nodes
// and totals, once every line has been read.
func (p *confParser) resolveNodes() {
	c := p.cfg
	gres := make(map[string]uint64)
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		for range g.Names {
			c.Totals.add(g, gres)
		}
	}
	c.Totals.GRES = sortedCounts(gres)
	noNodes := false // a partition names nodes, and no NodeName line defines any
	for i := range c.Partitions {
		part := &c.Partitions[i]
		pn := p.partNodes[i]
		if pn.nodes == "" {
			continue
		}
		if len(c.NodeGroups) == 0 {
			noNodes = true
			continue
		}
		names, unknown, err := p.partitionNodes(pn.nodes)
		if err != nil {
			p.addErr(pn.seq, pn.file, pn.line, pn.key, pn.nodes, err)
			continue
		}
		if len(unknown) > 0 {
			// slurmctld would refuse to start; a slurm.conf copied
			// without its node lines is still good for fair share.
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: PartitionName=%s: Nodes=%s names %d node(s) no NodeName line defines (%s): the partition's totals leave them out",
				pn.file, pn.line, part.Name, pn.nodes, len(unknown), strings.Join(unknown[:min(len(unknown), 3)], ", ")))
		}
		gres := make(map[string]uint64)
		for _, n := range names {
			part.Totals.add(&c.NodeGroups[p.nodeIndex[n]], gres)
		}
		part.Totals.GRES = sortedCounts(gres)
	}
	if noNodes {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: partitions name nodes, and no NodeName line defines any: the cluster's and the partitions' totals (the job size and TRES factors of job priority) are unknown", c.File))
	}
}

// partitionNodes returns the distinct nodes of a partition's Nodes= value,
// as slurmctld's nodespec_to_hostlist finds them: ALL (any case) is every
// node; otherwise a hostlist of node names and NodeSet names, a NodeSet
// standing for its Nodes= and the nodes with its Feature. Names that are
// neither are returned apart (unknown), each once.
func (p *confParser) partitionNodes(spec string) (names, unknown []string, err error) {
	if strings.EqualFold(spec, "ALL") {
		for _, g := range p.cfg.NodeGroups {
			names = append(names, g.Names...)
		}
		return names, nil, nil
	}
	listed, err := ExpandHostlist(spec)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[string]bool, len(listed))
	add := func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		if _, ok := p.nodeIndex[n]; ok {
			names = append(names, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	for _, n := range listed {
		ns, isSet := p.nodeSets[n]
		if !isSet {
			add(n)
			continue
		}
		if ns.nodes != "" {
			members, err := ExpandHostlist(ns.nodes)
			if err != nil {
				return nil, nil, fmt.Errorf("NodeSet %s: %w", n, err)
			}
			for _, m := range members {
				add(m)
			}
		}
		if ns.feature != "" {
			for _, g := range p.cfg.NodeGroups {
				if slices.Contains(g.Features, ns.feature) {
					for _, m := range g.Names {
						add(m)
					}
				}
			}
		}
	}
	return names, unknown, nil
}
