package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/brigadesim/brigade/results"
)

// Files are the tables a sweep folder holds besides grid.json and runs.d/.
var Files = []string{"runs.csv", "runs.parquet", "summary.csv", "pairs.csv"}

// RunColumns are runs.csv's first columns; the grid's metrics follow.
var RunColumns = []string{"run", "key", "workload", "cluster", "load", "seed", "policy"}

func num(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func numPtr(x *float64) string {
	if x == nil {
		return ""
	}
	return num(*x)
}

// WriteTables writes runs.csv, runs.parquet, summary.csv and pairs.csv of
// recs (in canonical order) into dir, each atomically.
func WriteTables(dir string, g *Grid, recs []Record) error {
	if err := writeCSV(filepath.Join(dir, "runs.csv"), runRows(g, recs)); err != nil {
		return err
	}
	if err := writeRunsParquet(filepath.Join(dir, "runs.parquet"), g, recs); err != nil {
		return err
	}
	sum, pairs := Summarise(g, recs)
	if err := writeCSV(filepath.Join(dir, "summary.csv"), sum); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "pairs.csv"), pairs)
}

func runRows(g *Grid, recs []Record) [][]string {
	rows := [][]string{append(append([]string{}, RunColumns...), g.Metrics...)}
	for _, r := range recs {
		for _, p := range r.Policies {
			row := []string{strconv.Itoa(r.Index), r.Key, r.Workload, r.Cluster, num(r.Load), strconv.FormatUint(r.Seed, 10), p.Policy}
			for _, m := range p.Metrics {
				row = append(row, numPtr(m))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func writeCSV(path string, rows [][]string) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
}

// runs.parquet: the same columns as runs.csv, in the same order; metrics
// are optional doubles (null where runs.csv is empty). The row type is built
// with reflect.StructOf so the metric columns keep the grid's order.
func writeRunsParquet(path string, g *Grid, recs []Record) error {
	fields := []reflect.StructField{
		{Name: "Run", Type: reflect.TypeFor[int64](), Tag: `parquet:"run"`},
		{Name: "Key", Type: reflect.TypeFor[string](), Tag: `parquet:"key"`},
		{Name: "Workload", Type: reflect.TypeFor[string](), Tag: `parquet:"workload,dict"`},
		{Name: "Cluster", Type: reflect.TypeFor[string](), Tag: `parquet:"cluster,dict"`},
		{Name: "Load", Type: reflect.TypeFor[float64](), Tag: `parquet:"load"`},
		{Name: "Seed", Type: reflect.TypeFor[uint64](), Tag: `parquet:"seed"`},
		{Name: "Policy", Type: reflect.TypeFor[string](), Tag: `parquet:"policy,dict"`},
	}
	for k, m := range g.Metrics {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("M%d", k), Type: reflect.TypeFor[*float64](),
			Tag: reflect.StructTag(fmt.Sprintf(`parquet:"%s,optional"`, m))})
	}
	typ := reflect.StructOf(fields)
	schema := parquet.SchemaOf(reflect.New(typ).Interface())
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		pw := parquet.NewWriter(w, schema,
			parquet.Compression(&zstd.Codec{Level: zstd.DefaultLevel, Concurrency: 1}),
			parquet.CreatedBy("brigade", "sweep-schema-1", ""),
			parquet.KeyValueMetadata("brigade.sweep_schema_version", "1"),
		)
		for _, r := range recs {
			for _, p := range r.Policies {
				v := reflect.New(typ).Elem()
				v.Field(0).SetInt(int64(r.Index))
				v.Field(1).SetString(r.Key)
				v.Field(2).SetString(r.Workload)
				v.Field(3).SetString(r.Cluster)
				v.Field(4).SetFloat(r.Load)
				v.Field(5).SetUint(r.Seed)
				v.Field(6).SetString(p.Policy)
				for k, m := range p.Metrics {
					if m != nil {
						x := *m
						v.Field(7 + k).Set(reflect.ValueOf(&x))
					}
				}
				if err := pw.Write(v.Addr().Interface()); err != nil {
					return err
				}
			}
		}
		return pw.Close()
	})
}
