package archtest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/internal/archtest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/bad.golden from the checks' output")

// repoRoot is the module root: this package sits two levels below it.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above the test: %v", err)
	}
	return root
}

// TestArchitecture is the test that holds Brigade to docs/architecture.md:
// its import rules, the core's bans, the doc.go maps and issue numbers.
// The fixture under testdata breaks every rule on purpose.
func TestArchitecture(t *testing.T) {
	vs, err := archtest.Check(repoRoot(t), "internal/archtest/testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// TestFixture runs the checks on testdata/bad, a module that breaks each
// rule, and compares the report with testdata/bad.golden: a check that
// stopped finding what it should fails here.
func TestFixture(t *testing.T) {
	vs, err := archtest.Check(filepath.Join("testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintln(&b, v)
	}
	golden := filepath.Join("testdata", "bad.golden")
	if *rewrite {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("report on testdata/bad differs from %s (go test -rewrite refreshes it)\ngot:\n%swant:\n%s", golden, got, want)
	}
	// Every rule must be shown to fire, so that the golden file cannot
	// quietly lose a check.
	for _, rule := range []string{archtest.RuleImports, archtest.RuleModules, archtest.RuleCore, archtest.RuleClock,
		archtest.RuleRandom, archtest.RuleGoroutines, archtest.RuleDocGo, archtest.RuleIssues} {
		if !slices.ContainsFunc(vs, func(v archtest.Violation) bool { return v.Rule == rule }) {
			t.Errorf("no violation of %q in testdata/bad", rule)
		}
	}
}

// TestIssueRefs reads its cases from testdata/issue-refs.txt, since any
// text outside testdata that named an issue would fail TestArchitecture.
func TestIssueRefs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "issue-refs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		text, want, ok := strings.Cut(line, "\t=>")
		if !ok {
			t.Fatalf("issue-refs.txt:%d: want TEXT<tab>=> REFS, got %q", i+1, line)
		}
		var refs []string
		if want = strings.TrimSpace(want); want != "" {
			refs = strings.Split(want, " | ")
		}
		if got := archtest.IssueRefs(text); !slices.Equal(got, refs) {
			t.Errorf("issue-refs.txt:%d: IssueRefs(%q) = %q, want %q", i+1, text, got, refs)
		}
		cases++
	}
	if cases < 10 {
		t.Fatalf("issue-refs.txt holds %d cases; it lost some", cases)
	}
}

// TestCoreShadowing checks the one subtle case of the randomness ban: a
// local variable named rand is a seeded generator, not the package.
func TestCoreShadowing(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"global draw", "r := rand.IntN(3); _ = r", []string{"rand.IntN"}},
		{"seeded generator", "r := rand.New(rand.NewPCG(1, 2)); _ = r.IntN(3)", nil},
		{"shadowing generator", "rand := rand.New(rand.NewPCG(1, 2)); _ = rand.IntN(3)", nil},
		{"shuffle", "rand.Shuffle(2, func(i, j int) {})", []string{"rand.Shuffle"}},
		{"goroutine", "go func() {}()", []string{"go statement"}},
		{"clock", "_ = time.Since(time.Time{})", []string{"time.Since"}},
		{"duration arithmetic", "_ = time.Duration(3) * time.Second", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write := func(name, text string) {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("go.mod", "module example.com/m\n")
			write("sim/x.go", "package sim\n\nimport (\n\t\"math/rand/v2\"\n\t\"time\"\n)\n\nvar _ = time.Second\nvar _ = rand.N[int]\n\nfunc F() {\n\t"+tc.src+"\n}\n")
			m, err := archtest.Load(root)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range archtest.CheckCore(m) {
				if v.Line != 9 { // the rand.N line every case shares
					got = append(got, v.Msg)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want violations mentioning %q", got, tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("violation %q does not mention %q", got[i], tc.want[i])
				}
			}
		})
	}
}

// ExampleCheck runs the checks on the fixture module and prints what the
// core's bans found.
func ExampleCheck() {
	vs, err := archtest.Check(filepath.Join("testdata", "bad"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range vs {
		if v.Rule == archtest.RuleClock || v.Rule == archtest.RuleGoroutines {
			fmt.Println(v)
		}
	}
	// Output:
	// hwmodel/clock.go:12: time.Sleep depends on the wall clock [no wall clock in the core]
	// hwmodel/clock.go:14: go statement starts a goroutine [no goroutines in the core]
	// hwmodel/clock.go:17: time.Now depends on the wall clock [no wall clock in the core]
}
