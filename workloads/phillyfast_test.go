package workloads

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// phillyTrace writes n rows in the shape of the Pollux philly.csv: 15
// virtual clusters, unsorted timestamps over about four months, mostly
// 1-GPU jobs, durations with one decimal, and a blank last line.
func phillyTrace(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0))
	var b bytes.Buffer
	b.Grow(n * 45)
	b.WriteString("timestamp,duration,num_gpus,gpu_time,cluster\n")
	clusters := []string{"11cb48", "6214e9", "6c71a0", "b436b2", "ee9e8c", "e13805", "103959", "0e4a51", "2869ce", "7f04ca", "ed69ec", "925e2b", "23dbec", "51b7ef", "795a4c"}
	gpus := []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 16}
	for i := 0; i < n; i++ {
		at := 1504521041 + rng.Int64N(9408690)
		d := 1 + rng.Int64N(200000)
		g := gpus[rng.IntN(len(gpus))]
		c := ""
		if rng.IntN(1000) > 0 {
			c = clusters[rng.IntN(len(clusters))]
		}
		fmt.Fprintf(&b, "%s,%d.0,%d,%d.0,%s\n", unixUTC(at), d, g, d*int64(g), c)
	}
	b.WriteString("\n")
	return b.Bytes()
}

func unixUTC(s int64) string {
	return timeUnix(s).Format(phillyTimeLayout)
}

// samePhilly reads data with ReadPhilly and with the general reader alone
// and fails unless both give the same workload, or the same error.
func samePhilly(t *testing.T, data []byte) {
	t.Helper()
	w1, err1 := ReadPhilly(bytes.NewReader(data), "t.csv")
	w2, err2 := readPhilly(bytes.NewReader(data), "t.csv")
	if fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("ReadPhilly error %v, general reader %v\ninput %q", err1, err2, data)
	}
	if !reflect.DeepEqual(w1, w2) {
		t.Fatalf("ReadPhilly and the general reader differ on %q", data)
	}
	// Reads of any size, and a read error midway.
	w3, err3 := ReadPhilly(iotest.OneByteReader(bytes.NewReader(data)), "t.csv")
	if fmt.Sprint(err3) != fmt.Sprint(err2) || !reflect.DeepEqual(w3, w2) {
		t.Fatalf("ReadPhilly of one byte at a time: %v, general reader %v", err3, err2)
	}
	cut := len(data) / 2
	broken := func() io.Reader {
		return io.MultiReader(bytes.NewReader(data[:cut]), iotest.ErrReader(errors.New("corrupt")))
	}
	w4, err4 := ReadPhilly(broken(), "t.csv")
	w5, err5 := readPhilly(broken(), "t.csv")
	if fmt.Sprint(err4) != fmt.Sprint(err5) || !reflect.DeepEqual(w4, w5) {
		t.Fatalf("ReadPhilly of a broken input: %v, general reader %v", err4, err5)
	}
}

func TestPhillyFastMatchesGeneral(t *testing.T) {
	files, _ := filepath.Glob("testdata/philly/*.csv")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		samePhilly(t, b)
	}
	samePhilly(t, phillyDefault)
	samePhilly(t, phillyTrace(30000, 1)) // several chunks
	h := "timestamp,duration,num_gpus,gpu_time,cluster\n"
	for _, in := range []string{
		"", "\n", h, h + "\n\n",
		"\n" + h + "2017-10-03 10:00:10,120.0,1,120.0,a\n",
		h + "2017-10-03 10:00:10,120.0,1,120.0,a",
		h + "2017-10-03 10:00:10,120.0,1,120.0,a\r\n",
		h + "\n\n2017-10-03 10:00:10,120.0,1,120.0,a\n\n2017-10-03 10:00:09,1,2,,b\n",
		h + "2017-10-03 10:00:10,120.0,1,120.0,\n2017-10-03 10:00:10,120.0,1,120.0,unknown\n",
		h + "2017-10-03 10:00:10, 120.0,1,120.0,a\n",
		h + "2017-10-03 10:00:10,120.0,1,120.0, a\n",
		h + "2017-10-03 10:00:10,120.0,1,120.0,a \n",
		h + "2017-10-03 10:00:10,120.0,1,120.0,\u00a0a\n",
		h + "2017-10-03 10:00:10,120.0,1,120.0,é\n",
		h + "2017-10-03 10:00:10.5,120.0,1,120.0,a\n",
		h + "2017-02-29 10:00:10,120.0,1,120.0,a\n",
		h + "2016-02-29 10:00:10,120.0,1,120.0,a\n",
		h + "0000-01-01 00:00:00,1,1,1,a\n9999-12-31 23:59:59,1,1,1,a\n",
		h + "1969-12-31 23:59:59,1,1,1,a\n1970-01-01 00:00:00,1,1,1,a\n",
		h + "2017-10-03 24:00:00,1,1,1,a\n",
		h + "2017-10-03 10:60:00,1,1,1,a\n",
		h + "2017-10-03 10:00:60,1,1,1,a\n",
		h + "2017-13-03 10:00:00,1,1,1,a\n",
		h + "2017-10-3 10:00:00,1,1,1,a\n",
		h + "2017-10-03 10:00:00,1e3,1,1,a\n",
		h + "2017-10-03 10:00:00,0x1p3,1,1,a\n",
		h + "2017-10-03 10:00:00,.5,1,1,a\n",
		h + "2017-10-03 10:00:00,5.,1,1,a\n",
		h + "2017-10-03 10:00:00,.,1,1,a\n",
		h + "2017-10-03 10:00:00,0.0000001,1,1,a\n",
		h + "2017-10-03 10:00:00,0.0000005,1,1,a\n",
		h + "2017-10-03 10:00:00,123456789012345.6,1,1,a\n",
		h + "2017-10-03 10:00:00,1e12,1,1,a\n",
		h + "2017-10-03 10:00:00,1000000000000.5,1,1,a\n",
		h + "2017-10-03 10:00:00,0.1234567890123456789,1,1,a\n",
		h + "2017-10-03 10:00:00,inf,1,1,a\n",
		h + "2017-10-03 10:00:00,NaN,1,1,a\n",
		h + "2017-10-03 10:00:00,1,+1,1,a\n",
		h + "2017-10-03 10:00:00,1,0,1,a\n",
		h + "2017-10-03 10:00:00,1,1048576,1,a\n",
		h + "2017-10-03 10:00:00,1,1048577,1,a\n",
		h + "2017-10-03 10:00:00,1,007,1,a\n",
		h + "2017-10-03 10:00:00,1,1,1\n",
		h + "2017-10-03 10:00:00,1,1,1,a,b\n",
		h + "2017-10-03 10:00:00,1,1,\"1\",a\n",
		"cluster,num_gpus,duration,timestamp\na,2,3.5,2017-10-03 10:00:00\n",
		"timestamp,duration,num_gpus,cluster,extra\n2017-10-03 10:00:00,1,1,a,x\n",
		"timestamp,duration,num_gpus\n2017-10-03 10:00:00,1,1\n",
		"Timestamp,duration,num_gpus,cluster\n2017-10-03 10:00:00,1,1,a\n",
		"timestamp,duration,num_gpus,cluster,cluster\n2017-10-03 10:00:00,1,1,a,b\n",
		"\ufefftimestamp,duration,num_gpus,cluster\n2017-10-03 10:00:00,1,1,a\n",
		h + strings.Repeat("\n", 3000) + "2017-10-03 10:00:00,1,1,1,a\n",
		h + "2017-10-03 10:00:00,1,1," + strings.Repeat("9", 5000) + ",a\n",
		h + "2017-10-03 10:00:00,1,1," + strings.Repeat("9", 3*phillyChunk) + ",a\n2017-10-03 10:00:00,1,1,1,a\n",
	} {
		samePhilly(t, []byte(in))
	}
}

// The fast reader takes the real trace's shape whole, without falling
// back to the general reader.
func TestPhillyFastTakesTraceShape(t *testing.T) {
	for _, data := range [][]byte{phillyDefault, phillyTrace(1000, 2)} {
		if w, _ := phillyFast(bytes.NewReader(data), "t.csv"); w == nil {
			t.Errorf("the fast reader gave up on a trace of philly.csv's shape")
		}
	}
}

func FuzzPhillyFast(f *testing.F) {
	addFixtures(f, "philly")
	f.Add(phillyTrace(20, 3))
	f.Fuzz(func(t *testing.T, data []byte) { samePhilly(t, data) })
}

// BenchmarkRead reports what reading a trace costs per row (ns/row), from
// memory so that the disk is not measured, for each format: philly and
// openb are the real traces when they are found (sharedTrace),
// philly-synthetic and brigade-synthetic generated traces of their shape,
// which are always there (the CI guard runs them).
func BenchmarkRead(b *testing.B) {
	type input struct {
		name string
		data []byte
		read func(io.Reader, string) (*Workload, error)
	}
	var inputs []input
	if data := sharedTrace("philly-pollux/philly.csv"); data != nil {
		inputs = append(inputs, input{"philly", data, ReadPhilly})
	}
	inputs = append(inputs, input{"philly-synthetic", phillyTrace(20000, 1), ReadPhilly})
	if data := sharedTrace("alibaba-gpu-v2023/openb_pod_list_default.csv"); data != nil {
		inputs = append(inputs, input{"openb", data, ReadOpenB})
	}
	inputs = append(inputs, input{"brigade-synthetic", brigadeTrace(20000, 1), ReadBrigade})
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			rows := 0
			b.SetBytes(int64(len(in.data)))
			for b.Loop() {
				w, err := in.read(bytes.NewReader(in.data), "trace.csv")
				if err != nil {
					b.Fatal(err)
				}
				rows += len(w.Jobs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

// sharedTrace is a trace file of the shared data folder ($BRIGADE_TRACES
// or ../shared/traces from the repository), nil when it is not there.
func sharedTrace(name string) []byte {
	for _, dir := range []string{os.Getenv("BRIGADE_TRACES"), "../../shared/traces", "../shared/traces"} {
		if dir == "" {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return data
		}
	}
	return nil
}

// brigadeTrace is a Brigade CSV trace of n jobs in the shape brigade sim
// --replay writes: every column named, the optional ones mostly empty.
func brigadeTrace(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	b.Grow(n * 60)
	b.WriteString("name,submit_s,duration_s,gpus,tenant,priority,gpu_milli,mig_profile,estimate_s,cpu_milli,memory_mib,deps,dag,failed_attempts,retries\n")
	tenants := []string{"team-a", "team-b", "team-c", "team-d"}
	gpus := []int{1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8}
	at := 0.0
	for i := 0; i < n; i++ {
		at += rng.ExpFloat64() * 30
		milli := ""
		g := gpus[rng.IntN(len(gpus))]
		if g == 1 && rng.IntN(4) == 0 {
			milli = strconv.Itoa(100 * (1 + rng.IntN(9)))
		}
		fmt.Fprintf(&b, "j%d,%.6f,%.6f,%d,%s,%d,%s,,,,,,,,\n", i, at, 1+rng.ExpFloat64()*3600, g, tenants[rng.IntN(len(tenants))], rng.IntN(3), milli)
	}
	return b.Bytes()
}

func timeUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }
