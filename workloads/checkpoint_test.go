package workloads

import (
	"errors"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestBrigadeDeadlineAndCheckpointColumns(t *testing.T) {
	in := "name,submit_s,duration_s,gpus,deadline_s,checkpoint_every_s,checkpoint_cost_s\n" +
		"a,0,3600,1,7200,300,10\n" +
		"b,5,60,1,,,\n"
	w, err := ReadBrigade(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, b := w.Jobs[0], w.Jobs[1]
	if a.Deadline != 2*hwmodel.Hour || a.Checkpoint != (Checkpoint{Every: 5 * hwmodel.Minute, Cost: 10 * hwmodel.Second}) {
		t.Errorf("a: deadline %v checkpoint %+v", a.Deadline, a.Checkpoint)
	}
	if b.Deadline != 0 || b.Checkpoint != (Checkpoint{}) {
		t.Errorf("b: deadline %v checkpoint %+v", b.Deadline, b.Checkpoint)
	}
	for _, c := range []struct{ row, field, msg string }{
		{"a,0,60,1,-1,,", "deadline_s", "want seconds"},
		{"a,0,60,1,,x,", "checkpoint_every_s", "want a number"},
		{"a,0,60,1,,,-3", "checkpoint_cost_s", "want seconds"},
		{"a,0,60,1,,,5", "checkpoint_cost_s", "without checkpoint_every_s"},
	} {
		_, err := ReadBrigade(strings.NewReader("name,submit_s,duration_s,gpus,deadline_s,checkpoint_every_s,checkpoint_cost_s\n"+c.row+"\n"), "t.csv")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Field != c.field || !strings.Contains(pe.Msg, c.msg) || !strings.HasPrefix(err.Error(), "t.csv:2") {
			t.Errorf("%s: got %v", c.row, err)
		}
	}
}
