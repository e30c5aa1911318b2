package export

import (
	"encoding/binary"
	"math"
)

// SortJobRows sorts rows in place into the jobs table's order
// (CompareJobRows, ties in input order), the order WritePartition writes
// them in. It sorts integer keys rather than comparing strings, and moves
// each row once. Callers that need the table's order as well as the file
// sort once and hand the sorted rows to WritePartition, which then finds
// them in order.
func SortJobRows(rows []JobRow) {
	order := jobsOrder(rows) // order[k]: the row that belongs at k
	for k := range order {
		if order[k] < 0 {
			continue // placed as part of an earlier cycle
		}
		held, j := rows[k], k
		for {
			src := int(order[j])
			order[j] = -1
			if src == k {
				rows[j] = held
				break
			}
			rows[j], j = rows[src], src
		}
	}
}

// AppendTRESEntry appends one TRES map entry in the encoding that tells TRES
// sets apart: the key's length, its bytes and the value's bits. A set's
// entries appended in one order form its identity; interning uses it.
func AppendTRESEntry(b []byte, key string, val float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(val))
}
