package ingest

import (
	"strings"
	"unicode/utf8"
)

// jobDecoder reads a job as sacct and slurmrestd print it into a jsonJob
// without reflection. It reads only the usual shapes: each field of ours
// once, spelt as data_parser spells it, holding a value of its type (a
// string without escapes, a number or {"set", "infinite", "number"}
// that jnum.fast reads, a list); for anything else (null, an escape, a
// key that encoding/json would match to a field of ours in other case, a
// field twice, a value of another type) it gives up, and the job is
// decoded by encoding/json, which gives the same job or the error the
// reader reports. Its input is one valid JSON value (the walk checked it).
type jobDecoder struct {
	b []byte
	i int
}

// decodeJobFast decodes b into j; false when encoding/json must.
func decodeJobFast(b []byte, j *jsonJob) bool {
	d := jobDecoder{b: b}
	return d.object(jobKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&j.Account)
		case 1:
			return d.num(&j.AllocationNodes)
		case 2:
			return d.object(arrayKeys, func(k int) bool {
				switch k {
				case 0:
					return d.num(&j.Array.JobID)
				case 1:
					return d.num(&j.Array.TaskID)
				case 2:
					return d.str(&j.Array.Task)
				}
				return d.object([]string{"max"}, func(int) bool {
					return d.object([]string{"running"}, func(int) bool {
						return d.object([]string{"tasks"}, func(int) bool { return d.num(&j.Array.Limits.Max.Running.Tasks) })
					})
				})
			})
		case 3:
			return d.str(&j.Cluster)
		case 4:
			return d.object(exitKeys, func(k int) bool {
				switch k {
				case 0:
					return d.strs(&j.ExitCode.Status)
				case 1:
					return d.num(&j.ExitCode.ReturnCode)
				}
				return d.object([]string{"id"}, func(int) bool { return d.num(&j.ExitCode.Signal.ID) })
			})
		case 5:
			return d.object(hetKeys, func(k int) bool {
				if k == 0 {
					return d.num(&j.Het.JobID)
				}
				return d.num(&j.Het.JobOffset)
			})
		case 6:
			return d.num(&j.JobID)
		case 7:
			return d.str(&j.KillRequestUser)
		case 8:
			return d.str(&j.Name)
		case 9:
			return d.str(&j.Partition)
		case 10:
			return d.num(&j.Priority)
		case 11:
			return d.str(&j.QOS)
		case 12:
			return d.object([]string{"CPUs"}, func(int) bool { return d.num(&j.Required.CPUs) })
		case 13:
			return d.object([]string{"current"}, func(int) bool { return d.strs(&j.State.Current) })
		case 14:
			if d.null() {
				return true
			}
			j.Steps = []jsonStep{}
			return d.array(func() bool {
				var s jsonStep
				ok := d.object([]string{"step"}, func(int) bool {
					return d.object([]string{"id"}, func(int) bool { return d.str(&s.Step.ID) })
				})
				j.Steps = append(j.Steps, s)
				return ok
			})
		case 15:
			return d.str(&j.SubmitLine)
		case 16:
			t := &j.Time
			return d.object(timeKeys, func(k int) bool {
				return d.num([]*jnum{&t.Elapsed, &t.Eligible, &t.End, &t.Limit, &t.Start, &t.Submission, &t.Suspended}[k])
			})
		case 17:
			return d.object(tresListKeys, func(k int) bool {
				if k == 0 {
					return d.tres(&j.TRES.Allocated)
				}
				return d.tres(&j.TRES.Requested)
			})
		}
		return d.str(&j.User)
	})
}

// The keys of the objects jobDecoder reads, as data_parser prints them, in
// the order of their cases.
var (
	jobKeys = []string{"account", "allocation_nodes", "array", "cluster", "exit_code", "het", "job_id", "kill_request_user",
		"name", "partition", "priority", "qos", "required", "state", "steps", "submit_line", "time", "tres", "user"}
	arrayKeys    = []string{"job_id", "task_id", "task", "limits"}
	exitKeys     = []string{"status", "return_code", "signal"}
	hetKeys      = []string{"job_id", "job_offset"}
	timeKeys     = []string{"elapsed", "eligible", "end", "limit", "start", "submission", "suspended"}
	tresListKeys = []string{"allocated", "requested"}
	tresKeys     = []string{"type", "name", "id", "count"}
)

func (d *jobDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// object reads an object, calling field with the index in keys of each
// key it holds; other keys' values are skipped.
func (d *jobDecoder) object(keys []string, field func(k int) bool) bool {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return false
	}
	d.i++
	var seen uint64
	for {
		d.space()
		if d.i >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case '}':
			d.i++
			return true
		case ',':
			d.i++
			continue
		}
		key, ok := d.key()
		if !ok {
			return false
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return false
		}
		d.i++
		k := -1
		for n, name := range keys {
			if string(key) == name {
				k = n
				break
			}
			if strings.EqualFold(string(key), name) {
				return false // encoding/json matches it: left to it
			}
		}
		if k < 0 {
			if !d.skip() {
				return false
			}
			continue
		}
		if seen&(1<<k) != 0 || !field(k) {
			return false
		}
		seen |= 1 << k
	}
}

// key reads a key without escapes, in ASCII.
func (d *jobDecoder) key() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	for k := start; k < len(d.b); k++ {
		switch c := d.b[k]; {
		case c == '"':
			d.i = k + 1
			return d.b[start:k], true
		case c == '\\' || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string in valid UTF-8 whose escapes, if any, are of one
// character (sacct writes "/" as "\/"); \u escapes are left to
// encoding/json.
func (d *jobDecoder) str(s *string) bool {
	if d.null() {
		return true // the field keeps its value, here ""
	}
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return false
	}
	start := d.i + 1
	ascii := true
	var esc []byte // the string so far, once an escape is met
	from := start  // the first byte not yet in esc
	for k := start; k < len(d.b); k++ {
		switch c := d.b[k]; {
		case c == '"':
			if !ascii && !utf8.Valid(d.b[start:k]) {
				return false
			}
			if esc != nil {
				*s = string(append(esc, d.b[from:k]...))
			} else {
				*s = string(d.b[start:k])
			}
			d.i = k + 1
			return true
		case c == '\\':
			if k+1 >= len(d.b) {
				return false
			}
			r, ok := jsonEscapes[d.b[k+1]]
			if !ok {
				return false
			}
			esc = append(append(esc, d.b[from:k]...), r)
			k++
			from = k + 1
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false
}

// jsonEscapes are JSON's one-character escapes and what they stand for.
var jsonEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// strs reads a jstrs: a list of strings or one string.
func (d *jobDecoder) strs(s *jstrs) bool {
	if d.null() {
		return true
	}
	if d.i < len(d.b) && d.b[d.i] == '"' {
		var one string
		if !d.str(&one) {
			return false
		}
		*s = jstrs{one}
		return true
	}
	l := []string{}
	ok := d.array(func() bool {
		var e string
		ok := d.str(&e)
		l = append(l, e)
		return ok
	})
	*s = l
	return ok
}

// tres reads a list of TRES.
func (d *jobDecoder) tres(l *[]jtres) bool {
	if d.null() {
		return true
	}
	*l = []jtres{}
	return d.array(func() bool {
		var t jtres
		ok := d.object(tresKeys, func(k int) bool {
			switch k {
			case 0:
				return d.str(&t.Type)
			case 1:
				return d.str(&t.Name)
			case 2:
				return d.num(&t.ID)
			}
			return d.num(&t.Count)
		})
		*l = append(*l, t)
		return ok
	})
}

// array reads a list, calling elem for each element.
func (d *jobDecoder) array(elem func() bool) bool {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return false
	}
	d.i++
	for {
		d.space()
		if d.i >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case ']':
			d.i++
			return true
		case ',':
			d.i++
			continue
		}
		if !elem() {
			return false
		}
	}
}

// num reads a jnum in a form jnum.fast reads, or null (unset).
func (d *jobDecoder) num(x *jnum) bool {
	if d.null() {
		return true
	}
	start := d.i
	if !d.skip() {
		return false
	}
	return x.fast(d.b[start:d.i])
}

// null passes over a null, which leaves a slice nil and anything else
// of the fresh job as it is, as encoding/json does; false, having passed
// over white space only, for another value.
func (d *jobDecoder) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// skip passes over one value (valid JSON).
func (d *jobDecoder) skip() bool {
	d.space()
	if d.i >= len(d.b) {
		return false
	}
	depth := 0
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch c {
		case '"':
			k := d.i + 1
			for k < len(d.b) && d.b[k] != '"' {
				if d.b[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(d.b) {
				return false
			}
			d.i = k + 1
		case '{', '[':
			depth++
			d.i++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing value
			}
			depth--
			d.i++
		case ',':
			if depth == 0 {
				return true
			}
			d.i++
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
			d.i++
		default:
			d.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return true
		}
	}
	return depth == 0
}
