package workloads

import (
	"bytes"
	"io"
	"math"
	"strconv"

	"github.com/brigadesim/brigade/hwmodel"
)

// The fast Philly reader reads the shape every real philly.csv has, plain
// unquoted cells of digits and names, at a few hundred nanoseconds a row,
// where encoding/csv, time.Parse and one Job appended at a time cost
// several microseconds. It is an optimisation only: on anything outside
// that shape (a quote, a carriage return, a blank line, a space around a
// cell, a timestamp or number it does not read exactly as the general
// reader would, any error) it gives up and the general reader reads the
// whole input again from its first byte, so every result and every error
// is the general reader's. It keeps the bytes it read for that replay:
// only lines that became jobs, so its memory stays in proportion to the
// jobs read, as the general reader's does, and never to blank input.

// phillyRow is one job as the fast reader keeps it until the jobs are
// sorted: 32 bytes instead of a Job's few hundred.
type phillyRow struct {
	stamp  int64 // Unix microseconds
	dur    hwmodel.Time
	gpus   int32
	tenant int32 // index into the tenants seen
	line   int32
}

// phillyFast reads r as readPhilly would, or, where it gives up, returns
// a nil workload and a reader that replays the whole input.
func phillyFast(r io.Reader, file string) (*Workload, io.Reader) {
	p := phillyParser{tenantIdx: map[string]int32{}}
	// The input is read in chunks that are kept, not grown and copied:
	// done holds the parsed lines of earlier chunks, for the replay, and
	// a line cut by a chunk's end moves to the start of the next chunk.
	var done [][]byte
	buf := make([]byte, phillyChunk)
	fill, pos := 0, 0 // buf[:fill] is read, buf[:pos] parsed
	replay := func(more ...io.Reader) io.Reader {
		rs := make([]io.Reader, 0, len(done)+1+len(more))
		for _, c := range done {
			rs = append(rs, bytes.NewReader(c))
		}
		rs = append(rs, bytes.NewReader(buf[:fill]))
		return io.MultiReader(append(rs, more...)...)
	}
	for {
		if fill == len(buf) {
			if pos == 0 {
				return nil, replay(r) // a line longer than a chunk
			}
			next := make([]byte, phillyChunk)
			fill = copy(next, buf[pos:fill])
			done = append(done, buf[:pos])
			buf, pos = next, 0
		}
		n, err := r.Read(buf[fill:])
		fill += n
		for {
			nl := bytes.IndexByte(buf[pos:fill], '\n')
			if nl < 0 {
				break
			}
			if !p.line(buf[pos : pos+nl]) {
				return nil, replay(r)
			}
			pos += nl + 1
		}
		if err == io.EOF {
			if pos < fill && !p.line(buf[pos:fill]) {
				return nil, replay()
			}
			break
		}
		if err != nil {
			// The general reader meets the same error after the same bytes.
			return nil, replay(errReader{err})
		}
	}
	if len(p.rows) == 0 {
		return nil, replay()
	}
	return p.workload(file), nil
}

// phillyChunk is the size of the chunks the fast reader reads; it bounds
// the lines it takes too.
const phillyChunk = 1 << 18

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type phillyParser struct {
	data      []byte
	header    bool // the header was read
	ncol      int
	colTime   int
	colDur    int
	colGPUs   int
	colTenant int
	rows      []phillyRow
	tenantIdx map[string]int32
	tenants   []string
	lineNo    int                    // 1-based line of the line being read
	blank     int                    // blank lines skipped
	cells     [phillyFastMaxCols]int // cell boundaries of the current line
}

// phillyFastMaxCols bounds the columns of a file the fast reader takes.
const phillyFastMaxCols = 32

// line reads one line without its '\n'; false gives up.
func (p *phillyParser) line(b []byte) bool {
	p.lineNo++
	if len(b) == 0 {
		// encoding/csv skips a blank line. Many of them in a row could
		// be a decompression bomb, which the general reader reads in
		// bounded memory: leave them to it.
		p.blank++
		return p.blank <= len(p.rows)+1024
	}
	// Cell boundaries: cells[k] is the index of the comma ending cell k.
	n := 0
	for i, c := range b {
		switch c {
		case ',':
			if n == phillyFastMaxCols-1 {
				return false
			}
			p.cells[n] = i
			n++
		case '"', '\r':
			return false
		}
	}
	p.cells[n] = len(b)
	n++
	cell := func(k int) []byte {
		lo := 0
		if k > 0 {
			lo = p.cells[k-1] + 1
		}
		return b[lo:p.cells[k]]
	}
	if !p.header {
		return p.readHeader(n, cell)
	}
	if n != p.ncol || p.lineNo >= math.MaxInt32 {
		return false
	}
	stamp, ok := phillyStamp(cell(p.colTime))
	if !ok {
		return false
	}
	dur, ok := positiveSecondsFast(cell(p.colDur))
	if !ok {
		return false
	}
	gpus, ok := smallUint(cell(p.colGPUs), maxGPUs)
	if !ok || gpus < 1 {
		return false
	}
	t := cell(p.colTenant)
	if len(t) > 0 && (isSpaceByte(t[0]) || isSpaceByte(t[len(t)-1])) {
		return false
	}
	for _, c := range t {
		if c >= 0x80 {
			return false // strings.TrimSpace would trim Unicode spaces
		}
	}
	if len(t) == 0 {
		t = unknownTenant
	}
	tenant, seen := p.tenantIdx[string(t)]
	if !seen {
		tenant = int32(len(p.tenants))
		p.tenants = append(p.tenants, string(t))
		p.tenantIdx[p.tenants[tenant]] = tenant
	}
	p.rows = append(p.rows, phillyRow{stamp: stamp, dur: dur, gpus: int32(gpus), tenant: tenant, line: int32(p.lineNo)})
	return true
}

// readHeader takes a header of plain lowercase column names holding the
// columns ReadPhilly needs, each once.
func (p *phillyParser) readHeader(n int, cell func(int) []byte) bool {
	p.header, p.ncol = true, n
	found := 0
	for k := 0; k < n; k++ {
		c := cell(k)
		if len(c) == 0 {
			return false
		}
		for _, x := range c {
			if !(x >= 'a' && x <= 'z' || x >= '0' && x <= '9' || x == '_') {
				return false
			}
		}
		for j := 0; j < k; j++ {
			if bytes.Equal(cell(j), c) {
				return false
			}
		}
		var col *int
		switch string(c) {
		case "timestamp":
			col = &p.colTime
		case "duration":
			col = &p.colDur
		case "num_gpus":
			col = &p.colGPUs
		case "cluster":
			col = &p.colTenant
		default:
			continue
		}
		*col = k
		found++
	}
	return found == 4
}

// unknownTenant is the tenant of a job whose cluster cell is empty.
var unknownTenant = []byte("unknown")

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c >= 0x80
}

// phillyStamp reads "2006-01-02 15:04:05" exactly as time.Parse reads it
// in UTC, returning Unix microseconds; false for anything else (which
// time.Parse may still accept, e.g. a fractional second, or refuse).
func phillyStamp(b []byte) (int64, bool) {
	if len(b) != 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, s := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
		return 0, false
	}
	days := daysFromCivil(int64(y), int64(mo), int64(d))
	return ((days*24+int64(h))*60+int64(mi))*60*1e6 + int64(s)*1e6, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// positiveSecondsFast is table.positiveSeconds on a cell that needs no
// trimming; false where that would fail.
func positiveSecondsFast(b []byte) (hwmodel.Time, bool) {
	f, ok := exactDecimal(b)
	if !ok {
		var err error
		// A rare form (an exponent, many digits): strconv reads it.
		if f, err = strconv.ParseFloat(string(b), 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		if len(b) == 0 || isSpaceByte(b[0]) || isSpaceByte(b[len(b)-1]) {
			return 0, false
		}
	}
	if f <= 0 || f > maxSeconds {
		return 0, false
	}
	d := hwmodel.FromSeconds(f)
	return d, d > 0
}

// float64pow10 are the powers of ten a float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactDecimal reads digits with at most one '.' and at most 15 digits
// in all: the mantissa and the power of ten are then exact float64s and
// one division rounds correctly, which is what strconv.ParseFloat
// computes for such input (its exact fast path), bit for bit.
func exactDecimal(b []byte) (float64, bool) {
	var mant uint64
	digits, frac, dot := 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	return float64(mant) / float64pow10[frac], true
}

// smallUint reads plain decimal digits (no sign) as a value <= hi.
func smallUint(b []byte, hi int64) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v <= hi
}

// workload sorts the rows by submit time (ties in input order) and makes
// the Workload Build would make of them.
func (p *phillyParser) workload(file string) *Workload {
	rows := p.rows
	first := int64(math.MaxInt64)
	for i := range rows {
		first = min(first, rows[i].stamp)
	}
	order := radixOrder(rows, first)
	// Every name and source in one allocation each: they live as long as
	// the jobs do.
	names := make([]byte, 0, len(rows)*(len("philly-")+7))
	sources := make([]byte, 0, len(rows)*(len(file)+8))
	nameEnd := make([]int, len(rows))
	srcEnd := make([]int, len(rows))
	for k, i := range order {
		names = append(names, "philly-"...)
		names = strconv.AppendInt(names, int64(rows[i].line), 10)
		nameEnd[k] = len(names)
		sources = append(sources, file...)
		sources = append(sources, ':')
		sources = strconv.AppendInt(sources, int64(rows[i].line), 10)
		srcEnd[k] = len(sources)
	}
	allNames, allSources := string(names), string(sources)
	w := &Workload{Jobs: make([]Job, len(rows))}
	listed := make([]bool, len(p.tenants))
	nlo, slo := 0, 0
	for k, i := range order {
		r := &rows[i]
		if !listed[r.tenant] {
			w.Tenants = append(w.Tenants, Tenant{Name: p.tenants[r.tenant], Weight: DefaultTenantWeight})
			listed[r.tenant] = true
		}
		w.Jobs[k] = Job{
			Name:     allNames[nlo:nameEnd[k]],
			Tenant:   p.tenants[r.tenant],
			Submit:   hwmodel.Time(r.stamp - first),
			Duration: r.dur,
			Req:      hwmodel.Request{GPUs: int(r.gpus), GPUMilli: hwmodel.MilliPerGPU},
			Source:   allSources[slo:srcEnd[k]],
		}
		nlo, slo = nameEnd[k], srcEnd[k]
	}
	return w
}

// radixOrder is the rows' indices sorted by stamp, ties in input order: a
// least-significant-digit radix sort, stable by construction, over the
// bytes in which stamp - first differs.
func radixOrder(rows []phillyRow, first int64) []int32 {
	n := len(rows)
	keys := make([]uint64, n)
	var span uint64
	for i := range rows {
		keys[i] = uint64(rows[i].stamp - first)
		span |= keys[i]
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	tmp := make([]int32, n)
	var count [256]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += 8 {
		count = [256]int{}
		for _, i := range order {
			count[byte(keys[i]>>shift)]++
		}
		if count[byte(keys[order[0]]>>shift)] == n {
			continue // every key has this digit
		}
		sum := 0
		for d := range count {
			c := count[d]
			count[d] = sum
			sum += c
		}
		for _, i := range order {
			d := byte(keys[i] >> shift)
			tmp[count[d]] = i
			count[d]++
		}
		order, tmp = tmp, order
	}
	return order
}
