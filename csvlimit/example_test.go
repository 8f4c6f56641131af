package csvlimit_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
)

// A reader stops at the line that breaks a limit, after the records before
// it, and reports the line with its own file name.
func Example() {
	in := "name,gpus\n# a comment\na,1\nb" + strings.Repeat(",", 2000) + "\nc,2\n"
	r := csvlimit.NewReader(strings.NewReader(in), '#')
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var le *csvlimit.LimitError
		if errors.As(err, &le) {
			fmt.Printf("jobs.csv:%d: %s\n", le.Line, le.Msg)
			break
		}
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(rec)
	}
	// Output:
	// [name gpus]
	// [a 1]
	// jobs.csv:4: want at most 1024 fields on a line, found more
}
