// Package schemas defines, in one place, the Arrow schemas the pipeline
// stages hand each other and the column names and units they use. Stages
// look columns up by the names defined here, never by position.
//
// schemas does no I/O and holds no state.
package schemas
