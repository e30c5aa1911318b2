package pipeline

// WithPieceRecords returns o with the jobs writer's piece size set to n
// records (PieceRecords when 0), so that tests run months in pieces.
func WithPieceRecords(o Options, n int) Options {
	o.pieceRecords = n
	return o
}
