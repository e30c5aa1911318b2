package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fairledger/fairledger/internal/safetext"
)

// Hand-written SVG charts (see the package doc for why). Every number is
// printed with a fixed number of decimals, so equal input gives equal
// bytes.

// frame is a chart's geometry in SVG user units; the page scales the
// viewBox to the width of its column.
type frame struct{ w, h, left, right, top, bottom int }

func (f frame) plotW() float64 { return float64(f.w - f.left - f.right) }
func (f frame) plotH() float64 { return float64(f.h - f.top - f.bottom) }
func (f frame) baseY() int     { return f.h - f.bottom }

var (
	// lineFrame is a full-width time-series chart.
	lineFrame = frame{w: 720, h: 280, left: 64, right: 16, top: 16, bottom: 36}
	// barFrame is a small bar chart; two or three share a row on a wide
	// screen.
	barFrame = frame{w: 420, h: 260, left: 56, right: 10, top: 22, bottom: 36}
)

// palette is Okabe and Ito's colour-blind-safe palette (black for the
// lab itself, then the users).
var palette = []string{"#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#999999", "#8C6D1F"}

// labColor is the lab's own line.
const labColor = "#000000"

// dashes alternate with the colours so lines stay apart in grey print.
var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// chartSeries is one line of a line chart.
type chartSeries struct {
	Name   string
	Values []float64 // NaN breaks the line; +Inf is drawn at the top
	Color  string
	Dash   string
	Width  float64
}

// refLine is a horizontal reference line with a label.
type refLine struct {
	Y     float64
	Label string
}

// lineChart is a time-series chart.
type lineChart struct {
	ID, Title, Desc string
	X               []time.Time
	Series          []chartSeries
	// Log draws the y axis on a log2 scale (for LevelFS).
	Log bool
	// YMin and YMax fix the y range when YMax > YMin.
	YMin, YMax float64
	Ref        []refLine
}

// barChart is a bar per category (a month).
type barChart struct {
	ID, Title, Desc string
	Labels          []string
	Values          []float64
	Color           string
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// esc escapes text for HTML (and SVG) text and attributes: control
// characters spelled out (safetext.Visible), every word holding a bidi
// control isolated in FSI … PDI (safetext.IsolateBidi, the character form
// of <bdi>, which also holds in attributes, <title> and SVG text), then
// &, <, >, ' and " as entities.
func esc(s string) string {
	return html.EscapeString(safetext.IsolateBidi(safetext.Visible(s)))
}

// openSVG writes the <svg> element with its accessible name.
func openSVG(b *strings.Builder, f frame, id, title, desc string) {
	fmt.Fprintf(b, `<svg class="chart" id="%s" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d" xmlns="http://www.w3.org/2000/svg">`,
		esc(id), f.w, f.h, esc(id), esc(id))
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, esc(id), esc(title), esc(id), esc(desc))
}

// yScale maps values to the plot's y coordinate.
type yScale struct {
	f      frame
	lo, hi float64
	log    bool
}

func (s yScale) y(v float64) float64 {
	switch {
	case math.IsInf(v, 1) || v > s.hi:
		v = s.hi
	case v < s.lo:
		v = s.lo
	}
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log2(v), math.Log2(lo), math.Log2(hi)
	}
	return float64(s.f.baseY()) - (v-lo)/(hi-lo)*s.f.plotH()
}

// niceStep returns a step of 1, 2 or 5 × 10^k giving about n intervals.
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// fmtTick prints an axis value compactly: 1.5k, 2M, 0.25.
func fmtTick(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimZeros(strconv.FormatFloat(v/1e9, 'f', 2, 64)) + "G"
	case a >= 1e6:
		return trimZeros(strconv.FormatFloat(v/1e6, 'f', 2, 64)) + "M"
	case a >= 1e4:
		return trimZeros(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	}
	return trimZeros(strconv.FormatFloat(v, 'f', 4, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// fmtPow2 labels 2^e: 4, 1, 0.5, 0.25, 1/8.
func fmtPow2(e int) string {
	switch {
	case e >= 0:
		return strconv.FormatInt(1<<e, 10)
	case e >= -2:
		return trimZeros(strconv.FormatFloat(math.Exp2(float64(e)), 'f', 2, 64))
	}
	return "1/" + strconv.FormatInt(1<<(-e), 10)
}

// scale chooses the y range and ticks of a line chart. On the log scale
// an infinite value (LevelFS of an association with no usage) gets a row
// of its own above the finite values, labelled inf.
func (c *lineChart) scale() (yScale, []float64, []string) {
	f := lineFrame
	if c.Log {
		lo, hi, inf := 0.5, 2.0, false
		for _, s := range c.Series {
			for _, v := range s.Values {
				switch {
				case math.IsInf(v, 1):
					inf = true
				case v > 0:
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		elo := max(int(math.Floor(math.Log2(lo))), -10)
		ehi := min(int(math.Ceil(math.Log2(hi))), 10)
		step := 1
		for (ehi-elo)/step > 7 {
			step++
		}
		ehi = elo + (ehi-elo+step-1)/step*step
		var ticks []float64
		var labels []string
		for e := elo; e <= ehi; e += step {
			ticks = append(ticks, math.Exp2(float64(e)))
			labels = append(labels, fmtPow2(e))
		}
		if inf {
			ehi += step
			ticks = append(ticks, math.Exp2(float64(ehi)))
			labels = append(labels, "inf")
		}
		return yScale{f: f, lo: math.Exp2(float64(elo)), hi: math.Exp2(float64(ehi)), log: true}, ticks, labels
	}
	lo, hi := c.YMin, c.YMax
	if !(hi > lo) {
		lo, hi = 0, 0
		for _, s := range c.Series {
			for _, v := range s.Values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		if hi == lo {
			hi = lo + 1
		}
	}
	step := niceStep(hi-lo, 5)
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step-1e-9) * step
	var ticks []float64
	var labels []string
	for i := 0; ; i++ {
		v := lo + float64(i)*step
		if v > hi+step/2 {
			break
		}
		ticks = append(ticks, v)
		labels = append(labels, fmtTick(v))
	}
	return yScale{f: f, lo: lo, hi: hi}, ticks, labels
}

// timeTicks chooses the x ticks of [t0, t1]: month starts over long spans,
// every k days over shorter ones, every k hours within two days.
func timeTicks(t0, t1 time.Time) ([]time.Time, string) {
	span := t1.Sub(t0)
	var out []time.Time
	switch {
	case span > 45*24*time.Hour:
		months := int(span.Hours()/24/30) + 1
		k := (months + 7) / 8
		m := time.Date(t0.Year(), t0.Month(), 1, 0, 0, 0, 0, time.UTC)
		if m.Before(t0) {
			m = m.AddDate(0, 1, 0)
		}
		for ; !m.After(t1); m = m.AddDate(0, 1, 0) {
			if (int(m.Month())-1)%k == 0 {
				out = append(out, m)
			}
		}
		return out, "2006-01"
	case span > 48*time.Hour:
		k := max(int((span.Hours()/24+6)/7), 1)
		d := t0.Truncate(24 * time.Hour)
		if d.Before(t0) {
			d = d.Add(24 * time.Hour)
		}
		for ; !d.After(t1); d = d.AddDate(0, 0, k) {
			out = append(out, d)
		}
		return out, "01-02"
	}
	k := max(int(span.Hours()/6), 1)
	h := t0.Truncate(time.Hour)
	if h.Before(t0) {
		h = h.Add(time.Hour)
	}
	for ; !h.After(t1); h = h.Add(time.Duration(k) * time.Hour) {
		out = append(out, h)
	}
	return out, "15:04"
}

// yGrid writes the horizontal grid lines and the y labels.
func yGrid(b *strings.Builder, ys yScale, ticks []float64, labels []string) {
	f := ys.f
	b.WriteString(`<g class="grid">`)
	for i, v := range ticks {
		y := ys.y(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s"/>`, f.left, num(y), f.w-f.right, num(y))
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" dy="0.32em">%s</text>`, f.left-6, num(y), esc(labels[i]))
	}
	b.WriteString(`</g>`)
}

// svg renders the line chart.
func (c *lineChart) svg() string {
	var b strings.Builder
	f := lineFrame
	openSVG(&b, f, c.ID, c.Title, c.Desc)
	ys, ticks, labels := c.scale()
	xOf := func(t time.Time) float64 {
		if len(c.X) < 2 || !c.X[len(c.X)-1].After(c.X[0]) {
			return float64(f.left) + f.plotW()/2
		}
		return float64(f.left) + float64(t.Sub(c.X[0]))/float64(c.X[len(c.X)-1].Sub(c.X[0]))*f.plotW()
	}
	yGrid(&b, ys, ticks, labels)
	if len(c.X) > 0 {
		xt, layout := timeTicks(c.X[0], c.X[len(c.X)-1])
		b.WriteString(`<g class="xaxis">`)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`, f.left, f.baseY(), f.w-f.right, f.baseY())
		for _, t := range xt {
			x := xOf(t)
			fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d"/>`, num(x), f.baseY(), num(x), f.baseY()+5)
			fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(x), f.baseY()+22, t.Format(layout))
		}
		b.WriteString(`</g>`)
	}
	for _, r := range c.Ref {
		if r.Y < ys.lo || r.Y > ys.hi {
			continue
		}
		y := ys.y(r.Y)
		fmt.Fprintf(&b, `<g class="ref"><line x1="%d" y1="%s" x2="%d" y2="%s"/><text x="%d" y="%s" text-anchor="end">%s</text></g>`,
			f.left, num(y), f.w-f.right, num(y), f.w-f.right-4, num(y-5), esc(r.Label))
	}
	// One polyline per unbroken run of values (NaN breaks a line); a
	// lone point is a dot.
	for _, s := range c.Series {
		fmt.Fprintf(&b, `<g class="series" stroke="%s" fill="%s"><title>%s</title>`, s.Color, s.Color, esc(s.Name))
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1:
				x, y, _ := strings.Cut(pts[0], ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3"/>`, x, y)
			default:
				fmt.Fprintf(&b, `<polyline fill="none" stroke-width="%s"`, num(s.Width))
				if s.Dash != "" {
					fmt.Fprintf(&b, ` stroke-dasharray="%s"`, s.Dash)
				}
				fmt.Fprintf(&b, ` points="%s"/>`, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for i, v := range s.Values {
			if math.IsNaN(v) {
				flush()
				continue
			}
			pts = append(pts, num(xOf(c.X[i]))+","+num(ys.y(v)))
		}
		flush()
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// svg renders the bar chart.
func (c *barChart) svg() string {
	var b strings.Builder
	f := barFrame
	openSVG(&b, f, c.ID, c.Title, c.Desc)
	hi := 0.0
	for _, v := range c.Values {
		hi = math.Max(hi, v)
	}
	if hi == 0 {
		hi = 1
	}
	step := niceStep(hi, 4)
	hi = math.Ceil(hi/step-1e-9) * step
	ys := yScale{f: f, lo: 0, hi: hi}
	var ticks []float64
	var labels []string
	for i := 0; float64(i)*step <= hi+step/2; i++ {
		ticks = append(ticks, float64(i)*step)
		labels = append(labels, fmtTick(float64(i)*step))
	}
	yGrid(&b, ys, ticks, labels)
	n := len(c.Values)
	band := f.plotW() / float64(max(n, 1))
	w := band * 0.7
	fmt.Fprintf(&b, `<g class="bars" fill="%s">`, c.Color)
	for i, v := range c.Values {
		x := float64(f.left) + band*float64(i) + (band-w)/2
		y := ys.y(v)
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
			num(x), num(y), num(w), num(float64(f.baseY())-y), esc(c.Labels[i]), fmtHours(v))
	}
	b.WriteString(`</g><g class="xaxis">`)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d"/>`, f.left, f.baseY(), f.w-f.right, f.baseY())
	every := (n + 5) / 6
	for i, l := range c.Labels {
		x := float64(f.left) + band*(float64(i)+0.5)
		if i%every == 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(x), f.baseY()+22, esc(l))
		}
		if n <= 6 {
			fmt.Fprintf(&b, `<text class="value" x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(ys.y(c.Values[i])-5), fmtTick(c.Values[i]))
		}
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}
