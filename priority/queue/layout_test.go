package queue

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestJobLayout keeps what `run --priority` holds for the whole run small
// and free of pointers (docs/performance.md): a Job is 4 times (32 bytes),
// 8 uint32 (32), an int32, an int16 and 2 bools (8): 72 bytes, with no
// padding; it and a held row (outRow) have no field the garbage collector
// would scan.
func TestJobLayout(t *testing.T) {
	t.Parallel()
	if got := unsafe.Sizeof(Job{}); got != 72 {
		t.Errorf("Job is %d bytes, want 72", got)
	}
	for _, v := range []any{Job{}, outRow{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			switch f := typ.Field(i); f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Func,
				reflect.Chan, reflect.UnsafePointer, reflect.Array, reflect.Struct:
				t.Errorf("%s.%s is a %s: the type must hold no pointers", typ.Name(), f.Name, f.Type.Kind())
			}
		}
	}
}
