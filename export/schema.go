package export

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fairledger/fairledger/schemas"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// rowModels are the Go row types of the history tables, by table name.
func rowModels() map[string]any {
	return map[string]any{
		schemas.TableJobs:         JobRow{},
		schemas.TableUsage:        UsageRow{},
		schemas.TableFairshare:    FairshareRow{},
		schemas.TableAssociations: AssociationRow{},
		schemas.TableRuns:         RunRow{},
	}
}

// checkSchemas verifies that the Parquet schema of every row type has
// exactly the columns schemas.Tables documents, in order, with the
// documented types and nullability. All differences are reported at once.
func checkSchemas() error {
	models := rowModels()
	var errs []error
	for _, t := range schemas.Tables() {
		model, ok := models[t.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("table %s: no row type", t.Name))
			continue
		}
		if err := checkSchema(t, parquet.SchemaOf(model)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkSchema compares one Parquet schema with its table definition.
func checkSchema(t schemas.Table, s *parquet.Schema) error {
	fields := s.Fields()
	var errs []error
	if len(fields) != len(t.Columns) {
		errs = append(errs, fmt.Errorf("table %s: Parquet schema has %d columns, schemas.Tables %d", t.Name, len(fields), len(t.Columns)))
	}
	for i := 0; i < len(fields) && i < len(t.Columns); i++ {
		f, c := fields[i], t.Columns[i]
		if f.Name() != c.Name {
			errs = append(errs, fmt.Errorf("table %s: column %d is %q, want %q", t.Name, i, f.Name(), c.Name))
			continue
		}
		if got := nodeType(f); got != c.Type {
			errs = append(errs, fmt.Errorf("table %s: column %s has type %s, want %s", t.Name, c.Name, got, c.Type))
		}
		if f.Optional() != c.Nullable {
			errs = append(errs, fmt.Errorf("table %s: column %s nullable = %v, want %v", t.Name, c.Name, f.Optional(), c.Nullable))
		}
	}
	return errors.Join(errs...)
}

// nodeType spells a Parquet node's type the way schemas.Type does.
func nodeType(n parquet.Node) schemas.Type {
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	if !n.Leaf() {
		switch lt.(type) {
		case *format.MapType:
			kf := n.Fields()[0].Fields()
			return schemas.Type("MAP<" + string(nodeType(kf[0])) + "," + string(nodeType(kf[1])) + ">")
		case *format.ListType:
			elem := n.Fields()[0].Fields()[0]
			return schemas.Type("LIST<" + string(nodeType(elem)) + ">")
		}
		parts := make([]string, 0, len(n.Fields()))
		for _, f := range n.Fields() {
			parts = append(parts, f.Name()+":"+string(nodeType(f)))
		}
		return schemas.Type("STRUCT<" + strings.Join(parts, ",") + ">")
	}
	switch n.Type().Kind() {
	case parquet.Boolean:
		return schemas.TypeBool
	case parquet.Int32:
		if it, ok := lt.(*format.IntType); lt == nil || ok && it.BitWidth == 32 && it.IsSigned {
			return schemas.TypeInt32
		}
	case parquet.Int64:
		if it, ok := lt.(*format.IntType); lt == nil || ok && it.BitWidth == 64 && it.IsSigned {
			return schemas.TypeInt64
		}
		if ts, ok := lt.(*format.TimestampType); ok && ts.IsAdjustedToUTC {
			if _, micros := ts.Unit.Value.(*format.MicroSeconds); micros {
				return schemas.TypeTimestamp
			}
		}
	case parquet.Double:
		return schemas.TypeDouble
	case parquet.ByteArray:
		if _, ok := lt.(*format.StringType); ok {
			return schemas.TypeString
		}
	}
	return schemas.Type(n.Type().String())
}
